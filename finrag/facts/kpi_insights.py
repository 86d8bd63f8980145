"""What KPI series show, in words: deterministic sentences computed from the values
alone (no model), each carrying the values, periods and sources it rests on.

Per series (one company's one KPI over its periods, oldest first):

- **direction**: first value to last, and whether every step went the same way;
- **largest change**: the step (two consecutive values) with the largest absolute
  difference in the KPI's own unit; stated when there are two steps or more;
- **breaks in trend**, each one of:
  - the value changes sign (a margin or a growth rate turns negative or positive);
  - a reversal: a step goes the other way from the step before it (rose, then fell);
  - an outsize step: at least ``OUTSIZE`` times the median size of the series' other
    steps, when there are at least ``USUAL_FROM`` other steps to tell the usual size
    (five values or more: three years of a 10-K's statements never make one).

Per KPI, when several companies have values (**peers**): who is highest in the latest
period every one of them holds, and whose value rose most from the period before it.

A step smaller than half the last digit shown (0.05 percentage points for a percent,
0.005 for a ratio, $0.5 M) is *unchanged*: it prints as no change. Percent KPIs
(margins, returns, growth rates) change in **percentage points**; the others by their
difference, with the relative change in per cent when the earlier value is positive.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import pairwise
from pathlib import Path
from typing import Any

from finrag.facts.charts import format_value
from finrag.facts.kpi import KpiValue
from finrag.facts.kpi_report import KpiReport

# A step this many times the median size of the other steps is a break in trend.
OUTSIZE = 3
USUAL_FROM = 3  # other steps needed before a median is "the usual size"
# Half the last digit each unit is shown with: a smaller step reads as no change.
_FLAT = {
    "percent": Decimal("0.05"),
    "ratio": Decimal("0.005"),
    "times": Decimal("0.005"),
    "days": Decimal("0.05"),
    "money": Decimal("500000"),
}
_MILLION = Decimal(1_000_000)


@dataclass(frozen=True)
class Point:
    """One value a statement rests on, with the facts it was computed from."""

    company: str
    kpi: str
    period: str
    value: Decimal
    unit: str
    expression: str = ""
    sources: tuple[dict[str, Any], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "company": self.company,
            "kpi": self.kpi,
            "period": self.period,
            "value": float(self.value),
            "unit": self.unit,
            "expression": self.expression,
            "sources": list(self.sources),
        }


@dataclass(frozen=True)
class Insight:
    kind: str  # direction | single | largest_change | break | peers_level | peers_change
    text: str
    metric: str  # the KPI's name
    inputs: tuple[Point, ...]
    calculation: str = ""  # the arithmetic behind the statement, with its numbers

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "text": self.text,
            "metric": self.metric,
            "calculation": self.calculation,
            "inputs": [p.as_dict() for p in self.inputs],
        }


def report_insights(report: KpiReport) -> list[Insight]:
    """Every KPI's statements, company by company, then the peers compared."""
    found: list[Insight] = []
    for chosen in report.kpis:
        series: dict[str, list[Point]] = {}
        for company in report.companies:
            points = [
                _point(company.short, r)
                for r in company.results
                if isinstance(r, KpiValue) and r.name == chosen.name
            ]
            if points:
                series[company.short] = points
                found += series_insights(points, _noun(chosen.display))
        if len(series) > 1:
            found += peer_insights(series, _noun(chosen.display), chosen.name, report.periods)
    return found


def _noun(display: str) -> str:
    """'Gross margin' -> 'gross margin' inside a sentence; 'EBITDA margin' stays."""
    first = display.split()[0]
    return display if first.isupper() else display[0].lower() + display[1:]


def _point(company: str, result: KpiValue) -> Point:
    sources = tuple(
        {
            "term": i.term,
            "document": Path(i.value.fact.document).name,
            "page": i.value.fact.page,
            "fact_id": i.value.fact.id,
            "value": str(i.value.value),
            "verified": i.value.fact.verified,
        }
        for i in result.inputs
    )
    return Point(
        company, result.name, result.period, result.value, result.unit, result.expression, sources
    )


# --- one series ---------------------------------------------------------------------


def series_insights(points: Sequence[Point], display: str) -> list[Insight]:
    """Direction, largest change and breaks of one company's one KPI (oldest first)."""
    if not points:
        return []
    first = points[0]
    subject = f"{first.company}'s {display}"
    if len(points) == 1:
        text = (
            f"{subject} was {_shown(first)} in {first.period}; one period only: no trend to state."
        )
        return [Insight("single", text, first.kpi, (first,))]
    steps = list(pairwise(points))
    found = [_direction(subject, points, steps)]
    if len(steps) >= 2 and any(_way(a, b) != "unchanged" for a, b in steps):
        found.append(_largest(subject, steps))
    found += _sign_changes(subject, points)
    found += _reversals(subject, steps)
    found += _outsize(subject, steps)
    return found


