"""Facts from printed tables: every numeric cell of a financial table, with the row label
it belongs to, the period its column heads, the units note's scale and the statement
the table is.

Works on what finrag already made of the filing: a table chunk holds the headings
above the table, its title and units lines, then the pipe table itself. A cell whose
column names no period is kept with the period unknown, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date

from finrag.facts import model
from finrag.facts.cells import Units, parse_cell, read_units
from finrag.facts.model import Fact
from finrag.facts.periods import SPAN_WORDS, FiscalCalendar, Period, month_number, parse_period
from finrag.tables import parse_markdown_table

# Pieces of a period in a header, in the order they are read off a joined header row.
_PERIOD_PIECE = re.compile(
    r"(?:(?:\d{1,2}|one|two|three|four|six|nine|twelve|thirteen|twenty-six|thirty-nine|"
    r"fifty-two|fifty-three)[\s-]+(?:months?|weeks?)|(?:fiscal\s+)?years?|quarters?)"
    r"\s+ended(?:\s*[:,])?"
    r"|(?:as\s+of\s+|at\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
    r"\s+\d{1,2},?\s+(?:19|20)\d{2}(?!\d)"
    r"|(?:fiscal\s*(?:year\s*)?|fy\s*'?)?(?<![\d,.$])(?:19|20)\d{2}(?![\d,.%])"
    r"|\bq[1-4]\b(?:\s+(?:fy\s*)?'?(?:19|20)?\d{2}(?!\d))?"
    r"|\b(?:first|second|third|fourth)\s+quarter(?:\s+(?:of\s+)?(?:fiscal\s+)?(?:19|20)\d{2})?",
    re.I,
)
# Spaces optional: a PDF runs words together ("at beginningofyear", "at end ofperiod").
_BEGINNING = re.compile(
    r"\bbeginning\s*(?:of\s*(?:the\s*)?(?:year|period)|balances?)\b|\bbeginning$", re.I
)
_ENDING = re.compile(
    r"\bend\s*of\s*(?:the\s*)?(?:year|period)\b|\bending\s*balances?\b|\bending$", re.I
)
# A balance of cash, not a flow of it ("Cash paid for interest" follows the balance too).
_PERIOD_WORDS = re.compile(r"\b[A-Za-z]{3,}\b")
_MONTH_NAMES = tuple(date(2000, m, 1).strftime("%B").lower() for m in range(1, 13))
_PRIMARY = (model.INCOME, model.BALANCE, model.CASH_FLOW, model.COMPREHENSIVE)
_CASH_WORD = re.compile(
    r"^(?!.*\b(?:paid|received|payments?|proceeds|interest|taxes)\b)"
    r".*\b(?:restricted\s+cash|cash\s+(?:and|&)\s+cash\s+equivalents)\b",
    re.I,
)
_ENDS_SPAN = re.compile(r"ended[\s:,]*$", re.I)
_BARE_YEAR = re.compile(r"(?:fiscal\s+)?((?:19|20)\d{2})")
# What is left of a header cell beside its period that still qualifies no column: the
# units note spread over the columns ("(dollars in millions, except per s" cut mid-word)
# and a year end's month and day printed apart from its years ("December 31,").
_NOT_A_QUALIFIER = re.compile(
    r"^\(?\s*(?:doll|amounts?\b|in\s+(?:millions|thousands|billions)|shares?\s+in\b)"
    r"|\b(?:millions|thousands|billions)\b|\bexcept\s+per\b"
    r"|^(?:as\s+of\s+|at\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
    r"\s+\d{1,2}$",
    re.I,
)
_STATEMENT_TITLES = (
    (
        model.CASH_FLOW,
        re.compile(r"statements?\s+of\s+cash\s+flows?|cash\s+flows?\s+statements?", re.I),
    ),
    (
        model.COMPREHENSIVE,
        re.compile(r"statements?\s+of\s+comprehensive\s+(?:income|loss|earnings)", re.I),
    ),
    (
        model.EQUITY,
        re.compile(
            r"statements?\s+of\s+(?:changes\s+in\s+)?(?:share|stock)holders['’]?\s+(?:equity|deficit)"
            r"|statements?\s+of\s+(?:[\w,'’]+\s+){0,6}?(?:equity|deficit)\b",
            re.I,
        ),
    ),
    (
        model.INCOME,
        re.compile(
            r"statements?\s+of\s+(?:consolidated\s+)?(?:operations|income|earnings)"
            r"|income\s+statements?|statements?\s+of\s+(?:net\s+)?(?:loss|income\s+\(loss\))",
            re.I,
        ),
    ),
    (
        model.BALANCE,
        re.compile(
            r"balance\s+sheets?|statements?\s+of\s+financial\s+(?:position|condition)", re.I
        ),
    ),
    (model.SEGMENT, re.compile(r"\bsegments?\b", re.I)),
)
# A line that talks about a statement rather than titling it: a note's lead-in sentence.
# Words of a sentence leading into a note's table ("Supplemental disclosures for the
# balance sheet related to finance leases were as follows:"), never of a statement's title.
_SENTENCE = re.compile(
    r"\b(?:following|table|summar\w+|included|recorded|presented|reported|reflected|"
    r"in\s+(?:our|the)\s+(?:condensed\s+)?consolidated|as\s+follows|related\s+to|"
    r"supplement\w*|disclosures?)\b",
    re.I,
)
# A reconciliation to "core" figures restates statement rows beside adjusted ones.
_NON_GAAP = re.compile(r"\bnon-?\s?gaap\b|\bnot\s+defined\s+by\s+u\.?\s?s\.?\s+gaap\b", re.I)
_MDA = re.compile(r"management['’]?s\s+discussion|\bitem\s+7\.?\s", re.I)
_NOTE = re.compile(r"\bnote\s+\d+\b", re.I)  # a note's table is not the statement
_NOTES_HEADING = re.compile(r"\bnotes\s+to\b|\bnote\b", re.I)
_STATEMENTS_ITEM = re.compile(
    r"\bitem\s+(?:1|8)\.?\s+(?:consolidated\s+|condensed\s+)*financial\s+statements\b", re.I
)
# Rows that mark a statement when its title is not at hand: the kind whose rows match
# at least ``needed`` of its patterns (one "Net income" row alone is an EPS note too).
_ROW_SIGNS = (
    # "Balance as of March 31, 2025" rows: a statement of equity, periods down the rows
    (model.EQUITY, 1, [r"^balances?,?\s+(?:as\s+of|at)\b"]),
    (
        model.CASH_FLOW,
        2,
        [
            r"net\s+cash\s+(?:provided|used|from)\b.*\boperating",
            r"net\s+cash\s+(?:provided|used|from)\b.*\binvesting",
            r"net\s+cash\s+(?:provided|used|from)\b.*\bfinancing",
        ],
    ),
    (
        model.BALANCE,
        2,
        [r"^total\s+assets$", r"^total\s+liabilities\b", r"^total\s+current\s+assets$"],
    ),
    (
        model.INCOME,
        2,
        [
            r"^(?:total\s+)?(?:net\s+)?(?:revenues?|sales)$",
            r"^(?:gross\s+(?:profit|margin))$",
            r"^operating\s+(?:income|loss|profit)",
            r"^(?:income|earnings)\s+(?:\(loss\)\s+)?before\b",
            r"^(?:provision\s+for\s+)?income\s+tax(?:es)?(?:\s+expense)?$",
        ],
    ),
)
_UNAUDITED = re.compile(r"\(?\s*unaudited\s*\)?", re.I)
# One row any part of the statement prints (a part cut from a long table too).
_CONFIRMING = {
    model.INCOME: re.compile(
        r"^(?:total\s+)?(?:net\s+)?(?:revenues?|sales)(?:,\s*net)?:?$|gross\s+(?:profit|margin)"
        r"|operating\s+(?:income|loss|profit)|(?:income|earnings|loss)\s+from\s+operations"
        r"|before\s+(?:provision|income\s+tax|taxes)|^net\s+(?:income|earnings|loss)"
        r"|per\s+(?:common\s+)?share|income\s+tax",
        re.I,
    ),
    model.BALANCE: re.compile(
        r"^total\s+(?:current\s+)?(?:assets|liabilities)|(?:stock|share)holders|equity"
        r"|^cash\s+and\s+cash\s+equivalents|receivable|inventor|goodwill|payable",
        re.I,
    ),
    model.CASH_FLOW: re.compile(
        r"(?:operating|investing|financing)\s+activities|adjustments\s+to\s+reconcile"
        r"|depreciation|(?:stock|share)-based|^net\s+(?:income|earnings|loss)",
        re.I,
    ),
}
# A subtotal of the whole statement closes any section row above it ("Other income
# (expense):" does not head "Earnings before income taxes").
_STATEMENT_SUBTOTAL = re.compile(
    r"^(?:net\s+(?:income|earnings|loss)|(?:income|earnings|loss)\s+(?:\(loss\)\s+)?before"
    r"|operating\s+(?:income|loss)|gross\s+(?:profit|margin)|total\s+(?:net\s+)?revenues?"
    r"|net\s+cash\s+(?:provided|used|from))",
    re.I,
)


_PER_SHARE = re.compile(r"\bper\s+(?:common\s+|ordinary\s+)?share\b", re.I)


# A span's number of months as a cut header may leave it: "Three mont" | "hs ended".
_CUT_SPAN = re.compile(
    r"\b(three|six|nine|twelve|thirteen|twenty[\s-]?six|thirty[\s-]?nine|\d{1,2})[\s-]*"
    r"(mon|wee)",
    re.I,
)
_MONTH_DAY = (
    r"(?P<month>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?P<day>\d{1,2})"
)
_DAY_WITHOUT_YEAR = re.compile(r"\b" + _MONTH_DAY + r"(?!\d)(?!,?\s*(?:19|20)\d{2})", re.I)
_DATE_IN_HEADER = re.compile(r"\b" + _MONTH_DAY + r",?\s+(?:19|20)\d{2}", re.I)
_YEAR_WORDS = re.compile(r"\byears?\b|twelve|fifty", re.I)
_ANY_YEAR = re.compile(r"(?<![\d,.$])((?:19|20)\d{2})(?![\d,.%])")
_MONTH_NAME = re.compile(
    r"\b(january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?(?![a-z])",
    re.I,
)


@dataclass(frozen=True)
class DocumentPeriod:
    """What the filing says of its own period (its cover): where its quarterly
    statements' columns end, for headers a PDF cut apart."""

    end: date | None = None
    quarterly: bool = False  # a 10-Q: its columns span 3, 6 or 9 months, never a year


