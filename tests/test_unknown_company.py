"""A company the store does not hold, however the question names it, is refused by ask and
called out by search — never answered from another company's filing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pydantic import SecretStr

from finrag.answer.pipeline import Asker
from finrag.config import load_settings
from finrag.db import open_store
from finrag.errors import ExitCode
from finrag.llm.fake import FakeLLM
from finrag.retrieve import Retriever
from finrag.retrieve.filters import extract_query_filters
from tests.conftest import run_finrag
from tests.corpus import GLOBEX_PAGES, add_document, quoted


def unknown(store, question: str) -> list[str]:
    with store.connect() as conn:
        return extract_query_filters(question, conn).unknown_companies


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What was Microsoft revenue in 2024?", ["Microsoft"]),  # no possessive
        ("Microsoft revenue in 2024?", ["Microsoft"]),  # opening the question
        ("what was microsoft revenue in 2024", ["Microsoft"]),  # lower case
        ("MSFT revenue 2024", ["Microsoft"]),  # ticker
        ("What was NVDA revenue?", ["Nvidia"]),
        ("What was Initech revenue in 2023?", ["Initech"]),  # no list knows it
        ("What was Initech Inc. revenue?", ["Initech"]),
        ("How did Home Depot margins change?", ["Home Depot"]),
        ("Revenue of Hooli in FY2023", ["Hooli"]),
        ("What was ZYXW revenue?", ["ZYXW"]),  # an unknown ticker-like word
        ("What was Tesla's revenue in 2023?", ["Tesla"]),
        ("Compare Globex and Initech revenue", ["Initech"]),  # beside a held one
        ("What did Apple Hospitality pay in 2022?", ["Apple Hospitality"]),
        ("What was J&J's revenue in 2023?", ["Johnson & Johnson"]),  # a nickname
        ("How did AMEX's card fees change?", ["American Express"]),
        ("What did Block (formerly Square) report for revenue?", ["Block"]),
        ("What did Initrode (f/k/a Initech) report?", ["Initrode"]),
        # Hyphenated names in no alias table, however they are written.
        ("What were the total assets of Vexo-Quill Holdings?", ["Vexo-Quill"]),
        ("what were vexo-quill holdings total assets in 2023", ["vexo-quill"]),
        ("how large is vexo-quill's balance sheet?", ["vexo-quill"]),
        ("Vexo-Quill total assets 2023", ["Vexo-Quill"]),
        # Each word is in a stored filing ("anvils and rockets"), the name in none.
        ("What did Anvil Rockets earn in 2023?", ["Anvil Rockets"]),
    ],
)
def test_a_name_the_store_does_not_hold_is_found(store_and_settings, question, names) -> None:
    store, _ = store_and_settings
    assert unknown(store, question) == names


@pytest.mark.parametrize(
    "question",
    [
        # Sentence-initial capitals and question words.
        "What was ACME revenue in 2023?",
        "How did Globex capital expenditures change?",
        "Compare ACME and Globex Net Income for FY2023",
        "Explain ACME's capex",
        "Summarize the risks.",
        # Metric names, as analysts capitalise them.
        "What were ACME's Revenue, Net Income, EBITDA and PP&E in Q2?",
        "What was Globex CapEx under GAAP in FY2023?",
        "What was the Free Cash Flow and Operating Income of ACME?",
        # Statements, periods, months, places, segments.
        "What does the Consolidated Statements of Cash Flows show for Globex in March 2023?",
        "How much U.S. revenue came from the Americas and EMEA in 2Q24?",
        "What were ACME Rockets segment sales?",  # a segment named in ACME's filing
        "What was ACME's 10-K Item 7 MD&A outlook for December?",
        # Generic references to a company.
        "What was the Company's revenue in 2023?",
        "How is the company doing?",
        "WHAT WAS ACME REVENUE IN 2023?",
        # Hyphenated finance words and lower-case vocabulary.
        "What were ACME's year-end cash and one-off costs?",
        "Did the company's long-term debt rise?",
        "What did acme's management say about revenue?",
    ],
)
def test_false_friends_are_not_company_names(store_and_settings, question) -> None:
    store, _ = store_and_settings
    assert unknown(store, question) == []


def test_ask_refuses_a_company_named_without_a_possessive(store_and_settings) -> None:
    store, settings = store_and_settings
    llm = FakeLLM([])  # any call would fail: there is no reply
    answer = Asker(store, settings, llm=llm).ask("What was Microsoft revenue in 2023?")
    assert answer.refused and answer.refusal == "unknown-company"
    assert answer.answer.startswith("Microsoft is not in your filings")
    assert "ACME: FY2023 10-K" in answer.answer and "Globex: FY2023 10-K" in answer.answer
    assert llm.calls == []


def test_ask_refuses_a_nickname_naming_what_the_store_holds(store_and_settings) -> None:
    store, settings = store_and_settings
    answer = Asker(store, settings, llm=FakeLLM([])).ask("What was JnJ's revenue in 2023?")
    assert answer.refused and answer.refusal == "unknown-company"
    assert answer.answer.startswith("Johnson & Johnson is not in your filings")
    assert "ACME: FY2023 10-K" in answer.answer and "Globex: FY2023 10-K" in answer.answer


def revenue_model(source: str, text: str) -> FakeLLM:
    """Answers ``text`` from the quote holding ``source``."""
    return FakeLLM([quoted(source, text)])


def test_ask_beside_a_held_company_says_what_it_left_out(store_and_settings) -> None:
    store, settings = store_and_settings
    llm = revenue_model("ACME revenue grew", "ACME revenue was $9.6 billion.")
    answer = Asker(store, settings, llm=llm).ask("Compare ACME and Initech revenue in 2023")
    assert not answer.refused, answer.answer
    assert "Initech is not in your filings: answered for ACME only" in answer.flags


def test_ask_never_drops_the_company_filter(store_and_settings) -> None:
    """No filing is an 8-K: the form filter goes, the company filter stays."""
    store, settings = store_and_settings
    llm = revenue_model("ACME revenue grew", "ACME revenue was $9.6 billion.")
    asker = Asker(store, settings, llm=llm)
    found, _ = asker.search("What did ACME's 8-K say about revenue?")
    assert found.widened == ["form_types"]
    assert found.hits and {h.company for h in found.hits} == {"ACME"}
    answer = asker.answer_from("What did ACME's 8-K say about revenue?", found, [])
    assert "no filing matches form 8-K: searched without that filter" in answer.flags


def test_search_keeps_its_results_and_names_the_missing_company(
    store_and_settings, database_url: str
) -> None:
    store, settings = store_and_settings
    result = Retriever(store, settings).retrieve("Microsoft revenue")
    assert result.hits and result.filters.unknown_companies == ["Microsoft"]
    env = dict(os.environ, FINRAG_DATABASE_URL=database_url)
    data = json.loads(run_finrag("search", "Microsoft revenue", "--json", env=env).stdout)
    assert data["not_in_store"] == ["Microsoft"] and data["hits"]
    assert data["filters"]["unknown_companies"] == ["Microsoft"]
    plain = run_finrag("search", "Microsoft revenue", env=env)
    assert plain.returncode == 0
    assert "not in the store: Microsoft" in plain.stderr


@pytest.fixture
def globex_only(database_url: str):
    """The issue's case: one company's filing in the store."""
    from finrag.embed import get_embedder

    settings = load_settings(database_url=SecretStr(database_url))
    with open_store(settings) as store, store.connect() as conn:
        add_document(
            conn,
            get_embedder(settings.embed),
            "GLOBEX_2023_10K.pdf",
            GLOBEX_PAGES,
            company="Globex",
            year=2023,
        )
    return database_url


def test_cli_ask_about_microsoft_exits_7_naming_the_store(globex_only, tmp_path: Path) -> None:
    """Scripted to answer from Globex's filing, as the model did in the issue: the refusal
    comes first, so the model is never called."""
    script = tmp_path / "replies.json"
    fact = {"source": 1, "quote": "revenue fell 3% to $4.0", "value": "4.0"}
    script.write_text(
        json.dumps(
            [
                {"answerable": True, "facts": [fact], "calculations": []},
                "Revenue fell 3% to $4.0 billion in 2023.",
            ]
        )
    )
    env = dict(
        os.environ,
        FINRAG_DATABASE_URL=globex_only,
        FINRAG_LLM__BACKEND="fake",
        FINRAG_LLM__FAKE_SCRIPT=str(script),
    )
    result = run_finrag("ask", "What was Microsoft revenue in 2024?", env=env)
    assert result.returncode == ExitCode.NO_ANSWER, result.stdout + result.stderr
    assert result.stdout.startswith("Microsoft is not in your filings")
    assert "Globex: FY2023 10-K" in result.stdout and "$4.0" not in result.stdout
