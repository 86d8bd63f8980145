"""Does the store hold the period a question asks about, for the company it names?

A filing reports more than its own fiscal year: a 10-K's statements cover three years
(five with the selected financial data 10-Ks carried until 2021), a quarterly report or
release compares with a year earlier, and any filing may say what it expects next. A
question whose years no filing of the named company covers even so (Apple's fiscal 2019
in a store holding its FY2024 10-K) is refused: the search would drop the year filter
and answer from other years, which is answering another question.

And when the facts store lacks a measure a question asks for (a year or a quarter no
held filing reports, though one near it is held), the text route may answer only from a
passage of that company's filings for that period; with none, the answer refuses rather
than let the model read a figure for another period (or invent one).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import psycopg

from finrag.answer.fact_words import measure_words
from finrag.answer.facts_route import FactsOutcome, Gap
from finrag.db.documents import CompanyCoverage, describe_coverage
from finrag.facts.dictionary import metric as dictionary_metric
from finrag.facts.lookup import Period
from finrag.retrieve.filters import CompanyRef, QueryFilters
from finrag.retrieve.hybrid import Hit, SearchResult

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


# ------------------------------------------------------------------ a measure the facts lack


def confine_to_period(
    outcome: FactsOutcome | None, found: SearchResult, coverage: Sequence[CompanyCoverage]
) -> SearchResult | str | None:
    """What the text route may read after the facts route found a measure missing: the
    passages for the asked company and period (the search result cut to them), or the
    refusal when there are none; None when no measure was missing."""
    if outcome is None or not outcome.missing:
        return None
    kept = period_passages(found.hits, outcome)
    if not kept:
        return missing_measure_message(outcome, coverage)
    return replace(found, hits=kept)


def period_passages(hits: Sequence[Hit], outcome: FactsOutcome) -> list[Hit]:
    """The hits the text route may answer from when the facts store lacks a measure the
    question asks for: passages of the companies whose measure is missing, from their
    filings for the asked periods. A 10-Q reports no full year and no other quarter, a
    10-K no single quarter; a later filing's comparative counts when the passage itself
    names the year."""
    companies = {g.company.name for g in outcome.missing}
    periods = set(outcome.periods) | {g.period for g in outcome.missing}
    instant = any(dictionary_period(g) == "instant" for g in outcome.missing)
    return [
        h
        for h in hits
        if h.company in companies and any(_for_period(h, p, instant=instant) for p in periods)
    ]


def missing_measure_message(outcome: FactsOutcome, coverage: Sequence[CompanyCoverage]) -> str:
    """'The facts store holds no revenue for Best Buy Co., Inc. for FY2022 (it holds ...),
    and no passage of its filings for that period was found ...', with what the store holds."""
    parts = []
    for gap in outcome.missing[:3]:
        held = f" (it holds it for {', '.join(gap.held[-6:])})" if gap.held else ""
        what = measure_words(gap.measure)
        parts.append(f"{what} of {gap.company.name} for {gap.period.label}{held}")
    names = " and ".join(dict.fromkeys(g.company.name for g in outcome.missing))
    held_docs = {c.company: c for c in coverage}
    holdings = "; ".join(
        held_docs[n].describe()
        for n in dict.fromkeys(g.company.name for g in outcome.missing)
        if n in held_docs
    )
    return (
        f"The facts store holds no {'; no '.join(parts)}, and no passage of "
        f"{'its' if ' and ' not in names else 'their'} filings for that period was found, "
        f"so I cannot answer that. The store holds: {holdings or 'nothing for it'}."
    )


def dictionary_period(gap: Gap) -> str:
    """'instant' for a balance, 'duration' otherwise (KPIs and formulas count as flows)."""
    if gap.measure.kind != "metric":
        return "duration"
    return dictionary_metric(gap.measure.name).period


def _for_period(hit: Hit, period: Period, *, instant: bool) -> bool:
    year, quarter = period.fiscal_year, period.fiscal_quarter
    form = (hit.form_type or "").upper()
    quarterly_form = form.startswith("10-Q")
    names_year = bool(_year_words(year).search(hit.content))
    if hit.fiscal_year is None:
        return names_year  # an undated release: only what it says of the year
    if quarter is not None:
        if hit.fiscal_quarter != quarter or form.startswith("10-K"):
            return False
        return hit.fiscal_year == year or (names_year and hit.fiscal_year == year + 1)
    # A fiscal year: an annual filing (or a release) of that year, or a later one's
    # comparative; a quarterly report only for a balance (its prior year-end column).
    if (quarterly_form or hit.fiscal_quarter not in (None, 4)) and not instant:
        return False
    if hit.fiscal_year == year and not quarterly_form:
        return True
    return names_year and year <= hit.fiscal_year <= year + 2


def _year_words(year: int) -> re.Pattern[str]:
    return re.compile(rf"\b(?:{year}|FY\s*'?{year % 100:02d})\b", re.I)
