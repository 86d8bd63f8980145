"""Facts from printed tables: header periods, cell values, units notes, statements."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from types import SimpleNamespace

import pytest

from finrag.facts import model
from finrag.facts.cells import parse_cell, read_units
from finrag.facts.dictionary import match_label
from finrag.facts.extract import table_facts
from finrag.facts.periods import FiscalCalendar, parse_period
from finrag.facts.table_facts import (
    DocumentPeriod,
    classify_statement,
    column_headings,
    facts_from_table_chunk,
    read_table_chunk,
)

# Header strings as the filings print them (EDGAR HTML and the dev PDFs), with the period
# each names: (end, months, instant, fiscal year, fiscal quarter).
HEADERS = [
    ("Years ended September 28, 2024", (date(2024, 9, 28), 12, False, None, None)),
    ("Three Months Ended July 29, 2023", (date(2023, 7, 29), 3, False, None, None)),
    ("Six Months Ended July 30, 2022", (date(2022, 7, 30), 6, False, None, None)),
    ("Nine months ended Sept. 30, 2024", (date(2024, 9, 30), 9, False, None, None)),
    ("52 Weeks Ended February 3, 2024", (date(2024, 2, 3), 12, False, None, None)),
    ("13 Weeks Ended April 29, 2023", (date(2023, 4, 29), 3, False, None, None)),
    ("As of Dec. 31, 2022", (date(2022, 12, 31), None, True, None, None)),
    ("2018", (None, 12, False, 2018, None)),
    ("Fiscal 2024", (None, 12, False, 2024, None)),
    ("FY24", (None, 12, False, 2024, None)),
    ("Q2 2023", (None, 3, False, 2023, 2)),
    ("Second Quarter Fiscal 2024", (None, 3, False, 2024, 2)),
]


@pytest.mark.parametrize(("header", "expected"), HEADERS)
def test_header_periods(header: str, expected: tuple) -> None:
    period = parse_period(header)
    assert (
        period.end,
        period.months,
        period.instant,
        period.fiscal_year,
        period.fiscal_quarter,
    ) == expected


@pytest.mark.parametrize("header", ["Total", "2023 vs 2022", "March 2024", "Change", ""])
def test_headers_that_name_no_single_period_stay_unknown(header: str) -> None:
    period = parse_period(header)
    assert not (period.end or period.fiscal_year), period


def test_a_bare_date_on_a_balance_sheet_is_an_instant() -> None:
    assert parse_period("December 31, 2022", instant_default=True).instant
    assert not parse_period("December 31, 2022").instant
    assert parse_period("2018", instant_default=True) == parse_period("As of 2018")


@pytest.mark.parametrize(
    ("period_end", "quarter", "year_end_month"),
    [
        (date(2024, 9, 28), None, 9),  # Apple 10-K
        (date(2023, 7, 29), 2, 1),  # Best Buy Q2 FY24 10-Q: FY ends Feb 3, 2024
        (date(2024, 2, 3), None, 1),  # Best Buy's 53-week year end, a week into February
        (date(2018, 12, 31), None, 12),  # 3M 10-K
        (date(2025, 6, 28), 3, 9),  # Apple Q3 FY25 10-Q
    ],
)
def test_fiscal_calendar_from_a_filing(
    period_end: date, quarter: int | None, year_end_month: int
) -> None:
    assert FiscalCalendar.from_document(period_end, quarter).year_end_month == year_end_month


def test_fiscal_years_and_quarters_on_a_retailers_calendar() -> None:
    best_buy = FiscalCalendar(1)
    q2 = best_buy.resolve(parse_period("Three Months Ended July 29, 2023"))
    assert (q2.fiscal_year, q2.fiscal_quarter) == (2024, 2)
    year = best_buy.resolve(parse_period("Fiscal Year Ended February 3, 2024"))
    assert (year.fiscal_year, year.fiscal_quarter, year.months) == (2024, None, 12)
    apple = FiscalCalendar(9)
    assert apple.resolve(parse_period("Three Months Ended June 28, 2025")).fiscal_quarter == 3


@pytest.mark.parametrize(
    ("cell", "value", "percent"),
    [
        ("$ (1,577)", "-1577", False),
        ("(1,577)", "-1577", False),
        ("(12)", "-12", False),
        ("—", "0", False),
        ("$ —", "0", False),
        ("-", "0", False),
        ("(7.2)%", "-7.2", True),
        ("23.2 %", "23.2", True),
        ("$ 1.25", "1.25", False),
        ("1,577 (a)", "1577", False),  # footnote mark
        ("1,234(2)", "1234", False),
        ("$9,583 ", "9583", False),
    ],
)
def test_cells(cell: str, value: str, percent: bool) -> None:
    number = parse_cell(cell)
    assert number is not None
    assert (number.value, number.percent) == (Decimal(value), percent)


@pytest.mark.parametrize("cell", ["", "n/a", "NM", "July 29, 2023", "Total", "4.2 pts", "(12"])
def test_cells_without_a_number(cell: str) -> None:
    assert parse_cell(cell) is None


def test_units_notes_with_their_exceptions() -> None:
    apple = read_units(
        "(In millions, except number of shares, which are reflected in thousands, "
        "and per-share amounts)"
    )
    assert apple is not None
    assert apple.scale_for("Total net sales", False) == 6
    assert apple.scale_for("Diluted", False) == 6  # a row label alone says nothing
    assert apple.scale_for("Basic", False, ["Shares used in computing earnings per share"]) == 3
    assert apple.scale_for("Diluted", False, ["Earnings per share"]) == 0
    assert apple.unit_for("Diluted", False, ["Earnings per share"]) == "USD/shares"
    assert apple.scale_for("Weighted-average shares outstanding, basic", False) == 3
    assert apple.unit_for("Diluted earnings per share", False) == "USD/shares"
    best_buy = read_units("$ and shares in millions, except per share amounts (unaudited)")
    assert best_buy is not None
    assert best_buy.scale_for("Weighted-average common shares outstanding: Basic", False) == 6
    assert read_units("(in thousands, except per share data)").scale == 3
    assert read_units("Consolidated Balance Sheets") is None


# Apple's 2024 10-K statement of operations (page 31 as finrag splits the EDGAR file), as
# a table chunk holds it: headings, units note, grid.
APPLE_OPERATIONS = """\
PART II > Item 8. Financial Statements > CONSOLIDATED STATEMENTS OF OPERATIONS
(In millions, except number of shares, which are reflected in thousands, and per-share amounts)

