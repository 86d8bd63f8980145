"""Facts in the store: written with their document, read back with their provenance."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import PurePath
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from finrag.facts.checks import CHECKS, unverified_reason
from finrag.facts.model import Fact
from finrag.facts.periods import FiscalCalendar

_COLUMNS = (
    "document_id, company_id, chunk_id, source, concept, label, label_norm, parents, value, "
    "unit, decimals, period_start, period_end, instant, months, fiscal_year, fiscal_quarter, "
    "dimensions, statement, page, table_row, table_column, printed, checks, failures, verified"
)
_TYPES = [
    "int8",
    "int8",
    "int8",
    "text",
    "text",
    "text",
    "text",
    "text[]",
    "numeric",
    "text",
    "int4",
    "date",
    "date",
    "bool",
    "int2",
    "int2",
    "int2",
    "jsonb",
    "text",
    "int4",
    "int4",
    "int4",
    "text",
    "text[]",
    "text[]",
    "bool",
]


def write_facts(
    conn: psycopg.Connection, document_id: int, company_id: int | None, facts: Sequence[Fact]
) -> int:
    """Store a document's facts; runs in the caller's transaction, after its chunks."""
    chunk_ids = dict(
        conn.execute(
            "SELECT ordinal, id FROM chunks WHERE document_id = %s", (document_id,)
        ).fetchall()
    )
    with (
        conn.cursor() as cur,
        cur.copy(f"COPY facts ({_COLUMNS}) FROM STDIN (FORMAT BINARY)") as copy,
    ):
        copy.set_types(_TYPES)
        for fact in facts:
            period = fact.period
            copy.write_row(
                [
                    document_id,
                    company_id,
                    chunk_ids.get(fact.chunk_ordinal),
                    fact.source,
                    fact.concept,
                    fact.label,
                    fact.normalized_label,
                    list(fact.parents),
                    fact.value,
                    fact.unit,
                    fact.decimals,
                    period.start,
                    period.end,
                    period.instant,
                    period.months if period.months and period.months <= 120 else None,
                    period.fiscal_year,
                    period.fiscal_quarter,
                    Jsonb([list(pair) for pair in fact.dimensions]),
                    fact.statement,
                    fact.page,
                    fact.row,
                    fact.column,
                    fact.printed,
                    list(fact.checks),
                    list(fact.failures),
                    fact.verified,
                ]
            )
    return len(facts)


@dataclass(frozen=True)
class StoredFact:
    """A fact as read back, with where it is printed."""

    id: int
    document: str
    document_id: int
    company: str | None
    source: str
    concept: str | None
    label: str | None
    parents: list[str]
    value: Decimal | None
    unit: str | None
    period_start: date | None
    period_end: date | None
    instant: bool
    months: int | None
    fiscal_year: int | None
    fiscal_quarter: int | None
    dimensions: list[list[str]]
    statement: str
    page: int | None
    chunk_id: int | None
    printed: str
    checks: list[str] = field(default_factory=list)  # cross-checks passed
    failures: list[str] = field(default_factory=list)  # "check: why" of those failed
    verified: bool = False
    filed: date | None = None  # the filing's period end: which of two filings is later
    table_row: int | None = None  # a table fact's data row (rows above it come first)

    @property
    def unverified_reason(self) -> str | None:
        return unverified_reason(self.checks, self.failures)

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        for key in ("period_start", "period_end"):
            out[key] = out[key].isoformat() if out[key] else None
        out["value"] = None if self.value is None else str(self.value)
        out["filed"] = self.filed.isoformat() if self.filed else None
        return out


_SELECT = """
SELECT f.id, d.path, f.document_id, c.name, f.source, f.concept, f.label, f.parents, f.value,
       f.unit, f.period_start, f.period_end, f.instant, f.months, f.fiscal_year,
       f.fiscal_quarter, f.dimensions, f.statement, f.page, f.chunk_id, f.printed,
       f.checks, f.failures, f.verified, d.period_end, f.table_row