@dataclass(frozen=True)
class TableContext:
    """What a table chunk says around its grid."""

    lines: list[str]  # the headings path, title and units lines above the grid
    grid: str  # the pipe table


def split_table_chunk(content: str) -> TableContext | None:
    lines = content.splitlines()
    first = next((i for i, line in enumerate(lines) if line.lstrip().startswith("|")), None)
    if first is None:
        return None
    grid = [line for line in lines[first:] if line.lstrip().startswith("|")]
    return TableContext([line for line in lines[:first] if line.strip()], "\n".join(grid))


def classify_statement(context_lines: Sequence[str], labels: Sequence[str]) -> str:
    """The statement a table is, from its title and headings first, its rows second."""
    # The nearest line wins: the title under "Item 8" names the statement, not the Item.
    for line in reversed(context_lines):
        for part in reversed(line.split(" > ")):
            if _SENTENCE.search(part) or len(part.split()) > 14:
                continue  # "... as reported in our consolidated statements of operations:"
            for kind, pattern in _STATEMENT_TITLES:
                # A note's own title ("Note 8 - Balance Sheet Components") names no
                # primary statement; the segment note is where segments are.
                if kind != model.SEGMENT and _NOTE.search(part):
                    continue
                if pattern.search(part):
                    # A heading spans every table under it (a statement's footnote table
                    # of stock-based compensation by line): its rows must agree.
                    heading = " > " in line
                    if heading and not _confirms(kind, labels):
                        return model.OTHER_TABLE
                    return kind
    # MD&A repeats statement rows in its own tables ("Net cash provided by operating
    # activities" in a free-cash-flow table): those are not the statement.
    if any(
        _MDA.search(line) or _NOTE.search(line) or _NON_GAAP.search(line) for line in context_lines
    ):
        return model.OTHER_TABLE
    # Directly under "Item 1. Financial Statements" (a statement whose title the parser
    # lost, Tesla's 10-Q: "... > (unaudited)"), and not in its notes, one sign will do.
    path = next((line for line in context_lines if " > " in line), "")
    deepest = path.split(" > ")[-1].strip() if path else ""
    in_statements = bool(
        deepest
        and (_STATEMENTS_ITEM.search(deepest) or _UNAUDITED.fullmatch(deepest))
        and not any(_NOTES_HEADING.search(line) for line in context_lines)
    )
    return _by_rows(labels, one_will_do=in_statements)


