"""Segment and region tables of a printed filing read as dimensional facts
(finrag.facts.member_tables), on table chunks as the PDF parser writes them. Best Buy's
real segment note, ingested into Postgres, is tested in tests/test_facts_route.py."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from finrag.facts.extract import printed_facts
from finrag.facts.member_tables import MEMBER_TOTAL
from finrag.facts.periods import FiscalCalendar

CALENDAR = FiscalCalendar.from_document(date(2024, 12, 31), None)


@dataclass
class Chunk:
    ordinal: int
    content: str
    page_start: int = 40
    page_end: int = 40
    kind: str = "table"


def _members(*contents: str) -> dict[tuple, tuple]:
    chunks = [Chunk(i, c) for i, c in enumerate(contents)]
    return {
        (f.dimensions, f.concept, f.period.fiscal_year): (f.value, f.checks, f.row, f.column)
        for f in printed_facts(chunks, CALENDAR)
        if f.dimensions and f.dimensions[0][0] != "column"
    }


def test_regions_adding_up_to_total_revenue_are_members_of_revenue() -> None:
    facts = _members(
        "Item 8 > Note 14. Segment and Geographic Information\nRevenue by geographic area\n"
        "(in millions)\n\n|(in millions)|2024|2023|\n|---|---|---|\n"
        "|Americas|$5,200|$4,900|\n|Percentage of total revenue|52%|50%|\n"
        "|Europe|3,100|3,300|\n|Asia Pacific|1,700|1,600|\n|Total revenue|$10,000|$9,800|\n"
    )
    revenue = "us-gaap:Revenues"
    assert facts[((("geography", "Americas"),), revenue, 2024)][:1] == (5_200_000_000,)
    assert facts[((("geography", "Asia Pacific"),), revenue, 2023)][:1] == (1_600_000_000,)
    assert len(facts) == 6  # three regions, two years; the percent rows and total stay out
    assert all(MEMBER_TOTAL in checks for _, checks, _, _ in facts.values())


def test_a_measure_named_in_the_header_corner_after_its_units_is_the_members() -> None:
    # 3M's segment note prints "(Millions) Net Sales" in the corner over its segments,
    # closed by "Total Company": no total row or title names the measure.
    facts = _members(
        "Item 8 > Business Segment Information\n(Millions)\n\n"
        "|(Millions) Net Sales|2024|2023|\n|---|---|---|\n"
        "|Safety and Industrial|$11,604|$11,981|\n|Health Care|8,421|8,597|\n"
        "|Consumer|5,298|5,513|\n|Total Company|$25,323|$26,091|\n"
    )
    revenue = "us-gaap:Revenues"
    assert facts[((("segment", "Health Care"),), revenue, 2024)][:1] == (8_421_000_000,)
    assert len(facts) == 6


def test_rows_that_do_not_add_up_or_are_line_items_are_no_members() -> None:
    # The regions miss the total by 100: no check confirms them, so no members.
    assert not _members(
        "Item 8 > Note 14. Segments\nRevenue by geographic area\n\n|(in millions)|2024|\n"
        "|---|---|\n|Americas|$5,200|\n|Europe|3,100|\n|Total revenue|$8,400|\n"
    )
    # Research and SG&A add up to total operating expenses: line items, not segments.
    assert not _members(
        "Item 8 > Note 14. Segments\n\n|(in millions)|2024|\n|---|---|\n"
        "|Research and development|$1,000|\n|Selling, general and administrative|2,000|\n"
        "|Total operating expenses|$3,000|\n"
    )
    # A sales bridge adds up too; its lines are changes, not members.
    assert not _members(
        "Item 7 > Sales by segment\n\n|(in millions)|2024|\n|---|---|\n"
        "|Organic sales|$400|\n|Acquisitions|100|\n|Total sales change|$500|\n"
    )


def test_a_segment_note_turned_on_its_side_reads_its_columns_and_year_sections() -> None:
    """A column per segment and a Total column, a row per measure, the year over the
    header and then as a section row; the note cut in two parts under one header."""
    head = (
        "Item 8 > Note 12. Segment Reporting\nThe following table provides information for "
        "the Company's reportable segments (in millions):\n\n"
        "|2024|North Operations|South Operations|Total|\n|---|---|---|---|\n"
    )
    facts = _members(
        head + "|Total revenue|$700|$300|$1,000|\n|Operating income|50|20|70|\n|2023||||\n",
        head + "|Total revenue|$650|$250|$900|\n|Operating income|45|15|75|\n",
    )
    revenue, operating = "us-gaap:Revenues", "us-gaap:OperatingIncomeLoss"
    assert facts[((("segment", "North Operations"),), revenue, 2024)][0] == 700_000_000
    assert facts[((("segment", "South Operations"),), revenue, 2023)][0] == 250_000_000
    assert facts[((("segment", "North Operations"),), operating, 2024)][0] == 50_000_000
    # 45 + 15 is not 75 (a unit a part is rounding; 15 is not): no breakdown the total confirms.
    assert ((("segment", "North Operations"),), operating, 2023) not in facts
    assert len(facts) == 6


def test_a_regions_own_breakdown_carries_the_region_and_never_ranks_beside_it() -> None:
    """ "Total Americas" adds United States and Other; it, EMEA and APAC add up to the
    revenue row. United States is a part of Americas, not a fourth region."""
    facts = _members(
        "Item 8 > Segment Information\nRevenue by geographic area (in millions)\n\n"
        "|(in millions) Americas:|2024|2023|\n|---|---|---|\n"
        "|United States|$4,000|$3,800|\n|Other|600|500|\n|Total Americas|4,600|4,300|\n"
        "|EMEA|2,100|2,000|\n|APAC|1,300|1,200|\n|Revenue|$8,000|$7,500|\n"
    )
    revenue = "us-gaap:Revenues"
    assert facts[((("geography", "Americas"),), revenue, 2024)][0] == 4_600_000_000
    inner = (("geography", "Americas"), ("geography", "United States"))
    assert facts[(inner, revenue, 2024)][0] == 4_000_000_000
    regions = {dims[0][1] for dims, *_ in facts if len(dims) == 1}
    assert regions == {"Americas", "EMEA", "APAC"}
