"""The facts route of `ask`: one reported line item of one company for one period, answered
from the facts store with its printed cell cited, no model call; anything else goes the
text route as before. A real embedded store holding Best Buy's Q2 FY24 10-Q (PDF) and a
small Markdown 10-K with Apple's statement of operations."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from finrag.answer.facts_route import FLAG
from finrag.answer.phrasing import check_phrasing, with_labels, without_stray_opening
from finrag.answer.pipeline import Asker
from finrag.db.companies import require_company
from finrag.errors import ExitCode
from finrag.llm.fake import FakeLLM
from tests.conftest import REPO, clean_env, ingested_home, run_finrag
from tests.corpus import excerpt_number, quoted
from tests.test_facts_ingest import _filing
from tests.test_facts_kpi import NORTHWIND

BESTBUY = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"
NOT_ANSWERABLE = {"answerable": False, "claims": []}  # the text route: no quote answers


@pytest.fixture(scope="module")
def facts_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One home for the module: parsing the 10-Q takes ~20 s."""
    folder = tmp_path_factory.mktemp("facts-route")
    northwind = folder / "NORTHWIND_2024_10K.md"
    northwind.write_text(NORTHWIND)  # two revenues printed for FY2024
    files = [BESTBUY, _filing(folder), _mangled_header(folder), northwind]
    with ingested_home(folder / "home", files) as home:
        yield home


def _mangled_header(folder: Path) -> Path:
    """A 10-K whose statement header the PDF text mangled, as Amazon's FY2017 10-K reads:
    'Year Ended December 3 2016' for December 31, 2016."""
    path = folder / "ACME_2017_10K.md"
    path.write_text(
        "# Acme Corp. Form 10-K for the fiscal year ended December 31, 2017\n\n"
        "## Item 8. Financial Statements\n\n### CONSOLIDATED STATEMENTS OF OPERATIONS\n\n"
        "(in millions)\n\n"
        "||Year Ended December 3 2016|Year Ended December 31, 2017|\n|---|---|---|\n"
        "|Total net sales|135,987|177,866|\n|Cost of sales|88,265|111,934|\n"
        "|Operating income|4,186|4,106|\n|Net income|$2,371|$3,033|\n"
    )
    return path


def _asker(home: Path, monkeypatch: pytest.MonkeyPatch, **answer) -> Iterator[tuple]:
    from finrag.config import load_settings
    from finrag.db import open_store

    monkeypatch.setenv("FINRAG_HOME", str(home))
    llm = FakeLLM([])
    settings = load_settings(answer=answer)
    with open_store(settings) as store:
        yield Asker(store, settings, llm=llm), llm


@pytest.fixture
def asker(facts_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Asker, FakeLLM]]:
    """An Asker on the module's store with the model off (--no-llm): template answers."""
    yield from _asker(facts_home, monkeypatch, use_llm=False)


@pytest.fixture
def model_asker(facts_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple]:
    """An Asker whose model is a script (empty until a test fills it)."""
    yield from _asker(facts_home, monkeypatch)


def test_a_quarter_line_item_is_answered_from_facts_without_the_model(asker) -> None:
    ask, llm = asker
    answer = ask.ask("What was Best Buy's revenue in the second quarter of fiscal 2024?")
    assert llm.calls == []
    assert not answer.refused and answer.route == "facts"
    assert answer.answer == (
        "Best Buy's revenue in FY2024 Q2 (the three months ended July 29, 2023) "
        "was $9,583 million [1]."
    )
    (citation,) = answer.citations
    assert citation.n == 1 and citation.document == "BESTBUY_2024Q2_10Q"
    assert citation.pages == [4, 4]
    assert citation.quote == "Revenue (Three Months Ended July 29, 2023): $9,583"
    assert "Statements of Earnings" in citation.section
    assert answer.flags == [FLAG]
    (value,) = answer.fact_values
    assert value["value"] == "9583000000" and value["statement"] == "income_statement"
    assert value["fact_id"] and value["label"] == "Revenue"
    assert answer.retrieval["route"] == "facts"
    assert "revenue" in answer.retrieval["route_reason"]
    # The excerpt [1] is the chunk printing the cell: the chat's checks read it.
    (chunk,) = answer.chunks
    assert chunk.hit.chunk_id == citation.chunk_id and "9,583" in chunk.hit.content
    json.dumps(answer.as_dict())


def test_a_year_asks_for_the_full_year_or_the_balance_at_its_end(asker) -> None:
    ask, llm = asker
    sales = ask.ask("What were Apple's total net sales in fiscal 2023?")
    assert sales.route == "facts", sales.retrieval.get("route_reason")
    # The company as the store names it (here from the file name, "APPLE").
    assert sales.answer.endswith(
        "'s revenue in FY2023 (the year ended September 30, 2023) was $383,285 million [1]."
    )
    assert sales.citations[0].quote == "Total net sales (Years ended September 30, 2023): 383,285"
    # Best Buy's 10-Q prints three balance sheet dates; fiscal 2023 ended January 28, 2023.
    assets = ask.ask("What were Best Buy's total assets at the end of fiscal 2023?")
    assert assets.route == "facts", assets.retrieval.get("route_reason")
    assert assets.answer == (
        "Best Buy's total assets at the end of FY2023 (January 28, 2023) were $15,803 million [1]."
    )
    assert assets.citations[0].pages == [3, 3]
    assert llm.calls == []


