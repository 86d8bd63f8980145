"""All of a filing's facts, at ingest: its tables' cells, and its inline XBRL tags.

A table cell that an XBRL tag on the same page reports too (same value, same period)
takes the tag's concept, so a lookup by concept finds the printed row as well.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Protocol

from finrag.facts import model
from finrag.facts.cells import Units
from finrag.facts.checks import check_facts
from finrag.facts.cover import cover_facts, printed_cover_facts
from finrag.facts.ixbrl import extract_ixbrl_facts
from finrag.facts.member_tables import member_facts
from finrag.facts.model import Fact
from finrag.facts.periods import FiscalCalendar
from finrag.facts.table_facts import (
    DocumentPeriod,
    header_rows_of,
    read_table_chunk,
    rows_overrule,
    split_table_chunk,
    statement_of_parts,
    table_units,
)


class Chunk(Protocol):
    """What facts need of a chunk (finrag.ingest.chunk.Chunk): facts sit below ingest."""

    ordinal: int
    kind: str
    page_start: int
    page_end: int
    content: str


FACTS_VERSION = 5  # bump when extraction changes: documents read as stale, --rebuild redoes them


def document_facts(
    path: Path,
    kind: str,
    chunks: Sequence[Chunk],
    *,
    period_end: date | None,
    fiscal_quarter: int | None,
    calendar: FiscalCalendar | None = None,
    form: str | None = None,
) -> list[Fact]:
    """The facts of one parsed and chunked filing, each placed on ``calendar`` (the one
    the filing states: finrag.facts.calendar), or else on its period's end and quarter.
    ``form``: the filing's form ("10-Q": its statements' columns are quarters and
    year-to-date spans ending on ``period_end``)."""
    if calendar is None:
        calendar = FiscalCalendar.from_document(period_end, fiscal_quarter)
    quarterly = (form or "").upper().startswith("10-Q") or fiscal_quarter in (1, 2, 3)
    document = DocumentPeriod(period_end, quarterly)
    if kind != "html":
        return printed_facts(chunks, calendar, document)
    found = extract_ixbrl_facts(path)
    tagged = found.facts
    if not tagged:
        return printed_facts(chunks, calendar, document)
    tagged += cover_facts(path)  # the cover's text: symbols, exchanges, filer category
    # One calendar for the tags and the cells that print them: the dei facts'.
    tables = table_facts(chunks, found.calendar, document)
    tagged = [replace(f, chunk_ordinal=_chunk_on_page(chunks, f)) for f in tagged]
    named, tagged = name_concepts(tables, tagged)
    return check_facts([*named, *tagged])


def printed_facts(
    chunks: Sequence[Chunk], calendar: FiscalCalendar, document: DocumentPeriod | None = None
) -> list[Fact]:
    """A filing without tags: its tables' cells, checked, with the members of its segment
    and region tables as dimensions (a tagged filing has its own dimensional facts)."""
    facts = member_facts(chunks, check_facts(table_facts(chunks, calendar, document)))
    return facts + printed_cover_facts(chunks)


def table_facts(
    chunks: Sequence[Chunk], calendar: FiscalCalendar, document: DocumentPeriod | None = None
) -> list[Fact]:
    """Facts from every table chunk; the parts of a table cut under a repeated header
    read as one table (a section row opened in one part heads rows in the next).
    ``document``: the filing's own period, for the columns of a header cut apart."""
    facts: list[Fact] = []
    previous: Chunk | None = None
    open_sections: list[str] = []
    statement: str | None = None
    first_header: list[list[str]] = []
    run: list[Fact] = []  # the facts of the table being read, its parts so far
    first_lines: list[str] = []  # the headings and title above its first part
    default_units = document_units(chunks)
    for chunk in chunks:
        if chunk.kind != "table":
            previous = None
            facts += _one_statement(run, first_lines)
            run = []
            continue
        continues = previous is not None and _header(previous) == _header(chunk)
        if not continues:
            facts += _one_statement(run, first_lines)
            run = []
            first_header = header_rows_of(chunk.content)
            first_lines = _context_lines(chunk.content)
        found, open_sections = read_table_chunk(
            chunk.content,
            page=chunk.page_start,
            chunk_ordinal=chunk.ordinal,
            calendar=calendar,
            continued=open_sections if continues else None,
            default_units=default_units,
            continued_statement=statement if continues else None,
            continued_header=first_header if continues else (),
            document=document,
        )
        run += found
        statement = found[0].statement if found else statement
        previous = chunk
    return facts + _one_statement(run, first_lines)


