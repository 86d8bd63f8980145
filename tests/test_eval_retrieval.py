"""Retrieval evaluation: datasets in both formats, metrics on a hand-made ranking, and a
whole run on a small real store where the right answers are known."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest
from pydantic import SecretStr

from finrag.config import load_settings
from finrag.db import open_store
from finrag.embed import get_embedder
from finrag.errors import UsageError
from finrag.evaluate.dataset import EvalQuestion, Evidence, document_key, load_dataset
from finrag.evaluate.metrics import Retrieved, mean_scores, score_ranking, text_matches
from finrag.evaluate.retrieval import evaluate_retrieval
from finrag.retrieve import Retriever, Variant
from tests.conftest import SHARED, run_finrag
from tests.corpus import add_document

PAGE_FIVE = (
    "Net cash provided by operating activities was $6,439 million, and purchases of property, "
    "plant and equipment were $1,577 million."
)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_financebench_pages_are_zero_indexed_ours_one_based(tmp_path: Path) -> None:
    data = write_jsonl(
        tmp_path / "q.jsonl",
        [
            {
                "financebench_id": "fb1",
                "company": "3M",
                "doc_name": "3M_2018_10K",
                "question_type": "metrics-generated",
                "question": "capex?",
                "answer": "$1577.00",
                "evidence": [
                    {"doc_name": "3M_2018_10K", "evidence_page_num": 59, "evidence_text": "x"}
                ],
            },
            {
                "id": "ours1",
                "question": "capex?",
                "answer": "1,577",
                "type": "extraction",
                "evidence": [{"document": "3M_2018_10K.pdf", "page": 60, "text": "y"}],
            },
        ],
    )
    fb, ours = load_dataset(data)
    assert fb.gold_pages == ours.gold_pages == {("3m_2018_10k", 60)}
    assert (fb.question_type, ours.question_type) == ("metrics-generated", "extraction")
    assert document_key("/x/3M_2018_10K.pdf") == document_key("3M_2018_10K") == "3m_2018_10k"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 1"),
        (json.dumps({"answer": "no question"}), "KeyError"),
        (json.dumps({"question": "q", "evidence": [{"document": "a.pdf", "page": 0}]}), "1-based"),
    ],
)
def test_bad_dataset_lines_name_their_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(UsageError, match=message):
        load_dataset(path)


def test_financebench_dev_file_loads_with_every_page(tmp_path: Path) -> None:
    path = SHARED / "financebench-dev" / "questions.jsonl"
    if not path.is_file():
        pytest.skip(f"FinanceBench dev questions not found at {path}")
    questions = load_dataset(path)
    assert len(questions) == 49
    capex = next(q for q in questions if q.id == "financebench_id_03029")
    assert capex.gold_pages == {("3m_2018_10k", 60)}


def hand_made() -> tuple[list[Retrieved], EvalQuestion]:
    ranked = [
        Retrieved("a", 1, 1, "Table of contents and other things of no interest at all here."),
        Retrieved("b", 3, 3, PAGE_FIVE),  # right text, wrong document
        Retrieved("a", 2, 3, "Risk factors continue on this page with more words."),
        Retrieved("a", 5, 5, PAGE_FIVE),
    ]
    question = EvalQuestion(
        id="q",
        question="capex",
        answer="1,577",
        evidence=[Evidence("a", 3, ""), Evidence("a", 5, "Cash flows\n" + PAGE_FIVE + "\n60")],
    )
    return ranked, question


def test_metrics_on_a_ranking_worked_out_by_hand() -> None:
    ranked, question = hand_made()
    scores = score_ranking(ranked, question, [1, 3, 5])
    assert scores[1] == {
        "hit": 0.0,
        "recall": 0.0,
        "precision": 0.0,
        "f1": 0.0,
        "mrr": 0.0,
        "text_hit": 0.0,
    }
    assert scores[3] == pytest.approx(
        {"hit": 1, "recall": 0.5, "precision": 1 / 3, "f1": 0.4, "mrr": 1 / 3, "text_hit": 0}
    )
    assert scores[5] == pytest.approx(
        {"hit": 1, "recall": 1, "precision": 0.4, "f1": 0.8 / 1.4, "mrr": 1 / 3, "text_hit": 1}
    )
    means = mean_scores([scores, score_ranking([], question, [1, 3, 5])], [1, 3, 5])
    assert means[5]["hit"] == 0.5 and means[3]["mrr"] == pytest.approx(1 / 6)


def test_text_match_is_fuzzy_but_not_loose() -> None:
    page = "3M Company Consolidated Statement of Cash Flow s\n" + PAGE_FIVE.replace(",", " ,")
    assert text_matches("| " + PAGE_FIVE.replace(" ", " | ", 3) + " |", [page])
    assert not text_matches(
        "Dividends paid to shareholders rose to $3,193 million in 2018.", [page]
    )
    assert not text_matches("short", ["short"]), "too short to tell"


@pytest.fixture
def small_store(database_url: str, tmp_path: Path):
    settings = load_settings(database_url=SecretStr(database_url))
    store = open_store(settings)
    embedder = get_embedder(settings.embed)
    with store.connect() as conn:
        add_document(
            conn,
            embedder,
            "ACME_2023_10K.pdf",
            [
                "ACME overview: we make anvils and rockets for wholesale customers.",
                "ACME revenue grew 12% to $9.6 billion on strong anvil demand.",
                "ACME capital expenditures were $310 million, mostly for rocket plants.",
            ],
            company="ACME",
            year=2023,
        )
        add_document(
            conn,
            embedder,
            "GLOBEX_2023_10K.pdf",
            [
                "Globex overview: we sell widgets.",
                "Globex revenue fell 3% to $4.0 billion.",
                "Globex capital expenditures were $95 million.",
            ],
            company="Globex",
            year=2023,
        )
    dataset = write_jsonl(
        tmp_path / "small.jsonl",
        [
            {
                "id": "acme-capex",
                "question": "What were ACME capital expenditures in 2023?",
                "answer": "$310 million",
                "company": "ACME",
                "type": "extraction",
                "evidence": [{"document": "ACME_2023_10K.pdf", "page": 3}],
            },
            {
                "id": "globex-revenue",
                "question": "How much revenue did Globex have in 2023?",
                "answer": "$4.0 billion",
                "company": "Globex",
                "type": "extraction",
                "evidence": [{"document": "GLOBEX_2023_10K.pdf", "page": 2}],
            },
            {
                "id": "initech",
                "question": "What was Initech's revenue?",
                "answer": "unknown",
                "evidence": [{"document": "INITECH_2023_10K.pdf", "page": 1}],
            },
        ],
    )
    yield settings, store, dataset
    store.close()


def test_eval_run_scores_known_answers_and_records_the_run(small_store) -> None:
    settings, store, dataset = small_store
    questions = load_dataset(dataset)
    report = evaluate_retrieval(
        store,
        settings,
        questions,
        dataset=dataset,
        ks=[1, 3],
        variants=[Variant.parse("fts"), Variant.parse("hybrid+filters")],
    )
    by = {(r.variant, r.id): r for r in report.results}
    filtered = by[("hybrid+filters", "acme-capex")]
    assert filtered.first_relevant_rank == 1 and filtered.scores[1]["hit"] == 1.0
    assert filtered.applied.keys() == {"company_ids", "years"}
    assert by[("hybrid+filters", "globex-revenue")].first_relevant_rank == 1
    assert by[("hybrid+filters", "initech")].missing_documents == ["initech_2023_10k"]
    summary = {s.variant: s for s in report.variants}
    assert summary["hybrid+filters"].scores[1]["hit"] == pytest.approx(2 / 3)
    assert summary["hybrid+filters"].breakdowns["company"]["ACME"]["n"] == 1
    assert {r.kind for r in report.results} == {"other"}
    assert report.notes and "initech_2023_10k" in report.notes[0]
    with store.connect() as conn:
        row = conn.execute(
            "SELECT kind, metrics IS NOT NULL, finished_at IS NOT NULL, settings->'variants' "
            "FROM eval_runs WHERE id = %s",
            (report.run_id,),
        ).fetchone()
    assert row == ("retrieval", True, True, ["fts", "hybrid+filters"])


def test_rerank_variant_without_a_reranker_is_a_usage_error(small_store) -> None:
    settings, store, _ = small_store
    with pytest.raises(UsageError, match="needs a reranker"):
        Retriever(store, settings).retrieve("revenue", variant=Variant())


def test_eval_cli_writes_json_csv_and_markdown(small_store, tmp_path: Path) -> None:
    settings, _, dataset = small_store
    env = dict(os.environ, FINRAG_DATABASE_URL=settings.database_url.get_secret_value())
    out = tmp_path / "report"
    result = run_finrag(
        "eval",
        "retrieval",
        str(dataset),
        "--k",
        "1,3",
        "--compare",
        "dense,hybrid+filters",
        "--out",
        str(out),
        "--json",
        env=env,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [v["variant"] for v in data["variants"]] == ["dense", "hybrid+filters"]
    assert data["variants"][1]["scores"]["1"]["hit"] == pytest.approx(2 / 3)
    rows = list(csv.DictReader((out / "retrieval.csv").open()))
    assert {r["by"] for r in rows} == {"all", "company", "question_type", "doc_type", "kind"}
    # None of the three asks for a party or a segment: all are of the kind "other".
    assert {(r["group"], r["n"]) for r in rows if r["by"] == "kind"} == {("other", "3")}
    markdown = (out / "retrieval.md").read_text()
    assert "| hybrid+filters |" in markdown and "initech" in markdown
    assert "| other | 3 | dense |" in markdown and "| other | 3 | hybrid+filters |" in markdown
    bad = run_finrag("eval", "retrieval", str(dataset), "--k", "0,x", env=env)
    assert bad.returncode == 2 and "--k" in bad.stderr
