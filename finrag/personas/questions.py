"""A persona's own questions: what that reader asks of any company's filings, written
from general finance knowledge (never from an evaluation set), stored in the persona's
TOML file as ``[[questions]]`` tables and put to the store by ``finrag analyze``.

[[questions]]
angle = "leverage"                      # what the question looks at, for the synthesis
ask = "How did {company}'s debt to equity change from {prior} to {year}?"
measure = "debt_to_equity"              # optional: a KPI whose computed sign is read
reads = "change"                        # change: last period against the first; value: its sign
better = "down"                         # which direction this reader counts as good
positive_only = true                    # the sign is read only while every value is above
                                        # zero (debt to equity under a deficit is not "low")

A growth rate ("reads = value") is never read on a negative base: a loss that deepens
from -3.67 to -18.36 a share is +400% "growth".
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

from finrag.errors import FinragError

PLACEHOLDERS = {"company", "year", "prior"}
_KEYS = {"angle", "ask", "measure", "reads", "better", "positive_only"}
READS = ("change", "value")
BETTER = ("up", "down")


@dataclass(frozen=True)
class PersonaQuestion:
    angle: str
    ask: str  # a template: {company}, {year} (the latest fiscal year held), {prior}
    measure: str | None = None  # a KPI name from kpis.toml whose sign the finding reads
    reads: str = "change"
    better: str = "up"
    positive_only: bool = False

    def text(self, company: str, year: str, prior: str) -> str:
        return self.ask.format(company=company, year=year, prior=prior)

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"angle": self.angle, "ask": self.ask}
        if self.measure:
            data |= {"measure": self.measure, "reads": self.reads, "better": self.better}
            data["positive_only"] = self.positive_only
        return data


def parse_questions(raw: Any, where: str, known_kpis: set[str]) -> tuple[PersonaQuestion, ...]:
    """The ``[[questions]]`` tables of a persona file, checked: known keys only, an angle
    and a question with known placeholders, a measure that kpis.toml defines, and the
    reading and direction spelled as one of theirs (FinragError otherwise)."""
    if not isinstance(raw, list):
        raise FinragError(f"{where}: questions must be a list of [[questions]] tables")
    found = []
    for i, item in enumerate(raw, 1):
        here = f"{where}: question {i}"
        if not isinstance(item, dict):
            raise FinragError(f"{here} is not a table")
        if extra := item.keys() - _KEYS:
            raise FinragError(f"{here} has unknown key(s) {', '.join(sorted(extra))}")
        if not item.get("angle") or not item.get("ask"):
            raise FinragError(f"{here} needs an angle and an ask")
        names = {n for _, n, _, _ in string.Formatter().parse(item["ask"]) if n is not None}
        if unknown := names - PLACEHOLDERS:
            raise FinragError(
                f"{here}: unknown placeholder(s) {', '.join(sorted(unknown))}",
                hint=f"use {', '.join('{' + p + '}' for p in sorted(PLACEHOLDERS))}",
            )
        measure = item.get("measure")
        if measure is not None and measure not in known_kpis:
            raise FinragError(f"{here}: measure {measure!r} not in finrag/facts/kpis.toml")
        reads, better = item.get("reads", "change"), item.get("better", "up")
        if reads not in READS or better not in BETTER:
            raise FinragError(f"{here}: reads is one of {READS}, better one of {BETTER}")
        positive = item.get("positive_only", False)
        if not isinstance(positive, bool):
            raise FinragError(f"{here}: positive_only is true or false")
        found.append(PersonaQuestion(item["angle"], item["ask"], measure, reads, better, positive))
    return tuple(found)
