"""Metadata from folder layouts, EDGAR facts and cover pages; company aliases in the store."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from pydantic import SecretStr

from finrag.config import load_settings
from finrag.db import open_store
from finrag.db.companies import alias_key, lookup_company, resolve_company
from finrag.ingest.metadata import from_content, from_declared, from_path, resolve_metadata
from finrag.ingest.parse import Page, ParsedDocument


@pytest.mark.parametrize(
    ("path", "root", "expected"),
    [
        ("/d/AAPL/2023.pdf", "/d", {"ticker": "AAPL", "fiscal_year": 2023}),
        ("/d/AAPL/2023.pdf", "/d/AAPL", {"ticker": "AAPL", "fiscal_year": 2023}),
        (
            "/d/Apple/2023/10Q_10K/10Q-Q2-2023.pdf",
            "/d",
            {"company": "Apple", "fiscal_year": 2023, "fiscal_quarter": 2, "form_type": "10-Q"},
        ),
        (
            "/d/BESTBUY_2024Q2_10Q.pdf",
            "/d",
            {"company": "BESTBUY", "fiscal_year": 2024, "fiscal_quarter": 2, "form_type": "10-Q"},
        ),
        ("/d/3M_2018_10K.pdf", "/d", {"company": "3M", "fiscal_year": 2018, "form_type": "10-K"}),
        (
            "/d/PEPSICO_2023_8K_dated-2023-05-30.pdf",
            "/d",
            {"company": "PEPSICO", "fiscal_year": 2023, "form_type": "8-K"},
        ),
        (
            "/d/MGMRESORTS_2022Q4_EARNINGS.pdf",
            "/d",
            {
                "company": "MGMRESORTS",
                "fiscal_year": 2022,
                "fiscal_quarter": 4,
                "form_type": "EARNINGS",
            },
        ),
        ("/x/aapl-10-k-2024-11-01.html", "/x", {"ticker": "AAPL", "form_type": "10-K"}),
        ("/docs/pdfs/report.pdf", "/docs/pdfs", {}),  # nothing to go on: no guess
    ],
)
def test_path_layouts(path: str, root: str, expected: dict) -> None:
    assert from_path(Path(path), Path(root)) == expected


def test_declared_edgar_facts() -> None:
    facts = {
        "EntityRegistrantName": "NVIDIA CORP",
        "TradingSymbol": "NVDA",
        "DocumentType": "10-Q",
        "DocumentFiscalYearFocus": "2026",
        "DocumentFiscalPeriodFocus": "Q2",
        "DocumentPeriodEndDate": "July 27 , 2025",
    }
    assert from_declared(facts) == {
        "company": "NVIDIA CORP",
        "ticker": "NVDA",
        "form_type": "10-Q",
        "fiscal_year": 2026,
        "fiscal_quarter": 2,
        "period_end": date(2025, 7, 27),
    }


def test_cover_page_text() -> None:
    cover = ParsedDocument(
        pages=[
            Page(
                1,
                (
                    "# FORM 10-K\n\n#### For the fiscal year ended December 31, 2018\n\n"
                    "Commission file number 1-3285\n\n# 3M COMPANY\n\n"
                    "State of Incorporation: Delaware"
                ),
            )
        ],
        parser="pymupdf",
    )
    assert from_content(cover) == {
        "form_type": "10-K",
        "period_end": date(2018, 12, 31),
        "company": "3M COMPANY",
    }
    # The fiscal year is the calendar's: a year ending December 31 is that year's.
    meta = resolve_metadata(Path("/d/report.pdf"), Path("/d"), cover)
    assert (meta.fiscal_year, meta.fiscal_quarter, meta.sources["fiscal_year"]) == (
        2018,
        None,
        "filing",
    )
    assert meta.calendar is not None and meta.calendar.year_end_month == 12


def test_ticker_from_the_cover_table() -> None:
    cover = ParsedDocument(
        pages=[
            Page(
                1,
                (
                    "Securities registered pursuant to Section 12(b) of the Act:\n\n"
                    "|Title of each class|Trading Symbol BBY|Name of exchange New York|\n"
                    "|---|---|---|"
                ),
            )
        ],
        parser="pymupdf",
    )
    assert from_content(cover)["ticker"] == "BBY"
    header_only = ParsedDocument(
        pages=[Page(1, "|Title|Trading Symbol(s)|Name of exchange|")], parser="pymupdf"
    )
    assert "ticker" not in from_content(header_only)


def test_precedence_and_sources() -> None:
    parsed = ParsedDocument(
        pages=[
            Page(
                1,
                "FORM 10-Q\n\nfor the quarterly period ended July 29, 2023\n\n"
                "BEST BUY CO., INC.\n(Exact name of registrant as specified in its charter)",
            )
        ],
        parser="pymupdf",
    )
    meta = resolve_metadata(
        Path("/d/BESTBUY_2024Q2_10Q.pdf"), Path("/d"), parsed, {"ticker": "BBY"}
    )
    # The file name's fiscal year (2024) wins over the calendar year on the cover (2023):
    # Best Buy's fiscal year 2024 ends in early 2024.
    assert (meta.fiscal_year, meta.fiscal_quarter) == (2024, 2)
    assert meta.company == "BEST BUY CO., INC."
    assert meta.sources == {
        "company": "content",
        "ticker": "override",
        "form_type": "path",
        "fiscal_year": "path",
        "fiscal_quarter": "path",
        "period_end": "content",
    }
    assert meta.company_aliases == ["BEST BUY CO., INC.", "BESTBUY"]


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("BEST BUY CO., INC.", "bestbuy"),
        ("Best Buy", "bestbuy"),
        ("BESTBUY", "bestbuy"),
        ("3M Company", "3m"),
        ("Apple Inc.", "apple"),
        ("AAPL", "aapl"),
        ("The Coca-Cola Company", "cocacola"),
        ("Amazon.com, Inc.", "amazoncom"),
    ],
)
def test_alias_keys(name: str, key: str) -> None:
    assert alias_key(name) == key


def test_companies_resolve_aliases_and_tickers(database_url: str) -> None:
    settings = load_settings(database_url=SecretStr(database_url))
    store = open_store(settings)
    with store.connect() as conn:
        apple, name = resolve_company(conn, ["Apple Inc."], "AAPL")
        assert name == "Apple Inc."
        assert resolve_company(conn, ["APPLE INC"], None)[0] == apple
        mmm, name = resolve_company(conn, ["3M COMPANY", "3M"], None)
        assert name == "3M Company"
        assert resolve_company(conn, [], "MMM")[0] == mmm, "the nickname table knows 3M's ticker"
        initech, _ = resolve_company(conn, ["Initech Inc."], None)
        assert resolve_company(conn, [], "ZZQX")[0] != initech, "no ticker known for Initech"
        conn.commit()
        assert lookup_company(conn, "Apple")[0] == apple
        assert lookup_company(conn, "aapl")[0] == apple
        assert lookup_company(conn, "3M Company")[0] == mmm
        assert lookup_company(conn, "Apple Hospitality REIT") is None
