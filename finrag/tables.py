"""Pipe tables as finrag's parsers write them: parsed, tightened, and read in words.

Below every layer that reads tables: ingest cuts them into chunks, facts read their
cells, answers show them to the model one row a line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_NUMBER = re.compile(r"[\d]")
_PAIRED_HEADER_WORDS = 3
# "$ 8,890" -> "$8,890". A run of spaces is tried from its start only: tried from each of
# its spaces, a long run cost its length squared.
_TIGHTEN = re.compile(r"(?<=[($])\s+|(?<!\s)\s+(?=[)%])")
_DATE_CELL = re.compile(
    r"^((FY\s?)?(19|20)\d\d|Q[1-4]( (19|20)\d\d)?|[A-Z][a-z]{2,8}\.? \d{1,2},? (19|20)\d\d)$"
)
_DATE_WORD = re.compile(r"^(\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|q[1-4]|fy)", re.I)


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]

    @property
    def width(self) -> int:
        return len(self.header)


def parse_markdown_table(text: str) -> Table | None:
    """A pipe table -> header and rows (cells stripped); None if it is not one."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) < 2 or not _SEPARATOR.match(lines[1]):
        return None
    rows = [_split_row(ln) for ln in lines if not _SEPARATOR.match(ln)]
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    return Table(header=rows[0], rows=rows[1:])


def _split_row(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells = re.split(r"(?<!\\)\|", line)
    return [tighten(c.replace("\\|", "|")).strip() for c in cells]


def tighten(text: str) -> str:
    """'$ 8,890' -> '$8,890', '( 2,266 )' -> '(2,266)', '46.2 %' -> '46.2%'."""
    return _TIGHTEN.sub("", text)


def to_markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def fmt(cells: Sequence[str]) -> str:
        return "|" + "|".join(c.replace("|", "\\|") for c in cells) + "|"

    return "\n".join([fmt(header), "|" + "---|" * len(header), *(fmt(r) for r in rows)])


def promote_header_rows(table: Table) -> Table:
    """Parsers often put '(Millions) | 2018 | 2017' in the first body rows: fold the rows
    above the first number-bearing row into the header, column by column."""
    first_data = next(
        (
            i
            for i, r in enumerate(table.rows)
            if any(_NUMBER.search(c) for c in r[1:]) and not is_header_row(r)
        ),
        0,
    )
    if first_data == 0:
        return table
    stacked = [_mend_split_words(r) for r in (table.header, *table.rows[:first_data])]
    header = [" ".join(r[j] for r in stacked if r[j]).strip() for j in range(table.width)]
    return Table(header=header, rows=table.rows[first_data:])


def _mend_split_words(row: list[str]) -> list[str]:
    """A header spanning two columns sometimes arrives cut mid-word ('Three Mo' |
    'nths Ended'): rejoin it and let it head both columns."""
    row = list(row)
    for j in range(len(row) - 1):
        left, right = row[j], row[j + 1]
        if left and right and left[-1].isalpha() and right[0].islower():
            row[j] = row[j + 1] = left + right
    return row


def is_header_row(row: Sequence[str]) -> bool:
    """A row of years or dates ('2018 | 2017 | 2016'): numbers, but headings."""
    values = [c for c in row[1:] if c]
    return bool(values) and all(_DATE_CELL.match(v) for v in values)


def short_headers(header: Sequence[str]) -> list[str]:
    """Drop the words every value column starts with ('Years ended'): they cost tokens
    in every row of the summary and tell the columns nothing apart."""
    values = [h.split() for h in header[1:]]
    prefix = 0
    if len(values) > 1 and all(values):
        while all(
            len(v) > prefix + 1 and v[prefix].lower() == values[0][prefix].lower() for v in values
        ) and not _DATE_WORD.match(values[0][prefix]):
            prefix += 1
    out = [header[0] if header else ""] + [" ".join(v[prefix:]) for v in values]
    return [h or f"column {j + 1}" for j, h in enumerate(out)]


def summarize_rows(
    table: Table,
    rows: Sequence[Sequence[str]],
    title: str,
    units: str | None,
    *,
    legend: bool = True,
    pair_always: bool = False,
) -> str:
    """A deterministic description in words of ``rows`` of ``table``.

    Short column headers ('2018') pair with every value: "Net income: 2018 5,363;
    2017 4,869". Long ones ('Three Months Ended July 29, 2023') are named once and
    the values follow in that order: repeating them per row would double the tokens
    the embedder reads without telling it anything new.
    """
    parts = [p for p in (title, units_note(title, units)) if p]
    columns = short_headers(table.header)
    paired = pair_always or all(len(c.split()) <= _PAIRED_HEADER_WORDS for c in columns[1:])
    if not paired and legend:
        parts.append("Columns: " + " | ".join(columns[1:]) + ".")
    lines = []
    for row in rows:
        label = (row[0] or "").rstrip(":")
        cells = range(1, min(len(row), len(columns)))
        if paired:
            values = "; ".join(f"{columns[j]} {row[j]}" for j in cells if row[j])
        else:
            values = " | ".join(row[j] or "-" for j in cells) if any(row[j] for j in cells) else ""
        if not values:
            if label:
                lines.append(f"{label}:")
            continue
        lines.append(f"{label}: {values}" if label else values)
    return "\n".join([" ".join(parts), *lines]).strip()


def table_in_words(content: str) -> str:
    """A table chunk as a small model reads it best: the lines above the table as they
    are, then one line per row with every value next to its column ("Purchases of PP&E:
    2018 (1,577); 2017 (1,373)"). Markdown columns are easy to misread by one; these
    are not. The values are the chunk's own, character for character."""
    lines = content.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("|")), None)
    if start is None:
        return content
    end = next(
        (i for i in range(start, len(lines)) if not lines[i].lstrip().startswith("|")),
        len(lines),
    )
    table = parse_markdown_table("\n".join(lines[start:end]))
    if table is None:
        return content
    table = promote_header_rows(table)
    rows = summarize_rows(table, table.rows, "", None, legend=False, pair_always=True)
    return "\n".join([*lines[:start], rows, *lines[end:]]).strip()


def units_note(title: str, units: str | None) -> str | None:
    """'(In millions)', unless the title already says it."""
    return f"({units})" if units and units not in title else None