def statement_of_parts(context_lines: Sequence[str], labels: Sequence[str]) -> str:
    """The statement a table cut into parts is, from the rows of all its parts, when
    none named it alone: a PDF page's headings can be the page before's (Pfizer's
    balance sheet under "Consolidated Statements of Comprehensive Income", 3M's under a
    title the parser cut, "Balance Shee t"). Only under a statement's heading or the
    financial statements' Item, never in the notes or MD&A, whose summarized balance
    sheets (an investee's "Total assets") are not the filer's."""
    path = next((line for line in context_lines if " > " in line), "")
    parts = path.split(" > ")
    under_statements = any(_STATEMENTS_ITEM.search(part) for part in parts) or any(
        p.search(part) for part in parts for _, p in _STATEMENT_TITLES
    )
    if not under_statements or any(
        _MDA.search(line)
        or _NOTE.search(line)
        or _NON_GAAP.search(line)
        or _NOTES_HEADING.search(line)
        for line in context_lines
    ):
        return model.OTHER_TABLE
    return _by_rows(labels, kinds=_BY_ROWS_OF_PARTS)


# A statement of equity's sign ("Balance as of ...") is one row of many tables' parts.
_BY_ROWS_OF_PARTS = (model.CASH_FLOW, model.BALANCE, model.INCOME)


