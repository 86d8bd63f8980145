"""The graders (finrag.answer.graders): passages graded before the answer step, the
answer checked against the question, one retry, then a hedge; through `ask` on a real
store with a scripted model."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from finrag.answer import graders
from finrag.answer.pipeline import Asker
from finrag.config import load_settings
from finrag.db import open_store
from finrag.embed import get_embedder
from finrag.llm.fake import FakeLLM
from finrag.retrieve.filters import CompanyRef, QueryFilters
from finrag.retrieve.hybrid import SearchResult
from tests.corpus import add_document, make_hit, quoted

QUESTION = "What was Zephyr's revenue in 2023?"
# One page answers; the others share no topic word with the question.
PAGES = [
    "Zephyr revenue rose 8% to $5.1 billion in 2023 on higher kite sales.",
    "The board of directors met eleven times; its audit committee met six times.",
    "Our headquarters lease in Denver expires in 2031 with two renewal options.",
    "Employees: we had 4,200 full-time staff at year end, most in Colorado.",
    "Cybersecurity incidents could disrupt our warehouse systems and logistics.",
    "We hedge part of our fuel purchases with swaps settled monthly.",
]


def graded_settings(database_url: str, *, on: bool = True):
    return load_settings(database_url=SecretStr(database_url), answer={"graders": on, "k": 6})


@pytest.fixture
def zephyr(database_url: str):
    settings = graded_settings(database_url)
    with open_store(settings) as store:
        with store.connect() as conn:
            add_document(
                conn,
                get_embedder(settings.embed),
                "ZEPHYR_2023_10K.pdf",
                PAGES,
                company="Zephyr",
                year=2023,
            )
        yield store, settings


def test_topic_terms_leave_out_names_periods_and_question_words() -> None:
    terms = graders.topic_terms("What was Zephyr's gross margin in fiscal 2023?", ["Zephyr"])
    assert terms == ["gross", "margin"]


def test_irrelevant_passages_are_dropped_above_the_floor() -> None:
    hits = [
        make_hit(chunk_id=i, content=text, dense_score=0.0) for i, text in enumerate(PAGES[::-1])
    ]
    filters = QueryFilters(companies=[CompanyRef(1, "Zephyr Kites", None)], years=[2023])
    found = SearchResult(hits=hits, filters=filters, applied={})
    settings = load_settings(answer={"graders": True})
    kept = graders.grade_passages(settings, QUESTION, found).hits
    # The first FLOOR stay whatever they say; past them only the revenue page.
    assert [h.chunk_id for h in kept] == [0, 1, 2, 5]
    # A passage near the question by cosine stays though it shares no word.
    hits[3].dense_score = settings.answer.min_relevance
    assert len(graders.grade_passages(settings, QUESTION, found).hits) == 5
    off = load_settings(answer={"graders": False})
    assert graders.grade_passages(off, QUESTION, found) is found


def test_the_answer_check_names_what_is_missing() -> None:
    filters = QueryFilters(companies=[CompanyRef(1, "Zephyr Kites Inc.", "ZK")], years=[2023])
    wanted = graders.asked("What was Zephyr's net income in Q2 2023?", filters)
    assert wanted.measures and "net income" in wanted.measures[0]
    filters.quarter = 2
    wanted = graders.asked("What was Zephyr's net income in Q2 2023?", filters)
    assert graders.named(wanted, "Zephyr Kites earned net income of $40 million in Q2 2023.") == {
        "entity": True,
        "period": True,
        "measure": True,
    }
    assert graders.missing(
        graders.named(wanted, "ZK's second-quarter 2023 revenue was $40 million.")
    ) == ["measure"]
    assert graders.missing(graders.named(wanted, "Net income was $40 million in 2023.")) == [
        "entity",
        "period",
    ]
    # A fiscal label names its year; an instruction's words name no measure.
    fy = graders.Asked(years=[2018])
    assert graders.named(fy, "Capex was $1.2 billion in FY2018.")["period"] is True
    assert graders.named(fy, "Capex was $1.2 billion in FY18.")["period"] is True
    assert graders.named(fy, "Capex was $1.2 billion in 20180.")["period"] is False
    asked_capex = "What was capex in 2018? Answer using the details in the income statement."
    assert [m[0] for m in graders.measures_in(asked_capex)] == ["capital expenditure"]


def test_a_failed_check_retries_from_the_ungraded_passages(zephyr) -> None:
    store, settings = zephyr
    seen: list[str] = []
    llm = FakeLLM(
        [
            quoted("$5.1 billion", "Zephyr's revenue rose 8% to $5.1 billion", seen),
            quoted("$5.1 billion", "Zephyr's revenue rose 8% to $5.1 billion in 2023"),
        ]
    )
    answer = Asker(store, settings, llm=llm).ask(QUESTION)
    record = answer.retrieval["graders"]
    assert record["passages_dropped"] >= 1 and record["retried"] is True
    assert record["answer_check"] == {"entity": True, "period": True, "measure": True}
    assert len(llm.calls) == 2 and "in 2023" in answer.answer and "Note:" not in answer.answer
    assert answer.tokens["prompt"] > 0


def test_a_second_failure_is_hedged(zephyr) -> None:
    store, settings = zephyr
    missing_year = quoted("$5.1 billion", "Zephyr's revenue rose 8% to $5.1 billion")
    llm = FakeLLM([missing_year, missing_year])
    answer = Asker(store, settings, llm=llm).ask(QUESTION)
    assert len(llm.calls) == 2
    assert answer.answer.endswith(
        "(Note: the answer does not name the period asked about; read it with care.)"
    )
    assert "grader: the answer does not name the period asked about" in answer.flags
    assert answer.retrieval["graders"]["hedged"] is True


def test_graders_off_make_one_call_and_no_check(zephyr, database_url: str) -> None:
    store, _ = zephyr
    settings = graded_settings(database_url, on=False)
    llm = FakeLLM([quoted("$5.1 billion", "Zephyr's revenue rose 8% to $5.1 billion")])
    answer = Asker(store, settings, llm=llm).ask(QUESTION)
    assert len(llm.calls) == 1 and "graders" not in answer.retrieval
    assert "Note:" not in answer.answer