|Net sales:|Years ended September 28, 2024|Years ended September 30, 2023|Years ended \
September 24, 2022|
|---|---|---|---|
|Products|$294,866|$298,085|$316,199|
|Services|96,169|85,200|78,129|
|Total net sales|391,035|383,285|394,328|
|Cost of sales:||||
|Products|185,233|189,282|201,471|
|Other income/(expense), net|269|(565)|(334)|
|Net income|$93,736|$96,995|$99,803|
|Earnings per share:||||
|Diluted|$6.08|$6.13|$6.11|
|Shares used in computing earnings per share:||||
|Basic|15,343,783|15,744,231|16,215,963|
"""


def _find(facts, label: str, fiscal_year: int, parent: str | None = None):
    hits = [
        f
        for f in facts
        if f.label == label
        and f.period.fiscal_year == fiscal_year
        and (parent is None or parent in f.parents)
    ]
    assert len(hits) == 1, [(f.label, f.period, f.parents) for f in hits]
    return hits[0]


def test_apple_statement_of_operations() -> None:
    facts = facts_from_table_chunk(
        APPLE_OPERATIONS, page=31, chunk_ordinal=150, calendar=FiscalCalendar(9)
    )
    assert {f.statement for f in facts} == {model.INCOME}
    sales = _find(facts, "Total net sales", 2024)
    assert sales.value == Decimal("391035000000")
    assert sales.unit == "USD"
    assert sales.period.end == date(2024, 9, 28)
    assert sales.period.months == 12
    assert (sales.page, sales.chunk_ordinal, sales.printed) == (31, 150, "391,035")
    products = _find(facts, "Products", 2023, parent="Cost of sales")
    assert products.value == Decimal("189282000000")
    assert _find(facts, "Products", 2022, parent="Net sales").value == Decimal("316199000000")
    assert _find(facts, "Other income/(expense), net", 2023).value == Decimal("-565000000")
    eps = _find(facts, "Diluted", 2024, parent="Earnings per share")
    assert (eps.value, eps.unit) == (Decimal("6.08"), "USD/shares")
    shares = _find(facts, "Basic", 2024, parent="Shares used in computing earnings per share")
    assert shares.value == Decimal("15343783000")  # "reflected in thousands"
    assert shares.unit == "shares"


def test_a_net_income_row_under_a_per_share_heading_is_the_per_share_figure() -> None:
    # Verizon's 2022 10-K prints its earnings per share as a section whose rows repeat
    # the net income label: the heading must stay over them.
    grid = "\n".join(
        [
            "|Years Ended December 31,|(dollars in millions, except per share amounts) 2022|2021|",
            "|---|---|---|",
            "|Net Income|$21,748|$22,618|",
            "|Net income attributable to Verizon|21,256|22,065|",
            "|Basic Earnings Per Common Share||||",
            "|Net income attributable to Verizon|$5.06|$5.32|",
            "|Weighted-average shares outstanding (in millions)|4,202|4,148|",
        ]
    )
    facts = facts_from_table_chunk(grid, page=54, chunk_ordinal=1, calendar=FiscalCalendar(12))
    rows = [f for f in facts if f.label == "Net income attributable to Verizon"]
    per_share = [f for f in rows if "Basic Earnings Per Common Share" in f.parents]
    total = [f for f in rows if not f.parents]
    assert [(f.value, f.unit) for f in per_share] == [
        (Decimal("5.06"), "USD/shares"),
        (Decimal("5.32"), "USD/shares"),
    ]
    assert [f.value for f in total] == [Decimal("21256000000"), Decimal("22065000000")]
    # so a lookup of net income, which reads a row's unit and heading, finds one value
    read = [match_label(f.label, model.INCOME, parents=f.parents, unit=f.unit) for f in rows]
    assert [m.name if m else None for m in read] == ["net_income"] * 2 + [None] * 2


# Best Buy's Q2 FY24 10-Q statement of earnings (page 4) as PyMuPDF cuts its spanned
# headers: "Three Mo" | "nths Ended".
BEST_BUY_EARNINGS = """\
Condensed Consolidated Statements of Earnings
$ and shares in millions, except per share amounts (unaudited)