def _by_rows(
    labels: Sequence[str], kinds: Sequence[str] | None = None, *, one_will_do: bool = False
) -> str:
    """The first statement (of ``kinds``, all when None) whose row signs the labels show,
    as many as it needs, or one where ``one_will_do``."""
    for kind, needed, patterns in _ROW_SIGNS:
        if kinds is not None and kind not in kinds:
            continue
        hits = sum(any(re.search(p, label.strip(), re.I) for label in labels) for p in patterns)
        if hits >= (1 if one_will_do else needed):
            return kind
    return model.OTHER_TABLE


def rows_overrule(kind: str, labels: Sequence[str]) -> str:
    """A comprehensive-income or equity statement whose rows are a balance sheet's or a
    cash-flow statement's ("Total assets", "Total liabilities") is that statement: a PDF
    page's heading can be the page before's. Those rows are never printed in the former."""
    if kind not in (model.COMPREHENSIVE, model.EQUITY):
        return kind
    found = _by_rows(labels, (model.BALANCE, model.CASH_FLOW))
    return kind if found == model.OTHER_TABLE else found


_RESTATED = re.compile(
    r"\bas\s+(?:previously\s+)?(?:reported|adjusted|restated)\b|\badjustments?\b", re.I
)


def _titled_in_corner(corner: str, context_lines: Sequence[str]) -> str:
    """A PDF parser may keep a statement's title as the grid's top-left cell, under
    headings left from the page before ("Consolidated Balance Sheets" over Corning's
    balance sheet): the statement it names, unless the table sits in a note or MD&A
    (a note's "Consolidated Statement of Operations: as previously reported")."""
    corner = corner.strip()
    if len(corner.split()) > 14 or any(
        _MDA.search(line) or _NOTE.search(line) or _NON_GAAP.search(line) for line in context_lines
    ):
        return model.OTHER_TABLE
    for kind, pattern in _STATEMENT_TITLES:
        if pattern.search(corner):
            return kind
    return model.OTHER_TABLE


def _confirms(kind: str, labels: Sequence[str]) -> bool:
    pattern = _CONFIRMING.get(kind)
    if pattern is None or not labels:
        return True
    return any(pattern.search(label.strip()) for label in labels)


def facts_from_table_chunk(
    content: str,
    *,
    page: int | None,
    chunk_ordinal: int | None,
    calendar: FiscalCalendar,
) -> list[Fact]:
    """Every numeric cell of the table in a table chunk, as facts."""
    return read_table_chunk(content, page=page, chunk_ordinal=chunk_ordinal, calendar=calendar)[0]


