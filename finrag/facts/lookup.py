"""One line item of one company, period by period, through the metric dictionary.

For each period the best fact wins: one printed on the metric's own statement (capex
from the cash-flow statement, not an MD&A table), then a printed cell its iXBRL tag
confirms, then a tag, then a cell; then the dictionary's preferred label; then the
latest filing. The entity total only: segment and other dimensional facts never answer
for the company.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from pathlib import PurePath
from typing import Any

import psycopg

from finrag.facts.dictionary import Metric, match_label
from finrag.facts.dictionary import metric as find_metric
from finrag.facts.statements import newest_first, period_key
from finrag.facts.store import StoredFact, query_facts
from finrag.facts.structure import readings
from finrag.refs import document_fields, page_ref


@dataclass(frozen=True)
class MetricValue:
    metric: Metric
    period: str  # "FY2018", "FY2024 Q2", "at 2023-07-29"
    value: Decimal  # in the metric's natural sign: capex printed (1,577) is 1,577
    fact: StoredFact
    # Earlier filings' different values for the same period: what the latest restated.
    restated_from: tuple[StoredFact, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "verified": self.fact.verified,
            "unverified_reason": self.fact.unverified_reason,
            "restated_from": [
                {
                    "value": str(f.value),
                    "printed": f.printed,
                    **document_fields(f.document, f.document_id),
                    "page": f.page,
                    "ref": page_ref(f.document, f.page),
                    "fact_id": f.id,
                }
                for f in self.restated_from
            ],
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
            **document_fields(self.fact.document, self.fact.document_id),
            "page": self.fact.page,
            "ref": page_ref(self.fact.document, self.fact.page),
            "fact_id": self.fact.id,
        }


def is_metric(
    fact: StoredFact, metric: Metric, structure: Mapping[int, Metric | None] | None = None
) -> bool:
    """Whether a stored fact reports ``metric``: by its tag, or by its printed row, read
    by its statement's structure where that decides (``structure``: ``structure_of``)."""
    if fact.concept in metric.concepts and fact.source == "ixbrl":
        return True
    if structure is not None and fact.id in structure:
        found = structure[fact.id]
        return found is not None and found.name == metric.name
    if fact.label is None:
        return False
    return _row_metric(fact.label, fact.statement, tuple(fact.parents), fact.unit) == metric.name


def structure_of(facts: Sequence[StoredFact]) -> dict[int, Metric | None]:
    """By fact id, the rows their statement's structure reads as another metric than
    their label does (finrag.facts.structure): consolidated "Net income" beside an
    "attributable to noncontrolling interests" row, and the like."""
    found = readings(
        facts,
        table=lambda f: (f.document_id, f.statement, f.page, f.period_end, f.months, f.instant),
        filing=lambda f: f.document_id,
    )
    return {facts[i].id: reading for i, reading in found.items()}


# A KPI table matches the same printed rows against many metrics; the dictionary is fixed,
# so a row's metric is too.
@lru_cache(maxsize=65536)
def _row_metric(
    label: str, statement: str, parents: tuple[str, ...], unit: str | None
) -> str | None:
    found = match_label(label, statement, parents=parents, unit=unit)
    return found.name if found else None


@lru_cache(maxsize=65536)
def _label_rank(metric_name: str, label: str) -> float | None:
    return find_metric(metric_name).label_rank(label)


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
    structure = structure_of(candidates)
    best: dict[str, tuple[tuple, StoredFact]] = {}
    for fact in candidates:
        if fact.value is None or fact.instant != wanted_instant:
            continue
        if not is_metric(fact, metric, structure):
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
    # A fact tagged with the metric's own concept first: in an iXBRL filing the tag is the
    # filer's word, while a statement's title can be missed and a note's table (Tesla's
    # stock-based compensation by line: "Research and development 169") can read as one.
    own_tag = fact.concept in metric.concepts
    on_statement = fact.statement in metric.statements
    confirmed = fact.source == "table" and fact.concept in metric.concepts
    source = 0 if confirmed else 1 if fact.source == "ixbrl" else 2
    label = _label_rank(metric.name, fact.label) if fact.label else None
    return (
        not own_tag,
        not on_statement,
        source,
        label if label is not None else 99,
        # The latest filing first: a restatement replaces what an earlier filing said.
        -(fact.filed.toordinal() if fact.filed else 0),
        -fact.document_id,
    )


