"""Evidence recall: did the answer show the passage the gold answer rests on?

A question's gold evidence is *covered* when at least ``THRESHOLD`` (0.5) of its content
tokens appear among the tokens of what the answer shows, counted with multiplicity
(token recall; the best of its gold passages when it has several). Two things an answer
can show, reported apart:

- ``quotes``: the quotes it prints (``evidence: [{document, page, quote}]`` when the
  answer carries them; before that, each citation's quote);
- ``passages``: the whole text of the passages it cites (looser: a chunk holds far more
  than the sentence that answers).

Token recall asks a few quoted sentences to hold half of the gold passage. That suits a
gold quote of a sentence or two (finrag's own reading set); FinanceBench's gold evidence
is a page's worth of text (a median of about 180 words), which three short quotes cannot
cover however right they are. So a second figure asks the other way round: is a printed
quote *drawn from* the gold passage (``from_gold``: at least ``FROM_GOLD`` of a quote's
tokens, of a quote with ``MIN_QUOTE_TOKENS`` or more, are in one gold passage). Both are
reported; neither replaces the other.

Tokens: lower-cased words and numbers ("$11,040 million" -> "11040", "million"), table
pipes and punctuation dropped, and English function words left out so that a long
passage does not cover a quote by its "the"s and "of"s.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

THRESHOLD = 0.5
FROM_GOLD = 0.8
MIN_QUOTE_TOKENS = 6  # a shorter quote ("Net income 2022 1,386") matches too easily

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_TOKEN = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
_FUNCTION_WORDS = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be been by for from had has have in is it its of on or our that "
        "the their this to was were which with we",
    )
)


def tokens(text: str) -> list[str]:
    text = _THOUSANDS.sub("", text.lower())
    return [t for t in _TOKEN.findall(text) if t not in _FUNCTION_WORDS]


def token_recall(gold: str, shown: Iterable[str]) -> float | None:
    """Share of ``gold``'s tokens found among ``shown``'s; None when gold has none."""
    want = Counter(tokens(gold))
    if not want:
        return None
    have = Counter(t for text in shown for t in tokens(text))
    return sum(min(n, have[t]) for t, n in want.items()) / sum(want.values())


def best_recall(golds: Sequence[str], shown: Sequence[str]) -> float | None:
    """The best recall over the gold passages that have text; None when none has."""
    scores = [r for g in golds if (r := token_recall(g, shown)) is not None]
    return round(max(scores), 4) if scores else None


def quote_precision(gold: str, quote: str) -> float | None:
    """Share of ``quote``'s tokens found in ``gold``; None when the quote is too short."""
    have = Counter(tokens(quote))
    n = sum(have.values())
    if n < MIN_QUOTE_TOKENS:
        return None
    want = Counter(tokens(gold))
    return sum(min(k, want[t]) for t, k in have.items()) / n


def from_gold(golds: Sequence[str], shown: Sequence[str]) -> bool | None:
    """Whether a shown quote is drawn from a gold passage; None when no gold has text."""
    if not any(tokens(g) for g in golds):
        return None
    return any(
        (p := quote_precision(g, q)) is not None and p >= FROM_GOLD for g in golds for q in shown
    )


def covered(recall: float | None) -> bool | None:
    return None if recall is None else recall >= THRESHOLD


def printed_quotes(answer: Any) -> tuple[list[str], str | None]:
    """The quotes an answer prints, and where they were read: its ``evidence`` list when
    it has one, else its citations' quotes."""
    evidence = getattr(answer, "evidence", None) or []
    quotes = [_field(e, "quote") for e in evidence]
    if any(quotes):
        return [q for q in quotes if q], "evidence"
    quotes = [c.quote for c in answer.citations if c.quote]
    return quotes, "citations" if quotes else None


def cited_passages(answer: Any) -> list[str]:
    """The full text of each passage the answer cites (its quote when the passage is not
    among the answer's excerpts)."""
    by_n = {c.n: c.hit.content for c in getattr(answer, "chunks", [])}
    return [by_n.get(c.n, c.quote) for c in answer.citations]


def _field(item: Any, name: str) -> str:
    value = item.get(name) if isinstance(item, dict) else getattr(item, name, "")
    return str(value or "")
