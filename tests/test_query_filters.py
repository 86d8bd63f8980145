"""Filters read from questions, against companies stored in a real database."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from finrag.config import load_settings
from finrag.db import open_store
from finrag.db.companies import resolve_company
from finrag.retrieve.filters import extract_query_filters


@pytest.fixture
def conn(database_url: str):
    store = open_store(load_settings(database_url=SecretStr(database_url)))
    with store.connect() as connection:
        resolve_company(connection, ["Apple Inc."], "AAPL")
        resolve_company(connection, ["3M COMPANY", "3M"], "MMM")
        resolve_company(connection, ["BEST BUY CO., INC.", "BESTBUY"], "BBY")
        resolve_company(connection, ["Alphabet Inc."], "GOOGL")
        connection.commit()
        yield connection
    store.close()


def names(filters) -> list[str]:
    return sorted(c.name for c in filters.companies)


@pytest.mark.parametrize(
    ("question", "companies", "years"),
    [
        ("What was 3M's FY2018 capital expenditure?", ["3M Company"], [2018]),
        (
            "Compare Apple's and Alphabet's lease obligations in 2023",
            ["Alphabet Inc.", "Apple Inc."],
            [2023],
        ),
        ("How did AAPL revenue change in fiscal 2022?", ["Apple Inc."], [2022]),
        ("Best Buy gross margin for 2021 and 2022", ["Best Buy Co., Inc."], [2021, 2022]),
        ("MMM dividends from 2019 through 2021", ["3M Company"], [2019, 2020, 2021]),
        ("What did Apple Hospitality REIT pay in 2022?", [], [2022]),
        ("What is the company's 2020 vision?", [], []),
        ("Where are the 2026 Notes listed?", [], []),
        ("How much cash does apple have?", ["Apple Inc."], []),
        ("What is it worth in FY'23?", [], [2023]),
        (
            "What drove operating margin for 3M? If margin is not useful, say so.",
            ["3M Company"],
            [],
        ),
        ("Apple, Alphabet: lease costs", ["Alphabet Inc.", "Apple Inc."], []),
    ],
)
def test_companies_and_years(conn, question: str, companies: list[str], years: list[int]) -> None:
    filters = extract_query_filters(question, conn)
    assert names(filters) == companies
    assert filters.years == years


@pytest.mark.parametrize(
    ("question", "quarter", "forms"),
    [
        ("Best Buy Q2 revenue", 2, []),
        ("revenue in the second quarter per the 10-Q", 2, ["10-Q"]),
        ("What does the annual report say about risk?", None, ["10-K"]),
        ("3M 8-K dated May 2023", None, ["8-K"]),
        ("MGM earnings release for 4Q 2022", 4, ["EARNINGS"]),
        ("How is the company doing?", None, []),
    ],
)
def test_quarters_and_forms(conn, question: str, quarter, forms: list[str]) -> None:
    filters = extract_query_filters(question, conn)
    assert filters.quarter == quarter
    assert filters.form_types == forms


@pytest.mark.parametrize(
    ("question", "quarter", "years"), [("Q32024 sales", 3, [2024]), ("q1 2023", 1, [2023])]
)
def test_a_quarter_and_year_written_as_one_word_are_both_read(question, quarter, years) -> None:
    from finrag.retrieve.filters import read_periods

    found = read_periods(question)
    assert (found.quarter, found.years) == (quarter, years)


def test_matched_words_explain_each_filter(conn) -> None:
    filters = extract_query_filters("What was 3M's FY2018 capex in the 10-K?", conn)
    assert filters.matched == {"company": ["3M"], "fiscal_year": ["FY2018"], "form_type": ["10-K"]}
    assert not extract_query_filters("hello there", conn).matched
    assert extract_query_filters("hello there", conn).empty


def test_an_upper_case_short_name_finds_the_one_company_it_begins(conn) -> None:
    resolve_company(conn, ["MGMRESORTS"], None)  # no ticker known (an earnings release)
    resolve_company(conn, ["American Express Company"], None)
    resolve_company(conn, ["American Airlines Group"], None)
    found = extract_query_filters("Which region did best for MGM in 2022?", conn)
    assert names(found) == ["Mgmresorts"] and found.matched["company"] == ["MGM"]
    # 'AMERICAN' begins two companies' names: no guess.
    assert names(extract_query_filters("What did AMERICAN report?", conn)) == []
    assert names(extract_query_filters("What did mgm report?", conn)) == [], "upper case only"


@pytest.mark.parametrize(
    ("question", "companies", "unknown"),
    [
        ("What was Google's revenue in 2023?", ["Alphabet Inc."], []),  # a held issuer's name
        ("GOOG revenue in 2023", ["Alphabet Inc."], []),
        ("How did Microsoft and Apple revenue compare?", ["Apple Inc."], ["Microsoft"]),
        ("What was Microsoft revenue in 2024?", [], ["Microsoft"]),
        ("What did Apple Hospitality REIT pay in 2022?", [], ["Apple Hospitality"]),
        (
            "What was Best Buy Domestic revenue in the Americas in Q2 FY2023?",
            ["Best Buy Co., Inc."],
            [],
        ),
        ("What were 3M's Net Income and EBITDA under GAAP?", ["3M Company"], []),
        ("What did MMM pay in dividends?", ["3M Company"], []),  # the nickname table's ticker
        ("How did J&J's and Apple's margins compare?", ["Apple Inc."], ["Johnson & Johnson"]),
        ("What did BEST BUY report?", ["Best Buy Co., Inc."], []),
    ],
)
def test_names_the_store_does_not_hold(conn, question: str, companies, unknown) -> None:
    filters = extract_query_filters(question, conn)
    assert names(filters) == companies
    assert filters.unknown_companies == unknown
    assert filters.as_dict()["unknown_companies"] == unknown
