"""Facts in the store: written with their document, read back with their provenance."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from finrag.facts.model import Fact

_COLUMNS = (
    "document_id, company_id, chunk_id, source, concept, label, label_norm, parents, value, "
    "unit, decimals, period_start, period_end, instant, months, fiscal_year, fiscal_quarter, "
    "dimensions, statement, page, table_row, table_column, printed"
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

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        for key in ("period_start", "period_end"):
            out[key] = out[key].isoformat() if out[key] else None
        out["value"] = None if self.value is None else str(self.value)
        return out


_SELECT = """
SELECT f.id, d.path, f.document_id, c.name, f.source, f.concept, f.label, f.parents, f.value,
       f.unit, f.period_start, f.period_end, f.instant, f.months, f.fiscal_year,
       f.fiscal_quarter, f.dimensions, f.statement, f.page, f.chunk_id, f.printed
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
