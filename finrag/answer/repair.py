"""A calculation the model planned that failed gets one corrected call, the failure fed
back; what still fails is said in the answer, not dropped quietly.

The extraction step (finrag.answer.stages.extract) asks the model for expressions; the
calculator refuses some (a '%' operator, a name, a thousands separator, a division by
zero) and some use a number no excerpt prints. Each such calculation is sent back once,
with the calculator's or the source check's words, in the same conversation; the
corrected expression is computed and traced like the first. A second failure gives up:
the calculation keeps its error, a check says both tries, and the answer names it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from pydantic import BaseModel, Field

from finrag.answer.extraction import (
    CalculationOutcome,
    CalculationRequest,
    longest_json,
    run_calculations,
)
from finrag.llm import LLM, LLMError
from finrag.llm.base import ChatResult, Message, json_schema
from finrag.llm.prompts import load_prompt
from finrag.retrieve.context import ContextChunk


class Recalculation(BaseModel):
    calculations: list[CalculationRequest] = Field(max_length=3)


RECALCULATION_BUDGET = longest_json(json_schema(Recalculation)) + 16


def failed(c: CalculationOutcome) -> bool:
    return c.error is not None or bool(c.unsourced_inputs)


def problem(c: CalculationOutcome) -> str:
    """What went wrong, in words the model can act on."""
    if c.error is not None:
        return f"the calculator refused it: {c.error}"
    verb = "is" if len(c.unsourced_inputs) == 1 else "are"
    return f"{', '.join(c.unsourced_inputs)} {verb} in no excerpt"


def repair_calculations(
    llm: LLM,
    messages: Sequence[Message],
    extracted: str,
    outcomes: list[CalculationOutcome],
    context: Sequence[ContextChunk],
) -> tuple[list[CalculationOutcome], ChatResult | None]:
    """The outcomes with each failed one replaced by its corrected call's outcome (one
    call for all of them); the call's result for the token count, None when none was
    needed. A failure of the call itself leaves the outcomes as they were, said in
    ``repair``."""
    broken = [c for c in outcomes if failed(c)]
    if not broken:
        return outcomes, None
    listed = "\n".join(f"- {c.description}: {c.expression} ({problem(c)})" for c in broken)
    retry = load_prompt("calculation_retry").messages(problems=listed)
    try:
        reply = llm.chat(
            [*messages, {"role": "assistant", "content": extracted}, *retry],
            output=Recalculation,
            max_tokens=RECALCULATION_BUDGET,
        )
    except LLMError as exc:
        why = f"the corrected call failed ({exc.message})"
        return [replace(c, repair=why) if failed(c) else c for c in outcomes], None
    fixed = run_calculations(reply.data.calculations, context)
    out: list[CalculationOutcome] = []
    # Matched by what each calculation is of; by position only when the corrected call
    # gave back as many as failed (a small model may drop or reorder one).
    by_description = {_key(f.description): f for f in fixed}
    tries = iter(fixed if len(fixed) == len(broken) else [])
    for c in outcomes:
        if not failed(c):
            out.append(c)
            continue
        second = by_description.get(_key(c.description)) or next(tries, None)
        first = f"first try {c.expression}: {problem(c)}"
        if second is None:
            out.append(replace(c, repair=f"{first}; the corrected call left it out"))
        elif failed(second):
            out.append(replace(second, repair=f"{first}; corrected try: {problem(second)}"))
        else:
            out.append(replace(second, repair=first))
    return out, reply


def _key(description: str) -> str:
    return " ".join(description.lower().split())


def extraction_text(data: BaseModel) -> str:
    """The model's extraction as it wrote it, for the conversation the retry continues."""
    return json.dumps(data.model_dump())


def given_up(outcomes: Sequence[CalculationOutcome]) -> str:
    """The sentence the answer ends with when a calculation failed twice; '' when none."""
    names = [c.description for c in outcomes if failed(c)]
    if not names:
        return ""
    return (
        " Not calculated, after one corrected try: "
        + "; ".join(f"“{n}”" for n in names)
        + " (the checks say why)."
    )