def read_table_chunk(
    content: str,
    *,
    page: int | None,
    chunk_ordinal: int | None,
    calendar: FiscalCalendar,
    continued: Sequence[str] | None = None,
    default_units: Units | None = None,
    continued_statement: str | None = None,
    continued_header: Sequence[Sequence[str]] = (),
    document: DocumentPeriod | None = None,
) -> tuple[list[Fact], list[str]]:
    """The facts of a table chunk and the section rows open at its end. ``continued``:
    the section rows open where the previous part of the same table ended (long tables
    are cut into parts under a repeated header); ``continued_header``: the header rows
    of the table's first part, which head a later part whose repeated header is only the
    title row (the years were rows of the first part)."""
    found = split_table_chunk(content)
    if found is None:
        return [], []
    table = parse_markdown_table(found.grid)
    if table is None or table.width < 2:
        return [], []
    rows = [table.header, *table.rows]
    first_data = first_data_row(rows)
    if first_data is None:
        return [], []
    header_rows, data_rows = rows[:first_data], rows[first_data:]
    value_columns = [
        j for j in range(1, table.width) if any(parse_cell(r[j]) for r in data_rows if j < len(r))
    ]
    if not value_columns:
        return [], []
    labels = [r[0] for r in data_rows]
    statement = classify_statement(found.lines, labels)
    by_corner = False
    if statement == model.OTHER_TABLE:
        statement = _titled_in_corner(table.header[0], found.lines)
        by_corner = statement != model.OTHER_TABLE
    if statement == model.OTHER_TABLE and continued_statement is not None:
        statement = continued_statement  # the liabilities half of a cut balance sheet
    units = (
        table_units(found, header_rows)
        or (table_units(found, continued_header) if continued_header else None)
        or default_units
        or Units()
    )
    headings = column_headings(
        header_rows, value_columns, statement == model.BALANCE, document=document
    )
    if (
        continued_header
        and not any(period.known for period, _ in headings.values())
        and all(len(r) == table.width for r in continued_header)
    ):
        headings = column_headings(
            continued_header, value_columns, statement == model.BALANCE, document=document
        )
    if by_corner and (
        any(qualifier for _, qualifier in headings.values())
        or any(_RESTATED.search(cell) for row in header_rows for cell in row[1:])
    ):
        # "As previously reported | Adjustments | As adjusted" under a statement's name in
        # its corner: a note's restatement table, not the statement.
        statement = model.OTHER_TABLE
    if document is not None and document.end is not None and statement in _PRIMARY:
        end = document.end
        headings = {j: (_cut_day(p, end), q) for j, (p, q) in headings.items()}

    facts: list[Fact] = []
    parents: list[str] = list(continued or [])
    if continued is None and header_rows and header_rows[0][0].rstrip().endswith(":"):
        # "Net sales:" heads the first rows; of headings run together in the corner
        # ("ASSETS: Current assets:"), the innermost.
        parents = [header_rows[0][0].rstrip(" :").rsplit(":", 1)[-1].strip()]
    if heading := _opening_section(header_rows):
        # Words alone between the column headings and the first figures ("ASSETS:",
        # "Current assets:"; "NET EARNINGS PER COMMON SHARE" opening a cut table's later
        # part) head the rows below them, as they do further down.
        parents = [heading]
    closing = False
    for i, row in enumerate(data_rows):
        label = row[0].strip()
        cells = [(j, parse_cell(row[j])) for j in value_columns if j < len(row)]
        numbers = [(j, n) for j, n in cells if n is not None]
        if not numbers:
            if label:  # "Current assets:", "Cost of sales:" heads the rows below it
                parents = [label.rstrip(" :")]
            continue
        if not label:
            continue  # a total line without words: its meaning is the sum above it
        if _STATEMENT_SUBTOTAL.match(label) and not _PER_SHARE.search(" ".join(parents)):
            # (Under "Basic Earnings Per Common Share", "Net income attributable to X
            # $5.06" is the per-share figure, not the statement's net income again.)
            parents = []
        # Below a cash-flow statement's closing balance, the rows that split it ("Less
        # restricted cash ... included in Investments") are balances at the same date.
        balance_row = closing and statement == model.CASH_FLOW and _CASH_WORD.search(label)
        closing = closing or bool(_ENDING.search(label))
        for j, number in numbers:
            period, qualifier = headings[j]
            period = _balance_row_period(label, calendar.resolve(period), bool(balance_row))
            period = calendar.resolve(period)
            scale = units.scale_for(label, number.percent, parents)
            facts.append(
                Fact(
                    value=number.value.scaleb(scale),
                    unit=units.unit_for(label, number.percent, parents),
                    period=period,
                    source="table",
                    label=label,
                    dimensions=(("column", qualifier),) if qualifier else (),
                    statement=statement,
                    page=page,
                    chunk_ordinal=chunk_ordinal,
                    row=i,
                    column=value_columns.index(j),
                    printed=row[j].strip(),
                    parents=tuple(parents),
                )
            )
        if label.lower().startswith("total"):
            parents = []  # "Total current assets" closes its section
    return facts, parents


def table_units(
    found: TableContext, header_rows: Sequence[Sequence[str]] | None = None
) -> Units | None:
    """The units note of a table: its title lines, or its header's first cells, or (a
    parser spreads a note over the columns: "(dollars in millions ... 2022") the others."""
    if header_rows is None:
        table = parse_markdown_table(found.grid)
        header_rows = [table.header] if table else []
    return read_units(
        *found.lines, *(r[0] for r in header_rows), *(c for r in header_rows for c in r[1:])
    )


def _balance_row_period(label: str, period: Period, closing: bool = False) -> Period:
    """A cash-flow statement's "Cash, beginning of year" row in a year's column is the
    balance at the previous year's end; "end of year" (or a row splitting it, ``closing``)
    the balance at this one's."""
    if period.instant or not period.known:
        return period
    if _BEGINNING.search(label):
        # A year, or a 10-Q's year-to-date column (6 or 9 months: its cash-flow statement
        # runs from the fiscal year's start), opens at the previous fiscal year's end.
        year_to_date = period.months in (6, 9, 12) and period.fiscal_quarter is None
        if year_to_date and period.fiscal_year:
            return Period(instant=True, fiscal_year=period.fiscal_year - 1, fiscal_quarter=4)
        return Period()  # the start of a quarter: a date the header does not give
    if closing or _ENDING.search(label):
        # A whole year's column closes at its fiscal year's end: the fourth quarter's.
        quarter = 4 if period.months == 12 else period.fiscal_quarter
        return replace(period, instant=True, months=None, start=None, fiscal_quarter=quarter)
    return period


