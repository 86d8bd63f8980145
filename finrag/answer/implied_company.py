"""The company a question means when it names none.

A question about cash at the end of one fiscal year and of a later quarter may name no
company. Searched across the whole store, it was answered from whichever filing ranked
first, another company's included. When the store holds one company, or exactly one company whose
filings cover every fiscal year (and the quarter) the question names, that company is
meant: the question is confined to it and the answer says so. Otherwise nothing is
implied and the question is read as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from finrag.retrieve.filters import QueryFilters


@dataclass(frozen=True)
class Implied:
    name: str
    note: str  # what the answer says about it


def implied_company(conn: psycopg.Connection, filters: QueryFilters) -> Implied | None:
    """The one company the store's filings allow, or None."""
    if filters.companies or filters.unknown_companies:
        return None
    rows = conn.execute(
        "SELECT co.name, array_agg(DISTINCT d.fiscal_year), "
        "array_agg(DISTINCT (d.fiscal_year, d.fiscal_quarter)::text) "
        "FROM documents d JOIN companies co ON co.id = d.company_id "
        "WHERE d.fiscal_year IS NOT NULL GROUP BY co.name"
    ).fetchall()
    if len(rows) == 1:
        name = rows[0][0]
        return Implied(name, f"No company was named: {name} is the only company in the store.")
    if not filters.years:
        return None
    covering = [
        name
        for name, years, periods in rows
        if set(filters.years) <= set(years)
        and (filters.quarter is None or any(_quarter(p) == filters.quarter for p in periods))
    ]
    if len(covering) != 1:
        return None
    asked = ", ".join(f"FY{y}" for y in sorted(set(filters.years)))
    if filters.quarter:
        asked += f" (Q{filters.quarter})"
    return Implied(
        covering[0],
        f"No company was named: {covering[0]} is the only company whose filings cover {asked}.",
    )


def _quarter(period: str) -> int | None:
    """'(2024,2)' -> 2; '(2023,)' -> None."""
    tail = period.strip("()").split(",")[-1].strip()
    return int(tail) if tail.isdigit() else None
