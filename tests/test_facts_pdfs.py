"""Facts from real PDF statements, checked by hand against the printed pages.

Each statement's page(s) are copied into a small PDF, parsed, chunked and read as
facts the way ingest does it. The expected values were read off the page images
(rendered with PyMuPDF at 100 dpi), not taken from the extractor's output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from finrag.embed import HashEmbedder
from finrag.facts import model
from finrag.facts.extract import table_facts
from finrag.facts.model import Fact
from finrag.facts.periods import FiscalCalendar, Period
from finrag.ingest.chunk import Chunker
from finrag.ingest.parse import bound_paragraphs
from finrag.ingest.parse.pdf import PyMuPDFParser
from tests.conftest import REPO, SHARED

PDFS = SHARED / "financebench-dev" / "pdfs"
needs_dev_pdfs = pytest.mark.skipif(
    not PDFS.is_dir(),
    reason=f"FinanceBench dev PDFs not found at {PDFS} (../shared beside the repo)",
)


@dataclass(frozen=True)
class Statement:
    name: str
    source: Path
    pages: tuple[int, ...]  # 1-based, in the full filing
    year_end_month: int
    kind: str
    needs_shared: bool = True


@dataclass(frozen=True)
class Printed:
    """One value as the page prints it. ``label`` may name its heading: "Heading > Row"."""

    label: str
    period: Period
    value: Decimal | int
    unit: str = "USD"
    page: int = 1  # in the small PDF


def year(fiscal_year: int, end: date | None = None) -> Period:
    return Period(end=end, months=12, fiscal_year=fiscal_year)


def balance(fiscal_year: int, end: date | None = None) -> Period:
    # A balance at the fiscal year end, dated or not, is placed in the year's fourth quarter.
    return Period(end=end, instant=True, fiscal_year=fiscal_year, fiscal_quarter=4)


def year_end(fiscal_year: int) -> Period:
    # A balance-sheet column headed by its year alone (Corning's "2022" under "December 31,"
    # cut across cells in the small PDF): the year's balance, no date, no quarter.
    return Period(instant=True, fiscal_year=fiscal_year)


MMM = Statement("3M_2018_10K", PDFS / "3M_2018_10K.pdf", (60,), 12, model.CASH_FLOW)
BESTBUY = Statement(
    "BESTBUY_2024Q2_10Q", REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf", (4,), 1, model.INCOME, False
)
ADOBE = Statement("ADOBE_2022_10K", PDFS / "ADOBE_2022_10K.pdf", (54,), 11, model.INCOME)
AMAZON = Statement("AMAZON_2017_10K", PDFS / "AMAZON_2017_10K.pdf", (40,), 12, model.BALANCE)
PEPSICO = Statement(
    "PEPSICO_2022_10K", PDFS / "PEPSICO_2022_10K.pdf", (64, 65), 12, model.CASH_FLOW
)
COSTCO = Statement("COSTCO_2021_10K", PDFS / "COSTCO_2021_10K.pdf", (36,), 8, model.INCOME)
# Statements whose long tables are cut into parts: the years head only the first part
# (Corning), or the first parts carry no row that names the statement (Verizon).
CORNING = Statement("CORNING_2022_10K", PDFS / "CORNING_2022_10K.pdf", (58,), 12, model.INCOME)
CORNING_BALANCE = Statement(
    "CORNING_2022_10K balance", PDFS / "CORNING_2022_10K.pdf", (60,), 12, model.BALANCE
)
VERIZON = Statement("VERIZON_2022_10K", PDFS / "VERIZON_2022_10K.pdf", (54,), 12, model.INCOME)
VERIZON_BALANCE = Statement(
    "VERIZON_2022_10K balance", PDFS / "VERIZON_2022_10K.pdf", (56,), 12, model.BALANCE
)
STATEMENTS = (
    MMM,
    BESTBUY,
    ADOBE,
    AMAZON,
    PEPSICO,
    COSTCO,
    CORNING,
    CORNING_BALANCE,
    VERIZON,
    VERIZON_BALANCE,
)

Q2_FY24 = Period(end=date(2023, 7, 29), months=3, fiscal_year=2024, fiscal_quarter=2)
Q2_FY23 = Period(end=date(2022, 7, 30), months=3, fiscal_year=2023, fiscal_quarter=2)
H1_FY24 = Period(end=date(2023, 7, 29), months=6, fiscal_year=2024)
H1_FY23 = Period(end=date(2022, 7, 30), months=6, fiscal_year=2023)
ADOBE_FY22 = year(2022, date(2022, 12, 2))
ADOBE_FY21 = year(2021, date(2021, 12, 3))
ADOBE_FY20 = year(2020, date(2020, 11, 27))
AMAZON_2016 = balance(2016, date(2016, 12, 31))
AMAZON_2017 = balance(2017, date(2017, 12, 31))
COSTCO_FY21 = year(2021, date(2021, 8, 29))  # "52 Weeks Ended August 29, 2021"
COSTCO_FY20 = year(2020, date(2020, 8, 30))
COSTCO_FY19 = year(2019, date(2019, 9, 1))  # a 52-week year ending in September's first week

PRINTED: dict[Statement, list[Printed]] = {
    # 3M 2018 10-K, PDF page 60: Consolidated Statement of Cash Flows, years ended Dec 31.
    MMM: [
        Printed("Net income including noncontrolling interest", year(2018), 5_363_000_000),
        Printed("Depreciation and amortization", year(2017), 1_544_000_000),
        Printed("Changes in assets and liabilities > Inventories", year(2016), 57_000_000),
        Printed("Net cash provided by (used in) operating activities", year(2018), 6_439_000_000),
        Printed("Purchases of property, plant and equipment (PP&E)", year(2018), -1_577_000_000),
        Printed("Acquisitions, net of cash acquired", year(2018), 13_000_000),
        Printed("Acquisitions, net of cash acquired", year(2017), -2_023_000_000),
        Printed("Net cash provided by (used in) investing activities", year(2017), -3_086_000_000),
        Printed("Dividends paid to shareholders", year(2016), -2_678_000_000),
        # In the 2018 column: the balance at the end of 2017, and at the end of 2018.
        Printed("Cash and cash equivalents at beginning of year", balance(2017), 3_053_000_000),
        Printed("Cash and cash equivalents at end of period", balance(2018), 2_853_000_000),
    ],
    # Best Buy Q2 FY24 10-Q, PDF page 4: Condensed Consolidated Statements of Earnings,
    # "$ and shares in millions, except per share amounts".
    BESTBUY: [
        Printed("Revenue", Q2_FY24, 9_583_000_000),
        Printed("Revenue", H1_FY23, 20_976_000_000),
        Printed("Restructuring charges", Q2_FY24, -7_000_000),
        Printed("Operating income", H1_FY24, 659_000_000),
        Printed("Other income (expense) > Gain on sale of subsidiary, net", Q2_FY23, 0),  # "-"
        Printed("Other income (expense) > Interest expense", Q2_FY23, -7_000_000),
        Printed("Equity in income (loss) of affiliates", Q2_FY23, -3_000_000),
        Printed("Net earnings", Q2_FY24, 274_000_000),
        Printed("Diluted earnings per share", Q2_FY23, Decimal("1.35"), "USD/shares"),
        Printed(
            "Weighted-average common shares outstanding > Basic", H1_FY24, 218_700_000, "shares"
        ),
    ],
    # Adobe FY2022 10-K, PDF page 54: Consolidated Statements of Income, "Years Ended"
    # over three dated columns, "(In millions, except per share data)".
    ADOBE: [
        Printed("Revenue > Subscription", ADOBE_FY22, 16_388_000_000),
        Printed("Total revenue", ADOBE_FY21, 15_785_000_000),
        Printed("Cost of revenue > Subscription", ADOBE_FY20, 1_108_000_000),
        Printed("Operating income", ADOBE_FY22, 6_098_000_000),
        Printed("Interest expense", ADOBE_FY21, -113_000_000),
        Printed("Other income (expense), net", ADOBE_FY21, 0),  # "—"
        Printed("Provision for (benefit from) income taxes", ADOBE_FY20, -1_084_000_000),
        Printed("Net income", ADOBE_FY22, 4_756_000_000),
        Printed("Basic net income per share", ADOBE_FY22, Decimal("10.13"), "USD/shares"),
        Printed(
            "Shares used to compute diluted net income per share",
            ADOBE_FY20,
            485_000_000,
            "shares",
        ),
    ],
    # Amazon 2017 10-K, PDF page 40: Consolidated Balance Sheets, "December 31," over
    # 2016 and 2017, "(in millions, except per share data)".
    AMAZON: [
        Printed("Cash and cash equivalents", AMAZON_2017, 20_522_000_000),
        Printed("Total current assets", AMAZON_2016, 45_781_000_000),
        Printed("Total assets", AMAZON_2017, 131_310_000_000),
        Printed("Unearned revenue", AMAZON_2016, 4_768_000_000),
        Printed("Long-term debt", AMAZON_2017, 24_743_000_000),
        Printed("Treasury stock, at cost", AMAZON_2017, -1_837_000_000),
        Printed("Accumulated other comprehensive loss", AMAZON_2016, -985_000_000),
        Printed("Retained earnings", AMAZON_2017, 8_636_000_000),
        # The common stock's dollar amount; the label prints the share counts itself.
        Printed("Outstanding shares — 477 and 484", AMAZON_2017, 5_000_000),
        Printed("Total liabilities and stockholders’ equity", AMAZON_2016, 83_402_000_000),
    ],
    # PepsiCo 2022 10-K, PDF pages 64-65: Consolidated Statement of Cash Flows and its
    # continuation, columns 2022 | 2021 | 2020, "(in millions)".
    PEPSICO: [
        Printed("Net income", year(2022), 8_978_000_000),
        Printed("Gain associated with the Juice Transaction", year(2022), -3_321_000_000),
        Printed("Gain associated with the Juice Transaction", year(2021), 0),  # "—"
        Printed("Change in assets and liabilities > Inventories", year(2021), -582_000_000),
        Printed("Net Cash Provided by Operating Activities", year(2020), 10_613_000_000),
        Printed("Capital spending", year(2022), -5_207_000_000),
        Printed(
            "Short-term investments, by original maturity > Three months or less, net",
            year(2021),
            -58_000_000,
        ),
        Printed("Net Cash Used for Investing Activities", year(2020), -11_619_000_000),
        Printed(
            "Short-term borrowings, by original maturity > Three months or less, net",
            year(2021),
            434_000_000,
            page=2,
        ),
        Printed("Cash dividends paid", year(2022), -6_172_000_000, page=2),
        Printed(
            "Net Cash (Used for)/Provided by Financing Activities",
            year(2020),
            3_819_000_000,
            page=2,
        ),
        Printed(
            "Cash and Cash Equivalents and Restricted Cash, End of Year",
            balance(2022),
            5_100_000_000,
            page=2,
        ),
    ],
    # Costco FY2021 10-K, PDF page 36: Consolidated Statements of Income, "52 Weeks Ended"
    # dated columns, amounts in millions but "Shares used in calculation (000's)".
    COSTCO: [
        Printed("Net sales", COSTCO_FY21, 192_052_000_000),
        Printed("Total revenue", COSTCO_FY20, 166_761_000_000),
        Printed("Interest expense", COSTCO_FY19, -150_000_000),
        Printed("Net income attributable to noncontrolling interests", COSTCO_FY20, -57_000_000),
        Printed("NET INCOME ATTRIBUTABLE TO COSTCO", COSTCO_FY21, 5_007_000_000),
        Printed(
            "NET INCOME PER COMMON SHARE ATTRIBUTABLE TO COSTCO > Diluted",
            COSTCO_FY21,
            Decimal("11.27"),
            "USD/shares",
        ),
        Printed("Shares used in calculation (000’s) > Basic", COSTCO_FY21, 443_089_000, "shares"),
    ],
    # Corning 2022 10-K, PDF page 58: Consolidated Statements of Income, "Year ended
    # December 31," over 2022 | 2021 | 2020, "(in millions, except per share amounts)".
    CORNING: [
        Printed("Net sales", year(2021, date(2021, 12, 31)), 14_082_000_000),
        Printed("Operating income", year(2021, date(2021, 12, 31)), 2_112_000_000),
        Printed("Income before income taxes", year(2022, date(2022, 12, 31)), 1_797_000_000),
        Printed(
            "Provision for income taxes (Note 7)", year(2022, date(2022, 12, 31)), -411_000_000
        ),
        Printed("Net income", year(2020, date(2020, 12, 31)), 523_000_000),
    ],
    # Corning 2022 10-K, PDF page 60: Consolidated Balance Sheets, "December 31," over
    # 2022 | 2021.
    CORNING_BALANCE: [
        Printed("Cash and cash equivalents", year_end(2022), 1_671_000_000),
        Printed("Total current assets", year_end(2021), 7_659_000_000),
        Printed("Retained earnings", year_end(2022), 16_778_000_000),
    ],
    # Verizon 2022 10-K, PDF page 54: Consolidated Statements of Income, "Years Ended
    # December 31," 2022 | 2021 | 2020, "(dollars in millions, except per share amounts)".
    VERIZON: [
        Printed("Total Operating Revenues", year(2022, date(2022, 12, 31)), 136_835_000_000),
        Printed("Operating Income", year(2021, date(2021, 12, 31)), 32_448_000_000),
        Printed("Provision for income taxes", year(2022, date(2022, 12, 31)), -6_523_000_000),
        Printed(
            "Income Before Provision For Income Taxes",
            year(2020, date(2020, 12, 31)),
            23_967_000_000,
        ),
    ],
    # Verizon 2022 10-K, PDF page 56: Consolidated Balance Sheets, "At December 31,"
    # 2022 | 2021.
    VERIZON_BALANCE: [
        Printed("Total current assets", balance(2021, date(2021, 12, 31)), 36_728_000_000),
        Printed("Total assets", balance(2022, date(2022, 12, 31)), 379_680_000_000),
        Printed("Long-term debt", balance(2022, date(2022, 12, 31)), 140_676_000_000),
        Printed("Total current liabilities", balance(2022, date(2022, 12, 31)), 50_171_000_000),
    ],
}


def statement_param(statement: Statement, *values: object, id: str | None = None) -> object:
    marks = [needs_dev_pdfs] if statement.needs_shared else []
    return pytest.param(statement, *values, marks=marks, id=id or statement.name)


def printed_params() -> Iterator[object]:
    for statement, rows in PRINTED.items():
        for row in rows:
            yield statement_param(
                statement, row, id=f"{statement.name}: {row.label} {row.period.label()}"
            )


@pytest.fixture(scope="module")
def read_statement(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Statement], list[Fact]]:
    import pymupdf

    cache: dict[Statement, list[Fact]] = {}

    def read(statement: Statement) -> list[Fact]:
        if statement not in cache:
            small = tmp_path_factory.mktemp("statement") / f"{statement.name}.pdf"
            with pymupdf.open(statement.source) as filing, pymupdf.open() as pages:
                for page in statement.pages:
                    pages.insert_pdf(filing, from_page=page - 1, to_page=page - 1)
                pages.save(small)
            parsed = PyMuPDFParser().parse(small)
            for page in parsed.pages:  # as ingest prepares pages before chunking
                page.markdown = bound_paragraphs(page.markdown)
            embedder = HashEmbedder()
            chunks, _ = Chunker(embedder.count_tokens, max_tokens=embedder.max_tokens).chunk(parsed)
            cache[statement] = table_facts(chunks, FiscalCalendar(statement.year_end_month))
        return cache[statement]

    return read


def full_label(fact: Fact) -> str:
    return " > ".join((fact.parents[-1], fact.label or "")) if fact.parents else fact.label or ""


def matches(fact: Fact, label: str) -> bool:
    return (full_label(fact) if " > " in label else fact.label) == label


@pytest.mark.parametrize(("statement", "printed"), list(printed_params()))
def test_printed_value(read_statement, statement: Statement, printed: Printed) -> None:
    facts = read_statement(statement)
    found = [f for f in facts if matches(f, printed.label) and f.period == printed.period]
    assert [(f.value, f.unit, f.page) for f in found] == [
        (Decimal(printed.value), printed.unit, printed.page)
    ], [
        (full_label(f), f.period, f.value, f.unit, f.printed)
        for f in facts
        if matches(f, printed.label)
    ]


@pytest.mark.parametrize("statement", [statement_param(s) for s in STATEMENTS])
def test_statement_kind_and_pages(read_statement, statement: Statement) -> None:
    facts = read_statement(statement)
    assert {f.statement for f in facts} == {statement.kind}
    assert {f.page for f in facts} == set(range(1, len(statement.pages) + 1))
    assert all(f.period.known for f in facts), "every column of a statement names its period"
