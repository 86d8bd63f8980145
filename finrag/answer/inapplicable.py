"""A measure the company's statements cannot give: said so, when the question allows it.

A question about a bank's gross margin may itself allow that the measure does not apply
("say so if it is not a meaningful measure here"). A card issuer or a bank prints no cost
of sales and no gross profit: its gross margin does not exist, and the model, handed
excerpts about revenue, invents drivers for it. When the question itself allows the
measure not to apply, and every way of computing it needs a line item the store holds for
none of the company's periods while its statements are otherwise read (revenue or net
income are held), the answer says the measure does not apply to the company and why,
citing what its income statement does report.
"""

from __future__ import annotations

import re

import psycopg

from finrag.answer.figure import Company
from finrag.answer.formula_words import Measure
from finrag.facts.dictionary import metric as dictionary_metric
from finrag.facts.dictionary import metrics
from finrag.facts.kpi_definitions import find_kpi
from finrag.facts.kpi_formula import formula_names
from finrag.facts.lookup import metric_values

_ALLOWS = re.compile(
    r"\bif\b[^?]{0,80}\bnot\s+(?:a\s+|an\s+)?(?:very\s+)?(?:useful|relevant|meaningful|"
    r"appropriate|applicable|suitable)\b",
    re.I,
)
_SHOWN = ("revenue", "net_income")  # a statement read: one of these is held


def allows_inapplicable(question: str) -> bool:
    return bool(_ALLOWS.search(question))


def never_reported(conn: psycopg.Connection, company: Company, measure: Measure) -> list[str]:
    """The line items every formula of ``measure`` needs and the store holds for none of
    the company's periods ([] when some formula could be computed, or the measure is a
    line item itself, or the company's statements are not read at all)."""
    if measure.kind != "kpi" or not any(_held(conn, company, name) for name in _SHOWN):
        return []
    lacking: list[str] = []
    for formula in _formulas(measure.name):
        absent = [n for n in _metrics_of(formula) if not _held(conn, company, n)]
        if not absent:
            return []
        lacking += [n for n in absent if n not in lacking]
    return lacking


def _formulas(name: str) -> tuple[str, ...]:
    found = find_kpi(name)
    return found.formulas if found else ()


def _metrics_of(formula: str, depth: int = 0) -> list[str]:
    """The line items a formula rests on, a KPI it uses read through its first formula."""
    known = {m.name for m in metrics()}
    out: list[str] = []
    for name in formula_names(formula):
        if name in known:
            out.append(name)
        elif depth < 3 and (inner := _formulas(name)):
            out += _metrics_of(inner[0], depth + 1)
    return out


def _held(conn: psycopg.Connection, company: Company, name: str) -> bool:
    """Whether the store holds the line item for any period, read as every lookup reads
    it (its tags, its printed labels and its statement's structure)."""
    return bool(metric_values(conn, company.id, dictionary_metric(name)))


def explain(company_name: str, measure_words: str, lacking: list[str]) -> str:
    """The answer's words: the measure does not apply, and which lines are not printed."""
    lines = " or ".join(dictionary_metric(n).display.lower() for n in lacking)
    return (
        f"{measure_words} is not a useful metric for {company_name}: its financial "
        f"statements report no {lines} for any period the store holds, so the measure "
        "cannot be computed from them; its performance is reported through other lines."
    )