def test_kpis_changes_and_growth_are_computed_from_cited_cells(asker) -> None:
    ask, llm = asker
    # Best Buy's statement of earnings, page 4: revenue 9,583 and 10,329 (Q2 FY24, FY23),
    # gross profit 2,220: 2,220 / 9,583 = 23.17 %; 9,583 / 10,329 - 1 = -7.22 %.
    margin = ask.ask("What was Best Buy's gross margin in Q2 of fiscal 2024?")
    assert margin.route == "facts", margin.retrieval["route_reason"]
    assert margin.answer == "Best Buy's gross margin in FY2024 Q2 was 23.2% [1, 2]."
    assert [c.quote for c in margin.citations] == [
        f"{label} (Three Months Ended July 29, 2023): {value}"
        for label, value in (("Gross profit", "2,220"), ("Revenue", "$9,583"))
    ]
    assert all(c.pages == [4, 4] for c in margin.citations)
    (calc,) = margin.calculations
    assert calc.expression == "100 * 2220 / 9583" and round(calc.result, 2) == 23.17
    assert [i["sources"] for i in calc.inputs] == [[1], [2]]

    growth = ask.ask("What was Best Buy's revenue growth in the second quarter of fiscal 2024?")
    assert growth.route == "facts", growth.retrieval["route_reason"]
    assert "-7.2% [1, 2]" in growth.answer
    assert {c.section.split(" · ")[-1] for c in growth.citations} == {"FY2024 Q2", "FY2023 Q2"}

    # Apple's statement of operations (the Markdown 10-K): net income 96,995 -> 93,736.
    change = ask.ask("How did Apple's net income change from FY2023 to FY2024?")
    assert change.route == "facts", change.retrieval["route_reason"]
    assert "went from $96,995 million in FY2023" in change.answer
    assert "to $93,736 million in FY2024" in change.answer
    assert "down 3.4% ($3,259 million)" in change.answer
    assert change.calculations[0].expression == "percent_change(96995, 93736)"

    fell = ask.ask("Did Apple's net income increase between fiscal 2023 and fiscal 2024?")
    assert fell.answer.startswith("No. ")
    assert llm.calls == []


def test_a_date_the_filings_calendar_does_not_allow_is_not_stated(asker) -> None:
    ask, _ = asker
    answer = ask.ask("How did Acme's revenue change from FY2016 to FY2017?")
    assert answer.route == "facts", answer.retrieval["route_reason"]
    assert "December 3," not in answer.answer
    # The day the PDF cut ("December 3 2016") is read as the cover's day of that year: a
    # statement's columns end where the filing's fiscal years end.
    assert answer.fact_values[0]["period_end"] == "2016-12-31"
    assert "$135,987 million in FY2016 (the year ended December 31, 2016) [1]" in answer.answer
    assert "FY2017 (the year ended December 31, 2017) [2]" in answer.answer


def test_a_formula_the_question_defines_is_computed_as_defined(asker) -> None:
    ask, _ = asker
    answer = ask.ask(
        "What was Apple's FY2024 net margin? Net margin is defined as net income divided by "
        "total net sales. Round your answer to two decimal places."
    )
    assert answer.route == "facts", answer.retrieval["route_reason"]
    # 93,736 / 391,035 (the statement of operations) as defined; a margin reads in per cent.
    assert "23.97% [1, 2]" in answer.answer  # two decimals, as asked
    assert answer.calculations[0].expression == "100 * (93736 / 391035)"


def test_a_formula_the_kpi_language_refuses_is_a_gap_not_a_crash(asker) -> None:
    from finrag.answer.facts_route import Company, answer_with_facts
    from finrag.answer.question_plan import Measure, QuestionPlan
    from finrag.facts.lookup import Period

    ask, _ = asker
    plan = QuestionPlan([Measure("formula", "defined", "odd", "revenue / headcount")], [])
    plan.periods = [Period(2024, 2)]
    with ask.store.connect() as conn:
        company_id = require_company(conn, "BBY")[0]
        outcome = answer_with_facts(conn, "?", plan, [Company(company_id, "Best Buy")])
    assert outcome.answer is None and outcome.reason.startswith("facts store: formula:")
    assert "headcount" in outcome.reason


def _text_route(ask: Asker, llm: FakeLLM, question: str):
    llm.replies = [NOT_ANSWERABLE]
    answer = ask.ask(question)
    assert len(llm.calls) == 1, "the text route asked the model"
    assert answer.route == "text" and answer.refusal == "no-evidence"
    assert answer.retrieval["route"] == "text"
    llm.calls.clear()
    return answer


def test_what_the_facts_cannot_answer_goes_the_text_route_with_the_reason(model_asker) -> None:
    ask, llm = model_asker
    # A segment's operating margin: no segment figures answer a ratio (answer.segments).
    segment = _text_route(ask, llm, "What was Best Buy's domestic segment margin in Q2 FY2024?")
    assert "segment" in segment.retrieval["route_reason"]
    # The 10-Q prints the quarter and the half, not the full year: no quarter stands in,
    # and no passage of a filing for the year may answer either (finrag.answer.coverage).
    llm.replies = [NOT_ANSWERABLE]
    year = ask.ask("What was Best Buy's revenue in fiscal 2024?")
    assert year.retrieval["route_reason"] == (
        "facts store: missing: no revenue for FY2024 in the store"
    )
    assert year.refusal == "not-for-period" and not llm.calls
    llm.replies = []
    # A quarter no filing of Best Buy's covers is refused before any route (answer.coverage).
    older = ask.ask("What was Best Buy's revenue in the second quarter of 2021?")
    assert older.refusal == "unheld-period" and not llm.calls
    assert "Best Buy" in older.answer and "Q2 of fiscal 2021" in older.answer


