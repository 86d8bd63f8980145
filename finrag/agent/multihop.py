"""Several answers made one: their [n] markers renumbered into one numbering, so a
combined answer keeps every citation and each number still points at its excerpt."""

from __future__ import annotations

import re
from collections.abc import Sequence

from finrag.answer.citations import MARK
from finrag.answer.pipeline import Answer
from finrag.retrieve.context import ContextChunk
from finrag.retrieve.hybrid import Hit


class Renumbering:
    """One numbering over the excerpts of many answers; the same chunk keeps one number."""

    def __init__(self) -> None:
        self._by_chunk: dict[int, int] = {}
        self.chunks: list[ContextChunk] = []

    def number(self, hit: Hit) -> int:
        if hit.chunk_id not in self._by_chunk:
            self._by_chunk[hit.chunk_id] = len(self._by_chunk) + 1
            self.chunks.append(ContextChunk(self._by_chunk[hit.chunk_id], hit))
        return self._by_chunk[hit.chunk_id]

    def rewrite(self, answer: Answer) -> str:
        """The answer's text with its local markers replaced by global ones; markers that
        name no excerpt are dropped (they were flagged when the answer was checked)."""
        local = {c.n: c.hit for c in answer.chunks}

        def renumber(match: re.Match) -> str:
            numbers = [int(n) for n in re.split(r"\s*[,;]\s*", match.group(1))]
            kept = [str(self.number(local[n])) for n in numbers if n in local]
            return f"[{', '.join(dict.fromkeys(kept))}]" if kept else ""

        return MARK.sub(renumber, answer.answer)


def numbered_answers(
    questions: Sequence[str], answers: Sequence[Answer], numbering: Renumbering
) -> str:
    """Sub-answers for a prompt: 'Q1. question\\nA1. answer with global [n]'."""
    lines = []
    for i, (question, answer) in enumerate(zip(questions, answers, strict=True), 1):
        text = "(not found in the filings)" if answer.refused else numbering.rewrite(answer)
        lines.append(f"Q{i}. {question}\nA{i}. {text}")
    return "\n\n".join(lines)


def concatenated(questions: Sequence[str], answers: Sequence[Answer], numbering: Renumbering):
    """The fallback combination, faithful by construction: each sub-answer under its
    question."""
    parts = []
    for question, answer in zip(questions, answers, strict=True):
        text = "Not found in your filings." if answer.refused else numbering.rewrite(answer)
        parts.append(f"{question}\n{text}")
    return "\n\n".join(parts)
