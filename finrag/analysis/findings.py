"""One answer as a finding of an analysis: its text with its markers in the analysis's
numbering, its sources, and, for a measure the facts store computed, the reading of its
sign (up, down or flat, and whether the reader counts that as good).

The sign is read only from figures the facts store and the calculator produced (the
facts or mixed route), never from what a model wrote: a disagreement built on it is a
rule applied to computed numbers, not an opinion.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from finrag.analysis.sources import Source, SourceList
from finrag.answer.result import Answer
from finrag.facts.charts import format_value
from finrag.facts.kpi import kpi

COMPUTED_ROUTES = ("facts", "mixed")
_FLAT = 1e-9


@dataclass(frozen=True)
class Reading:
    """The sign of a computed measure: its change over the periods asked, or its value."""

    measure: str  # KPI name: "debt_to_equity"
    display: str  # "Debt to equity"
    unit: str
    reads: str  # "change" or "value"
    points: tuple[tuple[str, float], ...]  # (period, value), oldest first
    direction: str  # "up", "down", "flat"
    favourable: bool | None  # None when flat

    @property
    def score(self) -> int:
        return 0 if self.favourable is None else (1 if self.favourable else -1)

    def words(self) -> str:
        """'debt to equity rose from 1.79 (FY2023) to 1.87 (FY2024)'; 'revenue growth
        (YoY) was 2.0% in FY2024'."""
        name = lower_first(self.display)
        shown = [(p, format_value(v, self.unit)) for p, v in self.points]
        if self.reads == "value":
            period, value = shown[-1]
            return f"{name} was {value} in {period}"
        verb = {"up": "rose", "down": "fell", "flat": "held"}[self.direction]
        (first_p, first_v), (last_p, last_v) = shown[0], shown[-1]
        return f"{name} {verb} from {first_v} ({first_p}) to {last_v} ({last_p})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "reads": self.reads,
            "points": [{"period": p, "value": v} for p, v in self.points],
            "direction": self.direction,
            "favourable": self.favourable,
            "words": self.words(),
        }


@dataclass
class Finding:
    """What one question found: the answer (or why there is none) and its sources."""

    question: str
    angle: str
    company: str
    text: str  # the answer in the analysis's numbering; the refusal's reason when refused
    route: str
    status: str
    refused: bool
    refusal: str | None
    sources: list[Source] = field(default_factory=list)
    # The closest passages when no answer was written (the model off, or nothing read as an
    # answer): shown as what to read, never as a finding.
    passages: list[Source] = field(default_factory=list)
    reading: Reading | None = None
    # Why a computed measure's sign was not read (a negative base or denominator).
    unread: str | None = None
    seconds: float = 0.0

    @property
    def found(self) -> bool:
        return not self.refused and bool(self.text)

    def as_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "angle": self.angle,
            "company": self.company,
            "answer": self.text,
            "found": self.found,
            "route": self.route,
            "status": self.status,
            "refusal": self.refusal,
            "citations": [s.as_dict() for s in self.sources],
            "passages": [s.as_dict() for s in self.passages],
            "reading": self.reading.as_dict() if self.reading else None,
            "unread": self.unread,
            "seconds": round(self.seconds, 2),
        }


def finding_from(
    answer: Answer,
    numbering: SourceList,
    *,
    angle: str,
    company: str,
    measure: str | None = None,
    reads: str = "change",
    better: str = "up",
    positive_only: bool = False,
) -> Finding:
    """``answer`` as a finding, its citations added to ``numbering``; with ``measure``, the
    sign of the computed figure read as ``better`` says is good."""
    local = {c.n: numbering.cite(c) for c in answer.citations}
    passages: list[Source] = []
    if answer.refused:
        text = answer.answer.split(" Closest excerpts:")[0]  # the passages are listed apart
        passages = [
            numbering.add(e["document"], e.get("page"), e["quote"]) for e in answer.evidence
        ]
        cited: list[Source] = []
    else:
        text = numbering.rewrite(answer.answer, local)
        cited = list(dict.fromkeys(local.values()))
    finding = Finding(
        question=answer.question,
        angle=angle,
        company=company,
        text=text,
        route=answer.route,
        status=answer.status,
        refused=answer.refused,
        refusal=answer.refusal,
        sources=cited,
        passages=passages,
        seconds=answer.timings.get("total", 0.0),
    )
    if measure and not answer.refused and answer.route in COMPUTED_ROUTES:
        finding.reading, finding.unread = read_sign(
            answer, measure, reads, better, positive_only=positive_only
        )
    return finding


def read_sign(
    answer: Answer, measure: str, reads: str, better: str, *, positive_only: bool = False
) -> tuple[Reading | None, str | None]:
    """The sign of ``measure`` in a computed answer: the last period against the first of
    its series (``change``), or the value itself (``value``, for a growth rate); None when
    the answer computed another measure or too few periods, or (with why) when the sign
    means nothing: a growth rate on a negative base, or with ``positive_only`` a value
    at or below zero (a ratio whose denominator went negative)."""
    definition = kpi(measure)
    name = lower_first(definition.display)
    points = _points(answer, measure, definition.display)
    if reads == "change":
        if len(points) < 2:
            return None, None
        amount = points[-1][1] - points[0][1]
    else:
        if not points:
            return None, None
        amount = points[-1][1]
        points = points[-1:]
        if (base := _negative_base(answer)) is not None:
            why = f"{name} is a growth rate over a negative value ({base:g}): no direction"
            return None, why
    if positive_only and any(v <= 0 for _, v in points):
        below = ", ".join(p for p, v in points if v <= 0)
        why = f"{name} is at or below zero in {below} (a negative denominator): no direction"
        return None, why
    direction = "flat" if abs(amount) < _FLAT else ("up" if amount > 0 else "down")
    favourable = None if direction == "flat" else (direction == better)
    reading = Reading(
        measure, definition.display, definition.unit, reads, tuple(points), direction, favourable
    )
    return reading, None


def lower_first(display: str) -> str:
    """'Debt to equity' -> 'debt to equity'; 'EPS growth' stays as it is."""
    if len(display) > 1 and display[1].isupper():
        return display
    return display[:1].lower() + display[1:]


def _negative_base(answer: Answer) -> float | None:
    """The first input at or below zero of the answer's computed value, if any; of a
    growth rate (percent_change(old, new)), its base only: a fall from +1.00 to -0.50 is
    a reading, a rise from -0.50 is not."""
    for calc in answer.calculations:
        if calc.result is None or calc.error or calc.description.startswith("change"):
            continue
        inputs = calc.inputs
        if calc.expression.startswith("percent_change(") and inputs:
            inputs = inputs[:1]
        for item in inputs:
            value = item.get("value")
            if value is not None and float(value) <= 0:
                return float(value)
        return None
    return None


def _points(answer: Answer, measure: str, display: str) -> list[tuple[str, float]]:
    """The (period, value) points the answer computed for ``measure``: its series when it
    has one for that measure, else the calculation of its one value."""
    reason = str(answer.retrieval.get("route_reason") or "")
    about = measure in reason.split() or f"of {measure}" in reason
    for series in answer.series:
        if series.get("measure", "").lower() == display.lower() or about:
            found = [(p["period"], float(p["value"])) for p in series.get("points", [])]
            found = [(p, v) for p, v in found if math.isfinite(v)]
            if found:
                return found
    if not about:
        return []
    for calc in answer.calculations:
        if calc.result is not None and not calc.error and not calc.description.startswith("change"):
            period = next(
                (w for w in calc.description.split(" = ")[0].split() if w.startswith("FY")), ""
            )
            return [(period, float(calc.result))]
    return []