def test_a_fact_conflict_goes_the_text_route_with_both_values(model_asker) -> None:
    ask, llm = model_asker
    answer = _text_route(ask, llm, "What was Northwind's gross margin in fiscal 2024?")
    reason = answer.retrieval["route_reason"]
    assert reason.startswith("facts store: ambiguous:"), reason
    assert "1,250" in reason and "1,310" in reason
    # The year both tables agree on is answered from facts.
    llm.replies = []
    same = ask.ask("What was Northwind's revenue in fiscal 2023?")
    assert same.route == "facts" and "$1,100 million" in same.answer


def test_without_the_model_a_text_question_gets_excerpts_and_no_answer(asker) -> None:
    ask, llm = asker
    answer = ask.ask("What did Best Buy say about its store closures in Q2 of fiscal 2024?")
    assert answer.refused and answer.refusal == "no-llm"
    assert "Closest excerpts: [1] BESTBUY_2024Q2_10Q" in answer.answer
    assert llm.calls == []


def test_the_model_words_the_answer_and_may_not_change_its_numbers(model_asker) -> None:
    ask, llm = model_asker
    question = "What was Best Buy's gross margin in Q2 of fiscal 2024?"
    llm.replies = ["In the second quarter of fiscal 2024 Best Buy's gross margin was 23.2% [1, 2]."]
    worded = ask.ask(question)
    assert worded.route == "facts" and worded.backend == "fake"
    assert worded.answer.startswith("In the second quarter of fiscal 2024")
    assert "23.2%" in llm.calls[0]["messages"][-1]["content"]
    assert "100 * 2220 / 9583" in llm.calls[0]["messages"][-1]["content"]

    llm.replies = ["Best Buy's gross margin was 26.1% [1]."]  # a number it was not given
    kept = ask.ask(question)
    assert kept.answer == "Best Buy's gross margin in FY2024 Q2 was 23.2% [1, 2]."
    assert any("26.1% is not in the checked answer" in f for f in kept.flags)

    llm.replies = []  # the model fails: the template stands
    failed = ask.ask(question)
    assert failed.answer == kept.answer and failed.route == "facts"
    assert any("could not phrase" in f for f in failed.flags)


def test_with_no_model_to_be_had_the_template_answers(facts_home, monkeypatch) -> None:
    from finrag.config import load_settings
    from finrag.db import open_store

    monkeypatch.setenv("FINRAG_HOME", str(facts_home))
    # OLLAMA_HOST is a port nothing listens on (tests/conftest.py, every test).
    # No fallback either: with it, the embedded model would word it (test_llm_fallback.py).
    settings = load_settings(llm={"backend": "ollama", "fallback": False})
    with open_store(settings) as store:
        answer = Asker(store, settings).ask("Best Buy gross margin Q2 FY2024")
    assert answer.route == "facts" and not answer.refused
    assert answer.answer == "Best Buy's gross margin in FY2024 Q2 was 23.2% [1, 2]."
    assert any("could not phrase the answer (cannot reach Ollama" in f for f in answer.flags)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Revenue was $9,583 million [1].", None),
        ("Revenue was $9.9 billion [1].", "9.9 billion"),
        ("Revenue was $9,583 million.", "source labels"),
        ("Revenue was $9,583 million [2].", "source labels"),
        ("No, revenue was $9,583 million [1].", "Yes/No"),
        ("Revenue fell [1].", "leaves out"),
        # Dates are periods, not amounts: the template's need not be repeated.
        ("Revenue was $9,583 million in the quarter [1].", None),
    ],
)
def test_checking_the_model_wording(text: str, problem: str | None) -> None:
    template = "Best Buy's revenue in FY2024 Q2 (the three months ended July 29, 2023) was "
    found = check_phrasing(template + "$9,583 million [1].", text)
    assert (found is None) if problem is None else (problem in found)


def test_a_yes_or_no_the_template_does_not_open_with_is_dropped() -> None:
    template = "PepsiCo's EBITDA margin in FY2022 was 16.5% [1, 2, 3]."
    assert without_stray_opening("Yes, PepsiCo's margin was 16.5%.", template) == (
        "PepsiCo's margin was 16.5%."
    )
    # A yes/no question's answer keeps its own opening for the check to compare.
    assert without_stray_opening("No. It fell [1].", "Yes. It rose [1].") == "No. It fell [1]."
    assert "Yes/No" in check_phrasing("Yes. It rose [1].", "No. It fell [1].")


def test_labels_a_small_model_dropped_are_put_back_after_the_figures() -> None:
    template = "PepsiCo's EBITDA margin in FY2022 was 16.5% [1, 2, 3]."
    worded = with_labels("In fiscal 2022 PepsiCo's EBITDA margin was 16.5%. Solid.", template)
    assert worded == "In fiscal 2022 PepsiCo's EBITDA margin was 16.5% [1, 2, 3]. Solid."
    assert check_phrasing(template, worded) is None
    # Labels the model wrote are its own: a wrong one is not repaired but refused.
    assert with_labels("It was 16.5% [4].", template) == "It was 16.5% [4]."
    assert "source labels" in check_phrasing(template, "It was 16.5% [4].")