FROM facts f JOIN documents d ON d.id = f.document_id LEFT JOIN companies c ON c.id = f.company_id
"""


def query_facts(
    conn: psycopg.Connection,
    *,
    company_id: int | None = None,
    document_id: int | None = None,
    concepts: Sequence[str] = (),
    labels: Sequence[str] = (),
    fiscal_year: int | None = None,
    fiscal_quarter: int | None = None,
    statements: Sequence[str] = (),
    entity_total: bool = False,
    limit: int | None = None,
) -> list[StoredFact]:
    """Facts matching every filter given; ``concepts`` and ``labels`` (normalized) widen
    each other: a fact matches either."""
    where, params = [], []
    for column, value in (
        ("f.company_id", company_id),
        ("f.document_id", document_id),
        ("f.fiscal_year", fiscal_year),
        ("f.fiscal_quarter", fiscal_quarter),
    ):
        if value is not None:
            where.append(f"{column} = %s")
            params.append(value)
    if concepts or labels:
        where.append("(f.concept = ANY(%s) OR f.label_norm = ANY(%s))")
        params += [list(concepts), list(labels)]
    if statements:
        where.append("f.statement = ANY(%s)")
        params.append(list(statements))
    if entity_total:
        where.append("f.dimensions = '[]'::jsonb")
    sql = _SELECT + (" WHERE " + " AND ".join(where) if where else "")
    sql += " ORDER BY f.fiscal_year DESC NULLS LAST, f.fiscal_quarter NULLS FIRST, f.page, f.id"
    if limit:
        sql += f" LIMIT {int(limit)}"
    return [StoredFact(*row) for row in conn.execute(sql, params).fetchall()]


def count_facts(conn: psycopg.Connection, document_id: int) -> dict[str, int]:
    rows = conn.execute(
        "SELECT source, count(*) FROM facts WHERE document_id = %s GROUP BY source",
        (document_id,),
    ).fetchall()
    return dict(rows)


def write_calendar(
    conn: psycopg.Connection,
    document_id: int,
    company_id: int | None,
    calendar: FiscalCalendar | None,
) -> None:
    """Store the fiscal calendar a document states (with its document, in its transaction)."""
    if calendar is None:
        return
    conn.execute(
        """
        INSERT INTO fiscal_calendars (document_id, company_id, year_end_month, year_end_day,
            weeks_52_53, naming, source, evidence, ambiguous)
        VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
        ON CONFLICT (document_id) DO UPDATE SET company_id = EXCLUDED.company_id,
            year_end_month = EXCLUDED.year_end_month, year_end_day = EXCLUDED.year_end_day,
            weeks_52_53 = EXCLUDED.weeks_52_53, naming = EXCLUDED.naming,
            source = EXCLUDED.source, evidence = EXCLUDED.evidence,
            ambiguous = EXCLUDED.ambiguous
        """,
        (
            document_id,
            company_id,
            calendar.year_end_month,
            calendar.year_end_day,
            calendar.weeks,
            calendar.naming,
            calendar.source,
            calendar.evidence,
            calendar.ambiguous,
        ),
    )


def document_calendar(conn: psycopg.Connection, document_id: int) -> FiscalCalendar | None:
    row = conn.execute(
        "SELECT year_end_month, naming, year_end_day, weeks_52_53, source, ambiguous, evidence "
        "FROM fiscal_calendars WHERE document_id = %s",
        (document_id,),
    ).fetchone()
    return FiscalCalendar(*row) if row else None


def latest_calendar(conn: psycopg.Connection, company_id: int) -> FiscalCalendar | None:
    """The company's fiscal calendar as its latest filing states it; for a store written
    before calendars were kept, the one its period end implies (years named for their end)."""
    row = conn.execute(
        """
        SELECT d.period_end, d.fiscal_quarter, k.year_end_month, k.naming, k.year_end_day,
               k.weeks_52_53, k.source, k.ambiguous, k.evidence
        FROM documents d LEFT JOIN fiscal_calendars k ON k.document_id = d.id
        WHERE d.company_id = %s AND d.period_end IS NOT NULL
        ORDER BY (k.ambiguous IS NULL AND k.document_id IS NOT NULL) DESC, d.period_end DESC
        LIMIT 1
        """,
        (company_id,),
    ).fetchone()
    if row is None:
        return None
    end, quarter, *stored = row
    return (
        FiscalCalendar(*stored)
        if stored[0] is not None
        else FiscalCalendar.from_document(end, quarter)
    )


@dataclass(frozen=True)
class CompanyCalendar:
    """What a company's filings say of its fiscal calendar, and what they left unplaced."""

    company: str
    calendars: list[tuple[str, FiscalCalendar]]  # (document, its calendar)
    unplaced: list[tuple[str, str]]  # (document, a period no fiscal year was given)

    def describe(self) -> str:
        said = {c.describe() for _, c in self.calendars if c.placeable}
        unknown = [f"{doc}: {c.ambiguous}" for doc, c in self.calendars if not c.placeable]
        parts = sorted(said)
        if len(said) > 1:
            parts = ["filings disagree: " + " | ".join(parts)]
        return "; ".join(parts + unknown) or "no fiscal calendar stored"

    def lines(self) -> list[str]:
        """What `finrag facts` and `finrag kpi` say of it, one line each."""
        out = [f"{self.company} fiscal calendar: {self.describe()}"]
        if self.unplaced:
            shown = ", ".join(f"{end} ({doc})" for doc, end in self.unplaced[:6])
            more = f" and {len(self.unplaced) - 6} more" if len(self.unplaced) > 6 else ""
            out.append(f"{self.company} periods not placed on it: {shown}{more}")
        return out

    def as_dict(self) -> dict[str, object]:
        return {
            "describe": self.describe(),
            "documents": [
                {
                    "document": doc,
                    "year_end_month": c.year_end_month,
                    "year_end_day": c.year_end_day,
                    "weeks_52_53": c.weeks,
                    "named_for": "start" if c.naming else "end",
                    "source": c.source,
                    "evidence": c.evidence,
                    "ambiguous": c.ambiguous,
                }
                for doc, c in self.calendars
            ],
            "unplaced": [{"document": doc, "period_end": end} for doc, end in self.unplaced],
        }