def _direction(subject: str, points: Sequence[Point], steps) -> Insight:
    first, last = points[0], points[-1]
    ways = [_way(a, b) for a, b in steps]
    overall = _way(first, last)
    span = f"from {_shown(first)} in {first.period} to {_shown(last)} in {last.period}"
    if overall == "unchanged":
        text = f"{subject} was {_shown(first)} in {first.period} and {_shown(last)} in "
        text += f"{last.period}: unchanged over the span"
    else:
        text = f"{subject} {_past(overall)} {span}, {_change(first, last)}"
    if len(steps) > 1 and overall != "unchanged":
        if all(w == overall for w in ways):
            text += f", {'rising' if overall == 'up' else 'falling'} in every step"
        else:
            others = [
                f"{_past(w)} from {a.period} to {b.period}"
                for (a, b), w in zip(steps, ways, strict=True)
                if w != overall
            ]
            text += f", not in every step: it {' and '.join(others)}"
    return Insight("direction", text + ".", first.kpi, tuple(points), _difference_sum(first, last))


def _largest(subject: str, steps) -> Insight:
    a, b = max(steps, key=lambda s: abs(s[1].value - s[0].value))
    text = (
        f"The largest change in {subject} was from {a.period} to {b.period}: "
        f"{_change(a, b)} ({_shown(a)} to {_shown(b)})."
    )
    sizes = ", ".join(f"{_plain(y.value - x.value, x.unit)}" for x, y in steps)
    calculation = f"{_difference_sum(a, b)}; every step's difference: {sizes}"
    return Insight("largest_change", text, a.kpi, (a, b), calculation)


def _sign_changes(subject: str, points: Sequence[Point]) -> list[Insight]:
    found = []
    for a, b in pairwise(points):
        if a.value * b.value < 0:
            turned = "negative" if b.value < 0 else "positive"
            text = (
                f"Break in trend: {subject} turned {turned} in {b.period} "
                f"({_shown(b)}, from {_shown(a)} in {a.period})."
            )
            calculation = f"sign({_plain(a.value, a.unit)}) ≠ sign({_plain(b.value, b.unit)})"
            found.append(Insight("break", text, a.kpi, (a, b), calculation))
    return found


def _reversals(subject: str, steps) -> list[Insight]:
    """A step going the other way from the last step that moved (unchanged steps are
    passed over: rose, unchanged, fell is a reversal)."""
    found = []
    before = None
    for a, b in steps:
        way = _way(a, b)
        if way == "unchanged":
            continue
        if before is not None and way != _way(*before):
            pa, pb = before
            text = (
                f"Break in trend: {subject} {_past(way)} from {a.period} to {b.period} "
                f"({_change(a, b)}) after it {_past(_way(pa, pb))} from {pa.period} to "
                f"{pb.period} ({_change(pa, pb)})."
            )
            calculation = f"{_difference_sum(pa, pb)}; {_difference_sum(a, b)}"
            found.append(Insight("break", text, a.kpi, (pa, pb, b), calculation))
        before = (a, b)
    return found


def _outsize(subject: str, steps) -> list[Insight]:
    found = []
    sizes = [abs(b.value - a.value) for a, b in steps]
    for i, (a, b) in enumerate(steps):
        others = sizes[:i] + sizes[i + 1 :]
        if len(others) < USUAL_FROM:
            continue
        usual = statistics.median(others)
        if usual <= _FLAT[a.unit] or sizes[i] < OUTSIZE * usual:
            continue
        times = sizes[i] / usual
        text = (
            f"Break in trend: {subject} {_past(_way(a, b))} from {a.period} to {b.period} "
            f"by {_size(sizes[i], a.unit)}, {times:.1f} times the median size of its other "
            f"changes ({_size(usual, a.unit)})."
        )
        calculation = (
            f"|{_plain(b.value - a.value, a.unit)}| / median of "
            f"{[_plain(s, a.unit) for s in others]} = {times:.2f} ≥ {OUTSIZE}"
        )
        found.append(Insight("break", text, a.kpi, (a, b), calculation))
    return found


# --- peers --------------------------------------------------------------------------


