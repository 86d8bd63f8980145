"""Answer evaluation: the numeric-aware correctness check on gold answers as FinanceBench
writes them, and a resumable run over a small store with a scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from finrag.answer.extraction import CalculationOutcome
from finrag.answer.pipeline import Asker
from finrag.answer.result import Answer
from finrag.config import load_settings
from finrag.db import open_store
from finrag.embed import get_embedder
from finrag.errors import UsageError
from finrag.evaluate.answer_compare import (
    Comparison,
    compare_answers,
    comparison_rows,
    write_comparison,
)
from finrag.evaluate.answer_report import write_answer_report
from finrag.evaluate.answers import RESULTS_FILE, evaluate_answers
from finrag.evaluate.correctness import answer_polarity, score_correctness
from finrag.evaluate.dataset import load_dataset
from finrag.evaluate.traceable import untraceable_numbers
from finrag.llm.fake import FakeLLM
from tests.conftest import clean_env, run_finrag
from tests.corpus import add_small_filings, excerpt_number
from tests.html_checks import check_self_contained


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
            "No. Verizon's quick ratio stood near 0.54.",
            "No. Verizon's quick ratio was 0.54 [3].",
            [],
            True,
            True,
        ),
        (
            "No. Verizon's quick ratio stood near 0.54.",
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
    # The extraction path, where a model can cite the wrong excerpt for a right figure.
    settings = load_settings(database_url=SecretStr(database_url), answer={"text_mode": "extract"})
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
    assert "`initech` **wrong**, text route, refused" in paths[2].read_text()
    assert len(paths[1].read_text().splitlines()) == 4


# ---- expected refusals: questions the store cannot answer ---------------------------

MIXED = [
    {**QUESTIONS[0]},  # answerable; the model finds it unanswerable: a wrong refusal
    {**QUESTIONS[2], "answer": "", "answerable": False},  # a company the store lacks
    {
        "id": "globex-brazil",
        "question": "How much of Globex's revenue came from Brazil?",
        "answer": "Not stated: the 10-K gives no revenue by country.",
        "type": "unstated",
        "evidence": [],
        "answerable": False,
    },
    {**QUESTIONS[1]},
]


def test_expected_refusals_are_scored(database_url: str, tmp_path: Path) -> None:
    settings = load_settings(database_url=SecretStr(database_url))
    dataset = write_jsonl(tmp_path / "qs.jsonl", MIXED)
    questions = load_dataset(dataset)
    assert [q.answerable for q in questions] == [True, False, False, True]
    shown = {}

    def quote(needle: str, text: str):
        def reply(messages):
            shown[needle] = excerpt_number(messages, needle)
            return {"answerable": True, "claims": [{"text": text, "source": shown[needle]}]}

        return reply

    # Initech is refused before any model call; the Brazil question gets an answer where
    # a refusal was due. The judge sees only the answerable question that was answered:
    # a call for the Brazil answer would take the revenue question's reply.
    llm = FakeLLM(
        [
            NO_QUOTE_ANSWERS,
            quote(
                "Globex revenue fell",
                "The filing gives no revenue by country; Globex revenue fell 3% to $4.0 "
                "billion in 2023",
            ),
            quote("Globex revenue fell", "Globex revenue was $4.0 billion"),
            {"correct": True, "reason": "the same figure"},
        ]
    )
    out = tmp_path / "run"
    with open_store(settings) as store:
        with store.connect() as conn:
            add_small_filings(conn, get_embedder(settings.embed))
        report = evaluate_answers(
            store,
            settings,
            questions,
            dataset=dataset,
            out_dir=out,
            use_judge=True,
            asker=Asker(store, settings, llm=llm),
        )
        # Resumed lines keep the flag: nothing is asked again.
        again = evaluate_answers(
            store,
            settings,
            questions,
            dataset=dataset,
            out_dir=out,
            asker=Asker(store, settings, llm=FakeLLM([])),
        )
    assert again.summary["refusal_recall"] == report.summary["refusal_recall"]
    assert not llm.replies and all(r.error is None for r in report.results)
    capex, initech, brazil, revenue = report.results
    assert capex.refused and capex.answerable and capex.auto_correct is False
    assert initech.refused and not initech.answerable and initech.auto_correct is True
    assert initech.numeric_correct is None and initech.judge_correct is None
    assert not brazil.refused and brazil.auto_correct is False and brazil.judge_correct is None
    assert revenue.auto_correct is True and revenue.judge_correct is True
    s = report.summary
    assert s["refusal_precision"] == {"value": 0.5, "n": 2}  # initech, not capex
    assert s["refusal_recall"] == {"value": 0.5, "n": 2}  # initech, not brazil
    assert s["auto_correct"] == {"value": 0.5, "n": 4}
    assert s["numeric_correct"] == {"value": 0.5, "n": 2}  # answerable questions only
    assert s["by_question_type"]["unstated"]["refusal_recall"] == {"value": 0.0, "n": 1}

    paths = write_answer_report(report, out)
    md = paths[2].read_text()
    assert "| unanswerable questions refused | 0.500 | 2 |" in md
    assert "| refusals that were expected (of refused questions) | 0.500 | 2 |" in md
    assert "`initech` **right**, text route, refused, refusal expected" in md
    assert "`globex-brazil` **wrong**, text route, 1 citation(s), refusal expected" in md
    assert "answerable" in paths[1].read_text().splitlines()[0].split(",")
    rows = dict(comparison_rows(Comparison(str(dataset), {"facts+text": report})))
    assert rows["refusal precision"] == ["0.500"] and rows["refusal recall"] == ["0.500"]


def test_answerable_must_be_a_json_boolean(tmp_path: Path) -> None:
    dataset = write_jsonl(tmp_path / "qs.jsonl", [{**QUESTIONS[0], "answerable": "false"}])
    with pytest.raises(UsageError, match=r"qs.jsonl:1: .*answerable is 'false'"):
        load_dataset(dataset)


# ---- routes and configurations compared, over a store holding facts -------------------

ROUTED = [
    {
        "id": "apple-sales-2023",
        "question": "What were Apple's total net sales in fiscal 2023?",
        "answer": "$383,285 million",
        "type": "metric",
        "evidence": [{"document": "APPLE_2024_10K.md", "page": 1}],
    },
    {
        "id": "apple-ceo",
        "question": "Who is Apple's chief executive officer?",
        "answer": "Tim Cook",
        "type": "qualitative",
        "evidence": [{"document": "APPLE_2024_10K.md", "page": 1}],
    },
]
NO_QUOTE_ANSWERS = {"answerable": False, "claims": []}


@pytest.fixture
def facts_db(database_url: str, tmp_path: Path) -> str:
    """A database holding a small Markdown 10-K with Apple's statement of operations, its
    facts extracted at ingest (the facts route answers from them)."""
    from finrag.ingest.pipeline import ingest
    from tests.test_facts_ingest import _filing

    settings = load_settings(database_url=SecretStr(database_url), ingest={"workers": 0})
    with open_store(settings) as store:
        report = ingest([_filing(tmp_path)], settings, store)
    assert report.results[0].status == "ingested", report.results[0].reason
    return database_url


def test_results_by_route_and_variants_compared(facts_db: str, tmp_path: Path) -> None:
    settings = load_settings(database_url=SecretStr(facts_db))
    questions = load_dataset(write_jsonl(tmp_path / "qs.jsonl", ROUTED))
    shown = {}

    def quote_sales(messages):
        shown["n"] = excerpt_number(messages, "383,285")
        claim = {"text": "Apple's total net sales in fiscal 2023 were $383,285 million"}
        return {"answerable": True, "claims": [{**claim, "source": shown["n"]}]}

    # The text variant reads excerpts with the model for sales (the CEO question finds
    # nothing relevant and is refused before any route); the no-llm variant answers sales
    # from the facts store and calls nothing: one model serves both, so a call it made
    # would find no reply left.
    llm = FakeLLM([quote_sales])
    out = tmp_path / "compare"
    with open_store(settings) as store:
        comparison = compare_answers(
            store,
            settings,
            questions,
            ["text", "facts+text:no-llm"],
            dataset=tmp_path / "qs.jsonl",
            out_dir=out,
            llm=llm,
        )
        with store.connect() as conn:
            recorded = dict(
                conn.execute(
                    "SELECT id, settings->'answer' FROM eval_runs WHERE id = ANY(%s)",
                    ([r.run_id for r in comparison.variants.values()],),
                ).fetchall()
            )
    assert not llm.replies and len(llm.calls) == 1
    text, facts = comparison.variants["text"], comparison.variants["facts+text:no-llm"]
    assert text.settings["answer"]["facts_route"] is False
    assert facts.settings["answer"]["use_llm"] is False
    assert recorded[text.run_id]["facts_route"] is False  # the store's record tells them apart
    assert recorded[facts.run_id]["use_llm"] is False
    assert [r.route for r in text.results] == ["text", "text"]
    assert "facts_route" in text.results[0].route_reason
    sales, ceo = facts.results
    assert sales.route == "facts" and sales.auto_correct is True and sales.error is None
    assert sales.numbers_untraceable == [] and sales.tokens == {"prompt": 0, "completion": 0}
    assert ceo.route == "text" and ceo.refused and ceo.numbers_untraceable is None
    assert text.results[0].auto_correct is True and text.results[1].refused

    by_route = facts.summary["by_route"]
    assert set(by_route) == {"facts", "text"}
    assert by_route["facts"]["n"] == 1 and by_route["facts"]["auto_correct"]["value"] == 1.0
    assert by_route["facts"]["numeric_correct"]["value"] == 1.0
    assert by_route["text"]["refusal_rate"]["value"] == 1.0
    assert facts.summary["numbers_untraceable"] == {"value": 0.0, "n": 1, "numbers": 0}
    assert set(text.summary["by_route"]) == {"text"}
    assert set(facts.summary["by_question_type"]) == {"metric", "qualitative"}

    paths = write_comparison(comparison, out)
    names = {p.relative_to(out).as_posix() for p in paths}
    assert {"text/answers.md", "facts+text-no-llm/answers.md", "comparison.md"} <= names
    assert len((out / "text" / RESULTS_FILE).read_text().splitlines()) == 2
    report_md = (out / "facts+text-no-llm" / "answers.md").read_text()
    assert "## By route" in report_md and "## By question type" in report_md
    assert "| facts | 1 | 1.000 | 1.000 |" in report_md
    assert "| 0 of 1 answers (0 numbers) |" in report_md
    assert "`apple-sales-2023` **right**, facts route" in report_md
    compared = (out / "comparison.md").read_text()
    assert "| correct, route facts | — | 1.000 (1) |" in compared
    assert "| correct, type metric | 1.000 (1) | 1.000 (1) |" in compared


def test_an_older_results_line_without_a_route_resumes_as_text(
    facts_db: str, tmp_path: Path
) -> None:
    settings = load_settings(database_url=SecretStr(facts_db), answer={"use_llm": False})
    questions = load_dataset(write_jsonl(tmp_path / "qs.jsonl", ROUTED[:1]))
    out = tmp_path / "run"
    with open_store(settings) as store:
        first = evaluate_answers(store, settings, questions, dataset=tmp_path, out_dir=out)
        assert first.results[0].route == "facts"
        line = json.loads((out / RESULTS_FILE).read_text())
        for key in ("route", "route_reason", "numbers_untraceable", "answerable"):
            del line[key]  # as written before routes and expected refusals were recorded
        (out / RESULTS_FILE).write_text(json.dumps(line) + "\n")
        again = evaluate_answers(
            store,
            settings,
            questions,
            dataset=tmp_path,
            out_dir=out,
            asker=Asker(store, settings, llm=FakeLLM([])),
        )
    (r,) = again.results
    assert r.route == "text" and r.numbers_untraceable is None and r.auto_correct is True
    assert r.answerable
    assert again.summary["by_route"]["text"]["n"] == 1


def test_cli_compare_writes_each_variant_and_a_comparison(facts_db: str, tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([NO_QUOTE_ANSWERS]))  # the text variant's sales question only
    env = clean_env(
        FINRAG_DATABASE_URL=facts_db,
        FINRAG_EMBED__BACKEND="hash",
        FINRAG_LLM__BACKEND="fake",
        FINRAG_LLM__FAKE_SCRIPT=str(script),
    )
    dataset = write_jsonl(tmp_path / "qs.jsonl", ROUTED)
    out = tmp_path / "out"
    args = ["eval", "answers", str(dataset), "--compare", "text,facts+text:no-llm"]
    result = run_finrag(*args, "--out", str(out), "--json", env=env)
    assert result.returncode == 0, result.stderr
    # The HTML report: the variants side by side, in one self-contained file.
    assert f"wrote {out / 'report.html'}" in result.stderr
    html = (out / "report.html").read_text(encoding="utf-8")
    assert len(check_self_contained(html)) == 3
    assert "<th>text</th><th>facts+text:no-llm</th>" in html  # side by side
    assert '<td>correct, route facts</td><td class="n">—</td><td class="n">1.000 (1)</td>' in html
    assert "text: per question" in html and "facts+text:no-llm: per question" in html
    data = json.loads(result.stdout)
    assert list(data["variants"]) == ["text", "facts+text:no-llm"]
    text, facts = data["variants"]["text"], data["variants"]["facts+text:no-llm"]
    assert text["summary"]["auto_correct"]["value"] == 0.0  # both refused
    assert facts["summary"]["by_route"]["facts"]["auto_correct"]["value"] == 1.0
    assert facts["summary"]["error_rate"]["value"] == 0.0, "no model call without the model"
    for folder in ("text", "facts+text-no-llm"):
        assert len((out / folder / RESULTS_FILE).read_text().splitlines()) == 2
        assert (out / folder / "answers.md").is_file()
    assert (out / "comparison.md").is_file()
    assert json.loads((out / "comparison.json").read_text())["variants"].keys() == {
        "text",
        "facts+text:no-llm",
    }

    # Run again as a table: every question resumes, nothing is asked.
    table = run_finrag(*args, "--out", str(out), env=env)
    assert table.returncode == 0, table.stderr
    assert "configurations compared" in table.stdout
    assert "correct, route facts" in table.stdout
    assert table.stderr.count("resumed") == 4

    unknown = run_finrag("eval", "answers", str(dataset), "--compare", "text,facts", env=env)
    assert unknown.returncode == 2
    assert "facts" in unknown.stderr and "facts+text:no-llm" in unknown.stderr
    both = run_finrag(*args, "--no-llm", env=env)
    assert both.returncode == 2 and "--compare" in both.stderr


def test_cli_no_llm_runs_without_the_model(facts_db: str, tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text("[]")  # a model call would fail its question
    env = clean_env(
        FINRAG_DATABASE_URL=facts_db,
        FINRAG_EMBED__BACKEND="hash",
        FINRAG_LLM__BACKEND="fake",
        FINRAG_LLM__FAKE_SCRIPT=str(script),
    )
    dataset = write_jsonl(tmp_path / "qs.jsonl", ROUTED)
    result = run_finrag("eval", "answers", str(dataset), "--no-llm", "--json", env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["settings"]["answer"]["use_llm"] is False
    assert [r["route"] for r in data["results"]] == ["facts", "text"]
    assert data["summary"]["error_rate"]["value"] == 0.0
    plain = run_finrag("eval", "answers", str(dataset), "--no-llm", env=env)
    assert plain.returncode == 0, plain.stderr
    assert "by route" in plain.stdout and "by question type" in plain.stdout


def test_untraceable_numbers_of_a_facts_answer() -> None:
    sales = [{"value": "383285000000"}, {"value": "391035000000"}]
    growth = CalculationOutcome(
        "revenue growth",
        "percent_change(383285, 391035)",
        result=2.0220,
        inputs=[{"text": "383,285", "value": 383285.0, "sources": [1]}],
    )

    def answer(text: str, route: str = "facts", **fields) -> Answer:
        return Answer(question="q", answer=text, route=route, **fields)

    stated = answer(
        "Apple's revenue in FY2024 Q3 (the three months ended June 28, 2025) went from "
        "$383,285 million [1] to $391.0 billion [2], up 2.0%.",
        fact_values=sales,
        calculations=[growth],
    )
    assert untraceable_numbers(stated) == []
    # A difference the template worked out itself is no fact and no calculation result.
    extra = answer("Revenue rose 2.0% ($7,750 million) [1, 2].", fact_values=sales)
    extra.calculations = [growth]
    assert untraceable_numbers(extra) == ["$7,750 million"]
    assert untraceable_numbers(answer("Margin was 46.9% [1].", fact_values=sales)) == ["46.9%"]
    # A mixed answer also carries what the pipeline's number check found in its text.
    problem = {"number": "$12 million", "sentence": "s", "reason": "r"}
    mixed = answer("Sales were $383,285 million [1].", "mixed", fact_values=sales)
    mixed.unverified_numbers = [problem]
    assert untraceable_numbers(mixed) == ["$12 million"]


def test_a_text_facts_own_numbers_and_a_statute_section_are_no_untraceable_figures() -> None:
    from finrag.answer.extraction import CheckedFact
    from finrag.answer.result import Answer

    title = "Common Shares (par value $0.20 per Share)"
    answer = Answer(
        question="q",
        answer=f"Registered under Section 12(b): {title} [1], 3 classes in all.",
        route="facts",
        facts=[CheckedFact(source=1, quote=title, value=title, ok=True)],
    )
    assert untraceable_numbers(answer) == ["3"]  # the count no fact gave still shows


def test_a_figure_rounded_to_the_decimals_shown_traces_to_its_calculation() -> None:
    from finrag.answer.extraction import CalculationOutcome
    from finrag.answer.result import Answer

    change = CalculationOutcome("change, per cent", "percent_change(150868, 150639)")
    change.result = -0.1518
    answer = Answer(
        question="q", answer="Debt went down by 0.2%, then by 0.4%.", calculations=[change]
    )
    answer.route = "facts"
    assert untraceable_numbers(answer) == ["0.4%"]  # 0.2 is 0.1518 shown; 0.4 is no value
