"""Section kinds and the contextual header (finrag.ingest.sections, sql/006), and the kinds
a question implies (finrag.retrieve.query): heading paths as the parsers read them from
the dev and EDGAR filings, and Apple's Q3 FY2025 10-Q ingested into the real embedded
Postgres."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from finrag.datadir import data_dir
from finrag.ingest.metadata import DocumentMetadata
from finrag.ingest.sections import (
    KIND_LABELS,
    SECTION_KINDS,
    chunk_header,
    classify_section,
    document_context,
)
from finrag.retrieve.query import analyze_question
from tests.conftest import SHARED, ingested_home

APPLE_10Q = SHARED / "edgar-html" / "aapl-10-q-2025-08-01.html"

# Heading paths as the parsers read them (the dev filings' parse cache), with the kind
# each section is. False friends: a tax contingency, the litigation reform act, debt
# securities held, contract acquisition costs, accounting guidance, off-balance sheet.
REAL_PATHS = [
    (["Item 3. Legal Proceedings."], "legal_proceedings"),  # 3M FY2022
    (
        ["PART I — FINANCIAL INFORMATION", "Item 1. Financial Statements", "10. Contingencies"],
        "legal_proceedings",
    ),  # Best Buy Q2 FY2024
    (
        ["PART II", "Item 8. Financial Statements and Supplementary Data", "Tax Contingencies"],
        "other",
    ),  # Amazon FY2017
    (
        ["CAUTIONARY STATEMENT PURSUANT TO THE PRIVATE SECURITIES LITIGATION REFORM ACT OF 1995"],
        "other",
    ),  # Best Buy FY2023
    (
        [
            "PART I",
            "Item 1A. Risk Factors",
            "Current or future litigation or regulatory investigations may harm our financial "
            "condition or results of operations",
        ],
        "risk_factors",
    ),  # Corning FY2022
    (
        [
            "Part III",
            "FORWARD-LOOKING INFORMATION AND FACTORS THAT MAY AFFECT FUTURE RESULTS",
            "Risks Related to Government Regulation and Legal Proceedings :",
        ],
        "risk_factors",
    ),  # Pfizer FY2021
    (
        [
            "Item 7. Management’s Discussion and Analysis of Financial Condition and Results of "
            "Operations",
            "Investments in Debt and Equity Securities",
        ],
        "mdna",
    ),  # Verizon FY2021
    (
        [
            "PART II",
            "Item 8. Financial Statements and Supplementary Data.",
            "NOTE 12. Long-Term Debt and Short-Term Borrowings",
        ],
        "debt_note",
    ),  # 3M FY2018
    (
        [
            "PART II",
            "Item 7. Management’s Discussion and Analysis of Financial Condition and Results of "
            "Operations.",
            "Note 8 — Debt Obligations",
        ],
        "debt_note",
    ),  # PepsiCo FY2022
    (
        [
            "PART II",
            "ITEM 8. FINANCIAL STATEMENTS AND SUPPLEMENTARY DATA",
            "Contract Acquisition Costs",
        ],
        "other",
    ),  # Adobe FY2022
    (
        [
            "PART IV",
            "Item 15. Exhibits, Financial Statement Schedules",
            "Accounting Guidance Adopted in 2015",
        ],
        "other",
    ),  # Netflix FY2015
    (
        [
            "PART II",
            "ITEM 7. MANAGEMENT’S DISCUSSION AND ANALYSIS OF FINANCIAL CONDITION AND RESULTS OF "
            "OPERATIONS",
            "Business Combinations",
        ],
        "acquisitions",
    ),  # Adobe FY2022
    (
        [
            "PART II",
            "ITEM 7A. QUANTITATIVE AND QUALITATIVE DISCLOSURES ABOUT MARKET RISK",
            "Notes to Consolidated Financial Statements",
            "Significant Customers",
        ],
        "customers_concentration",
    ),  # Pfizer FY2021
    (
        [
            "Part I. Financial Information",
            "Item 2. Management's Discussion and Analysis of Financial Condition and Results of "
            "Operations",
            "Concentration of Revenue",
        ],
        "customers_concentration",
    ),  # NVIDIA Q2 FY2026
    (
        [
            "PART II",
            "Item 8. Financial Statements and Supplementary Data",
            "Concentrations in the Available Sources of Supply of Materials and Product",
        ],
        "other",
    ),  # Apple FY2024: suppliers, not customers
    (
        [
            "PART II",
            "Item 8. Financial Statements and Supplementary Data",
            "Note 13 – Segment Information and Geographic Data",
        ],
        "segment_note",
    ),  # Apple FY2024
    (
        [
            "PART II",
            "Item 8. Financial Statements and Supplementary Data.",
            "3M Company and Subsidiaries Consolidated Statement of Cash Flows Years ended "
            "December 31",
        ],
        "cash_flows",
    ),  # 3M FY2022: a statement's long title
    (
        [
            "PART I. FINANCIAL INFORMATION",
            "ITEM 1. FINANCIAL STATEMENTS",
            "CONDENSED CONSOLIDATED BALANCE SHEETS",
        ],
        "balance_sheet",
    ),  # Pfizer Q2 FY2023
    (
        [
            "PART II",
            "Item 8. Financial Statements and Supplementary Data.",
            "Consolidated Statements of Earnings",
        ],
        "income_statement",
    ),  # Best Buy FY2023
    (
        [
            "PART I — FINANCIAL INFORMATION",
            "Item 1. Financial Statements",
            "Condensed Consolidated Statements of Changes in Shareholders' Equity $ and shares "
            "in millions, except per share amounts (unaudited)",
        ],
        "equity_statement",
    ),  # Best Buy Q2 FY2024
    (
        [
            "PART II",
            "ITEM 8. FINANCIAL STATEMENTS AND SUPPLEMENTARY DATA",
            "NOTE 13. ACCUMULATED OTHER COMPREHENSIVE INCOME (LOSS)",
        ],
        "other",
    ),  # Adobe FY2022
    (
        [
            "PART II",
            "Item 7. Management’s Discussion and Analysis of Financial Condition and Results of "
            "Operations.",
            "Off-Balance Sheet Arrangements and Contractual Obligations:",
        ],
        "mdna",
    ),  # 3M FY2018
    (["Guidance and Outlook"], "guidance_outlook"),  # PepsiCo Q1 FY2023 release
    (["PART I", "Item 1. Business", "Seasonality"], "business"),  # Amazon FY2017
    (["PART I", "Item 1. Business", "Competition"], "business"),
]


@pytest.mark.parametrize(("path", "kind"), REAL_PATHS, ids=[p[-1][:40] for p, _ in REAL_PATHS])
def test_real_heading_paths_classify(path: list[str], kind: str) -> None:
    assert classify_section(path) == kind


def test_every_kind_but_other_has_words_and_the_migration_allows_each() -> None:
    sql = (data_dir("sql") / "006_section_kind.sql").read_text()
    assert all(f"'{kind}'" in sql for kind in SECTION_KINDS)
    assert [k for k in SECTION_KINDS if not KIND_LABELS[k]] == ["other"]


def test_document_context_is_short() -> None:
    ibm = DocumentMetadata(
        company="INTERNATIONAL BUSINESS MACHINES CORPORATION",
        ticker="IBM",
        form_type="10-K",
        fiscal_year=2024,
    )
    assert document_context(ibm) == "INTERNATIONAL BUSINESS MACHINES (IBM) 10-K FY2024"
    best_buy = DocumentMetadata(
        company="BEST BUY CO., INC.", form_type="10-Q", fiscal_year=2024, fiscal_quarter=2
    )
    assert document_context(best_buy) == "BEST BUY 10-Q FY2024 Q2"
    apple = DocumentMetadata(company="Apple Inc.", ticker="AAPL", form_type="10-K")
    assert chunk_header(document_context(apple), "legal_proceedings", ["Item 3"]) == (
        "Apple (AAPL) 10-K, legal proceedings\nItem 3"
    )
    assert chunk_header("", "other", []) == ""


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What are the ongoing legal battles Apple faces?", "legal_proceedings"),
        ("Is Netflix involved in any lawsuits?", "legal_proceedings"),
        ("Who are the primary customers of NVIDIA?", "customers_concentration"),
        ("Describe the customer concentration risk.", "customers_concentration"),
        ("What major acquisitions did IBM complete in 2024?", "acquisitions"),
        ("How much M&A activity was there?", "acquisitions"),
        ("Is the business cyclical?", "business"),
        ("Is demand seasonal?", "mdna"),
        ("What is the full-year outlook?", "guidance_outlook"),
        ("What notes due in 2030 are outstanding?", "debt_note"),
        ("What was capex in FY2018?", "cash_flows"),  # the metric dictionary's statement
        ("What was the gross profit in FY2022?", "income_statement"),
        ("How much goodwill was on the books?", "balance_sheet"),
    ],
)
def test_questions_imply_section_kinds(question: str, kind: str) -> None:
    analysis = analyze_question(question)
    assert kind in analysis.section_kinds
    words = set(analysis.search_text.lower().split())
    assert set(KIND_LABELS[kind].split()) <= words, analysis.search_text


def test_topic_words_outrank_a_metric_and_plain_questions_imply_nothing() -> None:
    # "debt" is also a balance-sheet line item: the topic decides.
    assert analyze_question("How much debt matures next year?").section_kinds == ("debt_note",)
    assert analyze_question("Who is the chief executive officer?").section_kinds == ()


@pytest.fixture(scope="module")
def apple_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if not APPLE_10Q.is_file():
        pytest.skip(f"real filing not found at {APPLE_10Q}")
    with ingested_home(tmp_path_factory.mktemp("sections") / "home", [APPLE_10Q]) as home:
        yield home


@pytest.fixture
def conn(apple_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[psycopg.Connection]:
    from finrag.config import load_settings
    from finrag.db import open_store

    monkeypatch.setenv("FINRAG_HOME", str(apple_home))
    with open_store(load_settings()) as store, store.connect() as connection:
        yield connection


def test_ingested_chunks_store_their_kind_and_open_with_the_header(
    conn: psycopg.Connection,
) -> None:
    rows = conn.execute(
        "SELECT kind, section_path, section_kind, embed_text, content, tokens FROM chunks"
    ).fetchall()
    kinds = {row[2] for row in rows}
    assert None not in kinds
    assert {"income_statement", "balance_sheet", "cash_flows", "mdna", "legal_proceedings"} <= (
        kinds
    )
    assert all(row[3].startswith("Apple (AAPL) 10-Q FY2025 Q3") for row in rows)
    assert not any(row[4].startswith("Apple (AAPL)") for row in rows), "the LLM's text unchanged"
    assert max(row[5] for row in rows) <= 256, "the header counts against the model's length"
    legal = [row for row in rows if row[2] == "legal_proceedings"]
    assert legal and all("Legal Proceedings" in " ".join(row[1]) for row in legal)
    cash = [row for row in rows if row[2] == "cash_flows" and row[0] == "table"]
    assert cash and all("cash flows statement" in row[3] for row in cash)


def test_full_text_matches_the_document_and_the_kind_words(conn: psycopg.Connection) -> None:
    total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    matched = conn.execute(
        "SELECT count(*) FROM chunks WHERE tsv @@ plainto_tsquery('english', 'apple fy2025 q3')"
    ).fetchone()[0]
    assert matched == total
    by_kind = conn.execute(
        "SELECT section_kind, count(*) FROM chunks WHERE section_kind <> 'other' "
        "GROUP BY section_kind"
    ).fetchall()
    assert len(by_kind) >= 5
    for kind, count in by_kind:
        labelled = conn.execute(
            "SELECT count(*) FROM chunks WHERE section_kind = %s "
            "AND tsv @@ plainto_tsquery('english', %s)",
            (kind, KIND_LABELS[kind]),
        ).fetchone()[0]
        assert labelled == count, kind
    # The words are the header's, not the text's: some chunks say them nowhere else.
    only_header = conn.execute(
        "SELECT count(*) FROM chunks WHERE section_kind = 'debt_note' AND NOT "
        "to_tsvector('english', content || ' ' || array_to_string(section_path, ' ')) "
        "@@ plainto_tsquery('english', 'debt')"
    ).fetchone()[0]
    assert only_header > 0
