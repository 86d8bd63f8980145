"""One question of a many-question run, put to the Asker: a model call that fails on it
(a timeout, a reply off its schema) is that question's outcome, said as a refusal, not
the end of the run; no model at all, or one whose process died, still ends it (every
later question would fail the same way)."""

from __future__ import annotations

from finrag.answer.pipeline import Asker
from finrag.answer.result import Answer
from finrag.llm import LLMError

MODEL_FAILED = "model-failed"


def ask_one(asker: Asker, question: str, company: str) -> Answer:
    """``asker.ask`` for ``company``'s filings; an LLMError becomes a refused answer that
    says what failed."""
    try:
        return asker.ask(question, overrides={"company": company})
    except LLMError as exc:
        return Answer(
            question=question,
            answer=f"The model failed on this question ({exc.message}).",
            refused=True,
            refusal=MODEL_FAILED,
            status="refused",
        )
