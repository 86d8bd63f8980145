"""What a statement's own structure says a row is, where its label alone cannot.

One printed label names different line items at different filers. The rows around it and
the statement's arithmetic decide, never the company's name:

* A plain "Net income" / "Net loss" in a filing whose income statement also attributes
  part of its income to noncontrolling interests is consolidated net income, before that
  share (ASC 810's presentation), on the income statement and on the cash-flow statement
  that opens with it; the parent's share is the "attributable to" row.
* "Net loss attributable to <parent> common shareholders" below "... attributable to
  <parent> shareholders" (preferred dividends between them) is what is left for common
  shareholders; alone, the parent's net income.
* "Other income (expense), net" that takes operating income to pretax income on its own
  (pretax = operating + it) is the total of non-operating income; beside interest rows
  that the same subtraction leaves out, it is one component.
* "Total shareholders' equity" that, beside a noncontrolling interest, is all of total
  liabilities and equity less total liabilities includes that interest: total equity.
* "Total costs and expenses" that does not take revenue to operating income, in a
  statement that prints selling, general and administrative or research costs after it,
  is the cost of revenue, not every cost.
* A bare "Property, plant and equipment" on a balance sheet that prints no accumulated
  depreciation and no net line beside it is the net amount (Pfizer's), the only one a
  balance sheet carries; with accumulated depreciation below it, it is the gross cost
  (Verizon's), which the dictionary leaves unread.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from decimal import Decimal
from functools import lru_cache
from typing import Protocol

from finrag.facts import model
from finrag.facts.dictionary import Metric, label_key, match_label, metric

_ATTRIBUTED = re.compile(r"\b(?:attributable|available|applicable|allocable|allocated)\b")
_COMMON = re.compile(r"\bcommon\b")
_OPERATING_COSTS = {
    "selling_general_administrative",
    "general_and_administrative",
    "research_and_development",
    "operating_expenses",
}


class Row(Protocol):
    """What the structure needs of a table fact (a Fact or a stored one)."""

    source: str
    label: str | None
    statement: str
    unit: str | None
    value: Decimal | None

    @property
    def parents(self) -> Sequence[str]: ...


def readings(
    rows: Sequence[Row],
    *,
    table: Callable[[Row], Hashable],
    filing: Callable[[Row], Hashable],
) -> dict[int, Metric | None]:
    """Of ``rows`` (table facts; other facts are passed over), those whose structure
    overrides the metric their label reads as, by index: the metric, or None where the
    row is no metric of the dictionary. ``table``: one statement's column (its filing,
    statement, page and period); ``filing``: the document."""
    labelled = [_label_metric(row) for row in rows]
    with_noncontrolling = {
        filing(row)
        for row, found in zip(rows, labelled, strict=True)
        if found is not None
        and found.name == "net_income_noncontrolling"
        and row.statement == model.INCOME
    }
    columns: dict[Hashable, dict[str, Decimal]] = defaultdict(dict)
    to_parent: dict[Hashable, set[bool]] = defaultdict(set)  # "common" in the label or not
    for row, found in zip(rows, labelled, strict=True):
        if found is None or row.value is None:
            continue
        if row.statement in (model.INCOME, model.BALANCE):
            columns[table(row)].setdefault(found.name, row.value)
        if row.statement == model.INCOME:
            key = label_key(row.label or "")
            if found.name == "net_income" and _ATTRIBUTED.search(key):
                to_parent[table(row)].add(bool(_COMMON.search(key)))
    out: dict[int, Metric | None] = {}
    depreciated = {  # balance-sheet columns that print the gross cost's parts or the net
        table(row)
        for row, found in zip(rows, labelled, strict=True)
        if row.statement == model.BALANCE
        and found is not None
        and found.name in ("accumulated_depreciation", "ppe_net")
    }
    for i, (row, found) in enumerate(zip(rows, labelled, strict=True)):
        if (
            found is None
            and row.source == "table"
            and row.value is not None
            and row.statement == model.BALANCE
            and _BARE_PPE.fullmatch(label_key(row.label or ""))
            and table(row) not in depreciated
        ):
            out[i] = metric("ppe_net")
            continue
        if found is None or row.value is None:
            continue
        if found.name == "net_income":
            consolidated = filing(row) in with_noncontrolling and row.statement in (
                model.INCOME,
                model.CASH_FLOW,
            )
            key = label_key(row.label or "")
            if consolidated and not _ATTRIBUTED.search(key):
                out[i] = metric("net_income_including_noncontrolling")
            elif _COMMON.search(key) and to_parent[table(row)] == {True, False}:
                out[i] = metric("net_income_to_common")
        elif found.name == "other_income" and row.statement == model.INCOME:
            column = columns[table(row)]
            operating, pretax = column.get("operating_income"), column.get("pretax_income")
            if operating is not None and pretax is not None and operating + row.value == pretax:
                out[i] = metric("nonoperating_income")
        elif found.name == "costs_and_expenses" and row.statement == model.INCOME:
            column = columns[table(row)]
            revenue, operating = column.get("revenue"), column.get("operating_income")
            if (
                revenue is not None
                and operating is not None
                and column.keys() & _OPERATING_COSTS
                and abs(revenue) - abs(row.value) != operating
            ):
                out[i] = None if "cost_of_revenue" in column else metric("cost_of_revenue")
        elif found.name == "stockholders_equity" and row.statement == model.BALANCE:
            column = columns[table(row)]
            both = column.get("liabilities_and_equity"), column.get("total_liabilities")
            if (
                column.get("noncontrolling_interests")
                and "total_equity" not in column
                and None not in both
                and both[0] - both[1] == row.value
            ):
                out[i] = metric("total_equity")
    return out


_BARE_PPE = re.compile(r"property(?: plant)? and equipment")


def _label_metric(row: Row) -> Metric | None:
    if row.source != "table" or not row.label:
        return None
    return _matched(row.label, row.statement, tuple(row.parents), row.unit)


# A store's statements repeat the same rows period after period; the dictionary is fixed.
@lru_cache(maxsize=65536)
def _matched(
    label: str, statement: str, parents: tuple[str, ...], unit: str | None
) -> Metric | None:
    return match_label(label, statement, parents=parents, unit=unit)