def column_headings(
    header_rows: Sequence[Sequence[str]],
    value_columns: Sequence[int],
    instant_default: bool,
    *,
    document: DocumentPeriod | None = None,
) -> dict[int, tuple[Period, str | None]]:
    """Each value column's period, and the words that qualify it beyond the period
    ("Gross Carrying Amount"), from the header rows above the data. ``document``: the
    filing's own period, for a quarterly report's headers cut apart in a PDF."""
    pieces: dict[int, list[str]] = {j: [] for j in value_columns}
    qualifiers: dict[int, list[str]] = {j: [] for j in value_columns}
    for row in header_rows:
        for j, text in _row_periods(row, value_columns).items():
            pieces[j].append(text)
        for j in value_columns:
            cell = row[j].strip() if j < len(row) else ""
            rest = _DAY_WITHOUT_YEAR.sub(" ", _PERIOD_PIECE.sub(" ", cell))
            # A month or "ended" left from a cut period ("r Ended December"): no qualifier.
            rest = _PERIOD_WORDS.sub(_cut_month, rest).strip(" ,-|")
            # "ASSETS:" spanned over the date columns heads rows, not a column.
            heading = rest.endswith(":")
            rest = rest.strip(" :")
            if (
                rest
                and not heading
                and _is_words(rest)
                and not _is_fragment(cell, row, j)
                and not _NOT_A_QUALIFIER.search(rest)
                and not _period_words_only(rest)
            ):
                qualifiers[j].append(rest)
    periods = {
        j: parse_period(" ".join(pieces[j]), instant_default=instant_default) for j in value_columns
    }
    if not instant_default:
        periods = _share_lone_span(periods)
        periods = _span_in_corner(periods, header_rows, value_columns)
    periods = _years_under_a_span(periods, pieces)
    periods = _one_day_over_years(periods, header_rows)
    if document is not None and document.quarterly and not instant_default:
        raw = {j: " ".join(r[j] for r in header_rows if j < len(r)) for j in value_columns}
        says_year = any(_YEAR_WORDS.search(c) for row in header_rows for c in row)
        periods, completed = _quarterly_columns(periods, raw, document.end, says_year)
        for j in completed:
            qualifiers[j] = []  # "Six months e 30": the period's own words, cut
    out: dict[int, tuple[Period, str | None]] = {}
    for j in value_columns:
        period = periods[j]
        if not period.known:
            period = Period()
        elif period.months is None and period.end is not None:
            period = replace(period, instant=True)  # a date with no span over it: a balance
        qualifier = " ".join(qualifiers[j]) or None
        out[j] = (period, qualifier)
    return out


def _years_under_a_span(
    periods: dict[int, Period], pieces: dict[int, list[str]]
) -> dict[int, Period]:
    """A bare year beside a dated span ("Six months ended June 30 2025 | 2024") is the
    same span ending on the same day of that year, not the whole fiscal year 2024."""
    out = dict(periods)
    previous: Period | None = None
    for j in periods:
        text = " ".join(pieces[j]).strip()
        bare = _BARE_YEAR.fullmatch(text)
        if bare and previous is not None and previous.end and previous.months:
            year = int(bare.group(1))
            try:
                end = previous.end.replace(year=year)
            except ValueError:  # February 29
                end = previous.end.replace(year=year, day=28)
            if year != previous.end.year:
                out[j] = Period(end=end, months=previous.months, instant=previous.instant)
                continue
        previous = out[j] if out[j].end else previous
    return out


def _quarterly_columns(
    periods: dict[int, Period], raw: dict[int, str], end: date | None, says_year: bool
) -> tuple[dict[int, Period], set[int]]:
    """A quarterly report's duration columns, where its header was cut apart, and the
    columns it completed.

    A PDF cuts "Three Months Ended March 31" spanned over "2025 | 2024" anywhere ("Three
    Months 3 2025" | "Ended March 1 2024", "Three mont" | "Junehs ended 30 2025"),
    leaving a bare year (read as a whole fiscal year), a date without its span (read as
    a balance) or a day cut short. A 10-Q's statements report spans of 3, 6 or 9 months
    ending on its period's day: each such column takes the span its own cells name or,
    failing that, the nearest one to its left (a spanned header's words land in its
    first column), and ends on the cover's day of the year it prints. A column it cannot
    complete is left unknown: in a quarterly report a bare year is never a whole fiscal
    year unless its header says a year."""

    def whole(period: Period) -> bool:
        if period.instant:
            return True  # "As of June 30, 2025": a balance, not a span
        if period.end is None or period.months is None:
            return False
        if period.months == 12 and not says_year:
            return False
        cut_day = end is not None and period.end.month == end.month
        return not (cut_day and abs(period.end.day - end.day) > 7)

    broken = [j for j, p in periods.items() if not whole(p)]
    if not broken:
        return periods, set()
    out = dict(periods)
    spans = {j: _cut_span(text) for j, text in raw.items()}
    if not any(spans.values()):
        for j in broken:  # no span named anywhere: only a bare year is surely wrong
            if periods[j].months == 12 and not says_year:
                out[j] = Period()
        return out, set()
    named = {m.group(1).lower()[:3] for text in raw.values() for m in _MONTH_NAME.finditer(text)}
    fits = end is not None and named <= {end.strftime("%b").lower()}
    span: int | None = None
    done = set()
    for j, period in periods.items():
        span = spans[j] or span
        if j not in broken:
            continue
        year = _column_year(raw[j], period)
        if fits and end is not None and span and year is not None and year <= end.year:
            out[j] = Period(end=_same_day(end, year), months=span)
            done.add(j)
        else:
            out[j] = Period()  # a date whose span is lost, or a year: not this column's
    return out, done


