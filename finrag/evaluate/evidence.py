"""Evidence recall: did the answer show the passage the gold answer rests on?

A question's gold evidence is *covered* when at least ``THRESHOLD`` (0.5) of its content
tokens appear among the tokens of what the answer shows, counted with multiplicity
(token recall; the best of its gold passages when it has several). Two things an answer
can show, reported apart:

- ``quotes``: the quotes it prints (``evidence: [{document, page, quote}]`` when the
  answer carries them; before that, each citation's quote);
- ``passages``: the whole text of the passages it cites (looser: a chunk holds far more
  than the sentence that answers).

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