def company_calendars(conn: psycopg.Connection, company_id: int) -> CompanyCalendar:
    name = conn.execute("SELECT name FROM companies WHERE id = %s", (company_id,)).fetchone()
    rows = conn.execute(
        """
        SELECT d.path, k.year_end_month, k.naming, k.year_end_day, k.weeks_52_53, k.source,
               k.ambiguous, k.evidence
        FROM fiscal_calendars k JOIN documents d ON d.id = k.document_id
        WHERE d.company_id = %s ORDER BY d.period_end NULLS LAST, d.path
        """,
        (company_id,),
    ).fetchall()
    unplaced = conn.execute(
        """
        SELECT DISTINCT d.path, coalesce(f.period_end::text, 'a column without a date')
        FROM facts f JOIN documents d ON d.id = f.document_id
        WHERE f.company_id = %s AND f.fiscal_year IS NULL AND f.dimensions = '[]'::jsonb
          AND f.statement = ANY(%s)
        ORDER BY 1, 2 LIMIT 20
        """,
        (company_id, ["income_statement", "balance_sheet", "cash_flow"]),
    ).fetchall()
    return CompanyCalendar(
        name[0] if name else str(company_id),
        [(PurePath(path).name, FiscalCalendar(*row)) for path, *row in rows],
        [(PurePath(path).name, end) for path, end in unplaced],
    )


def check_coverage(conn: psycopg.Connection, document_id: int) -> dict[str, object]:
    """The document's numeric facts (the cover's text facts are no arithmetic's to check),
    how many are verified, and per cross-check how many it covers and how many of those
    fail it."""
    checks = []
    for check in CHECKS:
        covered, failed = conn.execute(
            """
            SELECT count(*) FILTER (WHERE %(c)s = ANY(checks) OR EXISTS (
                       SELECT 1 FROM unnest(failures) r WHERE r LIKE %(p)s)),
                   count(*) FILTER (WHERE EXISTS (
                       SELECT 1 FROM unnest(failures) r WHERE r LIKE %(p)s))
            FROM facts WHERE document_id = %(d)s AND value IS NOT NULL
            """,
            {"c": check, "p": check + ":%", "d": document_id},
        ).fetchone()
        checks.append({"check": check, "covered": covered, "failed": failed})
    total, verified = conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE verified) FROM facts"
        " WHERE document_id = %s AND value IS NOT NULL",
        (document_id,),
    ).fetchone()
    return {"facts": total, "verified": verified, "checks": checks}
