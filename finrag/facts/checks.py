"""Cross-checks before a fact is called verified: the filing's own arithmetic.

- ``subtotal``: a statement's totals are what their rows add up to (EDGAR's inline HTML
  ships no calculation linkbase, so the printed table is the calculation): down one
  column, a row equal to the sum of the rows just above it, or to the first of them
  less the rest (gross profit = revenue - cost of sales), passes with those rows; a row
  labelled "Total ..." that no rows above add up to fails.
- ``balance_identity``: total assets = total liabilities and equity at each balance
  sheet date (tags: Assets and LiabilitiesAndStockholdersEquity, or Liabilities plus
  equity; tables: the two "Total" rows).
- ``tag_cell``: the iXBRL tag and the table cell for the same line and period hold the
  same number (a row is the concept its other cells are tagged with), in the same fiscal
  year.

A fact that passes one and fails none is verified; one that fails is kept, unverified,
with the reason; one no check covers is unverified, and says so.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

from finrag.facts import model
from finrag.facts.model import Fact, normalize_label

SUBTOTAL = "subtotal"
IDENTITY = "balance_identity"
TAG_CELL = "tag_cell"
CHECKS = (SUBTOTAL, IDENTITY, TAG_CELL)
UNCHECKED = "no cross-check covers it"

_TOTAL_WORDS = ("total", "net cash", "net increase", "net decrease", "net change")
# Rows a statement computes from the rows above it: only these are checked as sums (any
# row would do by chance: total assets less every liability is the last equity line).
_SUBTOTAL_WORDS = (
    *_TOTAL_WORDS,
    "gross profit",
    "gross margin",
    "operating income",
    "operating loss",
    "operating profit",
    "income from operations",
    "loss from operations",
    "earnings from operations",
    "income before",
    "earnings before",
    "loss before",
    "income loss before",
    "net income",
    "net earnings",
    "net loss",
    "net revenue",
    "net sales",
    "comprehensive income",
    "increase",
    "decrease",
    "net increase decrease",
    "net decrease increase",
)
_CLOSING_CASH = re.compile(r"^cash\b.*\bend of (?:the )?(?:period|year|quarter)")
_EQUITY_TOTALS = (
    "us-gaap:StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest",
    "us-gaap:StockholdersEquity",
)
_MEZZANINE = (
    "us-gaap:TemporaryEquityCarryingAmountAttributableToParent",
    "us-gaap:RedeemableNoncontrollingInterestEquityCarryingAmount",
    "us-gaap:TemporaryEquityCarryingAmountIncludingPortionAttributableToNoncontrollingInterest",
)
_MAX_BLOCK = 30  # rows a subtotal may sum: a long "Total current liabilities" has ~12


@dataclass
class _Marks:
    passed: dict[int, set[str]]
    failed: dict[int, list[str]]

    def ok(self, check: str, indexes: Iterable[int]) -> None:
        for i in indexes:
            self.passed[i].add(check)

    def fail(self, check: str, i: int, why: str) -> None:
        self.failed[i].append(f"{check}: {why}")


def check_facts(facts: Sequence[Fact]) -> list[Fact]:
    """``facts`` (one filing's) with the checks each passed and failed."""
    marks = _Marks(defaultdict(set), defaultdict(list))
    pairs = _tag_cell(facts, marks)
    _subtotals(facts, marks)
    _identity(facts, marks)
    # A tag and the cell printing it are one number: what holds of one holds of both.
    for cell, tag in pairs:
        for check in (SUBTOTAL, IDENTITY):
            for a, b in ((cell, tag), (tag, cell)):
                if check in marks.passed[a]:
                    marks.passed[b].add(check)
                marks.failed[b] += [
                    f for f in marks.failed[a] if f.startswith(check) and f not in marks.failed[b]
                ]
    return [
        replace(f, checks=tuple(sorted(marks.passed[i])), failures=tuple(marks.failed[i]))
        for i, f in enumerate(facts)
    ]


def coverage_line(checks: dict) -> str:
    """'1,204 facts, 1,010 verified; subtotal 802 checked (3 failed), ...' of a
    finrag.facts.store.check_coverage record."""
    parts = [
        f"{c['check'].replace('_', ' ')} {c['covered']:,} checked ({c['failed']:,} failed)"
        for c in checks.get("checks", ())
    ]
    return f"{checks['facts']:,} facts, {checks['verified']:,} verified; " + ", ".join(parts)


def unverified_reason(checks: Sequence[str], failures: Sequence[str]) -> str | None:
    """Why a stored fact is not verified, in words; None when it is."""
    if failures:
        return "; ".join(failures)
    return None if checks else UNCHECKED


# ---- tag against cell -----------------------------------------------------------------


def _tag_cell(facts: Sequence[Fact], marks: _Marks) -> list[tuple[int, int]]:
    from finrag.facts.extract import same_period  # one definition of "same period"

    on_page: dict[int | None, list[int]] = defaultdict(list)
    by_concept: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(facts):
        if f.source == "ixbrl" and not f.dimensions and f.concept and f.value is not None:
            on_page[f.page].append(i)
            by_concept[f.concept].append(i)
    # A row is the concept its cells are tagged with; a "—" matches any zero tag, so
    # zeros name no row.
    row_concepts: dict[tuple, set[str]] = defaultdict(set)
    for f in facts:
        if f.source == "table" and f.concept and f.value:
            row_concepts[(f.chunk_ordinal, f.row)].add(f.concept)
    pairs = []
    for i, cell in enumerate(facts):
        if cell.source != "table" or not cell.value:
            continue
        agree = [
            j
            for j in on_page.get(cell.page, ())
            if same_period(cell, facts[j]) and _same_number(cell, facts[j])
        ]
        if not agree:
            concepts = row_concepts.get((cell.chunk_ordinal, cell.row), set())
            # Only where columns are periods: an equity statement's are its components
            # (retained earnings, noncontrolling interests), tagged by axis member.
            if len(concepts) == 1 and cell.statement in model.PRIMARY_STATEMENTS:
                concept = next(iter(concepts))
                same = [j for j in by_concept[concept] if same_period(cell, facts[j])]
                moved = [
                    j
                    for j in on_page.get(cell.page, ())
                    if facts[j].concept == concept and _same_number(cell, facts[j])
                ]
                if same:
                    tag = facts[same[0]]
                    marks.fail(
                        TAG_CELL,
                        i,
                        f"the table prints {cell.printed or cell.value} where the iXBRL tag "
                        f"{concept} for the same period says {tag.printed or tag.value}",
                    )
                elif moved:  # the number is right and its column's period is not
                    marks.fail(
                        TAG_CELL,
                        i,
                        f"the iXBRL tag {concept} with this number is for "
                        f"{_when(facts[moved[0]])}; the table reads it as {_when(cell)}",
                    )
            continue
        placed = [
            j for j in agree if None not in (cell.period.fiscal_year, facts[j].period.fiscal_year)
        ]
        apart = [j for j in placed if cell.period.fiscal_year != facts[j].period.fiscal_year]
        if apart:
            j = apart[0]
            why = (
                f"the table places it in FY{cell.period.fiscal_year}, the iXBRL tag in "
                f"FY{facts[j].period.fiscal_year}"
            )
            marks.fail(TAG_CELL, i, why)
            marks.fail(TAG_CELL, j, why)
            continue
        marks.ok(TAG_CELL, (i, *agree))
        pairs += [(i, j) for j in agree]
    return pairs


def _when(fact: Fact) -> str:
    p = fact.period
    if p.instant and p.end:
        return f"the balance at {p.end.isoformat()}"
    span = f"{p.months} months" if p.months else "a period"
    end = f" ended {p.end.isoformat()}" if p.end else ""
    return f"{span}{end}" + (f" (FY{p.fiscal_year})" if p.fiscal_year else "")


def _same_number(cell: Fact, tag: Fact) -> bool:
    """The tag holds the cell's number: as printed, as a ratio of its percentage, or with
    its sign turned (a payment tagged positive and printed in parentheses)."""
    from finrag.facts.extract import same_value

    if same_value(cell, tag):
        return True
    return (
        cell.unit != "%"
        and cell.value is not None
        and tag.value is not None
        and (abs(cell.value) == abs(tag.value))
    )


# ---- subtotals ------------------------------------------------------------------------


def _is_total(label: str | None) -> bool:
    return bool(label) and normalize_label(label).startswith(_TOTAL_WORDS)


def _is_subtotal(label: str | None) -> bool:
    if not label:
        return False
    text = normalize_label(label)
    return text.startswith(_SUBTOTAL_WORDS) or bool(_CLOSING_CASH.match(text))


def _subtotals(facts: Sequence[Fact], marks: _Marks) -> None:
    columns: dict[tuple, list[int]] = defaultdict(list)
    for i, f in enumerate(facts):
        if f.source == "table" and f.value is not None and f.row is not None and f.unit != "%":
            # A table cut into chunks under a repeated header is one table: its page's.
            # Units aside: a row can read as shares ("Common stock ... 217.9 million
            # shares issued", in dollars) and still be a line its total adds.
            per_share = "/" in (f.unit or "")
            columns[(f.page, f.statement, f.column, per_share)].append(i)
    for indexes in columns.values():
        indexes.sort(key=lambda i: (facts[i].chunk_ordinal or 0, facts[i].row or 0))
        stack: list[tuple[int, set[int]]] = []  # (fact, the facts it stands for)
        for i in indexes:
            value = facts[i].value
            assert value is not None
            found = None
            if _is_subtotal(facts[i].label):
                found = _block_for(value, [facts[k].value for k, _ in stack])
            if found is not None:
                block = stack[-found:]
                members = {i}
                for k, under in block:
                    members |= {k, *under}
                marks.ok(SUBTOTAL, members)
                del stack[-found:]
                stack.append((i, members - {i}))
                continue
            if (
                value
                and _is_total(facts[i].label)
                and len(stack) >= 2
                and facts[i].statement in model.PRIMARY_STATEMENTS
            ):
                marks.fail(SUBTOTAL, i, "the rows above it do not add up to it")
            stack.append((i, set()))


def _block_for(total: Decimal, above: Sequence[Decimal | None]) -> int | None:
    """How many of the last values of ``above`` make ``total``: their sum, or the first
    less the others; None when no run of two or more does."""
    running = Decimal(0)
    for k in range(1, min(len(above), _MAX_BLOCK) + 1):
        value = above[-k]
        if value is None:
            return None
        running += value
        if k < 2:
            continue
        block = above[-k:]
        step = _step([total, *block])
        if abs(total) < 10 * step:
            return None  # 21 = 22 - 1 by chance: too small a number to tell
        # Printed totals foot exactly; a long column may be off by its rounding unit.
        tolerance = step if k >= 4 else 0
        if any(abs(result - total) <= tolerance for result in _results(block, running)):
            while k < len(above) and above[-k - 1] == 0:
                k += 1  # "Preferred stock —" heads the rows its total adds
            return k
    return None


def _results(block: Sequence[Decimal], running: Decimal) -> Iterator[Decimal]:
    """What a statement computes from a block of rows: their sum; the first less the
    rest (gross profit = revenue - cost of sales); and for short blocks any signs after
    the first (net earnings = pretax income - tax + equity income)."""
    yield running
    yield 2 * block[0] - running
    if len(block) <= 4:
        for signs in itertools.product((1, -1), repeat=len(block) - 1):
            yield block[0] + sum(s * v for s, v in zip(signs, block[1:], strict=True))


def _step(values: Sequence[Decimal | None]) -> Decimal:
    """The rounding unit the values are printed to: the largest power of ten up to a
    million that divides them all."""
    step = Decimal(1_000_000)
    for v in values:
        if not v:
            continue
        while step > Decimal("0.01") and v % step:
            step /= 10
    return step


# ---- the balance sheet identity -------------------------------------------------------


def _identity(facts: Sequence[Fact], marks: _Marks) -> None:
    tags: dict[tuple, dict[str, int]] = defaultdict(dict)
    repeated: dict[tuple, list[int]] = defaultdict(list)
    for i, f in enumerate(facts):
        if f.source == "ixbrl" and f.period.instant and not f.dimensions and f.value is not None:
            tags[f.period.end].setdefault(f.concept or "", i)
            repeated[(f.period.end, f.concept, f.value)].append(i)
    for at in tags.values():
        _identity_of(facts, marks, at)
    # A balance tagged twice (the balance sheet and a note) is one number: checked once.
    for same in repeated.values():
        first = same[0]
        for i in same[1:]:
            marks.passed[i] |= marks.passed[first] & {IDENTITY}
            marks.failed[i] += [f for f in marks.failed[first] if f.startswith(IDENTITY)]
    tables: dict[tuple, dict[str, int]] = defaultdict(dict)
    for i, f in enumerate(facts):
        if f.source != "table" or f.statement != model.BALANCE or f.value is None or not f.label:
            continue
        label = normalize_label(f.label)
        key = (f.period.end, f.period.fiscal_year, f.column, tuple(f.dimensions))
        if label == "total assets":
            tables[key].setdefault("us-gaap:Assets", i)
        elif label.startswith("total liabilities and") and (
            "equity" in label or "deficit" in label
        ):
            tables[key].setdefault("us-gaap:LiabilitiesAndStockholdersEquity", i)
    for at in tables.values():
        _identity_of(facts, marks, at)


def _identity_of(facts: Sequence[Fact], marks: _Marks, at: dict[str, int]) -> None:
    assets = at.get("us-gaap:Assets")
    if assets is None:
        return
    total = facts[assets].value
    both = at.get("us-gaap:LiabilitiesAndStockholdersEquity")
    if both is not None:
        other = facts[both].value
        assert total is not None and other is not None
        if abs(total - other) <= _step([total, other]):
            marks.ok(IDENTITY, (assets, both))
        else:
            why = (
                f"total assets {facts[assets].printed} but liabilities and equity "
                f"{facts[both].printed}"
            )
            marks.fail(IDENTITY, assets, why)
            marks.fail(IDENTITY, both, why)
            return
    liabilities = at.get("us-gaap:Liabilities")
    if liabilities is None:
        return
    mezzanine = [at[c] for c in _MEZZANINE if c in at]
    for concept in _EQUITY_TOTALS:
        if concept not in at:
            continue
        parts = [liabilities, at[concept], *mezzanine]
        summed = sum((facts[k].value or Decimal(0)) for k in parts)
        if total is not None and abs(summed - total) <= _step([total]) * len(parts):
            marks.ok(IDENTITY, (assets, *parts))
            return
