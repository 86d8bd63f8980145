"""Segment, region and product tables of a printed filing, read as dimensional facts.

A segment note or a "revenue by geographic area" table prints a measure broken down by
member: rows named for the members (Domestic, International; Americas, EMEA, APAC; the
company's own segments) closed by a total row. The cells of those rows are the
measure's, for a member: they get the measure's concept and a dimension
``(axis, member as printed)`` with ``axis`` one of ``segment``, ``geography``,
``product``, the same provenance as every table cell, and leave the entity-total
lookups (which read dimensionless facts only) alone.

A block is found the way the filing's own arithmetic shows it: rows just above a total
row that add up to it in every column (``member_total``, recorded on each member
cell). Rows only count as members where the table says it breaks a measure down (its
heading, title, header or total names segments, regions, areas, countries or
categories, or the members are regions by name), and where no member row is itself a
line item (R&D and SG&A add up to total operating expenses; they are no segments).
Primary statements are left alone: their products/services split is a line item's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Protocol

from finrag.facts import model
from finrag.facts.cells import parse_cell
from finrag.facts.dictionary import Metric, match_label
from finrag.facts.model import Fact, normalize_label
from finrag.facts.periods import Period
from finrag.facts.table_facts import first_data_row, split_table_chunk
from finrag.tables import parse_markdown_table

SEGMENT = "segment"
GEOGRAPHY = "geography"
PRODUCT = "product"
AXES = (SEGMENT, GEOGRAPHY, PRODUCT)
MEMBER_TOTAL = "member_total"

_MAX_MEMBERS = 20
_GEOGRAPHY_CUE = re.compile(
    r"\bgeograph\w*|\bregions?\b|\bregional\b|\bcountr(?:y|ies)\b|\bareas?\b|\blocations?\b",
    re.I,
)
_PRODUCT_CUE = re.compile(
    r"\bproduct\s+(?:categor\w+|lines?|groups?|families)\b|\bcategor(?:y|ies)\b"
    r"|\bby\s+(?:major\s+)?(?:offerings?|products?|brands?|end\s+markets?)\b",
    re.I,
)
_SEGMENT_CUE = re.compile(r"\bsegments?\b|\bdivisions?\b|\bbusiness\s+units?\b", re.I)
# Regions by name: a table of these is a geography table whatever its heading says.
_REGION = re.compile(
    r"^(?:the\s+)?(?:americas|north\s+america|latin\s+america|south\s+america|emea|apac|apj"
    r"|europe(?:,\s*middle\s+east\s+(?:and|&)\s+africa)?|asia(?:[\s-]+pacific)?|pacific"
    r"|greater\s+china|china|japan|canada|mexico|india|united\s+states|u\.?\s?s\.?(?:\s+and\s+canada)?"
    r"|united\s+kingdom|u\.?k\.?|germany|france|middle\s+east(?:\s+(?:and|&)\s+africa)?|africa"
    r"|rest\s+of\s+(?:the\s+)?world|(?:all\s+)?other\s+(?:countries|international|foreign)"
    r"|international|foreign|non-?\s?u\.?\s?s\.?|domestic)$",
    re.I,
)
_GENERIC = frozenset({"other", "corporate", "eliminations", "all other", "corporate and other"})
# A member is named, not measured: "Organic sales", "Intersegment revenues" are a bridge's
# or a reconciliation's lines.
_MEASURE_WORD = re.compile(
    r"\b(?:sales|revenues?|income|expenses?|costs?|margin|profit|loss|earnings|change|effect)\b",
    re.I,
)
# A header cell that is no member's name: a measure, or a period's words run into it.
_NOT_A_NAME = re.compile(rf"{_MEASURE_WORD.pattern}|\bended\b|\bas of\b|(?:19|20)\d\d", re.I)
_TOTAL = re.compile(r"^(?:total|consolidated)\b", re.I)
_FOOTNOTE = re.compile(r"\s*(?:\(\s*(?:\d{1,2}|[a-z]|\*+)\s*\))+\s*$")
_UNITS_LEAD = re.compile(r"^\s*\((?:[^()]*)\)\s*")
_CORNER_CHARS = 40
_QUALIFIERS = re.compile(r"\b(?:total|consolidated|segments?|reportable)\b", re.I)
# "Revenue by reportable segment", "net sales by geographic area": the measure a header
# cell or title line names for the breakdown under it.
_MEASURE_BY = re.compile(
    r"(?:^|[:(]\s*|\b(?:our|the|of|and)\s+)((?:[a-z&,]+\s+){0,4}?[a-z&]+)\s+by\s+"
    r"(?:reportable\s+|operating\s+|business\s+|geographic(?:al)?\s+|major\s+|product\s+)?"
    r"(?:segments?|regions?|areas?|geograph\w*|countr\w+|categor\w+|products?|markets?)\b",
    re.I,
)


class Chunk(Protocol):
    ordinal: int
    kind: str
    page_start: int
    content: str


@dataclass
class _Row:
    label: str
    parents: tuple[str, ...]
    cells: dict[int, int]  # value column -> index of its fact
    values: dict[int, Decimal]
    members: list[_Row] = field(default_factory=list)  # the rows a total was found to sum


@dataclass
class Block:
    """A measure broken down by members, in one table."""

    measure: Metric | None
    axis: str | None
    axes: list[str]  # every breakdown the words around it name, nearest first
    members: list[tuple[str, _Row]]  # (member as printed, its row)
    total: _Row
    outer: tuple[str, str] | None = None  # (axis, member) the whole block is a part of


def member_facts(chunks: Sequence[Chunk], facts: Sequence[Fact]) -> list[Fact]:
    """``facts`` with the cells of segment, region and product rows made dimensional."""
    out = list(facts)
    blocks = [b for group, words in _tables(chunks, facts) for b in _blocks(out, group, words)]
    # A table whose words name no breakdown ("Net Sales:" over North America, AWS) is the
    # breakdown another table of the filing names for the same members.
    known: dict[str, str] = {}
    for block in blocks:
        if block.axis is not None:
            for name, _ in block.members:
                known.setdefault(name.lower(), block.axis)
    for block in blocks:
        if block.axis is None:
            axes = {known.get(name.lower()) for name, _ in block.members if not _generic(name)}
            if len(axes) == 1 and None not in axes:
                block.axis = axes.pop()
    _member_columns(chunks, out)
    for block in blocks:
        if block.axis is None:
            continue
        outer = (block.outer,) if block.outer else ()
        for name, row in block.members:
            for i in row.cells.values():
                fact = out[i]
                out[i] = replace(
                    fact,
                    concept=block.measure.concepts[0] if block.measure.concepts else None,
                    dimensions=(*outer, (block.axis, name), *fact.dimensions),
                    checks=tuple(sorted({*fact.checks, MEMBER_TOTAL})),
                )
    return out


def _generic(name: str) -> bool:
    return name.lower() in _GENERIC


def _tables(chunks: Sequence[Chunk], facts: Sequence[Fact]) -> list[tuple[list[_Row], list[str]]]:
    """Each table's rows (its parts cut under a repeated header read as one) and the
    words around it: headings path, title lines, header cells."""
    by_chunk: dict[int | None, list[int]] = {}
    for i, f in enumerate(facts):
        if f.source == "table" and f.value is not None and f.unit != "%" and f.row is not None:
            by_chunk.setdefault(f.chunk_ordinal, []).append(i)
    tables: list[tuple[list[int], list[str]]] = []
    previous: tuple[int, str] | None = None
    for chunk in chunks:
        if chunk.kind != "table":
            previous = None
            continue
        found = split_table_chunk(chunk.content)
        if found is None:
            previous = None
            continue
        header = (chunk.page_start, found.grid.splitlines()[0])
        indexes = by_chunk.get(chunk.ordinal, [])
        if previous == header and tables:
            tables[-1][0].extend(indexes)
        else:
            table = parse_markdown_table(found.grid)
            words = [*found.lines, *(table.header[:1] if table else [])]
            tables.append((list(indexes), words))
        previous = header
    out = []
    for indexes, words in tables:
        if not indexes or facts[indexes[0]].statement in model.PRIMARY_STATEMENTS:
            continue
        rows: dict[tuple, _Row] = {}
        for i in sorted(indexes, key=lambda k: (facts[k].chunk_ordinal or 0, facts[k].row or 0)):
            f = facts[i]
            key = (f.chunk_ordinal, f.row)
            row = rows.setdefault(key, _Row(f.label or "", f.parents, {}, {}))
            if f.column is not None and f.value is not None and f.column not in row.cells:
                row.cells[f.column] = i
                row.values[f.column] = f.value
        out.append((list(rows.values()), words))
    return out


def _blocks(facts: Sequence[Fact], rows: list[_Row], words: list[str]) -> list[Block]:
    """The blocks of one table: a total row and the rows just above it that sum to it."""
    found: list[Block] = []
    stack: list[_Row] = []
    for row in rows:
        if _TOTAL.match(row.label) or _measure_of_label(row.label):
            k = _run_summing(stack, row)
            if k:
                row.members = stack[-k:]
                del stack[-k:]
                block = _block(facts, row, words)
                if block:
                    found.append(block)
        stack.append(row)
    # A block whose rows sit under a section row naming another block's member
    # ("Domestic:" over its product categories) is that member's breakdown.
    named = {name: b.axis for b in found for name, _ in b.members}
    for block in found:
        section = _clean(block.total.parents[-1]) if block.total.parents else ""
        outer = named.get(section)
        if outer is not None:
            block.outer = (outer, section)
            # Domestic's product categories: a breakdown other than the one it is in.
            block.axis = next((a for a in block.axes if a != outer), None)
    # A block whose total is a member of another ("Total Americas" = United States +
    # Other, beside EMEA and APAC) breaks that member down, in its measure.
    for block in found:
        for other in found:
            name = next((n for n, r in other.members if r is block.total), None)
            if name is None or other is block:
                continue
            if other.axis is None:
                block.measure = None  # a part of a part of no known breakdown: left alone
                continue
            block.outer = (other.axis, name)
            block.measure = block.measure or other.measure
            block.axis = block.axis or other.axis
    return [b for b in found if b.measure is not None]


def _run_summing(stack: list[_Row], total: _Row) -> int | None:
    """How many of the last rows above ``total`` add up to it in every column it fills."""
    if not total.values:
        return None
    running = {j: Decimal(0) for j in total.values}
    for k in range(1, min(len(stack), _MAX_MEMBERS) + 1):
        row = stack[-k]
        if not set(total.values) <= set(row.values):
            return None
        for j in running:
            running[j] += row.values[j]
        if k >= 2 and all(
            abs(running[j] - v) <= _step(v) * k and v for j, v in total.values.items()
        ):
            return k
    return None


def _step(value: Decimal) -> Decimal:
    """The printed rounding unit of a scaled value: a sum of rounded parts may miss by
    one unit a part."""
    step = Decimal(1_000_000)
    while step > Decimal("0.01") and value % step:
        step /= 10
    return step


def _block(facts: Sequence[Fact], total: _Row, words: list[str]) -> Block | None:
    members = [(_member_name(r), r) for r in total.members]
    names = [n for n, _ in members]
    if any(not n or len(n.split()) > 8 for n in names) or len(set(names)) != len(names):
        return None
    if any(_MEASURE_WORD.search(n) for n in names):
        return None
    # "Total reportable segments" beside "Corporate and other": a reconciliation's lines.
    if any(_TOTAL.match(_clean(r.label)) and not r.members for _, r in members):
        return None
    # A line item is no member: R&D and SG&A add up to operating expenses.
    if any(_measure_of_label(n) or _measure_of_label(r.label) for n, r in members):
        return None
    parents = [_clean(p) for p in total.parents]
    measure = _measure(total.label, parents, words, names)
    axes = _axes(total.label, parents, words, names)
    return Block(measure, axes[0] if axes else None, axes, members, total)


def _member_name(row: _Row) -> str:
    """A member as printed; a subtotal member by what it totals ("Total Americas")."""
    name = _clean(row.label)
    if row.members and _TOTAL.match(name):
        name = _TOTAL.sub("", name).strip(" ,:")
    return name


def _clean(label: str) -> str:
    return _FOOTNOTE.sub("", label).strip(" :")


def _measure_of_label(label: str) -> Metric | None:
    return match_label(_clean(label), None, unit="USD") if label else None


def _measure(total: str, parents: list[str], words: list[str], names: list[str]) -> Metric | None:
    """The measure the members break down: the total row's ("Total revenue"; "Total
    Domestic revenue" less the member it totals), else the section row over the block
    ("Net sales:"), else the header or title naming it ("Revenue by reportable segment"),
    else the header's corner cell ("(Millions) Net Sales")."""
    label = _clean(total)
    candidates = [label]
    stripped = label
    for part in parents[-1:]:
        stripped = re.sub(rf"\b{re.escape(part)}\b", " ", stripped, flags=re.I)
    candidates.append(" ".join(stripped.split()))
    candidates.append(" ".join(_QUALIFIERS.sub(" ", stripped).split()))
    candidates += reversed(parents)
    for line in reversed(words):
        for part in reversed(line.split(" > ")):
            if _title(part):
                candidates += [m.group(1) for m in _MEASURE_BY.finditer(part)]
    # The header's corner naming the measure after its units: "(Millions) Net Sales".
    candidates += [_UNITS_LEAD.sub("", w) for w in words[-1:] if len(w) <= _CORNER_CHARS]
    for text in candidates:
        text = text.strip(" ,:")
        if not text or normalize_label(text) in {normalize_label(n) for n in names}:
            continue
        metric = match_label(text, None, unit="USD")
        if metric is not None:
            return metric
    return None


