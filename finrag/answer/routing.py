"""Which route answers a question: facts (the facts store and the calculator), mixed
(numbers from facts, reasons or a judgement from the excerpts), or text (the model reads
excerpts). The decision and its reason go into the answer's trace."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import psycopg

from finrag.answer.cover import answer_cover
from finrag.answer.fact_words import short_name
from finrag.answer.facts_route import Company, FactsOutcome, answer_inapplicable, answer_with_facts
from finrag.answer.inapplicable import allows_inapplicable
from finrag.answer.question_plan import NO_YEAR, NoPlan, plan_question
from finrag.answer.segments import answer_segments
from finrag.facts.lookup import Period
from finrag.facts.periods import FiscalCalendar
from finrag.facts.store import latest_calendar
from finrag.retrieve.filters import QueryFilters


@dataclass
class Route:
    name: str  # "facts", "mixed" or "text"
    reason: str
    outcome: FactsOutcome | None = None
    seconds: float = 0.0


def choose_route(conn: psycopg.Connection, question: str, filters: QueryFilters) -> Route:
    """The route for ``question``; facts and mixed routes come with their answer."""
    started = time.perf_counter()
    if filters.unknown_companies:
        return Route("text", f"names a company not in the store ({filters.unknown_companies[0]})")
    if not filters.companies:
        return Route("text", "names no company in the store")
    if len(filters.companies) == 1:  # the cover page; segments, regions, products
        ref = filters.companies[0]
        company = Company(ref.id, ref.name)
        by_member = answer_cover(conn, question, company) or answer_segments(
            conn, question, company, filters.years, filters.quarter
        )
        if by_member is not None:
            seconds = round(time.perf_counter() - started, 3)
            name = "facts" if by_member.answer is not None else "text"
            return Route(name, by_member.reason, by_member, seconds)
    calendar = _calendar(conn, filters.companies[0].id)
    names = filters.matched.get("company", [])
    plan = plan_question(question, filters.years, filters.quarter, calendar, names)
    latest = None
    if isinstance(plan, NoPlan) and plan.reason == NO_YEAR:
        # No period named ("in the quarter", "the latest"): the latest the store holds.
        latest = latest_period(conn, [c.id for c in filters.companies], question, filters.quarter)
        if isinstance(latest, str):
            return Route("text", f"{NO_YEAR}; {latest}")
        plan = plan_question(question, [latest.fiscal_year], latest.fiscal_quarter, calendar, names)
    if isinstance(plan, NoPlan):
        return Route("text", plan.reason)
    companies = [Company(c.id, c.name) for c in filters.companies]
    outcome = answer_with_facts(conn, question, plan, companies)
    seconds = round(time.perf_counter() - started, 3)
    moot = (
        answer_inapplicable(conn, question, plan, companies[0])
        if outcome.answer is None and len(companies) == 1 and allows_inapplicable(question)
        else None
    )
    if moot is not None:
        why = f"{outcome.reason}; the measure does not apply to the company"
        return Route("facts", why, FactsOutcome(moot, why), seconds)
    if outcome.answer is None:
        return Route("text", outcome.reason, outcome, seconds)
    if latest is not None:
        _say_latest(outcome, latest, filters)
    if plan.mixed:
        why = (
            "reasons"
            if plan.wants_reasons
            else "what the filing says"
            if plan.narrative
            else "a judgement"
        )
        reason = f"{outcome.reason}; the question asks for {why}: the excerpts answer that"
        return Route("mixed", reason, outcome, seconds)
    return Route("facts", outcome.reason, outcome, seconds)


# "last year", "the year", "annual": a fiscal year; "the quarter", "last quarter": a quarter.
# ("the prior year" is what a change compares with, not the period asked about.)
_YEAR_CUE = re.compile(
    r"\b(?:last|latest|most recent|this|current|the)\s+(?:fiscal\s+|full\s+)?"
    r"year\b|\bannual(?:ly)?\b|\bfull[- ]year\b|\b(?:each|every|per|a) year\b|"
    r"\bhistorical(?:ly)?\b|\bover the years\b",
    re.I,
)
_QUARTER_CUE = re.compile(r"\bquarter(?:ly)?\b|\bthree months\b|\b13 weeks\b", re.I)


def latest_period(
    conn: psycopg.Connection, company_ids: list[int], question: str, quarter: int | None
) -> Period | str:
    """The latest period the store holds for the companies, of the kind the question's
    words ask for (a quarter, a fiscal year, or whichever filing is latest); or why there
    is none. Several companies must share it: one period answers for all."""
    wants_year = bool(_YEAR_CUE.search(question)) and not quarter
    wants_quarter = quarter is not None or (bool(_QUARTER_CUE.search(question)) and not wants_year)
    found: set[Period] = set()
    for company_id in company_ids:
        rows = conn.execute(
            "SELECT fiscal_year, fiscal_quarter, form_type FROM documents "
            "WHERE company_id = %s AND fiscal_year IS NOT NULL "
            "ORDER BY fiscal_year DESC, COALESCE(fiscal_quarter, 4) DESC, "
            "period_end DESC NULLS LAST",
            (company_id,),
        ).fetchall()
        period = None
        for year, fq, form in rows:
            annual = (form or "").upper().startswith("10-K") or fq is None
            if quarter is not None and fq != quarter:
                continue
            if wants_year and not annual:
                continue
            if wants_quarter and annual and quarter is None:
                continue
            period = Period(year, None if annual and quarter is None else fq)
            break
        if period is None:
            kind = "a fiscal year" if wants_year else f"Q{quarter}" if quarter else "a quarter"
            return f"the store holds no filing reporting {kind} for it"
        found.add(period)
    if len(found) > 1:
        return "the companies' latest periods differ: name one"
    return found.pop()


def _say_latest(outcome: FactsOutcome, period: Period, filters: QueryFilters) -> None:
    """The answer says which period it took for 'the quarter' or 'the latest'."""
    names = " and ".join(short_name(c.name) for c in filters.companies)
    note = f"No period was named: {period.label} is the latest the store holds for {names}."
    answer = outcome.answer
    answer.answer = f"{answer.answer} ({note})"
    answer.warnings.append(note)  # said however the model words the answer
    outcome.reason += f" (latest held: {period.label})"


def _calendar(conn: psycopg.Connection, company_id: int) -> FiscalCalendar | None:
    """The company's fiscal calendar, as its latest filing states it (how it names its
    years included: a date in the question is placed as the company places it)."""
    return latest_calendar(conn, company_id)
