"""The text route's guidance-revision stage: "by how much did X raise its guidance for Y?"
answered from the sentence that states the new figure beside the old one, without the
model.

Companies state a revised outlook in a fixed form: "we now expect organic revenue to
increase 8 percent (previously 6 percent) and core EPS to increase 9 percent
(previously 8 percent)". The revision is the difference of the two figures, so it is a
calculation, not a reading: the stage finds each "N (previously M)" pair in the
retrieved passages of the asked company, keeps the one whose words (the clause before
it) share most with the question's measure, and states the change in percentage points
(or in the figure's own unit) with the sentence quoted and cited. Anything else (no such
pair, no measure word in common) is left to the quotes and the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from finrag.answer.citations import hit_citation
from finrag.answer.fact_sources import calculate_outcome, number_text
from finrag.answer.result import Answer
from finrag.answer.stages import since
from finrag.ingest.sentences import split_sentences
from finrag.retrieve import SearchResult
from finrag.retrieve.context import ContextChunk
from finrag.retrieve.hybrid import Hit

DECIDED = "a revised figure beside the one it replaces"

_ASKS_OUTLOOK = re.compile(r"\b(?:guidance|outlook|forecast\w*|expect\w*|target\w*)\b", re.I)
_ASKS_AMOUNT = re.compile(
    r"\bhow\s+(?:much|many)\b|\bby\s+what\b|\bpercentage\s+points?\b|\bwhat\s+(?:was|is)\s+the\s+"
    r"(?:change|increase|decrease|revision)\b",
    re.I,
)
_ASKS_REVISION = re.compile(
    r"\b(?:rais\w*|lower\w*|increas\w*|cut|reduc\w*|revis\w*|chang\w*)", re.I
)
_FIGURE = r"(?P<{0}cur>\$)?(?P<{0}num>\d+(?:\.\d+)?)\s*(?P<{0}pct>percent\b|%)?"
# "9 percent core constant currency EPS growth (previously 8 percent)", "$7.27 (previously
# $7.20)": the new figure, the words that follow it, the old figure.
_PAIR = re.compile(
    _FIGURE.format("new")
    + r"(?P<after>[^()\d]{0,80}?)\s*\(\s*previously\s+(?:approximately\s+|about\s+|of\s+)?"
    + _FIGURE.format("old")
    + r"\s*\)",
    re.I,
)
# Where the clause naming a figure's measure begins: after the previous figure, a
# semicolon or an "and" joining two revised figures.
_CLAUSE_BREAK = re.compile(r";|\band\b|\)\s*,", re.I)
_WORD = re.compile(r"[a-z][a-z'-]*[a-z]|eps", re.I)
_COMMON_WORDS = """
    the a an of to in on for by and or its their our we now expect expects expected year
    full fiscal guidance outlook raise raised raising lower lowered increase increased
    percent percentage points point how many much did does was is what respect company
    """
_COMMON = frozenset(_COMMON_WORDS.split())


@dataclass(frozen=True)
class _Pair:
    hit: Hit
    sentence: str
    new: Decimal
    old: Decimal
    new_text: str  # as printed: "3.10"
    old_text: str
    percent: bool
    currency: str
    overlap: int
    order: int


def revision_answer(question: str, found: SearchResult, started: float) -> Answer | None:
    """The answer from a stated revision, or None (the quotes and the model read)."""
    if not (
        _ASKS_OUTLOOK.search(question)
        and _ASKS_AMOUNT.search(question)
        and _ASKS_REVISION.search(question)
    ):
        return None
    names = found.filters.company_words()
    asked = _words(question) - _words(" ".join(names))
    allowed = {c.name for c in found.filters.companies}
    pairs: list[_Pair] = []
    for order, hit in enumerate(found.hits):
        if allowed and hit.company not in allowed:
            continue
        for sentence in split_sentences(hit.content):
            pairs += _pairs(hit, sentence, asked, order)
    if not pairs:
        return None
    best = max(pairs, key=lambda p: (p.overlap, -p.order))
    if best.overlap == 0:
        return None
    return _answer(question, best, started)


def _pairs(hit: Hit, sentence: str, asked: set[str], order: int) -> list[_Pair]:
    out = []
    start = 0
    for m in _PAIR.finditer(sentence):
        if bool(m.group("newpct")) != bool(m.group("oldpct")):
            continue  # "8 percent (previously $7.20)": not one measure's two figures
        before = sentence[start : m.start()]
        breaks = list(_CLAUSE_BREAK.finditer(before))
        clause = before[breaks[-1].end() :] if breaks else before
        words = _words(f"{clause} {m.group('after')}")
        out.append(
            _Pair(
                hit,
                sentence.strip(),
                Decimal(m.group("newnum")),
                Decimal(m.group("oldnum")),
                m.group("newnum"),
                m.group("oldnum"),
                bool(m.group("newpct")),
                m.group("newcur") or "",
                len(words & asked),
                order,
            )
        )
        start = m.end()
    return out


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in _COMMON}


def _answer(question: str, pair: _Pair, started: float) -> Answer:
    outcome = calculate_outcome(
        "the revision: the new figure less the one it replaces",
        f"{number_text(pair.new)} - {number_text(pair.old)}",
        [
            {"text": "the new figure", "value": float(pair.new), "sources": [1]},
            {"text": "the figure it replaces", "value": float(pair.old), "sources": [1]},
        ],
    )
    change = pair.new - pair.old  # exact: the calculator's float would print 0.1499…
    verb = "raised" if change > 0 else "lowered" if change < 0 else "left unchanged"
    unit = " percent" if pair.percent else ""
    size = abs(change)
    if pair.percent:
        amount = f"{number_text(size)} percentage point{'s' if size != 1 else ''}"
    else:
        amount = f"{pair.currency}{number_text(size)}"
    text = (
        f"The guidance was {verb} by {amount}: {pair.currency}{number_text(pair.new)}{unit} now, "
        f"against {pair.currency}{number_text(pair.old)}{unit} before [1]. "
        f"The filing says: “{pair.sentence}” [1]."
    )
    hit = pair.hit
    citation = hit_citation(1, hit, pair.sentence, " > ".join(hit.section_path[-2:]))
    answer = Answer(question=question, answer=text, route="text")
    answer.citations = [citation]
    answer.calculations = [outcome]
    answer.chunks = [ContextChunk(1, hit)]
    answer.evidence = [
        {"n": 1, "document": Path(hit.document).name, "page": citation.page, "quote": pair.sentence}
    ]
    answer.retrieval = {"decided": DECIDED}
    answer.timings["total"] = since(started)
    return answer
