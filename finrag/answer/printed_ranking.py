"""A superlative question answered by ranking the rows of a printed table.

"Which region had the highest EBITDAR?", "which one had the highest notional value?",
"which segment had the worst topline performance?": the answer is the top (or bottom)
row of one table the filing prints, in the column of the asked period, or the row whose
value changed most between that column and the same span a year earlier. The small
model, handed the table, names a row but often the wrong one (it picks the first, or the
total). Ranking numbers is arithmetic, so it is done here, without the model: the table
is chosen by the question's measure words in its title, header and rows; the ranking
and each growth rate are calculations whose inputs are the printed cells, each cited
(document · page) with its row quoted as printed.

Where the facts store holds the breakdown (finrag.answer.segments) the facts route has
already answered; this reads what the store has not turned into facts: earnings-release
tables closed by an unlabelled total, derivative and liability tables, tables of any
measure the metric dictionary does not name. A question this module cannot read whole
(no table names the measure, no column for the period, fewer than two rows) is left to
the model's reading of the quotes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from finrag.answer.ranking_words import (
    DECLINE,
    GROWTH,
    LARGEST,
    NARRATIVE,
    REGION_WORDS,
    SEGMENT_WORDS,
    SLOWEST,
    SMALLEST,
    generic_member,
)
from finrag.facts.cells import parse_cell, read_units
from finrag.facts.dictionary import match_label
from finrag.facts.periods import Period
from finrag.facts.table_facts import column_headings, first_data_row, header_rows_of
from finrag.tables import parse_markdown_table

_WHICH = re.compile(r"\bwhich\b|\bwhat\s+(?:was|is|were|are)\s+the\b", re.I)
_BEST = re.compile(r"\b(?:best|strongest|leading|fastest|quickest)\b", re.I)
_TOPLINE = re.compile(r"\btop[\s-]?line\b", re.I)
_BOTTOM_LINE = re.compile(r"\bbottom[\s-]?line\b", re.I)
_NOT_SUPERLATIVE = re.compile(r"\b(?:top|bottom)[\s-]?line\b|\bmost\s+recent\w*|\bat\s+most\b")
_WORD = re.compile(r"[a-z][a-z&'-]*[a-z]")
_TOTAL = re.compile(r"^(?:total|consolidated|net\s+total)\b|\btotal$", re.I)
_TITLE_LINES = 4  # lines above a grid that name it
_TITLE_CHARS = 200  # a longer line is the paragraph before the table, not its title
_BULLET = re.compile(r"^(?:[-•*▪]|\(?\d{1,2}[.)])\s")
_MIN_ROWS = 2
# Words that ask, rank or place, not what is measured.
_NOT_MEASURE_WORDS = """
    which what was is were are the a an of in on for to by at during as from with had has
    have did does do its their our his her one ones among all any each that this those
    these used use using highest largest biggest greatest most top best strongest leading
    lowest smallest least worst weakest poorest fewest fastest slowest grew grow growth
    performance performed perform dragged drag down overall exclude excluding impact
    region regions regional segment segments business businesses geography geographies
    geographic country countries product products category categories line lines
    company fiscal year years quarter quarterly annual fy full value amount
    """
_NOT_MEASURE = frozenset(_NOT_MEASURE_WORDS.split())
_ASKS_PERIOD = re.compile(
    r"\b(?:which|what)\s+(?:fiscal\s+)?(?:years?|quarters?|periods?|months?)\b|"
    r"\bin\s+which\s+(?:fiscal\s+)?(?:year|quarter|period|month)\b"
)
# The thing a superlative ranks: the word after it ("the largest liability", "the highest
# notional value").
_THING = re.compile(
    r"\b(?:highest|largest|biggest|greatest|lowest|smallest)\s+(?:single\s+)?([a-z]{4,})"
)
_BALANCE_SHEET = r"\bbalance sheets?\b|\bstatements? of financial (?:position|condition)\b"
# A statement the question names ("in its balance sheet"), and the titles that print it.
_STATEMENTS = (
    (
        re.compile(r"\bincome statements?\b|\bstatements? of (?:operations|earnings|income)\b"),
        re.compile(r"\bstatements? of (?:consolidated )?(?:operations|earnings|income)\b", re.I),
    ),
    (
        re.compile(_BALANCE_SHEET),
        re.compile(_BALANCE_SHEET, re.I),
    ),
    (
        re.compile(r"\bcash flows? statements?\b|\bstatements? of cash flows?\b"),
        re.compile(r"\bstatements? of (?:consolidated )?cash flows?\b", re.I),
    ),
)
# A reconciliation walks from one figure to another: its lines are adjustments, no
# ranking of like things.
_RECONCILIATION = re.compile(r"\breconcil", re.I)
_YEARISH = re.compile(r"^(?:fy)?\d{2,4}$|^q[1-4]$", re.I)


@dataclass(frozen=True)
class RankAsk:
    """What a superlative question ranks."""

    lowest: bool  # the bottom row wins (lowest, worst, dragged down, biggest drop)
    growth: bool  # ranked by the change against a year earlier, not by the level
    terms: tuple[str, ...]  # the measure's words, as stems
    kind: str | None  # "region", "segment" or None (any row)
    thing: str | None = None  # what is ranked, as a stem: "liabi" in "the largest liability"
    statement: re.Pattern[str] | None = None  # the statement the question names: its title


@dataclass
class Row:
    label: str
    values: dict[int, Decimal]  # value column -> the cell's number
    printed: dict[int, str]  # value column -> the cell as printed
    heading: str = ""  # the section row above it ("Liabilities")


@dataclass
class PrintedTable:
    title: list[str]
    header_rows: list[list[str]]
    periods: dict[int, Period]
    rows: list[Row]
    scale: int = 0  # power of ten of the units note
    totals: list[Row] = field(default_factory=list)  # rows that sum others, in order
    source: object = None  # what printed it (a retrieved chunk), for the citation
    order: int = 0  # its place in the retrieved order

    def words(self) -> str:
        return " ".join([*self.title, *(c for r in self.header_rows for c in r)]).lower()


@dataclass
class Ranked:
    """A ranking read from one table: every row that ranks, best first."""

    table: PrintedTable
    column: int
    prior: int | None  # the column a year earlier, when ranked by growth
    order: list[tuple[Row, Decimal]]  # (row, value ranked: the level or the growth rate)
    total: Row | None = None  # the printed total of the rows ranked
    share: Decimal | None = None  # the winner's share of that total, in percent
    calculations: list[dict] = field(default_factory=list)


def rank_ask(question: str, ignore: Sequence[str] = ()) -> RankAsk | None:
    """What the question ranks, or None when it asks no superlative of rows."""
    q = question.lower()
    if not _WHICH.search(q) or NARRATIVE.search(q) or _ASKS_PERIOD.search(q):
        return None  # "which year had the highest ...": periods are columns, not rows
    plain = _NOT_SUPERLATIVE.sub(" ", q)  # "top line", "most recent" rank nothing
    highest = bool(LARGEST.search(plain) or _BEST.search(plain))
    lowest = bool(SMALLEST.search(plain) or SLOWEST.search(plain))
    declined = bool(DECLINE.search(plain))
    if not (highest or lowest or declined):
        return None
    if highest and lowest and not declined:
        return None  # "highest and lowest": two questions
    growth = bool(GROWTH.search(plain) or declined)
    # "the biggest drop": the race is to the bottom, the most negative change wins.
    lowest = not SMALLEST.search(q) if declined else lowest
    kind = "region" if REGION_WORDS.search(q) else "segment" if SEGMENT_WORDS.search(q) else None
    thing = _THING.search(plain)
    named = next((title for asked, title in _STATEMENTS if asked.search(q)), None)
    return RankAsk(
        lowest, growth, _measure_terms(q, ignore), kind, stem(thing[1]) if thing else None, named
    )


def _measure_terms(question: str, ignore: Sequence[str]) -> tuple[str, ...]:
    skip = {w for name in ignore for w in _WORD.findall(name.lower())}
    words = [w for w in _WORD.findall(question) if w not in _NOT_MEASURE and w not in skip]
    words = [w for w in words if len(w) > 2 and not _YEARISH.match(w)]
    if _TOPLINE.search(question):
        words += ["revenue", "sales"]
    if _BOTTOM_LINE.search(question):
        words += ["net", "income"]
    return tuple(dict.fromkeys(stem(w) for w in words if w not in ("top", "bottom")))


def stem(word: str) -> str:
    """A word's first letters: 'liabilities' and 'liability' meet at 'liabi'."""
    return word[:5]