||Three Mo|nths Ended|Six Mon|ths Ended|
|---|---|---|---|---|
||July 29, 2023|July 30, 2022|July 29, 2023|July 30, 2022|
|Revenue|$ 9,583|$ 10,329|$ 19,050|$ 20,976|
|Restructuring charges|(7)| 34| (16)| 35|
|Gain on sale of subsidiary, net|21|-| 21| -|
|Diluted earnings per share|$ 1.25|$ 1.35|$ 2.36|$ 2.85|
|Weighted-average common shares outstanding:|   |   |   | |
|Basic|218.6|225.4|218.7|226.1|
"""


def test_best_buy_statement_of_earnings_with_cut_headers() -> None:
    facts = facts_from_table_chunk(
        BEST_BUY_EARNINGS, page=4, chunk_ordinal=7, calendar=FiscalCalendar(1)
    )
    assert {f.statement for f in facts} == {model.INCOME}
    by_period = {(f.period.months, f.period.end): f.value for f in facts if f.label == "Revenue"}
    assert by_period == {
        (3, date(2023, 7, 29)): Decimal("9583000000"),
        (3, date(2022, 7, 30)): Decimal("10329000000"),
        (6, date(2023, 7, 29)): Decimal("19050000000"),
        (6, date(2022, 7, 30)): Decimal("20976000000"),
    }
    q2 = next(f for f in facts if f.label == "Revenue" and f.period.months == 3)
    assert (q2.period.fiscal_year, q2.period.fiscal_quarter) == (2024, 2)
    assert [f.value for f in facts if f.label == "Restructuring charges"][:2] == [
        Decimal("-7000000"),
        Decimal("34000000"),
    ]
    assert [f.value for f in facts if f.label.startswith("Gain on sale")][1] == 0
    eps = next(f for f in facts if f.label == "Diluted earnings per share")
    assert (eps.value, eps.unit) == (Decimal("1.25"), "USD/shares")
    basic = next(f for f in facts if f.label == "Basic")
    assert (basic.value, basic.unit) == (Decimal("218600000"), "shares")


def test_spanned_fiscal_year_headers_cut_mid_word() -> None:
    headings = column_headings(
        [["", "", "Fisca", "l 2024", "", "", "Fiscal", "2023", ""]],
        list(range(1, 9)),
        instant_default=False,
    )
    assert [headings[j][0].fiscal_year for j in range(1, 9)] == [2024] * 4 + [2023] * 4


def test_a_units_note_or_a_date_cut_from_its_years_qualifies_no_column() -> None:
    # Verizon's PDF spreads "(dollars in millions, except per share amounts)" over the
    # year columns, cut mid-word in the first; Corning's prints "December 31," over one
    # of three years; NVIDIA's HTML writes "(In millions)" in each date's cell.
    spread = column_headings(
        [
            [
                "Years Ended December 31, Operating Revenues",
                "(dollars in millions, except per s 2022",
                "(dollars in millions, except per share amounts) 2021",
            ],
            ["", "(dolla 2020", "As of Decem 2019"],
        ],
        [1, 2],
        instant_default=False,
    )
    assert [q for _, q in spread.values()] == [None, None]
    corning = column_headings(
        [["", "", "Year ended December 31,", ""], ["(in millions)", "2022", "2021", "2020"]],
        [1, 2, 3],
        instant_default=False,
    )
    assert [(p.end.year if p.end else p.fiscal_year, p.months, q) for p, q in corning.values()] == [
        (2022, 12, None),
        (2021, 12, None),
        (2020, 12, None),
    ]
    # Words of a column's own still qualify it.
    kept = column_headings([["", "2024 Gross Carrying Amount"]], [1], instant_default=True)
    assert kept[1][1] == "Gross Carrying Amount"


def test_later_parts_of_a_cut_table_take_the_first_parts_years_and_statement() -> None:
    title = "|Consolidated Statements of Income|Co|rning Incorporated and|Subsidiary Companies|"
    grid = "|---|---|---|---|"
    first = "\n".join(
        [
            title,
            grid,
            "|||Year ended December 31,||",
            "|(in millions)|2022|2021|2020|",
            "|Net sales|$14,189|$14,082|$11,303|",
            "|Cost of sales|9,683|9,019|7,772|",
        ]
    )
    second = "\n".join([title, grid, "|Operating income|1,438|2,112|509|"])
    chunks = [
        SimpleNamespace(ordinal=i, kind="table", page_start=58, page_end=58, content=c)
        for i, c in enumerate((first, second))
    ]
    facts = table_facts(chunks, FiscalCalendar(12))
    operating = [f for f in facts if f.label == "Operating income"]
    assert [(f.period.fiscal_year, f.value) for f in operating] == [
        (2022, Decimal("1438000000")),
        (2021, Decimal("2112000000")),
        (2020, Decimal("509000000")),
    ]
    assert {f.statement for f in facts} == {model.INCOME}


def _parts(path: str, *grids: str) -> list[SimpleNamespace]:
    return [
        SimpleNamespace(
            ordinal=i, kind="table", page_start=59, page_end=59, content=f"{path}\n\n{g}"
        )
        for i, g in enumerate(grids)
    ]


BALANCE_HEAD = "|(MILLIONS) Assets|As of December 31, 2021|As of December 31, 2020|\n|---|---|---|"
BALANCE_PARTS = (
    BALANCE_HEAD
    + "\n|Cash and cash equivalents|$1,944|$1,786|\n|Total current assets|59,693|35,576|",
    BALANCE_HEAD + "\n|Goodwill|49,208|49,556|\n|Total assets|$181,476|$154,229|",
    BALANCE_HEAD + "\n|Long-term debt|36,195|37,133|\n|Total liabilities|104,013|90,756|",
)


def test_a_cut_statement_is_known_by_the_rows_of_all_its_parts() -> None:
    # Pfizer's balance sheet: its PDF page's heading is the page before's title.
    drifted = _parts("Item 8 > Consolidated Statements of Comprehensive Income", *BALANCE_PARTS)
    facts = table_facts(drifted, FiscalCalendar(12))
    assert {f.statement for f in facts} == {model.BALANCE}
    # 3M's title cut by the parser ("Balance Shee t") under the statements' Item.
    cut = _parts(
        "Item 8. Financial Statements and Supplementary Data > Balance Shee t", *BALANCE_PARTS
    )
    assert {f.statement for f in table_facts(cut, FiscalCalendar(12))} == {model.BALANCE}
    # An investee's summarized balance sheet in the notes is not the filer's.
    note = _parts("Notes to Consolidated Financial Statements > Investment in ViiV", *BALANCE_PARTS)
    assert {f.statement for f in table_facts(note, FiscalCalendar(12))} == {model.OTHER_TABLE}


def test_a_restatement_table_titled_in_its_corner_is_no_statement() -> None:
    # Tesla's printed 10-Q: a note's "as previously reported | adjustments | as adjusted"
    # table under a statement's name; the corner names a statement only for the statement.
    grid = "\n".join(
        [
            "|Consolidated Statement of Operations (unaudited):|Six Months Ended June 30, 2024 "
            "As Previously Reported|Adjustments|As Adjusted|",
            "|---|---|---|---|",
            "|Other income, net|$128|$235|$363|",
            "|Provision for income taxes|$802|$52|$854|",
        ]
    )
    restated = facts_from_table_chunk(
        "ITEM 1. FINANCIAL STATEMENTS > ASU 2023-08\n\n" + grid,
        page=16,
        chunk_ordinal=0,
        calendar=FiscalCalendar(12),
    )
    assert {f.statement for f in restated} == {model.OTHER_TABLE}
    statement = grid.replace(" As Previously Reported|Adjustments|As Adjusted|", "|2023|")
    statement = statement.replace("|---|---|---|---|", "|---|---|---|").replace(
        "|$235|$363|", "|$40|"
    )
    statement = statement.replace("|$52|$854|", "|$60|")
    titled = facts_from_table_chunk(
        "ITEM 1. FINANCIAL STATEMENTS\n\n" + statement,
        page=5,
        chunk_ordinal=0,
        calendar=FiscalCalendar(12),
    )
    assert {f.statement for f in titled} == {model.INCOME}


def test_a_notes_title_names_no_primary_statement() -> None:
    lines = ["Item 1 > Note 8 - Balance Sheet Components"]
    assert classify_statement(lines, ["Total other long-term liabilities"]) == model.OTHER_TABLE


def test_a_column_that_names_no_period_keeps_its_values_with_period_unknown() -> None:
    content = "|Segment|2024|Change|2023|\n|---|---|---|---|\n|Americas|$167,045|3%|$162,560|\n"
    facts = facts_from_table_chunk(content, page=1, chunk_ordinal=0, calendar=FiscalCalendar(9))
    change = next(f for f in facts if f.printed == "3%")
    assert not change.period.known
    assert change.dimensions == (("column", "Change"),)
    assert next(f for f in facts if f.printed == "$167,045").period.fiscal_year == 2024


@pytest.mark.parametrize(
    ("lines", "labels", "kind"),
    [
        (["CONSOLIDATED STATEMENTS OF CASH FLOWS"], [], model.CASH_FLOW),
        (["Item 8 > CONSOLIDATED BALANCE SHEETS"], [], model.BALANCE),
        (["Consolidated Statement of Income"], [], model.INCOME),
        (["Condensed Consolidated Statements of Comprehensive Income"], [], model.COMPREHENSIVE),
        (["Consolidated Statements of Shareholders' Equity"], [], model.EQUITY),
        (["Note 13 - Segment Information"], [], model.SEGMENT),
        (
            [],
            ["Net cash provided by operating activities", "Net cash used in investing activities"],
            model.CASH_FLOW,
        ),
        ([], ["Total current assets", "Total assets"], model.BALANCE),
        ([], ["Revenue", "Operating income", "Net earnings"], model.INCOME),
        # One statement row is not a statement: Best Buy's earnings-per-share note.
        ([], ["Net earnings", "Weighted-average common shares outstanding"], model.OTHER_TABLE),
        ([], ["Total assets"], model.OTHER_TABLE),
        (["Item 7 > Liquidity"], ["Maturities"], model.OTHER_TABLE),
        # Salesforce's footnote table of stock-based compensation by line sits under the
        # statement's heading; none of its rows is one the statement prints.
        (
            ["Item 8 > Consolidated Statements of Operations"],
            ["Cost of revenues", "Research and development", "Sales and marketing"],
            model.OTHER_TABLE,
        ),
        # A note's lead-in names a statement; it titles nothing.
        (
            ["Gains reclassified into earnings in our consolidated statements of operations:"],
            ["Revenues", "Costs and expenses"],
            model.OTHER_TABLE,
        ),
        # Tesla's 10-Q: the title lost, the table right under the Item; one row will do.
        (["PART I > Item 1. FINANCIAL STATEMENTS > (unaudited)"], ["Total assets"], model.BALANCE),
        # ...but not under a subsection of the Item (a note without its number).
        (["Item 8. Financial Statements > Notional Amounts"], ["Revenues"], model.OTHER_TABLE),
        # P&G's reconciliation of "core" measures repeats income-statement rows.
        (
            ["PART I > MEASURES NOT DEFINED BY U.S. GAAP"],
            ["Operating income", "Income taxes", "Net earnings attributable to P&G"],
            model.OTHER_TABLE,
        ),
        # 3M's MD&A free-cash-flow table repeats cash-flow rows: not the statement.
        (
            ["PART II > Item 7. Management’s Discussion and Analysis > Free Cash Flow"],
            ["Net cash provided by operating activities"],
            model.OTHER_TABLE,
        ),
    ],
)
def test_statement_kinds(lines: list[str], labels: list[str], kind: str) -> None:
    assert classify_statement(lines, labels) == kind


def test_the_parts_of_a_cut_statement_keep_its_kind() -> None:
    from finrag.facts.extract import table_facts
    from finrag.ingest.chunk import Chunk

    head = "|(in millions)|June 30, 2025|December 31, 2024|\n|---|---|---|\n"
    first = head + "|Total current assets|61,133|58,360|\n|Total assets|$128,567|$122,070|\n"
    # The liabilities half, cut from it under the same header: one statement row alone.
    second = head + "|Accounts payable|12,000|11,000|\n|Total liabilities|$48,000|$48,390|\n"
    chunks = [Chunk(i, "table", 4, 4, [], text, text, 1) for i, text in enumerate([first, second])]
    facts = table_facts(chunks, FiscalCalendar(12))
    assert {f.statement for f in facts} == {model.BALANCE}
    payable = next(
        f for f in facts if f.label == "Accounts payable" and f.period.fiscal_year == 2025
    )
    assert (payable.value, payable.period.instant) == (Decimal("12000000000"), True)


def test_a_bare_year_beside_a_dated_span_is_that_span_a_year_earlier() -> None:
    # Boeing's 10-Q: "Six months ended June 30 2025 | 2024 | Three months ended ... | 2024"
    content = (
        "|(Dollars in millions)|Six months ended June 30 2025|2024|"
        "Three months ended June 30 2025|2024|\n|---|---|---|---|---|\n"
        "|Total revenues|42,245|33,435|22,749|16,866|\n"
    )
    facts = facts_from_table_chunk(content, page=3, chunk_ordinal=0, calendar=FiscalCalendar(12))
    periods = {f.printed: f.period for f in facts}
    assert (periods["33,435"].end, periods["33,435"].months) == (date(2024, 6, 30), 6)
    assert (periods["16,866"].end, periods["16,866"].months) == (date(2024, 6, 30), 3)
    assert periods["16,866"].fiscal_quarter == 2


def test_a_heading_spanned_over_the_date_columns_is_not_a_column_qualifier() -> None:
    # Apple's balance sheet: "ASSETS:" printed across the date columns.
    content = (
        "CONSOLIDATED BALANCE SHEETS\n(In millions)\n\n"
        "|Current assets:|September 28, 2024 ASSETS:|September 30, 2023 ASSETS:|\n|---|---|---|\n"
        "|Cash and cash equivalents|$29,943|$29,965|\n"
    )
    facts = facts_from_table_chunk(content, page=33, chunk_ordinal=0, calendar=FiscalCalendar(9))
    assert [f.dimensions for f in facts] == [(), ()]
    assert facts[0].period.end == date(2024, 9, 28) and facts[0].period.instant


def test_the_opening_cash_of_a_year_to_date_column_is_the_prior_fiscal_year_end() -> None:
    content = (
        "CONDENSED CONSOLIDATED STATEMENTS OF CASH FLOWS\n(In millions)\n\n"
        "||Nine Months Ended June 28, 2025|Nine Months Ended June 29, 2024|\n|---|---|---|\n"
        "|Cash, cash equivalents, and restricted cash, beginning balances|$29,943|$30,737|\n"
    )
    facts = facts_from_table_chunk(content, page=7, chunk_ordinal=0, calendar=FiscalCalendar(9))
    opening = {f.printed: f.period for f in facts}
    assert opening["$29,943"].instant and opening["$29,943"].fiscal_year == 2024
    assert opening["$30,737"].fiscal_year == 2023
    assert opening["$29,943"].fiscal_quarter == 4  # the balance at the fiscal year's end


# Statement-of-operations headers as the PDF pipeline reads 10-Qs printed by Chromium
# from EDGAR (P&G Q3 FY2025, Tesla and Boeing Q2 2025): spanned headers cut anywhere.
CUT_10Q_HEADERS = [
    (
        [
            "",
            "Three Months 3 2025",
            "Ended March 1 2024",
            "Nine Months 3 2025",
            "Ended March 1 2024",
        ],
        date(2025, 3, 31),
        [(2025, 3), (2024, 3), (2025, 9), (2024, 9)],
    ),
    (
        [
            "Revenues",
            "Three Months 2025",
            "Ended June 30, 2024",
            "Six Months Ended June 30, 2025",
            "Six Months Ended June 30, 2024",
        ],
        date(2025, 6, 30),
        [(2025, 3), (2024, 3), (2025, 6), (2024, 6)],
    ),
    (
        [
            "(Dollars in millions)",
            "Six months e 30 2025",
            "nded June 2024",
            "Three mont Junehs ended 30 2025",
            "Three mont Junehs ended 30 2024",
        ],
        date(2025, 6, 30),
        [(2025, 6), (2024, 6), (2025, 3), (2024, 3)],
    ),
]


@pytest.mark.parametrize(("header", "end", "expected"), CUT_10Q_HEADERS)
def test_a_10q_header_cut_apart_is_read_as_its_quarter_and_year_to_date(
    header: list[str], end: date, expected: list[tuple[int, int]]
) -> None:
    # Read alone, these columns came out as whole fiscal years or as balances: a wrong
    # period on every figure of the statement.
    alone = column_headings([header], [1, 2, 3, 4], instant_default=False)
    assert any(p.months == 12 or p.instant for p, _ in alone.values())
    quarterly = DocumentPeriod(end, quarterly=True)
    headings = column_headings([header], [1, 2, 3, 4], instant_default=False, document=quarterly)
    assert [(p.end.year, p.months) for p, _ in headings.values()] == expected
    assert all(p.end.replace(year=end.year) == end for p, _ in headings.values())
    assert all(qualifier is None for _, qualifier in headings.values())


def test_a_bare_year_in_a_quarterly_report_is_never_a_whole_fiscal_year() -> None:
    quarterly = DocumentPeriod(date(2025, 6, 30), quarterly=True)
    headings = column_headings([["", "2025", "2024"]], [1, 2], False, document=quarterly)
    assert [p.known for p, _ in headings.values()] == [False, False]
    annual = column_headings([["Years ended", "2025", "2024"]], [1, 2], False, document=quarterly)
    assert [p.months for p, _ in annual.values()] == [12, 12]


def test_a_day_printed_once_over_bare_years_dates_them() -> None:
    # Boeing's statement of financial position: "December 31," sits in the label column.
    content = (
        "Consolidated Statements of Financial Position\n\n"
        "|(Dollars in millions) December 31, Assets|2024|2023|\n|---|---|---|\n"
        "|Total assets|$156,363|$137,012|\n"
    )
    facts = facts_from_table_chunk(content, page=58, chunk_ordinal=0, calendar=FiscalCalendar(12))
    periods = [f.period for f in facts]
    assert [(p.end, p.instant, p.fiscal_year, p.fiscal_quarter) for p in periods] == [
        (date(2024, 12, 31), True, 2024, 4),
        (date(2023, 12, 31), True, 2023, 4),
    ]
    # A retailer's year named for its start: the printed year is the date's, not the name.
    retailer = FiscalCalendar(1, naming=-1, weeks=True)
    facts = facts_from_table_chunk(
        content.replace("December 31,", "February 3,"), page=1, chunk_ordinal=0, calendar=retailer
    )
    assert facts[0].period.fiscal_year == 2023
    stacked = column_headings(
        [["", "June 30,", "December 31,"], ["", "2025", "2024"]], [1, 2], True
    )
    assert [(p.end, q) for p, q in stacked.values()] == [
        (date(2025, 6, 30), None),
        (date(2024, 12, 31), None),
    ]


def test_rows_splitting_a_cash_flow_closing_balance_are_balances_too() -> None:
    content = (
        "Consolidated Statements of Cash Flows\n(Dollars in millions)\n\n"
        "|Years ended December 31,|2024|2023|\n|---|---|---|\n"
        "|Net cash provided by operating activities|(12,080)|5,960|\n"
        "|Cash & cash equivalents, including restricted, at end of year|13,822|12,713|\n"
        "|Less restricted cash & cash equivalents, included in Investments|21|22|\n"
        "|Cash and cash equivalents at end of year|$13,801|$12,691|\n"
        "|Cash paid for interest|3,300|2,600|\n"
    )
    facts = facts_from_table_chunk(content, page=59, chunk_ordinal=0, calendar=FiscalCalendar(12))
    period = {f.printed: f.period for f in facts}
    assert period["21"].instant and period["21"].end == date(2024, 12, 31)
    assert period["21"].fiscal_quarter == 4
    assert not period["3,300"].instant and period["3,300"].months == 12
    # The same rows from Boeing's 10-Q printed to PDF, their words run together.
    glued = (
        "Consolidated Statements of Cash Flows\n(Dollars in millions)\n\n"
        "||Six months ended June 30 2025|Six months ended June 30 2024|\n|---|---|---|\n"
        "|Cash & cash equivalents,includingrestricted,at beginningofyear|13,822|12,713|\n"
        "|Cash & cash equivalents, including restricted, at end ofperiod|7,796|10,915|\n"
    )
    facts = facts_from_table_chunk(glued, page=6, chunk_ordinal=0, calendar=FiscalCalendar(12))
    period = {f.printed: f.period for f in facts}
    assert (period["13,822"].instant, period["13,822"].fiscal_year) == (True, 2024)
    assert period["7,796"].instant and period["7,796"].end == date(2025, 6, 30)


def test_a_10k_statement_header_cut_mid_day_ends_on_the_covers_day() -> None:
    # Netflix's 10-K printed to PDF: "December 31, 2024" cut into "December 3" and "1,".
    content = (
        "CONSOLIDATED STATEMENTS OF OPERATIONS\n(in thousands, except per share data)\n\n"
        "||Year ended December 3 2024|Year ended December 3 2023|1, 2022|\n|---|---|---|---|\n"
        "|Revenues|$39,000,966|$33,723,297|$31,615,550|\n"
    )
    annual = DocumentPeriod(date(2024, 12, 31), quarterly=False)
    facts, _ = read_table_chunk(
        content, page=60, chunk_ordinal=0, calendar=FiscalCalendar(12), document=annual
    )
    assert [f.period.end for f in facts[:2]] == [date(2024, 12, 31), date(2023, 12, 31)]
    assert facts[0].value == 39_000_966_000


def test_a_month_left_from_a_cut_period_is_no_column_qualifier() -> None:
    headings = column_headings(
        [["", "Yea", "r Ended December", "31,", "Change"], ["", "2024", "2023", "2022", ""]],
        [1, 2, 3],
        instant_default=False,
    )
    assert [q for _, q in headings.values()] == [None, None, None]
    # Salesforce's "January 31, 2025" cut to "Januar", beside a real qualifier.
    cut = column_headings(
        [["", "Fiscal Year Ended Januar 2025", "Market value 2024"]], [1, 2], False
    )
    assert [q for _, q in cut.values()] == [None, "Market value"]


def test_a_per_share_row_whose_words_a_pdf_ran_together_is_not_scaled() -> None:
    # Boeing's 10-Q printed to PDF: "Basic lossper share" under "(Dollars in millions,
    # except per share data)".
    content = (
        "Condensed Consolidated Statements of Operations\n"
        "(Dollars in millions, except per share data)\n\n"
        "||Six months ended June 30, 2025|Six months ended June 30, 2024|\n|---|---|---|\n"
        "|Basic lossper share|($1.09)|($2.90)|\n|Net loss|(643)|(1,794)|\n"
    )
    facts = facts_from_table_chunk(content, page=5, chunk_ordinal=0, calendar=FiscalCalendar(12))
    assert [(f.value, f.unit) for f in facts[:2]] == [
        (Decimal("-1.09"), "USD/shares"),
        (Decimal("-2.90"), "USD/shares"),
    ]
    assert facts[2].value == -643_000_000


def test_a_span_printed_once_in_the_label_columns_header_heads_every_dated_column() -> None:
    # Best Buy's statements: "Fiscal Years Ended" over the row labels, dates beside it.
    content = (
        "Item 8 > Consolidated Statements of Earnings\n$ and shares in millions\n\n"
        "|Fiscal Years Ended|January 28, 2023|January 29, 2022|\n|---|---|---|\n"
        "|Revenue|$46,298|$51,761|\n|Net earnings|$1,419|$2,454|\n"
    )
    facts = facts_from_table_chunk(content, page=40, chunk_ordinal=0, calendar=FiscalCalendar(1))
    revenue = [f for f in facts if f.label == "Revenue"]
    assert [(f.period.months, f.period.instant) for f in revenue] == [(12, False), (12, False)]


def test_a_notes_lead_in_naming_the_balance_sheet_is_no_balance_sheet() -> None:
    content = (
        "Item 8 > Note 6. Leasing Arrangements\n"
        "Supplemental disclosures for the balance sheet related to finance leases were as "
        "follows:\n(in millions)\n\n"
        "|At December 31,|2022|2021|\n|---|---|---|\n"
        "|Property, plant and equipment, net|$1,138|$1,046|\n"
        "|Debt maturing within one year|$565|$400|\n|Long-term debt|1,167|925|\n"
    )
    facts = facts_from_table_chunk(content, page=75, chunk_ordinal=0, calendar=FiscalCalendar(12))
    assert facts and {f.statement for f in facts} == {"other_table"}


def test_a_cut_tables_part_opening_on_a_per_share_heading_is_per_share() -> None:
    # P&G's 10-Q printed to PDF: the statement of earnings cut before its per-share rows,
    # the later part opening on the repeated header and "NET EARNINGS PER COMMON SHARE".
    path = "Item 1. Financial Statements > CONSOLIDATED STATEMENTS OF EARNINGS"
    header = (
        "|Amounts in millions except per share amounts|Three Months 3 2025|Ended March 1 2024|"
        "\n|---|---|---|"
    )
    first = header + "\n|NET SALES|$ 19,776|$ 20,195|\n|Income taxes|868|812|"
    second = header + "\n|NET EARNINGS PER COMMON SHARE (1)|||\n|Basic|$1.58|$1.56|"
    facts = table_facts(_parts(path, first, second), FiscalCalendar(6))
    basic = [(f.value, f.unit) for f in facts if f.label == "Basic"]
    assert basic == [(Decimal("1.58"), "USD/shares"), (Decimal("1.56"), "USD/shares")]
    assert next(f.value for f in facts if f.label == "NET SALES") == 19_776_000_000


@pytest.mark.parametrize(
    "opening",
    [
        # Apple's 10-K printed to PDF: the section rows run into the corner of the header.
        "|ASSETS: Current assets:|September 28, 2024|September 30, 2023|\n|---|---|---|",
        # The same as rows of words alone between the column headings and the figures.
        "||September 28, 2024|September 30, 2023|\n|---|---|---|\n|ASSETS:|||\n|Current assets:|||",
    ],
)
def test_section_rows_above_a_tables_first_figures_head_them(opening: str) -> None:
    content = (
        "CONSOLIDATED BALANCE SHEETS\n(In millions)\n\n"
        + opening
        + "\n|Cash and cash equivalents|$29,943|$29,965|\n|Marketable securities|35,228|31,590|"
        "\n|Total current assets|152,987|143,566|\n|Non-current assets:|||"
        "\n|Marketable securities|91,479|100,544|\n|Total assets|$364,980|$352,583|"
    )
    facts = facts_from_table_chunk(content, page=43, chunk_ordinal=0, calendar=FiscalCalendar(9))
    marketable = [f for f in facts if f.label == "Marketable securities" and f.column == 0]
    assert [f.parents for f in marketable] == [("Current assets",), ("Non-current assets",)]
    # Current marketable securities are short-term investments; the non-current ones not.
    current, later = (match_label(f.label, f.statement, parents=f.parents) for f in marketable)
    assert current is not None and current.name == "short_term_investments" and later is None
