"""Which route answers a question: facts (the facts store and the calculator), mixed
(numbers from facts, reasons or a judgement from the excerpts), or text (the model reads
excerpts). The decision and its reason go into the answer's trace."""

from __future__ import annotations

import time
from dataclasses import dataclass

import psycopg

from finrag.answer.facts_route import Company, FactsOutcome, answer_with_facts
from finrag.answer.question_plan import NoPlan, plan_question
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
    calendar = _calendar(conn, filters.companies[0].id)
    names = filters.matched.get("company", [])
    plan = plan_question(question, filters.years, filters.quarter, calendar, names)
    if isinstance(plan, NoPlan):
        return Route("text", plan.reason)
    companies = [Company(c.id, c.name) for c in filters.companies]
    outcome = answer_with_facts(conn, question, plan, companies)
    seconds = round(time.perf_counter() - started, 3)
    if outcome.answer is None:
        return Route("text", outcome.reason, outcome, seconds)
    if plan.mixed:
        why = "reasons" if plan.wants_reasons else "a judgement"
        reason = f"{outcome.reason}; the question asks for {why}: the excerpts answer that"
        return Route("mixed", reason, outcome, seconds)
    return Route("facts", outcome.reason, outcome, seconds)


def _calendar(conn: psycopg.Connection, company_id: int) -> FiscalCalendar | None:
    """The company's fiscal calendar, as its latest filing states it (how it names its
    years included: a date in the question is placed as the company places it)."""
    return latest_calendar(conn, company_id)