@dataclass(frozen=True)
class Period:
    """A fiscal year, or one fiscal quarter of it, on the company's own fiscal calendar."""

    fiscal_year: int
    fiscal_quarter: int | None = None  # None: the fiscal year

    @property
    def label(self) -> str:
        """'FY2018', 'FY2024 Q2'."""
        quarter = f" Q{self.fiscal_quarter}" if self.fiscal_quarter else ""
        return f"FY{self.fiscal_year}{quarter}"

    def previous_year(self) -> Period:
        """The same quarter (or the year) one fiscal year before."""
        return self.years_before(1)

    def years_before(self, years: int) -> Period:
        return Period(self.fiscal_year - years, self.fiscal_quarter)

    def opening(self) -> Period:
        """The period whose end is this period's start: its balances are the opening ones."""
        if self.fiscal_quarter is None:
            return Period(self.fiscal_year - 1)
        if self.fiscal_quarter == 1:
            return Period(self.fiscal_year - 1, 4)
        return Period(self.fiscal_year, self.fiscal_quarter - 1)


@dataclass(frozen=True)
class Unresolved:
    """Why a metric has no one value for a period."""

    metric: str
    period: str  # Period.label
    reason: str  # "missing" | "ambiguous"
    detail: str
    candidates: tuple[MetricValue, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "period": self.period,
            "reason": self.reason,
            "detail": self.detail,
            "candidates": [c.as_dict() for c in self.candidates],
        }


def resolve_metric(
    conn: psycopg.Connection, company_id: int, metric: Metric, period: Period
) -> MetricValue | Unresolved:
    """The one value of ``metric`` for ``period``: the quarter's three months or the full
    year, a balance at the period's end; Unresolved when the store has none, or when the
    preference order of ``metric_values`` cannot choose between two different values
    one filing prints on the metric's own statement."""
    return MetricResolver(conn, company_id, fiscal_year=period.fiscal_year).resolve(metric, period)


