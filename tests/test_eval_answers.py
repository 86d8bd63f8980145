"""Answer evaluation: the numeric-aware correctness check on gold answers as FinanceBench
writes them, and a resumable run over a small store with a scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from finrag.answer.pipeline import Asker
from finrag.config import load_settings
from finrag.db import open_store
from finrag.embed import get_embedder
from finrag.evaluate.answer_report import write_answer_report
from finrag.evaluate.answers import RESULTS_FILE, evaluate_answers
from finrag.evaluate.correctness import answer_polarity, score_correctness
from finrag.evaluate.dataset import load_dataset
from finrag.llm.fake import FakeLLM
from tests.corpus import add_small_filings, excerpt_number


@pytest.mark.parametrize(
    ("gold", "answer", "computed", "numeric", "polarity"),
    [
        ("$1577.00", "3M's capital expenditure was $1,577 million in FY2018 [2].", [], True, None),
        ("$1577.00", "Capital expenditures were $1.577 billion [2].", [], True, None),
        ("$1577.00", "Purchases of PP&E were (1,577) [4].", [], True, None),
        ("$1577.00", "Capital expenditures were $1,373 million [2].", [], False, None),
        ("$1577.00", "Capex was $1.6 billion [2].", [], True, None),  # rounded
        ("30.8%", "Revenue grew by 30.8% [1].", [], True, None),
        ("30.8%", "Revenue grew [1].", [30.7960], True, None),  # a calculation result
        ("30.8%", "Revenue grew 3.08% [1].", [], False, None),
        ("93.86", "DPO was 93.9 days.", [], True, None),
        (
            "No. The quick ratio was approximately 0.54 for Verizon.",
            "No. Verizon's quick ratio was 0.54 [3].",
            [],
            True,
            True,
        ),
        (
            "No. The quick ratio was approximately 0.54 for Verizon.",
            "Yes, the quick ratio of 0.54 is healthy.",
            [],
            True,
            False,
        ),
        ("Yes", "The company retained its card members [1].", [], None, True),
        ("Customer deposits", "Customer deposits were the largest liability [2].", [], None, None),
        ("$1577.00", "", [], False, None),  # a refusal is never right
    ],
)
def test_correctness(gold, answer, computed, numeric, polarity) -> None:
    result = score_correctness(gold, answer, computed)
    assert result.numeric is numeric
    assert result.polarity is polarity
    expected = [c for c in (numeric, polarity) if c is not None]
    assert result.auto == (all(expected) if expected else None)


def test_answer_polarity() -> None:
    assert answer_polarity("Yes, margins held.") == "yes"
    assert answer_polarity("No: debt fell.") == "no"
    assert answer_polarity("Verizon does not have a healthy quick ratio. It is 0.54.") == "no"
    assert answer_polarity("Margins improved in 2022.") == "yes"
    assert answer_polarity("") is None


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


QUESTIONS = [
    {
        "id": "acme-capex",
        "question": "What were ACME's capital expenditures in 2023?",
        "answer": "$310 million",
        "type": "extraction",
        "evidence": [{"document": "ACME_2023_10K.pdf", "page": 3}],
    },
    {
        "id": "globex-revenue",
        "question": "How much revenue did Globex have in 2023?",
        "answer": "$4.0 billion",
        "type": "extraction",
        "evidence": [{"document": "GLOBEX_2023_10K.pdf", "page": 2}],
    },
    {
        "id": "initech",
        "question": "What was Initech Inc. revenue in 2023?",
        "answer": "$1 billion",
        "type": "extraction",
        "evidence": [{"document": "INITECH_2023_10K.pdf", "page": 1}],
    },
]


def test_answer_eval_scores_and_resumes(database_url: str, tmp_path: Path) -> None:
    settings = load_settings(database_url=SecretStr(database_url))
    store = open_store(settings)
    with store.connect() as conn:
        add_small_filings(conn, get_embedder(settings.embed))
    dataset = write_jsonl(tmp_path / "qs.jsonl", QUESTIONS)
    questions = load_dataset(dataset)
    seen = {}

    def extract_capex(messages):
        seen["capex"] = excerpt_number(messages, "$310 million")
        return {
            "answerable": True,
            "facts": [{"source": seen["capex"], "quote": "were $310 million", "value": "$310"}],
            "calculations": [],
        }

    out = tmp_path / "run"

    def wrong_citation(messages):
        return f"ACME's capital expenditures were $310 million [{seen['capex'] % 4 + 1}]."

    # Right figure, but it cites the wrong excerpt, also when asked again: correct, and
    # its citation is not valid.
    first = FakeLLM([extract_capex, wrong_citation, wrong_citation])
    try:
        report = evaluate_answers(
            store,
            settings,
            questions[:1],
            dataset=dataset,
            out_dir=out,
            asker=Asker(store, settings, llm=first),
        )
        (r,) = report.results
        assert r.auto_correct is True and r.numeric_correct is True
        assert r.citation_valid is False and r.valid_citation_share == 0.0
        assert r.evidence_cited is False
        assert r.unverified_numbers[0]["number"] == "$310 million"

        # The rerun asks only what is not in answers.jsonl yet: the capex question would
        # need replies the script does not have.
        def extract_revenue(messages):
            seen["revenue"] = excerpt_number(messages, "Globex revenue fell")
            return {
                "answerable": True,
                "facts": [{"source": seen["revenue"], "quote": "fell 3% to $4.0", "value": "$4.0"}],
                "calculations": [],
            }

        second = FakeLLM(
            [extract_revenue, lambda m: f"Globex revenue was $4.0 billion [{seen['revenue']}]."]
        )
        report = evaluate_answers(
            store,
            settings,
            questions,
            dataset=dataset,
            out_dir=out,
            asker=Asker(store, settings, llm=second),
        )
    finally:
        store.close()
    assert second.calls and len(second.calls) == 2, "capex resumed, initech refused unasked"
    capex, revenue, initech = report.results
    assert capex.id == "acme-capex" and capex.citation_valid is False
    assert revenue.auto_correct is True and revenue.citation_valid is True
    assert revenue.evidence_cited is True
    assert initech.refused and initech.auto_correct is False and initech.citation_valid is None
    s = report.summary
    assert s["auto_correct"] == {"value": pytest.approx(2 / 3, abs=1e-4), "n": 3}
    assert s["refusal_rate"] == {"value": pytest.approx(1 / 3, abs=1e-4), "n": 3}
    assert s["citation_valid"] == {"value": 0.5, "n": 2}
    assert s["evidence_cited"] == {"value": 0.5, "n": 2}
    assert len((out / RESULTS_FILE).read_text().splitlines()) == 3
    paths = write_answer_report(report, out)
    assert [p.name for p in paths] == ["answers.json", "answers.csv", "answers.md"]
    assert json.loads(paths[0].read_text())["summary"]["questions"] == 3
    assert "`initech` **wrong**, refused" in paths[2].read_text()
    assert len(paths[1].read_text().splitlines()) == 4
