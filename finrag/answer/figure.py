"""One measure of one company for one period, as the facts route resolved it: what the
route computes and what finrag.answer.fact_words puts into words (its own module, so
neither imports the other)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from finrag.answer.question_plan import Measure
from finrag.facts.lookup import MetricValue, Period


@dataclass(frozen=True)
class Company:
    id: int
    name: str


@dataclass
class Figure:
    """One measure of one company for one period, with the facts it rests on."""

    company: Company
    measure: Measure
    period: Period
    value: Decimal
    unit: str  # money, per_share, shares, percent, ratio, times, days
    currency: str | None  # "USD" for money and per-share amounts
    inputs: list[MetricValue]
    formula: str | None = None  # KPIs and defined formulas
    expression: str | None = None  # the formula with its inputs' numbers
    dated: bool = True  # its period's end date is one the filing's calendar allows
