"""The typed state one chat turn carries through the graph, and what it leaves behind."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from finrag.answer.citations import Citation
from finrag.answer.extraction import CalculationOutcome
from finrag.answer.pipeline import Answer
from finrag.retrieve.context import ContextChunk
from finrag.retrieve.filters import QueryFilters

Intent = Literal["relevant", "irrelevant", "vague", "unclear", "general", "declined"]


@dataclass
class Exchange:
    """A finished turn, as later turns see it."""

    question: str
    standalone: str
    answer: str


@dataclass
class Pending:
    """A clarification asked and not yet answered: the vague question and the rounds so far."""

    question: str
    rounds: int


@dataclass
class TurnState:
    question: str  # as the user typed it
    history: list[Exchange]
    interactive: bool  # may the turn end by asking the user something?
    pending: Pending | None = None  # carried in from the previous turn
    standalone: str = ""
    intent: Intent | None = None
    intent_reason: str = ""
    filters: QueryFilters | None = None
    assumptions: list[str] = field(default_factory=list)
    # Multi-hop: every sub-question asked (no repeats across rounds) and its answer.
    sub_questions: list[str] = field(default_factory=list)
    sub_answers: list[Answer] = field(default_factory=list)
    depth: int = 0
    answer: Answer | None = None  # the single-hop answer being verified
    reply: str = ""
    citations: list[Citation] = field(default_factory=list)
    calculations: list[CalculationOutcome] = field(default_factory=list)
    excerpts: list[ContextChunk] = field(default_factory=list)  # what the citations name
    flags: list[str] = field(default_factory=list)
    verified: bool | None = None
    unsupported: list[str] = field(default_factory=list)
    retried: bool = False
    next_pending: Pending | None = None  # a clarification this turn asks


@dataclass
class TurnResult:
    turn: int
    question: str
    standalone: str
    intent: str
    reply: str
    citations: list[Citation]
    calculations: list[CalculationOutcome]
    flags: list[str]
    assumptions: list[str]
    verified: bool | None
    filters: dict[str, Any]
    sub_questions: list[str]
    trace: dict[str, Any]
    clarifying: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "question": self.question,
            "standalone": self.standalone,
            "intent": self.intent,
            "answer": self.reply,
            "citations": [c.as_dict() for c in self.citations],
            "calculations": [c.as_dict() for c in self.calculations],
            "flags": self.flags,
            "assumptions": self.assumptions,
            "verified": self.verified,
            "filters": self.filters,
            "sub_questions": self.sub_questions,
            "clarifying": self.clarifying,
            "trace": self.trace,
        }