def _axes(total: str, parents: list[str], words: list[str], names: list[str]) -> list[str]:
    """The breakdowns the table says it is, nearest words first; regions by name make a
    geography table whatever the heading above them."""
    found: list[str] = []
    real = [n for n in names if not _generic(n)]
    if (
        real
        and all(_REGION.match(n) for n in real)
        and not all(n.lower() in {"domestic", "international"} for n in real)
    ):
        found.append(GEOGRAPHY)
    texts = [total, *reversed(parents)]
    for line in reversed(words):
        parts = list(reversed(line.split(" > ")))
        # A heading path's deepest part is the table's own; the Item above it is not.
        texts += parts[:1] if len(parts) > 1 else [p for p in parts if _title(p)]
    cues = ((GEOGRAPHY, _GEOGRAPHY_CUE), (PRODUCT, _PRODUCT_CUE), (SEGMENT, _SEGMENT_CUE))
    for text in texts:
        for axis, cue in cues:
            if cue.search(text) and axis not in found:
                found.append(axis)
    return found


def _title(line: str) -> bool:
    """A line that titles the table: short, or the lead-in ending in a colon (a long
    sentence that mentions "revenue by geography" refers to another table)."""
    return len(line.split()) <= 12 or line.rstrip().endswith(":")


# ---- members as columns ---------------------------------------------------------------
# A segment note often turns the table: a column per segment and a "Total" column, a row
# per measure, a year per section ("2021" over the header, then "2020", "2019" rows).


