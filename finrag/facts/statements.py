"""A company's statement as periods x line items, every value traceable to its page."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from finrag.facts import model
from finrag.facts.store import StoredFact, query_facts
from finrag.refs import document_fields, page_ref

STATEMENT_NAMES = {
    "income": model.INCOME,
    "balance": model.BALANCE,
    "cash": model.CASH_FLOW,
    "equity": model.EQUITY,
    "comprehensive": model.COMPREHENSIVE,
    "segment": model.SEGMENT,
}


def period_key(fact: StoredFact) -> str:
    """How a column names its period: FY2018, FY2024 Q2, at 2023-07-29, 6m to 2023-07-29."""
    if fact.instant:
        return f"at {fact.period_end}" if fact.period_end else f"end FY{fact.fiscal_year}"
    if fact.months == 12 and fact.fiscal_year:
        return f"FY{fact.fiscal_year}"
    if fact.months == 3 and fact.fiscal_year and fact.fiscal_quarter:
        return f"FY{fact.fiscal_year} Q{fact.fiscal_quarter}"
    if fact.months and fact.period_end:
        return f"{fact.months}m to {fact.period_end}"
    return "unknown"


_FLOWS = (model.INCOME, model.CASH_FLOW, model.COMPREHENSIVE)


def newest_first(fact: StoredFact) -> tuple:
    """A sort key: newest first; at one end date, the shortest period first (the quarter,
    then the half, then the year). A period known by its fiscal year alone sorts near
    that year's end."""
    end = fact.period_end.toordinal() if fact.period_end else (fact.fiscal_year or 0) * 366
    return (-end, fact.months or 0)


def _column_order(fact: StoredFact) -> tuple:
    """Flows before balances, each newest first."""
    return (fact.instant, *newest_first(fact))


@dataclass
class StatementRow:
    label: str
    parents: list[str]
    cells: dict[str, StoredFact] = field(default_factory=dict)

    @property
    def name(self) -> str:
        # "Products (Cost of sales)"; "Total net sales" names its section already.
        if not self.parents or self.parents[-1].lower() in self.label.lower():
            return self.label
        return f"{self.label} ({self.parents[-1]})"


@dataclass
class StatementView:
    company: str
    statement: str
    periods: list[str]
    rows: list[StatementRow]

    def as_dict(self) -> dict[str, Any]:
        return {
            "company": self.company,
            "statement": self.statement,
            "periods": self.periods,
            "rows": [
                {
                    "label": row.label,
                    "parents": row.parents,
                    "values": {period: _cell(fact) for period, fact in row.cells.items()},
                }
                for row in self.rows
            ],
        }


def _cell(fact: StoredFact) -> dict[str, Any]:
    return {
        "value": None if fact.value is None else str(fact.value),
        "unit": fact.unit,
        "printed": fact.printed,
        **document_fields(fact.document, fact.document_id),
        "page": fact.page,
        "ref": page_ref(fact.document, fact.page),
        "fact_id": fact.id,
    }


def statement_view(
    conn: psycopg.Connection,
    company_id: int,
    company: str,
    statement: str,
    *,
    fiscal_year: int | None = None,
    fiscal_quarter: int | None = None,
) -> StatementView:
    """The statement's line items by period, from the printed tables of every filing of
    the company; where filings repeat a figure, the latest filing's (restated) value."""
    facts = query_facts(
        conn,
        company_id=company_id,
        statements=[statement],
        fiscal_year=fiscal_year,
        fiscal_quarter=fiscal_quarter,
        entity_total=False,
    )
    return build_view(company, statement, [f for f in facts if f.source == "table"])


def build_view(company: str, statement: str, facts: Sequence[StoredFact]) -> StatementView:
    rows: dict[tuple[str, ...], StatementRow] = {}
    # Latest document first, so its value is the one kept when filings repeat a figure.
    for fact in sorted(facts, key=lambda f: (-f.document_id, f.page or 0, f.id)):
        qualified = any(axis == "column" for axis, _ in fact.dimensions)
        if fact.label is None or fact.value is None or qualified:
            continue
        key = (*fact.parents, fact.label)
        row = rows.setdefault(key, StatementRow(fact.label, list(fact.parents)))
        row.cells.setdefault(period_key(fact), fact)
    ordered = list(rows.values())  # as the latest filing prints them
    first: dict[str, StoredFact] = {}
    for row in ordered:
        for key, fact in row.cells.items():
            first.setdefault(key, fact)
    # A flow statement's columns are periods; its opening and closing balances (cash at
    # the start of the year) stay in the rows' cells, for --json, but make no columns.
    periods = [
        key
        for key, fact in sorted(first.items(), key=lambda item: _column_order(item[1]))
        if key != "unknown" and not (statement in _FLOWS and fact.instant)
    ]
    return StatementView(company, statement, periods, ordered)
