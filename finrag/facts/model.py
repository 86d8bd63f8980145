"""A fact: one reported number with its concept or label, period, unit and provenance."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal

from finrag.facts.periods import Period

# Statement kinds, as stored.
INCOME = "income_statement"
BALANCE = "balance_sheet"
CASH_FLOW = "cash_flow"
EQUITY = "equity"
COMPREHENSIVE = "comprehensive_income"
SEGMENT = "segment"
OTHER_TABLE = "other_table"
TEXT = "text"
STATEMENT_KINDS = (INCOME, BALANCE, CASH_FLOW, EQUITY, COMPREHENSIVE, SEGMENT, OTHER_TABLE, TEXT)
PRIMARY_STATEMENTS = (INCOME, BALANCE, CASH_FLOW)


@dataclass(frozen=True)
class Fact:
    """One number as the filing reports it.

    ``value`` is in base units: scaled (millions -> units), sign applied, "—" as zero;
    None for a nil fact. Percentages printed with "%" are kept in percent points with
    unit "%"; XBRL's pure ratios (0.153 for 15.3 %) keep unit "pure".
    """

    value: Decimal | None
    unit: str | None  # "USD", "shares", "USD/shares", "%", "pure", or another currency code
    period: Period
    source: str  # "ixbrl" | "table"
    concept: str | None = None  # "us-gaap:Revenues" when tagged
    label: str | None = None  # the row label as printed ("Total net sales")
    dimensions: tuple[tuple[str, str], ...] = ()  # (axis, member); () is the entity total
    statement: str = OTHER_TABLE
    page: int | None = None
    chunk_ordinal: int | None = None  # which of the document's chunks prints it
    row: int | None = None  # table coordinates, data rows and value columns from 0
    column: int | None = None
    printed: str = ""  # the cell or element text as printed
    decimals: int | None = None  # XBRL precision; None for INF or untagged
    parents: tuple[str, ...] = field(default=())  # row labels above it ("Current assets:")
    # Cross-checks (finrag.facts.checks): those it passed, and "check: why" of those it
    # failed. Verified only when one passed and none failed.
    checks: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()

    @property
    def verified(self) -> bool:
        return bool(self.checks) and not self.failures

    @property
    def normalized_label(self) -> str | None:
        return normalize_label(self.label) if self.label else None


def normalize_label(label: str) -> str:
    """Lower case, footnote marks and punctuation dropped, whitespace single:
    'Purchases of property, plant and equipment (PP&E)(1)' ->
    'purchases of property plant and equipment pp&e'."""
    text = label.lower().replace("’", "'")
    text = re.sub(r"\(\s*(?:\d{1,2}|[a-z]|\*+)\s*\)", " ", text)  # (1) (a) (*) footnote marks
    text = re.sub(r"[^\w&%/' ]+", " ", text)
    return " ".join(text.replace("'", "").split())