def test_a_reason_question_takes_the_mixed_route_with_the_facts_first(model_asker) -> None:
    ask, llm = model_asker
    seen: list[str] = []
    driver = "primarily due to improved financial performance from our membership offerings"
    llm.replies = [quoted(driver, "Better membership economics lifted it", seen)]
    answer = ask.ask("What drove Best Buy's gross margin in Q2 of fiscal 2024?")
    assert answer.route == "mixed", answer.retrieval["route_reason"]
    assert "reasons" in answer.retrieval["route_reason"]
    # The figure is the facts route's, from the stored cells [1] and [2]; the reason is a
    # sentence of the filing the scorer selected, the only thing the model was asked.
    assert answer.calculations[0].expression == "100 * 2220 / 9583"
    assert "23.2%" in answer.answer.split("Better membership")[0]
    assert driver in seen[-1] and "Gross profit: Three Months" not in seen[-1]
    n = excerpt_number([{"content": seen[-1]}], driver)
    assert n > 2 and answer.answer.endswith(f"Better membership economics lifted it [{n}].")
    assert answer.unverified_numbers == []
    assert answer.citations[0].document == "BESTBUY_2024Q2_10Q"
    assert driver in answer.evidence[-1]["quote"] and answer.evidence[-1]["page"] == 18


def test_a_reason_that_turns_the_figures_move_around_is_removed(model_asker) -> None:
    ask, llm = model_asker

    def reply(messages: list[dict]) -> dict:
        # Both claims rest on the last quote shown; the first says the margin fell.
        shown = "\n".join(str(m["content"]) for m in messages)
        n = max(int(k) for k in re.findall(r"^\[(\d+)\] ", shown, re.M))
        said = ["The decline in gross margin came from membership.", "Services grew."]
        return {"answerable": True, "claims": [{"text": t, "source": n} for t in said]}

    llm.replies = [reply]
    answer = ask.ask(
        "What drove the change in Best Buy's gross margin from Q2 FY2023 to Q2 FY2024?"
    )
    assert answer.route == "mixed", answer.retrieval["route_reason"]
    assert " up " in answer.answer.split("Services grew")[0], answer.answer  # 22.1% -> 23.2%
    assert "decline in gross margin" not in answer.answer
    assert "Services grew" in answer.answer
    assert any("turns the move around" in f for f in answer.flags)


def test_chat_takes_the_facts_route_and_says_so_in_its_trace(model_asker) -> None:
    from finrag.agent.session import ChatSession

    ask, llm = model_asker
    llm.replies = ["Apple's total net sales were $383,285 million in fiscal 2023 [1]."]
    chat = ChatSession(ask.store, ask.settings, name="facts", llm=llm)
    turn = chat.turn("What were Apple's total net sales in fiscal 2023?")
    assert turn.reply == "Apple's total net sales were $383,285 million in fiscal 2023 [1]."
    # No model check after the answer: its one number is a stored cell.
    assert turn.trace["path"] == ["contextualize", "safety", "intent", "answer"]
    assert turn.verified is True
    (answer_step,) = [s for s in turn.trace["steps"] if s["node"] == "answer"]
    assert answer_step["out"].startswith("facts route (facts store: value of revenue for FY2023)")
    assert len(llm.calls) == 1


def test_an_unknown_company_is_still_refused_without_the_model(asker) -> None:
    ask, llm = asker
    answer = ask.ask("What was Initech's revenue in the second quarter of fiscal 2024?")
    assert answer.refused and answer.refusal == "unknown-company"
    assert answer.route == "text" and llm.calls == []


