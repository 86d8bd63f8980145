"""The typed state one chat turn carries through the graph, and what it leaves behind."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from finrag.answer.citations import Citation
from finrag.answer.extraction import CalculationOutcome
from finrag.answer.pipeline import Answer
from finrag.answer.status import NO_NUMBERS, REFUSED, VERIFIED, check_numbers_status, overall_status
from finrag.personas.kpis import PersonaKpis
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
    # Dependent hops (finrag.answer.hop_plan): the plan, then each hop's row as `ask
    # --json` gives it; the combined answer is ``answer``.
    hop_plan: Any = None
    plan: list[dict[str, Any]] = field(default_factory=list)
    answer: Answer | None = None  # the single-hop answer being verified
    reply: str = ""
    citations: list[Citation] = field(default_factory=list)
    calculations: list[CalculationOutcome] = field(default_factory=list)
    excerpts: list[ContextChunk] = field(default_factory=list)  # what the citations name
    flags: list[str] = field(default_factory=list)
    # The faithfulness checker's verdict (a model's opinion, not a trace to stored facts).
    supported: bool | None = None
    # Each number of the reply and the reply's status (finrag.answer.status), set when
    # an answer is settled; None for replies that are no answer (greetings, clarifying).
    status: str | None = None
    numbers: list[dict[str, str]] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    retried: bool = False
    next_pending: Pending | None = None  # a clarification this turn asks

    def settle_numbers(self) -> None:
        """Each number of the reply checked against the stored facts, calculations and
        cited excerpts the turn used; the reply's status from them."""
        answers = [self.answer] if self.answer is not None else []
        answers += self.sub_answers
        refused = bool(answers) and all(a.refused for a in answers)
        checks = check_numbers_status(
            self.reply,
            excerpts=self.excerpts,
            fact_values=[v for a in answers for v in a.fact_values],
            calculations=self.calculations,
            facts=[f for a in answers if a.chunks is self.excerpts for f in a.facts],
        )
        self.numbers = [c.as_dict() for c in checks]
        self.status = overall_status(checks, refused=refused)

    def final_status(self) -> str:
        """The turn's status: as settled, else refused (the question was declined or
        not in the store) or no_numbers (a greeting, a clarifying question)."""
        if self.status is not None:
            return self.status
        if self.intent in ("irrelevant", "declined"):
            return REFUSED
        if self.answer is not None and self.answer.refused:
            return REFUSED
        return NO_NUMBERS


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
    filters: dict[str, Any]
    sub_questions: list[str]
    trace: dict[str, Any]
    clarifying: bool = False
    # verified | found_in_source | unsupported | no_numbers | refused (finrag.answer.status)
    status: str = NO_NUMBERS
    numbers: list[dict[str, str]] = field(default_factory=list)  # {number, status, source, ...}
    supported: bool | None = None  # the faithfulness checker's verdict (a model's opinion)
    persona: PersonaKpis | None = None  # the persona's KPIs, with `chat --persona`
    # The facts-route answers' measures over several periods (finrag.answer.result.Answer).
    series: list[dict[str, Any]] = field(default_factory=list)
    plan: list[dict[str, Any]] = field(default_factory=list)  # dependent hops, when asked so

    @property
    def verified(self) -> bool | None:
        """True only when every number is traced to stored facts or a calculation on them;
        None when the reply states no number or answers nothing."""
        if self.status in (NO_NUMBERS, REFUSED):
            return None
        return self.status == VERIFIED

    def as_dict(self) -> dict[str, Any]:
        return (
            {
                "turn": self.turn,
                "question": self.question,
                "standalone": self.standalone,
                "intent": self.intent,
                "answer": self.reply,
                "citations": [c.as_dict() for c in self.citations],
                "calculations": [c.as_dict() for c in self.calculations],
                "flags": self.flags,
                "assumptions": self.assumptions,
                # "verified" was the checker's verdict before issue 16: now it is true only for
                # numbers traced to stored facts; "status" and "numbers" say more.
                "status": self.status,
                "verified": self.verified,
                "numbers": self.numbers,
                "supported": self.supported,
                "filters": self.filters,
                "sub_questions": self.sub_questions,
                "clarifying": self.clarifying,
                "trace": self.trace,
            }
            | ({"persona": self.persona.as_dict()} if self.persona else {})
            | ({"series": self.series} if self.series else {})
            | ({"plan": self.plan} if self.plan else {})
        )
