"""The seeds' generation check: yes/no "did COMPANY perform well in Qn YEAR" questions
whose gold answer comes from market data, in the dataset format `finrag eval answers`
reads (finrag/evaluate/dataset.py). **Price-based**: the gold is the share price, which no
filing states; the fundamentals-based questions (finrag.evaluate.fundamentals) are the
ones whose gold the filings hold.

The rule: "Yes" when the closing price rose from the period's first trading day to its
last (price change > 0), "No" otherwise.
"""

from __future__ import annotations

from typing import Any

from finrag.market.summary import MarketSummary

RULE = (
    "Yes when the closing price rose from the period's first trading day to its last "
    "(price change > 0), No otherwise"
)
QUESTION_TYPE = "market-performance"
GOLD_BASIS = "price-based: the share price, not the filings"


def performance_question(summary: MarketSummary) -> dict[str, Any]:
    """One dataset line for ``summary``'s company and period."""
    who = summary.company or summary.ticker
    period = summary.period
    answer = "Yes" if summary.change_pct > 0 else "No"
    return {
        "id": f"market-{summary.ticker}-{period.key}",
        "question": f"Did {who} perform well in {period.label}?",
        "answer": answer,
        "type": QUESTION_TYPE,
        "company": who,
        "evidence": [],
        "reasoning": (
            f"{RULE}: {summary.ticker} closed at {summary.first.close:g} on "
            f"{summary.first.day} and {summary.last.close:g} on {summary.last.day} "
            f"({summary.change_pct:+.2f}%)"
        ),
        "rule": RULE,
        "gold_basis": GOLD_BASIS,
        "market": {
            "ticker": summary.ticker,
            "period": period.as_dict(),
            "price_change_pct": round(summary.change_pct, 4),
            "source": summary.source,
            "from_cache": summary.from_cache,
        },
    }