def _cut_month(word: re.Match[str]) -> str:
    """A month's name, whole or cut ("Januar"), or "ended": a period's words, dropped."""
    text = word.group(0).lower()
    if text in ("ended", "ending") or any(name.startswith(text) for name in _MONTH_NAMES):
        return " "
    return word.group(0)


def _cut_day(period: Period, end: date) -> Period:
    """A primary statement's column ends where the filing's periods end: a date in the
    cover's month whose day is far from the cover's was cut ("December 3" | "1, 2022")."""
    if period.end is None or period.end.month != end.month:
        return period
    if abs(period.end.day - end.day) <= 7:
        return period
    return replace(period, end=_same_day(end, period.end.year))


def _cut_span(text: str) -> int | None:
    found = _CUT_SPAN.search(text)
    if not found:
        return None
    raw = re.sub(r"[\s-]", "", found.group(1).lower())
    n = int(raw) if raw.isdigit() else SPAN_WORDS[raw]
    months = round(n / 4.33) if found.group(2).lower() == "wee" else n
    return months if months in (3, 6, 9) else None


def _column_year(text: str, period: Period) -> int | None:
    if period.end is not None:
        return period.end.year
    years = _ANY_YEAR.findall(text)
    return int(years[-1]) if years else period.fiscal_year


def _same_day(end: date, year: int) -> date:
    try:
        return end.replace(year=year)
    except ValueError:  # February 29
        return end.replace(year=year, day=28)


def _one_day_over_years(
    periods: dict[int, Period], header_rows: Sequence[Sequence[str]]
) -> dict[int, Period]:
    """Bare years under a day printed without a year: "June 30," over "2025" in the same
    column, or the one day of the whole header ("December 31," over "2024 | 2023", often
    in the label column). The year printed is the date's, not necessarily the fiscal
    year's name, which the calendar then gives."""
    if any(_DATE_IN_HEADER.search(c) for row in header_rows for c in row):
        return periods
    everywhere = _days(cell for row in header_rows for cell in row)
    out = dict(periods)
    for j, period in periods.items():
        if period.end is not None or not period.fiscal_year or period.fiscal_quarter:
            continue
        own = _days(row[j] for row in header_rows if j < len(row))
        days = own or everywhere
        if len(days) != 1:
            continue
        ((month, day),) = days
        try:
            end = date(period.fiscal_year, month, day)
        except ValueError:
            continue
        out[j] = replace(period, end=end, fiscal_year=None)
    return out


def _days(cells: Iterable[str]) -> set[tuple[int, int]]:
    return {
        (month_number(m.group("month")[:3]) or 0, int(m.group("day")))
        for cell in cells
        for m in _DAY_WITHOUT_YEAR.finditer(cell)
    }


# The span a statement prints once in its label column's header ("Fiscal Years Ended" over
# the row labels, the dates in the columns beside it: Best Buy's statements).
_CORNER_SPAN = re.compile(
    r"\b(?:(?P<year>(?:fiscal\s+)?years?|twelve\s+months|12\s+months|5[23]\s+weeks|"
    r"fifty[\s-]?(?:two|three)\s+weeks)|(?P<quarter>three\s+months|3\s+months|13\s+weeks|"
    r"thirteen\s+weeks|quarters?)|(?P<half>six\s+months|6\s+months|26\s+weeks)|"
    r"(?P<nine>nine\s+months|9\s+months|39\s+weeks))\s+end(?:ed|ing)\b",
    re.I,
)
_CORNER_MONTHS = {"year": 12, "quarter": 3, "half": 6, "nine": 9}


def _span_in_corner(
    periods: dict[int, Period],
    header_rows: Sequence[Sequence[str]],
    value_columns: Sequence[int],
) -> dict[int, Period]:
    """Dated columns with no span of their own take the one span the label column's
    header names, when it names exactly one and no column names another."""
    if any(p.months is not None for p in periods.values()):
        return periods
    corner = " ".join(
        row[j] for row in header_rows for j in range(len(row)) if j not in value_columns
    )
    found = {_CORNER_MONTHS[m.lastgroup] for m in _CORNER_SPAN.finditer(corner) if m.lastgroup}
    if len(found) != 1:
        return periods
    (months,) = found
    return {
        j: replace(p, months=months) if p.end is not None and not p.instant else p
        for j, p in periods.items()
    }


def _share_lone_span(periods: dict[int, Period]) -> dict[int, Period]:
    """A span printed once over dated columns ("Years Ended" above three year-end
    dates) lands in one column's cells: the bare dates beside it share it. Two spans
    ("Three Months Ended", "Six Months Ended") leave bare dates alone."""
    spans = {p.months for p in periods.values() if p.months is not None}
    if len(spans) != 1:
        return periods
    (months,) = spans
    return {
        j: replace(p, months=months)
        if p.months is None and p.end is not None and not p.instant
        else p
        for j, p in periods.items()
    }


