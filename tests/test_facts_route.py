"""The facts route of `ask`: one reported line item of one company for one period, answered
from the facts store with its printed cell cited, no model call; anything else goes the
text route as before. A real embedded store holding Best Buy's Q2 FY24 10-Q (PDF) and a
small Markdown 10-K with Apple's statement of operations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from finrag.answer.facts_route import FLAG, metric_question
from finrag.answer.pipeline import Asker
from finrag.db.embedded import EmbeddedServer
from finrag.errors import ExitCode
from finrag.llm.fake import FakeLLM
from tests.conftest import DEAD_OLLAMA, REPO, clean_env, run_finrag
from tests.test_facts_ingest import _filing

BESTBUY = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"
NOT_ANSWERABLE = {"answerable": False, "facts": [], "calculations": []}


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("What was Best Buy's revenue in the second quarter of fiscal 2024?", "revenue"),
        ("Best Buy net sales Q2 FY24", "revenue"),
        ("What was 3M's FY2018 capital expenditure?", "capital_expenditure"),
        ("Apple capex in fiscal 2023", "capital_expenditure"),
        ("What was Apple's cost of revenue in 2023?", "cost_of_revenue"),
        ("What were Apple's total assets at the end of fiscal 2023?", "total_assets"),
        ("What was Apple's diluted EPS in 2023?", "eps_diluted"),
        ("What was Apple's net change in cash in 2023?", "change_in_cash"),
        ("What was Best Buy's revenue growth in Q2 FY2024?", None),
        ("How did Apple's revenue change in 2023?", None),
        ("Compare Apple's revenue in 2023 and 2022", None),
        ("Apple revenue vs net income 2023", None),
        ("What was Apple's revenue and net income in 2023?", None),
        ("What was Apple's gross margin in 2023?", None),
        ("What was Apple's free cash flow in 2023?", None),
        ("What was Apple's cash flow from investing in 2023?", None),
        ("What drove Apple's revenue in 2023?", None),
        ("Why did Apple's capex fall in 2023?", None),
        ("What is Apple's average inventory in 2023?", None),
        ("Who is Apple's chief executive?", None),
    ],
)
def test_a_question_names_one_line_item_or_none(question: str, name: str | None) -> None:
    found = metric_question(question)
    assert (found.name if found else None) == name


@pytest.fixture(scope="module")
def facts_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One home for the module: parsing the 10-Q takes ~20 s."""
    from finrag.config import load_settings
    from finrag.db import open_store
    from finrag.ingest.pipeline import ingest

    home = tmp_path_factory.mktemp("facts-route") / "home"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FINRAG_HOME", str(home))
        mp.setenv("FINRAG_EMBED__BACKEND", "hash")
        mp.setenv("OLLAMA_HOST", DEAD_OLLAMA)
        settings = load_settings(ingest={"workers": 0})
        with open_store(settings) as store:
            report = ingest([BESTBUY, _filing(home.parent)], settings, store)
            assert [r.status for r in report.results] == ["ingested", "ingested"], [
                r.reason for r in report.results
            ]
            with store.connect() as conn:
                held = {name for (name,) in conn.execute("SELECT name FROM companies")}
            assert len(held) == 2, held
    yield home
    EmbeddedServer(home).delete_cluster()


@pytest.fixture
def asker(facts_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Asker, FakeLLM]]:
    """An Asker on the module's store whose model has no reply: a call to it fails."""
    from finrag.config import load_settings
    from finrag.db import open_store

    monkeypatch.setenv("FINRAG_HOME", str(facts_home))
    llm = FakeLLM([])
    with open_store(load_settings()) as store:
        yield Asker(store, load_settings(), llm=llm), llm


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
    assert citation.quote == "Revenue: $9,583"
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
    assert sales.citations[0].quote == "Total net sales: 383,285"
    # Best Buy's 10-Q prints three balance sheet dates; fiscal 2023 ended January 28, 2023.
    assets = ask.ask("What were Best Buy's total assets at the end of fiscal 2023?")
    assert assets.route == "facts", assets.retrieval.get("route_reason")
    assert assets.answer == (
        "Best Buy's total assets at the end of FY2023 (January 28, 2023) were $15,803 million [1]."
    )
    assert assets.citations[0].pages == [3, 3]
    assert llm.calls == []


def _text_route(ask: Asker, llm: FakeLLM, question: str):
    llm.replies = [NOT_ANSWERABLE]
    answer = ask.ask(question)
    assert len(llm.calls) == 1, "the text route asked the model"
    assert answer.route == "text" and answer.refusal == "not-in-context"
    assert answer.retrieval["route"] == "text"
    llm.calls.clear()
    return answer


def test_a_computation_or_comparison_goes_the_text_route(asker) -> None:
    ask, llm = asker
    growth = _text_route(
        ask, llm, "What was Best Buy's revenue growth in the second quarter of fiscal 2024?"
    )
    assert "line item" in growth.retrieval["route_reason"]
    _text_route(ask, llm, "Compare Best Buy's revenue and operating income in Q2 fiscal 2024")


def test_a_period_the_store_lacks_goes_the_text_route(asker) -> None:
    ask, llm = asker
    # The 10-Q prints the quarter and the half, not the full year: no quarter stands in.
    year = _text_route(ask, llm, "What was Best Buy's revenue in fiscal 2024?")
    assert year.retrieval["route_reason"] == "the facts store holds no single revenue for FY2024"
    older = _text_route(ask, llm, "What was Best Buy's revenue in the second quarter of 2021?")
    assert "FY2021 Q2" in older.retrieval["route_reason"]


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
    result = run_finrag("ask", question, "--json", env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["route"] == "facts" and data["retrieval"]["route"] == "facts"
    assert "$9,583 million [1]" in data["answer"]
    (citation,) = data["citations"]
    assert citation["document"] == "BESTBUY_2024Q2_10Q" and citation["pages"] == [4, 4]
    assert citation["quote"] == "Revenue: $9,583"

    plain = run_finrag("ask", question, env=env)
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.startswith("Best Buy's revenue in FY2024 Q2")
    assert "[1] BESTBUY_2024Q2_10Q p.4" in plain.stdout
    assert FLAG in plain.stderr

    refused = run_finrag("ask", "What was Initech's revenue in fiscal 2024?", "--json", env=env)
    assert refused.returncode == ExitCode.NO_ANSWER, refused.stderr
    assert json.loads(refused.stdout)["refusal"] == "unknown-company"
