"""Numbers from the facts store in the words of an answer: amounts as filings print them
(money in millions, exact), rates to the precision asked, periods with their dates."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import TYPE_CHECKING

from finrag.facts.dictionary import metric
from finrag.facts.kpi import kpi

if TYPE_CHECKING:  # for annotations only
    from finrag.answer.figure import Figure
    from finrag.answer.question_plan import Measure, QuestionPlan

_MONTHS_WORDS = {3: "three months", 6: "six months", 9: "nine months", 12: "year"}
_SUFFIXES = re.compile(
    r"(?:,?\s+(?:inc|incorporated|co|corp|corporation|company|ltd|limited|plc|llc|n\.?v|"
    r"s\.?a|ag)\.?)+$",
    re.I,
)
_SCALES = {"thousands": (Decimal(1_000), "thousand"), "billions": (Decimal(10**9), "billion")}
_MILLION = Decimal(1_000_000)


def amount_words(f: Figure, plan: QuestionPlan) -> str:
    """'$1,577 million', '46.2%', '1.07', '93.86 days', '$6.08'."""
    value, unit = f.value, f.unit
    if unit == "percent":
        return f"{_fixed(value, plan.decimals if plan.decimals is not None else 1)}%"
    if unit in ("ratio", "times"):
        # Two decimals, three below one: a ratio of 0.092 is not "0.09".
        default = 2 if abs(value) >= 1 else 3
        text = _fixed(value, plan.decimals if plan.decimals is not None else default)
        return f"{text}x" if unit == "times" else text
    if unit == "days":
        return f"{_fixed(value, plan.decimals if plan.decimals is not None else 1)} days"
    if unit == "per_share":
        return _money(f.currency, f"{value:,.2f}" if value == round(value, 2) else f"{value:,}")
    if unit == "shares":
        return f"{_millions(value)} shares"
    in_millions = f"{_money(f.currency, _millions(value))} million"
    if plan.scale in _SCALES:
        divisor, word = _SCALES[plan.scale]
        decimals = plan.decimals if plan.decimals is not None else 2
        return f"{_money(f.currency, _fixed(value / divisor, decimals))} {word} ({in_millions})"
    return in_millions


def change_words(f: Figure, difference: Decimal, percent: float | None, plan: QuestionPlan) -> str:
    """'up 30.8% ($37,332 million)', 'down 2.2 percentage points'."""
    if percent is None:  # a rate: the change is in its own unit
        direction = "up" if difference > 0 else "down" if difference < 0 else "unchanged"
        size = abs(Decimal(str(difference)))
        if f.unit == "percent":
            decimals = plan.decimals if plan.decimals is not None else 1
            amount = f"{_fixed(size, decimals)} percentage points"
        elif f.unit == "days":
            amount = f"{_fixed(size, 1)} days"
        else:
            amount = _fixed(size, plan.decimals if plan.decimals is not None else 2)
        return direction if direction == "unchanged" else f"{direction} {amount}"
    direction = "up" if percent > 0 else "down" if percent < 0 else "unchanged"
    size = _fixed(Decimal(str(abs(percent))), plan.decimals if plan.decimals is not None else 1)
    if f.unit == "money":
        amount = f"{_money(f.currency, _millions(abs(difference) * _MILLION))} million"
        return f"{direction} {size}% ({amount})"
    return f"{direction} {size}%"


def period_words(f: Figure) -> str:
    """'in FY2018 (the year ended December 31, 2018)', 'at the end of FY2023 (...)'."""
    name = f.period.label
    if f.measure.kind != "metric" or len(f.inputs) != 1:
        return f"in {name}"
    fact = f.inputs[0].fact
    if fact.period_end is None or not f.dated:
        return f"at the end of {name}" if fact.instant else f"in {name}"
    end = f"{fact.period_end:%B} {fact.period_end.day}, {fact.period_end.year}"
    if fact.instant:
        return f"at the end of {name} ({end})"
    return f"in {name} (the {_MONTHS_WORDS.get(fact.months or 0, 'period')} ended {end})"


def measure_words(measure: Measure) -> str:
    display = measure.words if measure.kind == "formula" else _display(measure)
    return display[0].lower() + display[1:] if display[1:2].islower() else display


def _display(measure: Measure) -> str:
    return metric(measure.name).display if measure.kind == "metric" else kpi(measure.name).display


def short_name(name: str) -> str:
    """'Best Buy Co., Inc.' -> 'Best Buy'."""
    return _SUFFIXES.sub("", name).strip() or name


def _fixed(value: Decimal, decimals: int) -> str:
    return f"{Decimal(value):,.{decimals}f}"


def _millions(amount: Decimal) -> str:
    # Exact, never rounded: a filing in thousands keeps its last digits.
    scaled = Decimal(amount) / _MILLION
    text = f"{scaled:,f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _money(currency: str | None, amount: str) -> str:
    sign, digits = ("-", amount[1:]) if amount.startswith("-") else ("", amount)
    if currency in (None, "USD"):
        return f"{sign}${digits}"
    return f"{sign}{currency} {digits}"
