"""One line item of one company, period by period, through the metric dictionary.

For each period the best fact wins: one printed on the metric's own statement (capex
from the cash-flow statement, not an MD&A table), then a printed cell its iXBRL tag
confirms, then a tag, then a cell; then the dictionary's preferred label; then the
latest filing. The entity total only: segment and other dimensional facts never answer
for the company.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import psycopg

from finrag.facts.dictionary import Metric, match_label
from finrag.facts.statements import newest_first, period_key
from finrag.facts.store import StoredFact, query_facts


@dataclass(frozen=True)
class MetricValue:
    metric: Metric
    period: str  # "FY2018", "FY2024 Q2", "at 2023-07-29"
    value: Decimal  # in the metric's natural sign: capex printed (1,577) is 1,577
    fact: StoredFact

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric.name,
            "period": self.period,
            "value": str(self.value),
            "unit": self.fact.unit,
            "fiscal_year": self.fact.fiscal_year,
            "fiscal_quarter": self.fact.fiscal_quarter,
            "period_end": self.fact.period_end.isoformat() if self.fact.period_end else None,
            "months": self.fact.months,
            "instant": self.fact.instant,
            "statement": self.fact.statement,
            "source": self.fact.source,
            "label": self.fact.label,
            "concept": self.fact.concept,
            "printed": self.fact.printed,
            "document": self.fact.document,
            "page": self.fact.page,
            "fact_id": self.fact.id,
        }


def is_metric(fact: StoredFact, metric: Metric) -> bool:
    """Whether a stored fact reports ``metric``: by its tag, or by its printed row."""
    if fact.concept in metric.concepts and fact.source == "ixbrl":
        return True
    if fact.label is None:
        return False
    found = match_label(fact.label, fact.statement, parents=fact.parents, unit=fact.unit)
    return found is not None and found.name == metric.name


def metric_values(
    conn: psycopg.Connection,
    company_id: int,
    metric: Metric,
    *,
    fiscal_year: int | None = None,
    fiscal_quarter: int | None = None,
) -> list[MetricValue]:
    """The company's ``metric`` for each period the store holds, newest first."""
    candidates = query_facts(
        conn,
        company_id=company_id,
        concepts=metric.concepts,
        labels=metric.normalized_labels,
        fiscal_year=fiscal_year,
        fiscal_quarter=fiscal_quarter,
        entity_total=True,
    )
    # Printed labels the store's normalized key does not equal ("Total net sales" for
    # revenue) are matched row by row on the metric's own statements.
    seen = {f.id for f in candidates}
    candidates += [
        f
        for f in query_facts(
            conn,
            company_id=company_id,
            statements=metric.statements,
            fiscal_year=fiscal_year,
            fiscal_quarter=fiscal_quarter,
            entity_total=True,
        )
        if f.id not in seen
    ]
    wanted_instant = metric.period == "instant"
    best: dict[str, tuple[tuple, StoredFact]] = {}
    for fact in candidates:
        if fact.value is None or fact.instant != wanted_instant or not is_metric(fact, metric):
            continue
        key = period_key(fact)
        if key == "unknown":
            continue
        rank = _rank(fact, metric)
        if key not in best or rank < best[key][0]:
            best[key] = (rank, fact)
    values = [
        MetricValue(metric, key, metric.natural_value(fact.value), fact)
        for key, (_, fact) in best.items()
    ]
    return sorted(values, key=lambda v: newest_first(v.fact))


def _rank(fact: StoredFact, metric: Metric) -> tuple:
    on_statement = fact.statement in metric.statements
    confirmed = fact.source == "table" and fact.concept in metric.concepts
    source = 0 if confirmed else 1 if fact.source == "ixbrl" else 2
    label = metric.label_rank(fact.label) if fact.label else None
    return (not on_statement, source, label if label is not None else 99, -fact.document_id)
