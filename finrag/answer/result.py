"""What `finrag ask` returns: the answer, its citations and checks, how it was reached."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from finrag.answer.citations import Citation
from finrag.answer.extraction import CalculationOutcome, CheckedFact
from finrag.llm.fallback import FallbackRecorder
from finrag.retrieve.context import ContextChunk


@dataclass
class Answer:
    question: str
    answer: str
    refused: bool = False
    refusal: str | None = None  # why, when refused: "unknown-company", "not-relevant", ...
    route: str = "text"  # "facts": one stored line item answered it, no model
    citations: list[Citation] = field(default_factory=list)
    calculations: list[CalculationOutcome] = field(default_factory=list)
    facts: list[CheckedFact] = field(default_factory=list)
    # The facts store's values a facts-route answer states, with provenance (fact id...).
    fact_values: list[dict[str, Any]] = field(default_factory=list)
    # A facts-route answer's measures over several periods, one per company and measure:
    # {company, measure, unit, points: [{period, value}]} (what `ask` charts on a terminal).
    series: list[dict[str, Any]] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)  # what could not be verified
    # The flags about scope (a filter dropped, a company not held): said even with --quiet.
    warnings: list[str] = field(default_factory=list)
    # Numbers in no cited excerpt and no calculation result: {number, sentence, reason}.
    unverified_numbers: list[dict[str, str]] = field(default_factory=list)
    # Each number the answer states, checked: {number, status, source, sentence}, status
    # verified | found_in_source | unsupported (finrag.answer.status).
    numbers: list[dict[str, str]] = field(default_factory=list)
    # The answer's status: its weakest number's, or "no_numbers" / "refused".
    status: str = "no_numbers"
    invalid_citations: list[int] = field(default_factory=list)  # markers that name no excerpt
    backend: str | None = None  # what wrote the answer: after a fallback, the fallback's
    model: str | None = None
    # Model calls Ollama failed and the embedded model answered (finrag.llm.fallback).
    fallbacks: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # seconds
    # Set when the answer came from the answer cache: the question it was written for,
    # the similarity, when (finrag.answer.cache.CacheHit.as_dict).
    cache: dict[str, Any] | None = None
    tokens: dict[str, int] = field(default_factory=lambda: {"prompt": 0, "completion": 0})
    retrieval: dict[str, Any] = field(default_factory=dict)
    context: list[dict[str, Any]] = field(default_factory=list)
    # The quotes the answer rests on, as printed: {n, document, page, quote}.
    evidence: list[dict[str, Any]] = field(default_factory=list)
    # The excerpts themselves, for checks after the answer (the chat graph's verify).
    chunks: list[ContextChunk] = field(default_factory=list, repr=False)

    def add_fallbacks(self, recorded: FallbackRecorder) -> Answer:
        """The calls another backend answered, as warnings (they show with --quiet); the
        backend and model become the ones that answered the last call."""
        if recorded.fallbacks:
            self.fallbacks += recorded.as_dicts()
            words = [f.words() for f in recorded.fallbacks]
            self.warnings += words
            self.flags += words
            if recorded.answered_by:
                self.backend, self.model = recorded.answered_by
        return self

    def as_dict(self) -> dict[str, Any]:
        data = asdict(replace(self, chunks=[]))
        data.pop("chunks")
        data["calculations"] = [c.as_dict() for c in self.calculations]
        data["citations"] = [c.as_dict() for c in self.citations]  # with path, page, ref
        # Every number traced to a cross-checked fact or a calculation on them (a stored
        # figure that failed its checks makes this false, with a warning saying why).
        data["verified"] = self.status == "verified"
        return data