def _context_lines(content: str) -> list[str]:
    found = split_table_chunk(content)
    return found.lines if found else []


def _one_statement(parts: list[Fact], lines: Sequence[str]) -> list[Fact]:
    """The parts of one cut table are one statement: a first part whose rows gave no
    sign of it (revenues and costs, before the "Net income" of a later part) is the
    statement its later parts are; parts none of which named it alone are the statement
    their rows together show (finrag.facts.table_facts.statement_of_parts)."""
    kinds = {f.statement for f in parts} - {model.OTHER_TABLE}
    if not kinds and len({f.chunk_ordinal for f in parts}) > 1:
        kinds = {statement_of_parts(lines, [f.label or "" for f in parts])} - {model.OTHER_TABLE}
    if len(kinds) != 1:
        return parts
    (kind,) = kinds
    kind = rows_overrule(kind, [f.label or "" for f in parts])
    return [replace(f, statement=kind) if f.statement != kind else f for f in parts]


def document_units(chunks: Sequence[Chunk]) -> Units | None:
    """The units most of a filing's tables state ("in millions"): a note's table that
    states none follows the filing's convention. None when the tables disagree."""
    notes = Counter(
        units
        for chunk in chunks
        if chunk.kind == "table"
        and (found := split_table_chunk(chunk.content))
        and (units := table_units(found))
    )
    if not notes:
        return None
    units, count = notes.most_common(1)[0]
    return units if count * 2 > sum(notes.values()) else None


def _header(chunk: Chunk) -> tuple[int, str]:
    grid = next((ln for ln in chunk.content.splitlines() if ln.lstrip().startswith("|")), "")
    return chunk.page_start, grid


def same_period(a: Fact, b: Fact) -> bool:
    """Whether two facts report the same period as far as both state it."""
    pa, pb = a.period, b.period
    if pa.end is not None and pb.end is not None:
        if abs((pa.end - pb.end).days) > 7:  # 52/53-week calendars print nearby dates
            return False
        if pa.instant or pb.instant:
            return pa.instant == pb.instant
        return pa.months is None or pb.months is None or pa.months == pb.months
    if pa.fiscal_year is None or pb.fiscal_year is None or pa.fiscal_year != pb.fiscal_year:
        return False
    if pa.instant != pb.instant:
        return False
    return (pa.months or 12) == (pb.months or 12) and pa.fiscal_quarter == pb.fiscal_quarter


def same_value(table: Fact, tag: Fact) -> bool:
    if table.value is None or tag.value is None:
        return False
    if table.unit == "%" and tag.unit == "pure":
        return table.value == tag.value * 100
    return table.value == tag.value


def name_concepts(tables: Sequence[Fact], tagged: Sequence[Fact]) -> tuple[list[Fact], list[Fact]]:
    """Table facts with the concept of the tag printing the same number on their page,
    and the tags with the statement kind (and label) of the table that prints them."""
    by_page: dict[int | None, list[int]] = defaultdict(list)
    for i, tag in enumerate(tagged):
        if not tag.dimensions:
            by_page[tag.page].append(i)
    tags = list(tagged)
    named = []
    for fact in tables:
        match = next(
            (
                i
                for i in by_page.get(fact.page, ())
                if same_value(fact, tagged[i]) and same_period(fact, tagged[i])
            ),
            None,
        )
        if match is None:
            named.append(fact)
            continue
        named.append(replace(fact, concept=tagged[match].concept))
        if tags[match].label is None:
            tags[match] = replace(
                tags[match], statement=fact.statement, label=fact.label, parents=fact.parents
            )
    return named, tags


def _chunk_on_page(chunks: Sequence[Chunk], fact: Fact) -> int | None:
    """The chunk that prints a tagged number: a table on its page holding the printed
    text, else the first chunk of that page."""
    on_page = [c for c in chunks if c.page_start <= (fact.page or -1) <= c.page_end]
    printed = fact.printed.strip("$() ")
    for chunk in on_page:
        if printed and printed in chunk.content:
            return chunk.ordinal
    return on_page[0].ordinal if on_page else None