class MetricResolver:
    """Resolves metrics period by period for one company, reading each metric's facts
    once: a KPI table asks for the same line items in many periods."""

    def __init__(
        self, conn: psycopg.Connection, company_id: int, *, fiscal_year: int | None = None
    ) -> None:
        self.conn = conn
        self.company_id = company_id
        # Every fact carries its own period's fiscal year, comparative columns too (a
        # FY2019 10-K's FY2018 balance has fiscal_year 2018), so one year filters exactly.
        self.fiscal_year = fiscal_year
        self._facts: dict[str, list[tuple[tuple, StoredFact]]] = {}
        self._on_statements: dict[tuple[str, ...], list[StoredFact]] = {}

    def resolve(self, metric: Metric, period: Period) -> MetricValue | Unresolved:
        ranked = [(r, f) for r, f in self._metric_facts(metric) if self._is_period(f, period)]
        return self._pick(metric, period.label, ranked)

    def resolve_year_to_date(
        self, metric: Metric, fiscal_year: int, months: int
    ) -> MetricValue | Unresolved:
        """A flow over the first ``months`` of fiscal year ``fiscal_year`` (6 or 9: a
        10-Q's year-to-date column); 3 is the first quarter and 12 the year."""
        if months == 3:
            return self.resolve(metric, Period(fiscal_year, 1))
        if months == 12:
            return self.resolve(metric, Period(fiscal_year))
        ranked = [
            (r, f)
            for r, f in self._metric_facts(metric)
            if not f.instant and f.months == months and f.fiscal_year == fiscal_year
        ]
        return self._pick(metric, f"FY{fiscal_year} {months}M", ranked)

    def _pick(
        self, metric: Metric, label: str, ranked: list[tuple[tuple, StoredFact]]
    ) -> MetricValue | Unresolved:
        if not ranked:
            return Unresolved(
                metric.name,
                label,
                "missing",
                f"no {metric.name} for {label} in the store",
            )
        best_rank, best = min(ranked, key=lambda pair: pair[0])
        # Ties on everything but the fact itself, in the same filing: nothing says which
        # of the printed values is the line item. A later filing's restatement is no tie.
        tied = [f for r, f in ranked if r == best_rank]
        values = {metric.natural_value(f.value): f for f in tied}  # _read kept valued facts
        if len(values) > 1 and best.statement in metric.statements:
            candidates = tuple(
                MetricValue(metric, period_key(f), value, f) for value, f in values.items()
            )
            return Unresolved(
                metric.name, label, "ambiguous", _ambiguity(metric, label, candidates), candidates
            )
        assert best.value is not None
        value = metric.natural_value(best.value)
        if metric.name == "income_tax_expense" and value < 0 and self._subtracted(best):
            value = -value
        restated: dict[int, StoredFact] = {}
        for _, f in sorted(ranked, key=lambda pair: pair[0]):
            if (
                f.document_id != best.document_id
                and f.verified  # a cell that failed its checks restates nothing
                and f.months == best.months
                and f.statement == best.statement
                and (f.concept == best.concept or f.label == best.label)
                and metric.natural_value(f.value) != value
            ):
                restated.setdefault(f.document_id, f)
        return MetricValue(metric, period_key(best), value, best, tuple(restated.values()))

    def _subtracted(self, tax: StoredFact) -> bool:
        """Whether a negative tax cell is an expense printed as a subtraction: Corning's
        "Provision for income taxes (411)" under pretax income of 1,797 and above net
        income of 1,386. A benefit printed "(1,084)" in a "Provision for (benefit from)"
        row is added (pretax 4,177 + 1,084 = net income 5,261) and stays negative."""
        if tax.source != "table" or tax.value is None:
            return False
        same = [
            f
            for f in self._statement_facts(("income_statement",))
            if f.document_id == tax.document_id
            and f.table_row is not None
            and f.months == tax.months
            and (f.fiscal_year, f.fiscal_quarter) == (tax.fiscal_year, tax.fiscal_quarter)
            and f.value is not None
        ]

        # Where a row is printed: its chunk (a long statement is cut into parts), then its row.
        def place(f: StoredFact) -> tuple[int, int]:
            return (f.chunk_id or 0, f.table_row or 0)

        pretax = next((f for f in same if place(f) < place(tax) and _is(f, "pretax_income")), None)
        after = next(
            (
                f
                for f in sorted(same, key=place)
                if place(f) > place(tax)
                and (_is(f, "net_income_including_noncontrolling") or _is(f, "net_income"))
            ),
            None,
        )
        if pretax is None or after is None:
            return False
        tolerance = max(abs(after.value) * Decimal("0.002"), Decimal(1_000_000))
        return abs(pretax.value + tax.value - after.value) <= tolerance

    def ranked_facts(self, metric: Metric) -> list[tuple[tuple, StoredFact]]:
        """Every stored fact that reports ``metric``, with its preference rank (lower wins)."""
        return list(self._metric_facts(metric))

    def _metric_facts(self, metric: Metric) -> list[tuple[tuple, StoredFact]]:
        if metric.name not in self._facts:
            self._facts[metric.name] = [(_rank(f, metric), f) for f in self._read(metric)]
        return self._facts[metric.name]

    def _read(self, metric: Metric) -> list[StoredFact]:
        found = query_facts(
            self.conn,
            company_id=self.company_id,
            concepts=metric.concepts,
            labels=metric.normalized_labels,
            fiscal_year=self.fiscal_year,
            entity_total=True,
        )
        seen = {f.id for f in found}
        found += [f for f in self._statement_facts(metric.statements) if f.id not in seen]
        instant = metric.period == "instant"
        structure = structure_of(found)
        kept = [f for f in found if f.value is not None and f.instant == instant]
        # A line item comes from its statement, or from a cell tagged with its own concept;
        # a row of some other table that only reads like it (PepsiCo's "Restructuring
        # charges: —" in a note, 0) never answers for the company.
        kept = [
            f
            for f in kept
            if (f.statement in metric.statements or f.concept in metric.concepts)
            and is_metric(f, metric, structure)
        ]
        return kept

    def _statement_facts(self, statements: tuple[str, ...]) -> list[StoredFact]:
        """Every entity-total fact of these statements; metrics of one statement share it."""
        if statements not in self._on_statements:
            self._on_statements[statements] = query_facts(
                self.conn,
                company_id=self.company_id,
                statements=statements,
                fiscal_year=self.fiscal_year,
                entity_total=True,
            )
        return self._on_statements[statements]

    def _is_period(self, fact: StoredFact, period: Period) -> bool:
        year, quarter = period.fiscal_year, period.fiscal_quarter
        if not fact.instant:
            if quarter is None:
                return fact.months == 12 and fact.fiscal_year == year
            return fact.months == 3 and (fact.fiscal_year, fact.fiscal_quarter) == (year, quarter)
        # A balance is placed at ingest on the calendar its filing states (a retailer's
        # fiscal 2023 may end February 3, 2024): its stored fiscal year and quarter are
        # the only ones there are. A balance at a date that is no quarter end has none.
        if quarter is None and fact.period_end is None and fact.fiscal_quarter is None:
            # An annual statement's column headed by its fiscal year alone ("2018"): the
            # balance at that year's end.
            return fact.fiscal_year == year
        return (fact.fiscal_year, fact.fiscal_quarter) == (year, quarter or 4)


def _is(fact: StoredFact, metric_name: str) -> bool:
    return is_metric(fact, find_metric(metric_name))


def _ambiguity(metric: Metric, label: str, candidates: tuple[MetricValue, ...]) -> str:
    fact = candidates[0].fact
    where = f"the {fact.statement.replace('_', ' ')} of {PurePath(fact.document).stem}"
    printed = [f"{c.fact.printed or c.value} (p.{c.fact.page})" for c in candidates]
    values = ", ".join(printed[:-1]) + f" and {printed[-1]}"
    count = "two" if len(candidates) == 2 else str(len(candidates))
    return f"{count} values for {metric.name} {label} on {where}: {values}"
