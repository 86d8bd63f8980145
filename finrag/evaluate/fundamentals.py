"""Fundamentals-based generation questions: "Did Apple's revenue rise from FY2023 to
FY2024?", their gold yes/no and values taken from the filings' own statements (the facts
store), in the dataset format `finrag eval answers` reads and scores.

The seeds' second evaluation method judges a generated answer against the company's
fundamentals, where the first (finrag.market.questions) judges it against the share
price, a gold no filing can reach. Here the gold is a pair of stored facts:

- one line item (revenue, net income, diluted EPS, operating income, operating cash
  flow) of one company, for two consecutive fiscal years, or the same fiscal quarter of
  two consecutive years (three-month figures), across every filing the store holds;
- **both facts verified** (they passed one of the filing's own arithmetic cross-checks
  and failed none: finrag.facts.checks); a pair with an unverified fact is left out and
  counted, never used for gold;
- the question asks whether it rose or fell (alternating by a hash of its id, so that
  the gold is not always Yes); the gold answer is "Yes"/"No" followed by both values
  (the later first: the eval's numeric check reads the gold's first amount);
- equal values are left out: neither "rose" nor "fell" is then a fair question.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg

from finrag.answer.fact_words import short_name
from finrag.facts.dictionary import metric as find_metric
from finrag.facts.lookup import MetricValue, metric_values

QUESTION_TYPE = "fundamentals"
RULE = (
    "Yes when the later period's value (a verified stored fact) is above the earlier "
    "period's for 'rise', below it for 'fall'; No otherwise"
)
# What a person calls each line item in a question (general usage, not a dataset's).
METRICS = {
    "revenue": "revenue",
    "net_income": "net income",
    "eps_diluted": "diluted earnings per share",
    "operating_income": "operating income",
    "operating_cash_flow": "operating cash flow",
}
_MILLION = Decimal(1_000_000)


@dataclass
class FundamentalsSet:
    questions: list[dict[str, Any]] = field(default_factory=list)
    # Pairs left out, by reason ("unverified", "equal"): how much the rule kept back.
    skipped: dict[str, int] = field(default_factory=lambda: {"unverified": 0, "equal": 0})

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1

    def as_dict(self) -> dict[str, Any]:
        gold = [q["answer"].split(".")[0] for q in self.questions]
        return {
            "questions": len(self.questions),
            "yes": gold.count("Yes"),
            "no": gold.count("No"),
            "by_type": {
                t: sum(q["type"] == t for q in self.questions)
                for t in sorted({q["type"] for q in self.questions})
            },
            "skipped": self.skipped,
            "rule": RULE,
        }


def fundamentals_questions(
    conn: psycopg.Connection,
    *,
    companies: Sequence[tuple[int, str]] | None = None,
    metrics: Sequence[str] = tuple(METRICS),
    quarterly: bool = True,
) -> FundamentalsSet:
    """Every question the store's verified facts give, company by company (all the
    store's companies unless ``companies``: (id, name) pairs)."""
    found = FundamentalsSet()
    if companies is None:
        companies = conn.execute("SELECT id, name FROM companies ORDER BY name").fetchall()
    for company_id, name in companies:
        for metric_name in metrics:
            values = metric_values(conn, company_id, find_metric(metric_name))
            for earlier, later in _pairs(values, quarterly=quarterly):
                if not (earlier.fact.verified and later.fact.verified):
                    found.skip("unverified")
                elif earlier.value == later.value:
                    found.skip("equal")
                else:
                    found.questions.append(_question(name, metric_name, earlier, later))
    return found


def _pairs(values: list[MetricValue], *, quarterly: bool):
    """(earlier, later): consecutive fiscal years, and the same quarter a year apart."""
    years = {v.fact.fiscal_year: v for v in values if _annual(v)}
    for year in sorted(years):
        if year - 1 in years:
            yield years[year - 1], years[year]
    if not quarterly:
        return
    quarters = {
        (v.fact.fiscal_year, v.fact.fiscal_quarter): v
        for v in values
        if v.fact.months == 3
        and v.fact.fiscal_quarter
        and v.period.endswith(f"Q{v.fact.fiscal_quarter}")
    }
    for year, quarter in sorted(quarters):
        if (year - 1, quarter) in quarters:
            yield quarters[(year - 1, quarter)], quarters[(year, quarter)]


def _annual(value: MetricValue) -> bool:
    fact = value.fact
    return fact.months == 12 and not fact.instant and value.period == f"FY{fact.fiscal_year}"


def _question(company: str, metric_name: str, earlier: MetricValue, later: MetricValue) -> dict:
    who = short_name(company)
    quarterly = later.fact.fiscal_quarter is not None and later.fact.months == 3
    key = f"fund-{_slug(who)}-{metric_name}-{earlier.period}-{later.period}".replace(" ", "")
    direction = "rise" if zlib.crc32(key.encode()) % 2 == 0 else "fall"
    rose = later.value > earlier.value
    holds = rose if direction == "rise" else not rose
    words = METRICS.get(metric_name, find_metric(metric_name).display.lower())
    question = f"Did {who}'s {words} {direction} from {_period(earlier)} to {_period(later)}?"
    change = "up" if rose else "down"
    answer = (
        f"{'Yes' if holds else 'No'}. {who}'s {words} was {_amount(later)} in "
        f"{_period(later)}, {change} from {_amount(earlier)} in {_period(earlier)}."
    )
    return {
        "id": key,
        "question": question,
        "answer": answer,
        "type": f"{QUESTION_TYPE}-{'quarterly' if quarterly else 'annual'}",
        "company": company,
        "evidence": [_evidence(v) for v in (earlier, later)],
        "reasoning": f"{RULE}: {later.value} vs {earlier.value}",
        "rule": RULE,
        "gold_basis": "fundamentals: verified stored facts",
        "fundamentals": {
            "metric": metric_name,
            "direction": direction,
            "periods": [earlier.period, later.period],
            "values": [str(earlier.value), str(later.value)],
            "fact_ids": [earlier.fact.id, later.fact.id],
            "verified": True,
        },
    }


def _period(value: MetricValue) -> str:
    """'FY2024'; a quarter as 'Q3 FY2025'."""
    fact = value.fact
    if fact.fiscal_quarter is not None and fact.months == 3:
        return f"Q{fact.fiscal_quarter} FY{fact.fiscal_year}"
    return value.period


def _amount(value: MetricValue) -> str:
    """'$391,035 million', '-$2,222 million', '$6.08' (per share)."""
    number = value.value
    sign = "-" if number < 0 else ""
    if value.metric.unit == "money":
        millions = abs(number) / _MILLION
        text = f"{millions:,.0f}" if millions == millions.to_integral() else f"{millions:,.1f}"
        return f"{sign}${text} million"
    return f"{sign}${abs(number):,.2f}"


def _evidence(value: MetricValue) -> dict[str, Any]:
    fact = value.fact
    label = fact.label or fact.concept or value.metric.display
    return {
        "document": Path(fact.document).name,
        "page": fact.page,
        "text": f"{label}: {fact.printed}",
    }


def _slug(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum())