def tables_in(text: str, *, source: object = None, order: int = 0) -> list[PrintedTable]:
    """Every pipe table in a passage with the lines above it; a table cut under a repeated
    title and header (a page or chunk break) is read as one."""
    lines = text.splitlines()
    out: list[PrintedTable] = []
    above: list[str] = []
    i = 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("|"):
            if lines[i].strip():
                above.append(lines[i].strip())
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].lstrip().startswith("|"):
            j += 1
        title = _title_lines(above)
        table = _read("\n".join(lines[i:j]), title, source, order)
        if table is not None:
            previous = out[-1] if out else None
            if (
                previous
                and previous.header_rows == table.header_rows
                and (not table.title or table.title[-1:] == previous.title[-1:])
            ):
                previous.rows += table.rows
            else:
                out.append(table)
        above = []
        i = j
    for table in out:
        _find_total(table)
    return out


def _read(grid: str, title: list[str], source: object, order: int) -> PrintedTable | None:
    table = parse_markdown_table(grid)
    if table is None:
        return None
    all_rows = [table.header, *table.rows]
    first = first_data_row(all_rows)
    if first is None:
        return None
    header_rows = header_rows_of(grid)
    columns = list(range(1, table.width))
    periods = {j: p for j, (p, _) in column_headings(header_rows, columns, False).items()}
    rows: list[Row] = []
    heading = ""
    for cells in all_rows[first:]:
        label = cells[0].strip()
        values, printed = {}, {}
        for j in columns:
            number = parse_cell(cells[j]) if j < len(cells) else None
            if number is not None and not number.percent:
                values[j], printed[j] = number.value, cells[j].strip()
        if not values:
            if label:
                heading = label.rstrip(" :")
            continue
        rows.append(Row(label, values, printed, heading))
    units = read_units(*title, *(r[0] for r in header_rows if r))
    scale = units.scale if units is not None else 0
    return PrintedTable(title, header_rows, periods, rows, scale, source=source, order=order)


