"""Does the store hold the period a question asks about, for the company it names?

A filing reports more than its own fiscal year: a 10-K's statements cover three years
(five with the selected financial data 10-Ks carried until 2021), a quarterly report or
release compares with a year earlier, and any filing may say what it expects next. A
question whose years no filing of the named company covers even so (Apple's fiscal 2019
in a store holding its FY2024 10-K) is refused: the search would drop the year filter
and answer from other years, which is answering another question.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import psycopg

from finrag.db.documents import CompanyCoverage, describe_coverage
from finrag.retrieve.filters import CompanyRef, QueryFilters

# A year each way for fiscal years named by the calendar year (NVIDIA's fiscal 2026
# ends in January 2026; "2025" may mean either).
_SLACK = 1
_LAST_SELECTED_DATA_YEAR = 2020  # the SEC dropped Item 6's five-year table in 2021


@dataclass(frozen=True)
class HeldFiling:
    company_id: int
    fiscal_year: int | None
    form_type: str | None


def held_filings(conn: psycopg.Connection, company_ids: Sequence[int]) -> list[HeldFiling]:
    rows = conn.execute(
        "SELECT company_id, fiscal_year, form_type FROM documents WHERE company_id = ANY(%s)",
        (list(company_ids),),
    ).fetchall()
    return [HeldFiling(*row) for row in rows]


def covers(filing: HeldFiling, year: int, *, quarterly: bool) -> bool:
    """Whether ``filing`` can report fiscal ``year`` (a quarter of it when ``quarterly``)."""
    if filing.fiscal_year is None:
        return True  # an undated filing (a current report, a release) may report any year
    annual = (filing.form_type or "").upper().startswith("10-K")
    if annual and not quarterly:
        back = 4 if filing.fiscal_year <= _LAST_SELECTED_DATA_YEAR else 2
    else:
        back = 1
    return filing.fiscal_year - back - _SLACK <= year <= filing.fiscal_year + _SLACK


def unheld_period(filters: QueryFilters, filings: Sequence[HeldFiling]) -> list[CompanyRef] | None:
    """The named companies, when none of their filings covers any year the question names
    (a question about several years or companies is answered for what is held); else None."""
    if not (filters.companies and filters.years):
        return None
    quarterly = filters.quarter is not None
    ids = {c.id for c in filters.companies}
    if any(
        covers(f, year, quarterly=quarterly)
        for f in filings
        if f.company_id in ids
        for year in filters.years
    ):
        return None
    return list(filters.companies)


def unheld_period_message(
    companies: Sequence[CompanyRef], filters: QueryFilters, coverage: Sequence[CompanyCoverage]
) -> str:
    """'The store holds no Apple Inc. filing covering fiscal 2019 ...', with what it holds."""
    names = " or ".join(c.name for c in companies)
    asked = "fiscal " + ", ".join(map(str, filters.years))
    if filters.quarter is not None:
        asked = f"Q{filters.quarter} of {asked}"
    held = {c.company: c for c in coverage}
    holdings = "; ".join(held[c.name].describe() for c in companies if c.name in held)
    if holdings:
        return (
            f"The store holds no {names} filing covering {asked}, so I cannot answer that. "
            f"It holds {holdings}."
        )
    # A company known to the store without a filing of its own (one stored before removals
    # took companies with them): say what the store does hold, never an empty list.
    return (
        f"The store holds no {names} filing, so I cannot answer that. "
        f"It holds: {describe_coverage(list(coverage))}."
    )