def test_ask_json_shows_the_facts_route(facts_home: Path, tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text("[]")  # no reply: a model call would fail the command
    env = clean_env(
        FINRAG_HOME=str(facts_home),
        FINRAG_EMBED__BACKEND="hash",
        FINRAG_LLM__BACKEND="fake",
        FINRAG_LLM__FAKE_SCRIPT=str(script),
    )
    question = "What was Best Buy's revenue in the second quarter of fiscal 2024?"
    result = run_finrag("ask", question, "--no-llm", "--json", env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["route"] == "facts" and data["retrieval"]["route"] == "facts"
    assert "$9,583 million [1]" in data["answer"]
    (citation,) = data["citations"]
    assert citation["document"] == "BESTBUY_2024Q2_10Q.pdf" and citation["pages"] == [4, 4]
    assert citation["quote"] == "Revenue (Three Months Ended July 29, 2023): $9,583"
    assert data["backend"] is None and data["tokens"] == {"prompt": 0, "completion": 0}

    margin = run_finrag("ask", "Best Buy gross margin Q2 FY2024", "--no-llm", env=env)
    assert margin.returncode == 0, margin.stderr
    assert margin.stdout.startswith("Best Buy's gross margin in FY2024 Q2 was 23.2% [1, 2].")
    assert "[2] BESTBUY_2024Q2_10Q p.4" in margin.stdout
    assert "gross margin FY2024 Q2 = 100 * gross_profit / revenue: 100 * 2220 / 9583" in (
        margin.stdout
    )
    assert "route: facts" in margin.stderr

    text = run_finrag("ask", "What risks does Best Buy face in fiscal 2024?", "--no-llm", env=env)
    assert text.returncode == ExitCode.NO_ANSWER, text.stderr

    refused = run_finrag("ask", "What was Initech's revenue in fiscal 2024?", "--json", env=env)
    assert refused.returncode == ExitCode.NO_ANSWER, refused.stderr
    assert json.loads(refused.stdout)["refusal"] == "unknown-company"


# ------------------------------------------------------------------ refuse rather than guess

# What a model would say if it were asked: a figure, quoted from the excerpt it was given.
GUESS = [
    {
        "answerable": True,
        "facts": [{"source": 1, "quote": "Revenue", "value": ""}],
        "calculations": [],
    },
    "It was $9,583 million [1].",
]


@pytest.mark.parametrize(
    ("question", "refusals", "names"),
    [
        # A hyphenated company in no alias table: never another company's figure.
        (
            "What were Vexo-Quill Holdings' total assets in fiscal 2024?",
            {"unknown-company"},
            "Vexo-Quill",
        ),
        ("what were vexo-quill holdings total assets?", {"unknown-company"}, "vexo-quill"),
        # A fiscal year no Best Buy filing reports (the 10-Q's own year is near it).
        (
            "What was Best Buy's revenue in fiscal 2022?",
            {"unheld-period", "not-for-period"},
            "FY2024 Q2 10-Q",
        ),
        # A quarter the held filings do not report.
        (
            "What was Best Buy's revenue in the fourth quarter of fiscal 2024?",
            {"not-for-period"},
            "FY2024 Q2",
        ),
    ],
)
def test_with_the_model_on_an_unheld_company_or_period_is_refused(
    model_asker, question, refusals, names
) -> None:
    ask, llm = model_asker
    llm.replies = list(GUESS)
    answer = ask.ask(question)
    assert answer.refused and answer.refusal in refusals, answer.answer
    assert names in answer.answer and "Best Buy Co., Inc. (BBY)" in answer.answer
    assert llm.calls == [], "the model was asked"
    assert answer.citations == [] and "9,583" not in answer.answer


def test_a_missing_measure_is_read_only_from_that_companys_filing_for_the_period(
    model_asker,
) -> None:
    ask, llm = model_asker
    llm.replies = [NOT_ANSWERABLE]
    # The 10-Q prints six months of cash flows, not the quarter's: the facts lack it.
    answer = ask.ask(
        "How much cash did Best Buy's operating activities provide in Q2 of fiscal 2024?"
    )
    assert answer.retrieval["route_reason"].startswith("facts store: missing:")
    assert len(llm.calls) == 1 and answer.context
    assert all(c["label"].split(" ")[1].startswith("BESTBUY_2024Q2_10Q") for c in answer.context)


def test_cli_refuses_an_unheld_quarter_with_exit_7_and_the_model_on(
    facts_home: Path, tmp_path: Path
) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(GUESS))
    env = clean_env(
        FINRAG_HOME=str(facts_home),
        FINRAG_EMBED__BACKEND="hash",
        FINRAG_LLM__BACKEND="fake",
        FINRAG_LLM__FAKE_SCRIPT=str(script),
    )
    question = "What was Best Buy's revenue in the fourth quarter of fiscal 2024?"
    result = run_finrag("ask", question, env=env)
    assert result.returncode == ExitCode.NO_ANSWER, result.stderr
    assert result.stdout.startswith(
        "The facts store holds no revenue of Best Buy Co., Inc. for FY2024 Q4"
    )
    assert "it holds it for FY2023 Q2, FY2024 Q2" in result.stdout


# ------------------------------------------------------------------ routing by the question


@pytest.mark.parametrize(
    ("question", "routes"),
    [
        # Narrative cues naming a line item: text or mixed, never a bare stored figure.
        ("What did Best Buy say about inventory in the quarter?", {"mixed", "text"}),
        ("Discuss Best Buy's gross margin in Q2 of fiscal 2024.", {"mixed"}),
        ("Describe the trend in Best Buy's operating income.", {"mixed"}),
        ("Comment on Best Buy's SG&A in the quarter.", {"mixed", "text"}),
        ("What drove the fall in Best Buy's revenue this quarter?", {"mixed"}),
        ("Why did Best Buy's gross margin move?", {"mixed"}),
        ("Explain Best Buy's net income for the latest quarter.", {"mixed"}),
        ("What is Best Buy's outlook for revenue?", {"text"}),
        ("What guidance did Best Buy give for comparable sales?", {"text"}),
        ("What risks to inventory does Best Buy mention?", {"mixed", "text"}),
        ("Were there one-off items in Best Buy's operating income this quarter?", {"mixed"}),
        ("Does litigation threaten Best Buy's net income?", {"mixed", "text"}),
        # Figures alone: facts.
        ("What was Best Buy's revenue in the quarter?", {"facts"}),
        ("Best Buy's most recent operating income?", {"facts"}),
    ],
)
def test_the_route_reads_the_question(asker, question, routes) -> None:
    ask, llm = asker
    answer = ask.ask(question)
    assert answer.retrieval["route"] in routes, answer.retrieval["route_reason"]
    assert llm.calls == []


def test_no_period_named_is_the_latest_held_and_the_answer_says_which(asker) -> None:
    ask, _ = asker
    answer = ask.ask("What was Best Buy's revenue in the quarter?")
    assert answer.route == "facts"
    assert "$9,583 million [1]" in answer.answer and "19,050" not in answer.answer
    assert "FY2024 Q2 is the latest the store holds for Best Buy" in answer.answer
    # "Did it improve": the latest quarter against the same quarter a year before.
    change = ask.ask("Did Best Buy's gross margin improve, and what drove it?")
    assert change.route == "mixed" and change.answer.startswith("Yes.")
    assert "FY2023 Q2" in change.answer and "FY2024 Q2" in change.answer
    # No annual filing of Best Buy is held: "last year" is not stood in for by a quarter.
    year = ask.ask("What was Best Buy's revenue last year?")
    assert year.retrieval["route"] == "text"
    assert "no filing reporting a fiscal year" in year.retrieval["route_reason"]


class _NoEmbedding:
    """The store's embedder, failing the test when asked to embed: no search ran."""

    def __init__(self, real) -> None:
        self.real = real

    def __getattr__(self, name: str):
        return getattr(self.real, name)

    def embed(self, texts):
        raise AssertionError(f"embedded {texts!r}")


def test_a_facts_answer_or_an_unknown_company_runs_no_search(asker) -> None:
    """`ask --no-llm` answers from facts, or refuses a company the store lacks, before any
    embedder is asked for a vector; a question for the text route still searches."""
    ask, llm = asker
    ask.retriever.embedder = _NoEmbedding(ask.retriever.embedder)
    answer = ask.ask("What was Best Buy's revenue in the second quarter of fiscal 2024?")
    assert answer.route == "facts" and "$9,583 million [1]" in answer.answer
    assert answer.retrieval["variant"] == "none" and answer.citations[0].pages == [4, 4]
    refused = ask.ask("What was Initech's revenue in the second quarter of fiscal 2024?")
    assert refused.refused and refused.refusal == "unknown-company"
    with pytest.raises(AssertionError, match="embedded"):
        ask.ask("What did Best Buy say about its store closures?")
    assert llm.calls == []


def _member_facts(home: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    from finrag.config import load_settings
    from finrag.db import open_store

    monkeypatch.setenv("FINRAG_HOME", str(home))
    with open_store(load_settings()) as store, store.connect() as conn:
        return conn.execute(
            "SELECT f.dimensions, f.concept, f.value, f.page, f.table_row, f.table_column, "
            "f.checks, f.fiscal_year, f.fiscal_quarter, f.months, f.label FROM facts f "
            "JOIN documents d ON d.id = f.document_id WHERE d.path LIKE '%%BESTBUY%%' "
            "AND f.source = 'table' AND f.dimensions <> '[]'::jsonb "
            "AND f.dimensions->0->>0 <> 'column'"
        ).fetchall()


def test_a_printed_segment_table_is_read_as_members_checked_by_its_total(
    facts_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Best Buy's segment note (page 13): Domestic and International revenue add up to
    total revenue in all four columns; each product category under "Domestic:" adds up
    to total Domestic revenue."""
    facts = _member_facts(facts_home, monkeypatch)
    q2 = {
        (tuple(map(tuple, dims)), concept): (value, page, checks)
        for dims, concept, value, page, _, _, checks, year, quarter, months, _ in facts
        if (year, quarter, months) == (2024, 2, 3)
    }
    revenue, operating = "us-gaap:Revenues", "us-gaap:OperatingIncomeLoss"
    assert q2[((("segment", "Domestic"),), revenue)][:2] == (8_890_000_000, 13)
    assert q2[((("segment", "International"),), revenue)][:2] == (693_000_000, 13)
    assert q2[((("segment", "Domestic"),), operating)][0] == 329_000_000
    assert q2[((("segment", "International"),), operating)][0] == 19_000_000
    appliances = q2[((("segment", "International"), ("product", "Appliances")), revenue)]
    assert appliances[0] == 92_000_000
    assert all("member_total" in checks for _, _, checks in q2.values())
    # The consolidated row stays the entity total: no member row reads as the company's.
    assert not any(label.lower().startswith("total revenue") for *_, label in facts)
    # The MD&A's "Revenue" row of the Domestic segment's own table is a line, not a member.
    assert all(page in (13, 14) for _, _, _, page, *_ in facts)


def test_segment_questions_on_a_printed_filing_are_answered_from_its_tables(asker) -> None:
    ask, llm = asker
    larger = ask.ask("Which of Best Buy's segments brought in the most revenue in Q2 FY2024?")
    assert larger.route == "facts", larger.retrieval["route_reason"]
    assert larger.answer.startswith("Domestic was Best Buy's largest segment by revenue")
    assert "Domestic $8,890 million [1]" in larger.answer
    assert "International $693 million [2]" in larger.answer
    assert {c.pages[0] for c in larger.citations} == {13}

    faster = ask.ask(
        "Did Best Buy's International segment grow its revenue faster than Domestic "
        "in the second quarter of fiscal 2024?"
    )
    assert faster.route == "facts", faster.retrieval["route_reason"]
    # International 760 -> 693 (-8.8 %), Domestic 9,569 -> 8,890 (-7.1 %): it fell more.
    assert faster.answer.startswith("No. ")
    assert "International fell 8.8%" in faster.answer and "Domestic fell 7.1%" in faster.answer
    assert {c.expression for c in faster.calculations} == {
        "percent_change(760, 693)",
        "percent_change(9569, 8890)",
    }

    # Asked the other way round, the same figures say Yes: falling faster is the lower rate.
    fell = ask.ask(
        "Did Best Buy's International segment revenue fall faster than Domestic "
        "in the second quarter of fiscal 2024?"
    )
    assert fell.route == "facts", fell.retrieval["route_reason"]
    assert fell.answer.startswith("Yes. ")
    fastest = ask.ask("Which Best Buy segment's revenue declined fastest in Q2 FY2024?")
    assert fastest.route == "facts", fastest.retrieval["route_reason"]
    assert "International fell the most" in fastest.answer, fastest.answer

    one = ask.ask("How fast did Best Buy's International segment revenue grow in Q2 FY2024?")
    assert one.route == "facts", one.retrieval["route_reason"]
    assert one.answer.startswith("Best Buy's revenue growth by segment: International fell 8.8%")

    share = ask.ask("What share of Best Buy's Q2 FY2024 revenue came from the Domestic segment?")
    assert share.route == "facts", share.retrieval["route_reason"]
    # 8,890 of the statement of earnings' 9,583: 92.8 %.
    assert "Domestic $8,890 million [2] of $9,583 million [1], 92.8%" in share.answer
    assert [c.pages[0] for c in share.citations] == [4, 13]
    assert llm.calls == []


@pytest.mark.parametrize(
    ("question", "opens"),
    [
        # an analyst's words for the comparison: the worst top line is the lowest growth
        ("Which Best Buy segment had the worst topline performance in Q2 FY2024?",
         "International fell the most"),
        ("Which Best Buy segment performed best by top line in Q2 FY2024?",
         "Domestic fell the least"),
    ],
)  # fmt: skip
def test_segment_performance_in_an_analysts_words(asker, question, opens) -> None:
    ask, _ = asker
    answer = ask.ask(question)
    assert answer.route == "facts", answer.retrieval["route_reason"]
    assert opens in answer.answer, answer.answer


def test_a_question_naming_no_company_is_confined_to_the_one_its_periods_allow(asker) -> None:
    ask, _ = asker
    # Only Best Buy's filings hold a second quarter of fiscal 2024 in this store.
    answer = ask.ask("What was revenue in the second quarter of fiscal 2024?")
    assert answer.route == "facts", answer.retrieval
    assert "$9,583 million" in answer.answer
    assert answer.answer.endswith(
        "(No company was named: Best Buy Co., Inc. is the only company whose filings cover "
        "FY2024 (Q2).)"
    )
    # Apple's and Northwind's 10-Ks both hold fiscal 2024: nothing is implied.
    several = ask.ask("What was net income in fiscal 2024?")
    assert "No company was named" not in several.answer


def test_a_balance_between_a_year_end_and_a_later_quarter_end(asker) -> None:
    ask, _ = asker
    answer = ask.ask(
        "Did Best Buy's cash and cash equivalents fall from the end of FY 2023 to Q2 of FY2024?"
    )
    assert answer.route == "facts", answer.retrieval
    assert answer.answer.startswith("Yes."), answer.answer
    assert "at the end of FY2023" in answer.answer and "at the end of FY2024 Q2" in answer.answer


def test_a_wording_that_turns_the_movement_around_is_refused() -> None:
    template = "No. Revenue went from $9,583 million [1] to $9,900 million [2], up 3.3%."
    assert (
        check_phrasing(template, "No. Revenue rose from $9,583 million [1] to $9,900 million [2].")
        is None
    )
    turned = "No. Revenue fell from $9,583 million [1] to $9,900 million [2], 3.3%."
    assert "went down" in check_phrasing(template, turned)


def test_a_segment_question_after_an_adjusted_figure_is_not_answered_from_reported_ones(
    asker,
) -> None:
    ask, _ = asker
    # The store holds reported segment revenue only: organic or ex-acquisition growth is not it.
    for question in (
        "Which of Best Buy's segments grew fastest organically in Q2 FY2024?",
        "Excluding acquisitions, which Best Buy segment grew its revenue fastest in Q2 FY2024?",
    ):
        answer = ask.ask(question)
        assert answer.route != "facts", answer.answer


def test_a_question_after_the_segments_names_lists_them_with_their_revenue(asker) -> None:
    ask, _ = asker
    listed = ask.ask("What are Best Buy's reportable segments in Q2 FY2024?")
    assert listed.route == "facts", listed.retrieval["route_reason"]
    assert listed.answer.startswith("Best Buy reports these segments for FY2024 Q2: Domestic, ")
    assert "Domestic $8,890 million [1]" in listed.answer  # the figure that ranks them
    # a question naming no breakdown asks no list of one
    plain = ask.ask("What are Best Buy's total revenues in Q2 FY2024?")
    assert "reports these segments" not in plain.answer


# ---- dependent hops (finrag.answer.hop_plan, finrag.answer.hops): issue 30 ----------


def _chain(ask: Asker, question: str):
    from finrag.answer.hop_plan import plan_for
    from finrag.answer.hops import run_chain

    with ask.store.connect() as conn:
        plan, note = plan_for(conn, question, None)
    assert plan is not None and note is None, question
    return run_chain(ask.store, plan, question, lambda q, _hop: ask.ask(q))


@pytest.mark.parametrize(
    ("rank", "segment", "income", "mark"),
    [
        ("largest", "Domestic", "$329 million", 3),
        ("smallest", "International", "$19 million", 3),
        # Listed largest first by the segments route: the cited values pick, not the order.
        ("weakest", "International", "$19 million", 3),
    ],
)
def test_a_dependent_question_takes_hop_1s_answer_into_hop_2(
    asker, rank, segment, income, mark
) -> None:
    """Best Buy's segment note: the segment hop 1's cited values rank first is the one hop
    2 asks about, so "largest" and "smallest" get different operating incomes, each
    cited."""
    ask, llm = asker
    question = (
        f"Which of Best Buy's segments had the {rank} revenue in Q2 FY2024, "
        "and what was its operating income?"
    )
    chain = _chain(ask, question)
    first, second = chain.runs
    assert first.question == f"Which of Best Buy's segments had the {rank} revenue in Q2 FY2024?"
    assert first.status == "answered" and first.entity == segment
    assert first.answer.route == "facts"
    assert first.how.startswith("the highest cited" if rank == "largest" else "the lowest cited")
    assert second.question == (
        f"What was Best Buy's {segment} segment's operating income in Q2 FY2024?"
    )
    assert second.status == "answered" and second.answer.route == "facts"
    assert f"{segment} {income} [{mark}]" in second.answer.answer
    # One numbering: hop 1 cites [1] and [2] (both segments' revenue), hop 2 goes on at [3].
    combined = chain.answer
    assert [c.n for c in combined.citations] == [1, 2, 3]
    assert combined.citations[2].quote.endswith(income.split()[0].strip("$"))
    assert combined.citations[2].pages == [13, 13]
    assert f"(2) {second.question} " in combined.answer and f"[{mark}]" in combined.answer
    assert not combined.refused and combined.route == "multihop"
    assert [r["status"] for r in chain.rows] == ["answered", "answered"]
    assert chain.rows[1]["depends_on"] == [1]
    assert chain.rows[0]["passes_on"]["value"] == segment
    assert llm.calls == []


def test_ask_json_gives_the_plan_and_a_failed_hop_stops_the_chain(
    facts_home: Path, tmp_path: Path
) -> None:
    script = tmp_path / "replies.json"
    script.write_text("[]")
    env = clean_env(
        FINRAG_HOME=str(facts_home),
        FINRAG_EMBED__BACKEND="hash",
        FINRAG_LLM__BACKEND="fake",
        FINRAG_LLM__FAKE_SCRIPT=str(script),
    )
    done = run_finrag(
        "ask",
        "Best Buy's segment with the smallest revenue in Q2 FY2024: what was its operating income?",
        "--no-llm",
        "--json",
        env=env,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["planner"] == "rules" and data["route"] == "multihop"
    assert [set(row) >= {"hop", "question", "depends_on", "answer", "citations", "status"}
            for row in data["plan"]] == [True, True]  # fmt: skip
    one, two = data["plan"]
    assert one["question"] == "Which is Best Buy's segment with the smallest revenue in Q2 FY2024?"
    assert one["passes_on"]["value"] == "International" and one["depends_on"] == []
    assert two["question"] == (
        "What was Best Buy's International segment's operating income in Q2 FY2024?"
    )
    assert "$19 million [3]" in two["answer"] and two["citations"][0]["n"] == 3

    # Hop 2 asks for reasons, which no model is on to read: the chain stops there, says
    # what hop 1 found, and the command exits 6 (partial).
    partial = run_finrag(
        "ask",
        "Which of Best Buy's segments had the largest revenue in Q2 FY2024? "
        "What drove that segment's margin?",
        "--no-llm",
        "--json",
        env=env,
    )
    assert partial.returncode == ExitCode.PARTIAL, partial.stderr
    data = json.loads(partial.stdout)
    assert [r["status"] for r in data["plan"]] == ["answered", "refused"]
    assert (
        data["plan"][1]["question"]
        == "What drove Best Buy's Domestic segment's margin in Q2 FY2024?"
    )
    assert data["answer"].startswith("(1) Which of Best Buy's segments had the largest revenue")
    assert "Domestic $8,890 million [1]" in data["answer"]
    assert data["answer"].endswith("The chain stopped at hop 2 of 2: what hop 1 found is above.")
    assert not data["refused"] and [c["n"] for c in data["citations"]] == [1, 2]

    # Hop 1 finds nothing (no filing for fiscal 2019): nothing to carry, exit 7.
    nothing = run_finrag(
        "ask",
        "Which of Best Buy's segments had the largest revenue in fiscal 2019, and what was "
        "its operating income?",
        "--no-llm",
        "--json",
        env=env,
    )
    assert nothing.returncode == ExitCode.NO_ANSWER, nothing.stderr
    data = json.loads(nothing.stdout)
    assert [r["status"] for r in data["plan"]] == ["refused", "skipped"]
    assert data["refused"] and data["plan"][1]["answer"] is None

    # The text output prints the plan briefly.
    text = run_finrag(
        "ask",
        "Which of Best Buy's segments had the largest revenue in Q2 FY2024, and what was its "
        "operating income?",
        "--no-llm",
        env=env,
    )
    assert text.returncode == 0, text.stderr
    assert "Plan (rules)" in text.stdout
    assert "2. What was Best Buy's Domestic segment's operating income in Q2 FY2024? (uses 1)" in (
        text.stdout
    )