def _title_lines(above: list[str]) -> list[str]:
    """The short lines just above a grid (a title, a units note), not the paragraph
    before them: its words say nothing of what the table measures."""
    lines: list[str] = []
    for line in reversed(above[-_TITLE_LINES:]):
        if len(line) > _TITLE_CHARS or _BULLET.match(line):
            break
        lines.insert(0, line)
    return lines


def _find_total(table: PrintedTable) -> None:
    """The rows that close the table or a section of it: labelled "Total ...", or
    unlabelled and the sum of the rows above in every column they fill (an earnings
    release prints the total bare)."""
    for k, row in enumerate(table.rows):
        if not row.label or _TOTAL.search(row.label):
            above = [r for r in table.rows[:k] if r.label and not _TOTAL.search(r.label)]
            if row.label or _sums(above, row):
                table.totals.append(row)
    table.rows = [r for r in table.rows if r.label and not _TOTAL.search(r.label)]


def _sums(rows: Sequence[Row], total: Row) -> bool:
    if not rows or not total.values:
        return False
    for j, value in total.values.items():
        summed = sum((r.values.get(j, Decimal(0)) for r in rows), Decimal(0))
        if abs(summed - value) > max(Decimal(1), abs(value) * Decimal("0.0005")) * len(rows):
            return False
    return True


def rank(ask: RankAsk, tables: Sequence[PrintedTable], year: int | None) -> Ranked | None:
    """The ranking the question asks, from the table that best names its measure."""
    scored = sorted(
        ((score, t) for t in tables if (score := _score(ask, t)) > 0),
        key=lambda st: (-st[0], st[1].order),
    )
    for _, table in scored:
        found = _rank_table(ask, table, year)
        if found is not None:
            return found
    return None


