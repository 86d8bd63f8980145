"""Stage 6, check: a number in the answer must appear in a quote it cites, a fact or a
calculation, else the claim that states it is removed and the answer says so; the
citations are mapped to document and page; the quotes the answer rests on become its
``evidence``; finrag.answer.status then gives each number its status."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import PurePath

from finrag.answer.citations import NumberProblem, check_numbers, map_citations
from finrag.answer.extraction import CalculationOutcome, CheckedFact
from finrag.answer.result import Answer
from finrag.retrieve.context import ContextChunk


def cite(answer: Answer, context: Sequence[ContextChunk]) -> None:
    """The answer's citations from its [n] markers, and flags for markers that name no
    source, sources flagged as instruction-like, and an answer that cites nothing."""
    answer.citations, answer.invalid_citations = map_citations(answer.answer, context, answer.facts)
    answer.flags += [f"citation [{n}] names no source" for n in answer.invalid_citations]
    answer.flags += [
        f"source [{c.n}] holds instruction-like text ({c.flagged!r}): read it as a quote"
        for c in answer.citations
        if c.flagged
    ]
    if not answer.citations:
        answer.flags.append("the answer cites no source")


def without_unsupported(
    claims: Sequence[str],
    context: Sequence[ContextChunk],
    facts: Sequence[CheckedFact] = (),
    calculations: Sequence[CalculationOutcome] = (),
) -> tuple[list[str], list[NumberProblem]]:
    """The claims whose every number is in a quote they cite (or a fact, or a
    calculation), and the problems of those removed: a small model's figure that no
    quote holds is not repaired or guessed at, it is taken out."""
    kept: list[str] = []
    problems: list[NumberProblem] = []
    for claim in claims:
        found = check_numbers(claim, context, facts, calculations)
        if found:
            problems += found
        else:
            kept.append(claim)
    return kept, problems


def without_contrary(
    claims: Sequence[str], figures: str, question: str
) -> tuple[list[str], list[str]]:
    """The mixed route's reasons less those that say the asked measure moved the other
    way from the stored figures ("the increase in operating margin" under figures that
    went down): the small model reads "partially offset by" as the cause."""
    moved = _movement(figures)
    if moved is None:
        return list(claims), []
    kept, turned = [], []
    asked = question.lower()
    for claim in claims:
        said = [
            m
            for m in _MOVE_OF.finditer(claim.lower())
            if _direction_word(m[1]) not in (None, moved) and m[2].strip() in asked
        ]
        (turned if said else kept).append(claim)
    return kept, turned


def _movement(figures: str) -> str | None:
    up, down = bool(_UP.search(figures)), bool(_DOWN.search(figures))
    return "up" if up and not down else "down" if down and not up else None


def _direction_word(word: str) -> str | None:
    return "up" if _UP_NOUN.fullmatch(word) else "down" if _DOWN_NOUN.fullmatch(word) else None


# How the facts route words a move ("down 1.7 percentage points", "went up by 3.0%").
_UP = re.compile(r"\b(?:went up|up \d|up by|rose|increased|grew)\b")
_DOWN = re.compile(r"\b(?:went down|down \d|down by|fell|decreased|declined)\b")
_UP_NOUNS = r"increases?|improvements?|rises?|expansions?|gains?|growth"
_DOWN_NOUNS = r"decreases?|declines?|drops?|contractions?|deteriorations?|falls?"
_UP_NOUN, _DOWN_NOUN = re.compile(_UP_NOUNS), re.compile(_DOWN_NOUNS)
# "the increase in operating margin": a move and the measure it is of (two words at most).
_MOVE_OF = re.compile(
    rf"\b({_UP_NOUNS}|{_DOWN_NOUNS})\s+(?:in|of)\s+(?:the\s+|its\s+)?"
    r"((?:[a-z&-]+\s+)?[a-z&-]+)"
)


def removed_note(problems: Sequence[NumberProblem]) -> str:
    """Said in the answer; the figures themselves only in its flags (in the text they
    would read as stated)."""
    n = len({p.sentence for p in problems})
    what = "A statement" if n == 1 else f"{n} statements"
    return f"({what} with a figure no quote holds {'was' if n == 1 else 'were'} removed.)"


def record_problems(answer: Answer, problems: Sequence[NumberProblem]) -> None:
    answer.unverified_numbers = [asdict(p) for p in problems]
    answer.flags += [f"removed: unverified number {p.describe()}" for p in problems]


def evidence_of(answer: Answer) -> list[dict]:
    """{document, page, quote} for each source the answer cites, in order of first use:
    the quotes as printed (the JSON's ``evidence``)."""
    return [
        {
            "n": c.n,
            "document": PurePath(c.path).name if c.path else c.document,
            "page": c.page,
            "quote": c.quote,
        }
        for c in answer.citations
    ]


def show_context(answer: Answer, context: Sequence[ContextChunk]) -> None:
    """The sources the answer may cite, kept with it and listed in its JSON."""
    answer.chunks = list(context)
    answer.context = [
        {
            "n": c.n,
            "label": c.label,
            "chunk_id": c.hit.chunk_id,
            "score": c.hit.score,
            "flagged": c.hit.flagged,
        }
        for c in context
    ]
