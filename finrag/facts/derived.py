"""Period arithmetic: quarters de-cumulated from year-to-date statements, and trailing
twelve months, each a calculation whose inputs are stored facts cited to their filings.

A 10-Q's cash-flow statement (and often its income statement) reports the fiscal year
to date: six months at Q2, nine at Q3, and the 10-K the year. A quarter alone is the
difference of two cumulative figures, and the last twelve months join a 10-K and a
later 10-Q:

    Q2 = 6M - Q1      Q3 = 9M - 6M      Q4 = FY - 9M
    TTM at quarter q of year Y = FY(Y-1) + YTD(Y, q) - YTD(Y-1, q)

A figure whose inputs are not all in the store is never stated: the gap names each
missing input (P&G's third-quarter 10-Q prints nine-month cash flows; the third quarter
alone needs the six-month figure of the 10-Q before it). Inputs whose dates do not line
up (a "6M" that does not end a quarter before the "9M") are refused, not subtracted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any, Literal

import psycopg

from finrag.facts.dictionary import Metric
from finrag.facts.lookup import MetricResolver, MetricValue, Period, Unresolved
from finrag.refs import page_ref

Kind = Literal["reported", "quarter", "ttm"]
_QUARTER_DAYS = (80, 100)  # 13 weeks, give or take a 52/53-week calendar's shift
_YEAR_DAYS = (357, 373)


@dataclass(frozen=True)
class DerivedInput:
    term: str  # "FY2025 9M", "FY2024", "FY2025 Q1"
    sign: int  # +1 added, -1 subtracted
    value: MetricValue

    def as_dict(self) -> dict[str, Any]:
        fact = self.value.fact
        return {
            "term": self.term,
            "sign": "+" if self.sign > 0 else "-",
            **self.value.as_dict(),
            "ref": page_ref(fact.document, fact.page),
        }


@dataclass(frozen=True)
class Derived:
    """A quarter or trailing-twelve-month figure: reported as is, or calculated."""

    metric: Metric
    period: str  # "FY2025 Q3", "TTM to FY2025 Q3"
    kind: Kind
    value: Decimal  # in the metric's natural sign, like MetricValue.value
    formula: str  # "FY2025 9M - FY2025 6M"
    expression: str  # the same with numbers, in the metric's unit: "81754000000 - 60000000000"
    inputs: tuple[DerivedInput, ...]
    end: date | None  # the period's last day, where the inputs date it

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric.name,
            "period": self.period,
            "kind": self.kind,
            "value": str(self.value),
            "unit": self.inputs[0].value.fact.unit,
            "period_end": self.end.isoformat() if self.end else None,
            "formula": self.formula,
            "expression": self.expression,
            "inputs": [i.as_dict() for i in self.inputs],
        }


@dataclass(frozen=True)
class DerivedGap:
    """Why a quarter or TTM figure is not stated: the inputs it lacks, by name."""

    metric: Metric
    period: str
    formula: str
    detail: str  # "missing FY2025 6M (...)"
    missing: tuple[Unresolved, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric.name,
            "period": self.period,
            "formula": self.formula,
            "detail": self.detail,
            "missing": [u.as_dict() for u in self.missing],
        }


def ytd_term(fiscal_year: int, quarter: int) -> str:
    """How a cumulative figure is named: 'FY2025 Q1' (3 months), 'FY2025 6M', 'FY2025'."""
    if quarter == 1:
        return f"FY{fiscal_year} Q1"
    if quarter == 4:
        return f"FY{fiscal_year}"
    return f"FY{fiscal_year} {3 * quarter}M"


class PeriodArithmetic:
    """Quarters and trailing twelve months of one company's flows, from its stored facts."""

    def __init__(self, conn: psycopg.Connection, company_id: int) -> None:
        self.resolver = MetricResolver(conn, company_id)

    def quarter(self, metric: Metric, period: Period) -> Derived | DerivedGap:
        """The three months of fiscal quarter ``period``: reported, else the difference
        of the year-to-date figures that end it and the quarter before."""
        _flow(metric)
        year, q = period.fiscal_year, period.fiscal_quarter
        if q is None:
            raise ValueError("a quarter needs its fiscal_quarter")
        reported = self.resolver.resolve(metric, period)
        if isinstance(reported, MetricValue):
            return _reported(metric, period.label, period.label, reported)
        formula = f"{ytd_term(year, q)} - {ytd_term(year, q - 1)}" if q > 1 else period.label
        if reported.reason == "ambiguous":
            detail = _missing_words([reported])
            return DerivedGap(metric, period.label, formula, detail, (reported,))
        if q == 1:  # the first quarter is its own year to date: nothing to subtract
            gap = self._cumulative(metric, year, 1)
            assert isinstance(gap, Unresolved)
            return DerivedGap(metric, period.label, formula, _missing_words([gap]), (gap,))
        terms = [(ytd_term(year, q), 1, q), (ytd_term(year, q - 1), -1, q - 1)]
        return self._combine(metric, period.label, "quarter", formula, year, terms, _QUARTER_DAYS)

    def ttm(self, metric: Metric, period: Period) -> Derived | DerivedGap:
        """The twelve months to the end of fiscal quarter ``period`` (a fiscal year's
        fourth quarter is the year itself)."""
        _flow(metric)
        year, q = period.fiscal_year, period.fiscal_quarter or 4
        label = f"TTM to FY{year} Q{q}"
        if q == 4:
            found = self.resolver.resolve(metric, Period(year))
            if isinstance(found, MetricValue):
                return _reported(metric, label, ytd_term(year, 4), found, kind="ttm")
            gap = self._cumulative(metric, year, 4)
            assert isinstance(gap, Unresolved)
            return DerivedGap(metric, label, ytd_term(year, 4), _missing_words([gap]), (gap,))
        formula = f"{ytd_term(year - 1, 4)} + {ytd_term(year, q)} - {ytd_term(year - 1, q)}"
        terms = [
            (ytd_term(year - 1, 4), 1, (year - 1, 4)),
            (ytd_term(year, q), 1, (year, q)),
            (ytd_term(year - 1, q), -1, (year - 1, q)),
        ]
        return self._combine_ttm(metric, label, formula, terms)

    def quarters(self, metric: Metric) -> list[Derived | DerivedGap]:
        """Each fiscal quarter a stored figure closes, oldest first: a quarter reported,
        or one whose year-to-date figure (the year's total for Q4, when a shorter
        figure of that year is stored too) is in the store, so the gap, if any, is the
        figure before it."""
        _flow(metric)
        closed: set[tuple[int, int]] = set()
        annual: set[int] = set()
        for _, fact in self.resolver.ranked_facts(metric):
            year, months = fact.fiscal_year, fact.months
            if year is None or months is None:
                continue
            if months == 12:
                annual.add(year)
            elif months == 3 and fact.fiscal_quarter:
                closed.add((year, fact.fiscal_quarter))
            elif months in (6, 9):
                closed.add((year, months // 3))
        closed |= {(year, 4) for year in annual if any(y == year for y, _ in closed)}
        return [self.quarter(metric, Period(y, q)) for y, q in sorted(closed)]

    def ttms(self, metric: Metric) -> list[Derived | DerivedGap]:
        """Trailing twelve months at each quarter end a year-to-date figure closes
        (Q1 to Q3; a year's end is the year itself), oldest first."""
        _flow(metric)
        ends: set[tuple[int, int]] = set()
        for _, fact in self.resolver.ranked_facts(metric):
            year, months = fact.fiscal_year, fact.months
            first_quarter = months == 3 and fact.fiscal_quarter == 1
            if year is not None and months is not None and (months in (6, 9) or first_quarter):
                ends.add((year, months // 3))
        return [self.ttm(metric, Period(y, q)) for y, q in sorted(ends)]

    # ------------------------------------------------------------------ arithmetic

    def _cumulative(self, metric: Metric, year: int, quarter: int) -> MetricValue | Unresolved:
        found = self.resolver.resolve_year_to_date(metric, year, 3 * quarter)
        if isinstance(found, Unresolved) and found.reason == "missing":
            # Say which filing would hold it, not only which number is absent.
            where = (
                f"FY{year}'s 10-K"
                if quarter == 4
                else f"the FY{year} Q{quarter} 10-Q or a later 10-Q's comparative column"
            )
            months = {1: "three", 2: "six", 3: "nine", 4: "twelve"}[quarter]
            detail = f"{months} months to the end of FY{year} Q{quarter}: {where}"
            return Unresolved(metric.name, ytd_term(year, quarter), "missing", detail)
        return found

    def _combine(self, metric, label, kind, formula, year, terms, gap_days) -> Derived | DerivedGap:
        values = [(term, sign, self._cumulative(metric, year, q)) for term, sign, q in terms]
        return _calculated(metric, label, kind, formula, values, [gap_days])

    def _combine_ttm(self, metric, label, formula, terms) -> Derived | DerivedGap:
        values = [(term, sign, self._cumulative(metric, y, q)) for term, sign, (y, q) in terms]
        # prior year's YTD -> prior year's end -> this year's YTD: under a year apart each
        return _calculated(metric, label, "ttm", formula, values, [None, _YEAR_DAYS])


def _flow(metric: Metric) -> None:
    if metric.period != "duration":
        raise ValueError(f"{metric.name} is a balance at a date: only flows add over periods")


def _reported(
    metric: Metric, label: str, term: str, value: MetricValue, kind: Kind = "reported"
) -> Derived:
    return Derived(
        metric,
        label,
        kind,
        value.value,
        term,
        _digits(value.value),
        (DerivedInput(term, 1, value),),
        value.fact.period_end,
    )


def _calculated(
    metric: Metric,
    label: str,
    kind: Kind,
    formula: str,
    values: list[tuple[str, int, MetricValue | Unresolved]],
    spans: list[tuple[int, int] | None],
) -> Derived | DerivedGap:
    unresolved = [v for _, _, v in values if isinstance(v, Unresolved)]
    if unresolved:
        return DerivedGap(metric, label, formula, _missing_words(unresolved), tuple(unresolved))
    inputs = tuple(DerivedInput(term, sign, v) for term, sign, v in values)  # type: ignore[arg-type]
    facts = [i.value.fact for i in inputs]
    if len({f.unit for f in facts}) > 1:
        units = ", ".join(f"{i.term} in {i.value.fact.unit}" for i in inputs)
        return DerivedGap(metric, label, formula, f"inputs in different units: {units}")
    misaligned = _misaligned(inputs, spans)
    if misaligned:
        return DerivedGap(metric, label, formula, misaligned)
    # Each input in the metric's natural sign: a tag says capex 9,473 where the printed
    # cell says (9,447); a flow that can turn (operating cash flow) keeps its sign.
    total = sum((Decimal(i.sign) * _raw(i) for i in inputs), Decimal(0))
    expression = _digits(_raw(inputs[0]))
    for i in inputs[1:]:
        number = _digits(_raw(i))
        expression += f" {'+' if i.sign > 0 else '-'} " + (
            f"({number})" if number.startswith("-") else number
        )
    end = inputs[1].value.fact.period_end if kind == "ttm" else inputs[0].value.fact.period_end
    return Derived(metric, label, kind, total, formula, expression, inputs, end)


def _raw(item: DerivedInput) -> Decimal:
    return item.value.value


def _misaligned(inputs: tuple[DerivedInput, ...], spans: list[tuple[int, int] | None]) -> str:
    """Why consecutive inputs' end dates do not make the calculation, or ''. For a
    quarter: the two year-to-date figures end a quarter apart; for TTM: the prior year's
    same period ends under a year before this one's. Undated inputs (a 10-K's table
    headed by years alone) are taken at their fiscal year."""
    ends = [i.value.fact.period_end for i in inputs]
    if len(inputs) == 2:
        pairs = [(0, 1, spans[0])]
    else:  # TTM: FY(Y-1), YTD(Y), YTD(Y-1)
        pairs = [(2, 1, _YEAR_DAYS)]
        if ends[0] and ends[1] and ends[2] and not ends[2] < ends[0] < ends[1]:
            return f"{inputs[0].term} ({ends[0]}) does not fall between the two year-to-date ends"
    for later, earlier, span in pairs:
        a, b = ends[later], ends[earlier]
        if span is None or a is None or b is None:
            continue
        days = abs((a - b).days)
        if not span[0] <= days <= span[1]:
            return (
                f"{inputs[later].term} ends {a} and {inputs[earlier].term} ends {b}: "
                f"{days} days apart, not the {span[0]}-{span[1]} the calculation needs"
            )
    return ""


def _missing_words(unresolved: list[Unresolved]) -> str:
    """'missing FY2025 6M capital_expenditure (six months to the end of FY2025 Q2: ...)'."""
    parts = []
    for u in unresolved:
        if u.reason == "missing":
            parts.append(f"missing {u.period} {u.metric} ({u.detail})")
        else:
            parts.append(f"{u.reason} {u.period}: {u.detail}")
    return "; ".join(parts)


def _digits(value: Decimal | None) -> str:
    if value is None:
        return ""
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