def _score(ask: RankAsk, table: PrintedTable) -> float:
    """How well a table names the measure: its title and header count most, its rows
    less; a table of line items (a reconciliation) is no breakdown of members."""
    if len(table.rows) < _MIN_ROWS or not ask.terms:
        return 0.0
    head = {stem(w) for w in _WORD.findall(table.words())}
    labels = {stem(w) for r in table.rows for w in _WORD.findall(f"{r.label} {r.heading}".lower())}
    in_head = sum(2.0 for t in ask.terms if t in head)
    if not in_head:
        return 0.0  # a row's word alone ("contracts") does not make the table the measure's
    named = in_head + sum(0.5 for t in ask.terms if t in labels and t not in head)
    if ask.kind is None and not _names_thing(ask, table, head):
        return 0.0
    if ask.statement is not None and not ask.statement.search(table.words()):
        return 0.0  # "the largest liability in its balance sheet": that table, no other
    if ask.kind is not None:  # members are named, not line items of a statement
        items = sum(1 for r in table.rows if match_label(r.label) is not None)
        named += 2.0 * (len(table.rows) - 2 * items) / len(table.rows)
    return named


def _names_thing(ask: RankAsk, table: PrintedTable, head: set[str]) -> bool:
    """With no segments or regions asked, the rows must be of the thing the question
    ranks: a section of them under its heading ("Liabilities"), or a table titled for it
    that is no reconciliation (its lines are adjustments, not things of one kind)."""
    if ask.thing is None:
        return False
    if any(ask.thing in _stems(r.heading) for r in table.rows):
        return True
    return ask.thing in head and not _RECONCILIATION.search(table.words())


def _rank_table(ask: RankAsk, table: PrintedTable, year: int | None) -> Ranked | None:
    column = _column(table, year)
    if column is None:
        return None
    prior = _prior(table, column) if ask.growth else None
    if ask.growth and prior is None:
        return None
    rows, heading = _section(ask, table)
    scored: list[tuple[Row, Decimal]] = []
    for row in rows:
        if column not in row.values or (ask.kind and generic_member(row.label)):
            continue
        if prior is None:
            scored.append((row, row.values[column]))
        elif row.values.get(prior):
            before = row.values[prior]
            if before > 0:
                scored.append((row, (row.values[column] - before) / before * 100))
    if len(scored) < _MIN_ROWS:
        return None
    scored.sort(key=lambda rv: rv[1], reverse=not ask.lowest)
    ranked = Ranked(table, column, prior, scored, total=_total_of(table, heading))
    total = ranked.total.values.get(column) if ranked.total else None
    if prior is None and total and total > 0 and scored[0][1] > 0:
        ranked.share = scored[0][1] / total * 100
    return ranked


def _total_of(table: PrintedTable, heading: str) -> Row | None:
    """The total of the rows ranked: a section's own ("Total liabilities" under
    "Liabilities"), else the table's last, when no section was chosen."""
    if not heading:
        return table.totals[-1] if table.totals else None
    wanted = _stems(heading)
    closing = (t for t in table.totals if t.label and _stems(t.label) - {"total"} == wanted)
    return next(closing, None)


def _section(ask: RankAsk, table: PrintedTable) -> tuple[list[Row], str]:
    """The rows under the section heading the question names ("the largest liability":
    the rows under "Liabilities"), and that heading; else every row, and ""."""
    for term in ask.terms:
        under = [r for r in table.rows if term in _stems(r.heading)]
        if len(under) >= _MIN_ROWS:
            return under, under[0].heading
    return table.rows, ""


def _stems(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text.lower())}


def _column(table: PrintedTable, year: int | None) -> int | None:
    """The asked year's column (the latest the table prints when none is asked), the
    whole year's over a quarter's."""
    dated = {j: p for j, p in table.periods.items() if _year(p) is not None}
    if not dated:
        return None
    wanted = year if year is not None else max(_year(p) for p in dated.values())  # type: ignore[type-var]
    matching = [j for j, p in dated.items() if _year(p) == wanted]
    if not matching:
        return None
    return max(matching, key=lambda j: (table.periods[j].months or 0, -j))


def _prior(table: PrintedTable, column: int) -> int | None:
    """The column of the same span ending a year before ``column``'s."""
    this = table.periods[column]
    year = _year(this)
    for j, p in table.periods.items():
        if j != column and _year(p) == (year or 0) - 1 and p.months == this.months:
            return j
    return None


def _year(period: Period) -> int | None:
    if period.end is not None:
        return period.end.year
    return period.fiscal_year