def _member_columns(chunks: Sequence[Chunk], out: list[Fact]) -> None:
    """Cells of member columns whose row adds up to the total column, made dimensional
    in ``out`` (their period from the year section over them when the header gave none)."""
    cells: dict[tuple[int | None, int | None, int | None], int] = {}
    for i, f in enumerate(out):
        if f.source == "table" and f.value is not None and f.unit != "%":
            cells[(f.chunk_ordinal, f.row, f.column)] = i
    previous: tuple[int, str] | None = None
    year: int | None = None
    words: list[str] = []
    for chunk in chunks:
        found = split_table_chunk(chunk.content) if chunk.kind == "table" else None
        table = parse_markdown_table(found.grid) if found else None
        if found is None or table is None:
            previous = None
            continue
        header = (chunk.page_start, found.grid.splitlines()[0])
        rows = [table.header, *table.rows]
        first = first_data_row(rows)
        if header != previous:
            words = [*found.lines, table.header[0]]
            # "2022 External Operating Revenues": the year the turned table is for.
            lead = _LEADING_YEAR.match(table.header[0].strip())
            year = _year(table.header[0]) or (int(lead.group(1)) if lead else None)
        previous = header
        if not first:
            continue
        data = rows[first:]
        value_columns = [
            j for j in range(1, table.width) if any(parse_cell(r[j]) for r in data if j < len(r))
        ]
        names = [
            _clean(rows[first - 1][j]) if j < len(rows[first - 1]) else "" for j in value_columns
        ]
        if len(names) < 3 or not _TOTAL.match(names[-1]) or not all(names[:-1]):
            continue
        members = names[:-1]
        if any(_year(n) or _NOT_A_NAME.search(n) or _TOTAL.match(n) for n in members):
            continue
        axes = _axes(names[-1], [], words, members)
        if not axes:
            continue
        for r, row in enumerate(data):
            label = row[0].strip() if row else ""
            if not any(parse_cell(c) for c in row[1:]):
                year = _year(label) or year
                continue
            found_cells = [cells.get((chunk.ordinal, r, k)) for k in range(len(value_columns))]
            measure = _measure_of_label(label)
            if measure is None or any(i is None for i in found_cells):
                continue
            *parts, total = [out[i] for i in found_cells]  # type: ignore[index]
            summed = sum((f.value or Decimal(0)) for f in parts)
            if not total.value or abs(summed - total.value) > _step(total.value) * len(parts):
                continue
            for name, i in zip(members, found_cells[:-1], strict=True):
                fact = out[i]  # type: ignore[index]
                period = fact.period
                if not period.known and year:
                    period = Period(
                        fiscal_year=year,
                        months=None if measure.period == "instant" else 12,
                        instant=measure.period == "instant",
                    )
                out[i] = replace(  # type: ignore[index]
                    fact,
                    period=period,
                    concept=measure.concepts[0] if measure.concepts else None,
                    dimensions=((axes[0], name), *_unqualified(fact)),
                    checks=tuple(sorted({*fact.checks, MEMBER_TOTAL})),
                )


def _unqualified(fact: Fact) -> tuple[tuple[str, str], ...]:
    """A fact's dimensions less its column qualifier (the member the column names)."""
    return tuple(p for p in fact.dimensions if p[0] != "column")


_YEAR = re.compile(r"^(?:\(.*?\)\s*)?(?:fiscal\s+(?:year\s+)?)?((?:19|20)\d{2})$", re.I)


_LEADING_YEAR = re.compile(r"^((?:19|20)\d{2})\s+[A-Za-z]")


def _year(text: str) -> int | None:
    """ "2021", "Fiscal 2020", "(dollars in millions) Fiscal 2022": a year section's."""
    found = _YEAR.match(" ".join(text.split()).strip(" :"))
    return int(found.group(1)) if found else None