def peer_insights(
    series: dict[str, list[Point]], display: str, name: str, periods: Sequence[str]
) -> list[Insight]:
    """Companies compared on one KPI: the level in the latest period every one holds,
    and the change into it from the period before (when every one holds that too)."""
    held = [{p.period: p for p in points} for points in series.values()]
    common = [p for p in periods if all(p in h for h in held)]
    if not common:
        listed = "; ".join(f"{c}: {', '.join(p.period for p in s)}" for c, s in series.items())
        text = f"No period has a {display} for every company: not compared ({listed})."
        return [Insight("peers_level", text, name, ())]
    latest = common[-1]
    at = sorted((h[latest] for h in held), key=lambda p: p.value, reverse=True)
    top, rest = at[0], at[1:]
    against = ", ".join(f"{p.company} {_shown(p)}" for p in rest)
    tie = " (tied at the precision shown)" if _shown(top) == _shown(rest[0]) else ""
    if name.endswith("_growth"):
        lead = f"In {latest}, {top.company} grew fastest: {display} {_shown(top)}"
    else:
        lead = f"In {latest}, {top.company} had the highest {display}: {_shown(top)}"
    text = f"{lead}{tie}, against {against} (each company's own fiscal year)."
    found = [Insight("peers_level", text, name, tuple(at), " > ".join(_plain_value(p) for p in at))]
    before = periods[periods.index(latest) - 1] if periods.index(latest) > 0 else None
    if before is not None and all(before in h for h in held):
        pairs = [(h[before], h[latest]) for h in held]
        # Money grows by per cent (a $1 bn gain means more to a small company than a large
        # one), where every earlier value is positive; the rest by their difference.
        relative = pairs[0][0].unit == "money" and all(x.value > 0 for x, _ in pairs)
        ranked = sorted(
            pairs,
            key=lambda ab: (ab[1].value - ab[0].value) / (ab[0].value if relative else 1),
            reverse=True,
        )
        (a, b), rest_pairs = ranked[0], ranked[1:]
        most = {"up": "rose the most", "down": "fell the least"}.get(
            _way(a, b), "was unchanged, the best of them"
        )
        others = ", ".join(f"{y.company} {_signed(x, y)}" for x, y in rest_pairs)
        basis = "percentage points" if a.unit == "percent" else "difference"
        basis = "per cent change" if relative else basis
        text = (
            f"From {before} to {latest}, {b.company}'s {display} {most}: {_signed(a, b)}, "
            f"against {others} (ranked by {basis})."
        )
        calculation = "; ".join(_difference_sum(x, y) for x, y in ranked)
        inputs = tuple(p for ab in ranked for p in ab)
        found.append(Insight("peers_change", text, name, inputs, calculation))
    return found


# --- words and numbers --------------------------------------------------------------


def _way(a: Point, b: Point) -> str:
    difference = b.value - a.value
    if abs(difference) < _FLAT[a.unit]:
        return "unchanged"
    return "up" if difference > 0 else "down"


def _past(way: str) -> str:
    return {"up": "rose", "down": "fell", "unchanged": "was unchanged"}[way]


def _shown(p: Point) -> str:
    return format_value(p.value, p.unit)


def _size(size: Decimal, unit: str) -> str:
    """A step's absolute size in the unit's words."""
    if unit == "percent":
        return f"{size:,.1f} percentage points"
    if unit == "money":
        return f"${size / _MILLION:,.0f} M"
    if unit == "days":
        return f"{size:,.1f} days"
    if unit == "times":
        return f"{size:,.2f}x"
    return f"{size:,.2f}"


def _change(a: Point, b: Point) -> str:
    """'up 2.9 percentage points'; 'down $1,200 M, or 3.1%'; 'up 0.12, or 10.3%' (the
    per cent only where the earlier value is positive: it means nothing otherwise)."""
    difference = b.value - a.value
    way = "up" if difference > 0 else "down"
    text = f"{way} {_size(abs(difference), a.unit)}"
    if a.unit != "percent" and a.value > 0:
        text += f", or {100 * abs(difference) / a.value:,.1f}%"
    return text


def _signed(a: Point, b: Point) -> str:
    """A change with its sign, for lists: '+15.8 percentage points', '-2.1%', '+0.12'."""
    difference = b.value - a.value
    if a.unit == "percent":
        return f"{difference:+,.1f} percentage points"
    if a.unit == "money" and a.value > 0:
        return f"{100 * difference / a.value:+,.1f}%"
    return ("+" if difference >= 0 else "-") + _size(abs(difference), a.unit)


def _plain(number: Decimal, unit: str, *, signed: bool = False) -> str:
    sign = "+" if signed else ""
    if unit == "money":
        return f"{number / _MILLION:{sign},.0f} M"
    return f"{number:{sign},.4f}".rstrip("0").rstrip(".")


def _plain_value(p: Point) -> str:
    return f"{p.company} {_plain(p.value, p.unit)}"


def _difference_sum(a: Point, b: Point) -> str:
    """'46.2065 - 43.3100 = 2.8965' (money in millions)."""
    return (
        f"{_plain(b.value, b.unit)} - {_plain(a.value, a.unit)} = "
        f"{_plain(b.value - a.value, a.unit)}"
    )
