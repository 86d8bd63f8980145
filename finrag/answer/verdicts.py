"""Yes/no judgements the figures decide, by a rule the answer states.

"Is X capital intensive?", "Is its liquidity healthy by the quick ratio?", "Are its gross
margins consistent?" ask for a verdict on computed figures. The small model, handed the
figures and some excerpts, says "capital-intensive" of a 5 % capex ratio; so where a
standard analyst's rule of thumb exists, the verdict is the rule's, written out with its
threshold, and the figures stay cited facts and calculations. A judgement no rule covers
keeps the mixed route's reading of the excerpts.

The thresholds are textbook conventions, not fitted to any question set:
- liquidity: a quick or current ratio of at least 1.0 means the assets counted cover the
  current liabilities (below 1.0 the company relies on further cash flow or financing);
- capital intensity: capital expenditure above 10 % of revenue, or total assets above
  twice revenue (an asset turnover below 0.5), the levels of telecoms, utilities, energy
  and heavy manufacturing;
- existence: a flow the statement reports above zero for the period ("did it pay
  dividends?") is a Yes, one printed as zero a No; one not reported at all is left to
  the excerpts;
- consistency: a rate that moves by no more than the band the question sets (2
  percentage points a year when it sets none) between consecutive fiscal years.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from decimal import Decimal

from finrag.answer.formula_words import Measure
from finrag.facts.dictionary import metric

_LIQUIDITY = re.compile(r"\b(?:healthy|strong|sound|reasonabl\w*|adequate|good)\b")
# "Did it pay dividends / buy back shares / issue debt in 2023?": a flow reported as
# more than zero is the Yes; one printed as zero (a dash) is the No.
_EXISTS = re.compile(
    r"^(?:did|does|do|has|have|had)\b.{0,60}\b(?:pa(?:y|id)|repurchas\w*|buy\s+back|"
    r"bought\s+back|issu\w*|record\w*|incur\w*|spen[dt]|invest\w*|declar\w*|receiv\w*|"
    r"make|made|return\w*)\b"
)
_INTENSIVE = re.compile(r"\bcapital intensive\b|\bcapital intensity\b")
_CONSISTENT = re.compile(r"\b(?:consistent|stable|steady|fluctuat\w*|volatil\w*)\b")
# "Did its margins fluctuate more than 2%?" asks the opposite of "were they stable?":
# unless the question also asks for consistency, the Yes is for moving outside the band.
_STEADY = re.compile(r"\b(?:consistent|stable|steady)\b")
# "(not fluctuating more than roughly 2% each year)": the band a question sets.
_BAND = re.compile(
    r"\b(?:more than|over|above|beyond|exceed\w*|within|by)\s+(?:about |around |roughly |"
    r"approximately |~)?(\d+(?:\.\d+)?)\s*(?:%|percent|per cent|percentage points?|pp)"
)

ASSETS_TO_REVENUE = Measure(
    "formula", "defined", "total assets to revenue", "total_assets / revenue", "times"
)
DEFAULT_BAND = Decimal(2)


@dataclass(frozen=True)
class Rule:
    name: str  # "liquidity", "capital_intensity", "consistency"
    extra: tuple[Measure, ...] = ()  # measures the rule reads beside the asked one
    series: bool = False  # reads consecutive fiscal years, not one
    band: Decimal = DEFAULT_BAND
    asked: bool = False  # the band is the question's own
    volatility: bool = False  # Yes means it moved outside the band


@dataclass(frozen=True)
class Verdict:
    holds: bool
    because: str  # the rule and the figures that decide it, in words


def rule_for(key: str, measures: list[Measure]) -> Rule | None:
    """The rule deciding a judgement question (its normalised words), or None."""
    names = {m.name for m in measures}
    if _INTENSIVE.search(key) and "capex_to_revenue" in names:
        return Rule("capital_intensity", extra=(ASSETS_TO_REVENUE,))
    if _LIQUIDITY.search(key) and names & {"quick_ratio", "current_ratio"}:
        return Rule("liquidity")
    if _EXISTS.search(key) and len(measures) == 1 and _flow(measures[0]):
        return Rule("existence")
    if _CONSISTENT.search(key) and measures and all(m.unit == "percent" for m in measures):
        volatility = not _STEADY.search(key)
        if m := _BAND.search(key):
            band = Decimal(m[1])
            return Rule("consistency", series=True, band=band, asked=True, volatility=volatility)
        return Rule("consistency", series=True, volatility=volatility)
    return None


def _flow(measure: Measure) -> bool:
    """A line item of money over a period (a payment, a proceeds line), not a balance."""
    if measure.kind != "metric" or measure.unit != "money":
        return False
    found = metric(measure.name)
    return found is not None and found.period == "duration"


def decide(rule: Rule, values: dict[str, list[tuple[str, Decimal]]]) -> Verdict | None:
    """The verdict from each measure's values by period (oldest first), or None when the
    figures the rule reads are not all there."""
    if rule.name == "liquidity":
        name = "quick_ratio" if "quick_ratio" in values else "current_ratio"
        if not values.get(name):
            return None
        value = values[name][-1][1]
        words = name.replace("_", " ")
        holds = value >= 1
        # The rule's own numbers in words: the answer's figures are all stored or computed.
        side = "of one or more" if holds else "below one"
        return Verdict(
            holds,
            f"A {words} {side} means the assets it counts "
            f"{'cover' if holds else 'do not cover'} current liabilities.",
        )
    if rule.name == "capital_intensity":
        capex = values.get("capex_to_revenue")
        assets = values.get("defined")
        if not capex:
            return None
        capex_share = capex[-1][1]
        turnover = assets[-1][1] if assets else None
        holds = capex_share > 10 or (turnover is not None and turnover > 2)
        return Verdict(
            holds,
            "A business is commonly called capital intensive when capital expenditure "
            "exceeds about a tenth of revenue or total assets exceed about twice revenue.",
        )
    if rule.name == "existence":
        amounts = next(iter(values.values()), [])
        if not amounts:
            return None  # not reported at all: the excerpts may say why
        holds = amounts[-1][1] != 0
        return Verdict(
            holds,
            "The statement reports an amount for the period."
            if holds
            else "The statement reports none for the period.",
        )
    if rule.name == "consistency":
        series = next(iter(values.values()), [])
        if len(series) < 2:
            return None
        steps = consistency_steps(series)
        widest = max(abs(d) for _, _, d in steps)
        moves = "; ".join(f"{a} to {b}: {_signed(d)} points" for a, b, d in steps)
        within = widest <= rule.band
        band = "the band the question sets" if rule.asked else "a band of two points"
        return Verdict(
            within != rule.volatility,
            f"Year to year it moved by at most {_fixed(widest, 1)} percentage points "
            f"({moves}), {'within' if within else 'outside'} {band}.",
        )
    return None


def consistency_steps(series: list[tuple[str, Decimal]]) -> list[tuple[str, str, Decimal]]:
    """(from, to, change) between consecutive periods, of the rates as the answer states
    them (one decimal), so each step is the difference of two printed figures."""
    shown = [(label, round(value, 1)) for label, value in series]
    return [(a[0], b[0], b[1] - a[1]) for a, b in itertools.pairwise(shown)]


def _fixed(value: Decimal, places: int = 2) -> str:
    return f"{value:,.{places}f}"


def _signed(value: Decimal) -> str:
    return f"{'+' if value > 0 else '−' if value < 0 else '±'}{abs(value):.1f}"