def _row_periods(row: Sequence[str], value_columns: Sequence[int]) -> dict[int, str]:
    """The period pieces one header row gives each value column.

    PDF tables cut spanned headers anywhere ("Three Mo" | "nths Ended", "July " |
    "29, 2023"): the row's cells are read joined, its pieces found in order, and n
    pieces over k columns each head k/n neighbouring columns."""
    cells = [row[j] if j < len(row) else "" for j in value_columns]
    best: list[str] = []
    for joined in (" ".join(cells), _join_fragments(cells)):
        found = _phrases(joined)
        if found and len(value_columns) % len(found) == 0 and len(found) > len(best):
            best = found
    if best:
        span = len(value_columns) // len(best)
        return {j: best[k // span] for k, j in enumerate(value_columns)}
    # Phrases that do not tile the columns evenly: trust only cells that hold one whole.
    return {
        j: " ".join(found)
        for j, cell in zip(value_columns, cells, strict=True)
        if (found := _phrases(cell))
    }


def _phrases(text: str) -> list[str]:
    """Period phrases in order; "Years ended" and the date after it are one phrase."""
    phrases: list[str] = []
    last_end = None
    for m in _PERIOD_PIECE.finditer(text):
        piece = m.group(0)
        joins_previous = (
            phrases
            and _ENDS_SPAN.search(phrases[-1])
            and not _ENDS_SPAN.search(piece)  # "Three Months Ended Six Months Ended": two
            and not text[last_end : m.start()].strip(" ,:")
        )
        if joins_previous:
            phrases[-1] = f"{phrases[-1]} {piece}"
        else:
            phrases.append(piece)
        last_end = m.end()
    return phrases


def _join_fragments(cells: Sequence[str]) -> str:
    out = ""
    for cell in cells:
        if not cell:
            continue
        glue = (
            "" if out and (out[-1].isspace() or (out[-1].isalnum() and cell[0].isalnum())) else " "
        )
        # Whole years side by side stay apart: "2024" "2023" is two years, not one number.
        if out[-4:].isdigit() and cell[:4].isdigit():
            glue = " "
        out += glue + cell
    return out


def _is_words(text: str) -> bool:
    return bool(re.search(r"[A-Za-z]{3,}", text)) and not parse_cell(text)


def _is_fragment(cell: str, row: Sequence[str], j: int) -> bool:
    """A piece of a heading cut across cells ("nths Ended"), not a heading of its own."""
    left = row[j - 1] if j > 0 else ""
    right = row[j + 1] if j + 1 < len(row) else ""
    return bool(
        (cell and cell[0].islower())
        or (left and left[-1].isalpha() and cell[:1].isalpha() and not left[-1].isspace())
        or (right and right[0].islower() and cell[-1:].isalpha())
    )


_HEADING_WORDS = frozenset(
    re.findall(
        r"\w+",
        "as of at for the three six nine twelve thirteen months month weeks week years year "
        "ended ending fiscal quarter quarters unaudited asof",
    )
)


def _period_words_only(text: str) -> bool:
    """A piece of a period heading cut from its date ("As of Decem", "For the Twelve",
    "December 31,2022", "(Unaudited)"): no words of a column's own."""
    words = re.findall(r"[a-z]+", text.lower())
    return bool(words) and all(
        w in _HEADING_WORDS or (len(w) >= 3 and any(m.startswith(w) for m in _MONTH_NAMES))
        for w in words
    )


def header_rows_of(content: str) -> list[list[str]]:
    """A table chunk's rows above its first row of data: its header and the rows of
    years or dates under it."""
    found = split_table_chunk(content)
    table = parse_markdown_table(found.grid) if found else None
    if table is None:
        return []
    rows = [table.header, *table.rows]
    first = first_data_row(rows)
    return [list(r) for r in rows[:first]] if first else []


def _opening_section(header_rows: Sequence[Sequence[str]]) -> str | None:
    """The last row of words alone closing a table's header rows, after its column
    headings (not a units note), or None."""
    heading = None
    for row in reversed(header_rows[1:]):
        label = row[0].strip().rstrip(" :") if row else ""
        if not label or any(c.strip() for c in row[1:]):
            break
        if not _UNITS_ONLY.search(label):
            heading = heading or label
    return heading


_UNITS_ONLY = re.compile(r"^\(|\bin\s+(?:millions|thousands|billions)\b", re.I)


def first_data_row(rows: Sequence[Sequence[str]]) -> int | None:
    """The first row with a number that is not a heading (years, dates)."""
    for i, row in enumerate(rows):
        numbers = [c.strip() for c in row[1:] if parse_cell(c)]
        if numbers and not all(_PERIOD_PIECE.fullmatch(c) for c in numbers):
            return i  # "2024 | Change | 2023" heads the columns; "$9,583" is data
    return None
