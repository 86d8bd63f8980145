"""The first model call's output: facts with their sources, and the arithmetic to do.

The model only points: each fact names the excerpt it comes from and quotes it; each
calculation is an expression. Here every fact is checked against its excerpt (its
number must be there) and every expression is computed by the calculator, with its
inputs traced back to the excerpts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field
from rapidfuzz import fuzz

from finrag.answer.calculator import (
    CalculationError,
    calculate,
    format_number,
    normalize_expression,
)
from finrag.answer.numbers import Amount, found_in, material, normalize, parse_amounts
from finrag.retrieve.context import ContextChunk

# Numbers an expression may use without a source: unit conversions, days in a year,
# percent, halves for averages.
_QUOTE_MATCH = 80  # rapidfuzz partial ratio of a quote within an excerpt (words and numbers)
_CONSTANTS = {0.0, 1.0, 2.0, 3.0, 4.0, 12.0, 100.0, 360.0, 365.0, 1000.0, 1e6, 1e9}


# Bounds on every string and list: the schema becomes a grammar that must end, so a small
# model cannot run past max_tokens in a repeated quote and leave truncated JSON.
class Fact(BaseModel):
    source: int = Field(description="The excerpt number the fact comes from.")
    quote: str = Field(max_length=200, description="The exact words or table row from it.")
    value: str = Field(max_length=30, description="The number as written there, or ''.")


class CalculationRequest(BaseModel):
    description: str = Field(max_length=80)
    expression: str = Field(max_length=120)


class Extraction(BaseModel):
    answerable: bool
    facts: list[Fact] = Field(max_length=6)
    calculations: list[CalculationRequest] = Field(max_length=3)


def longest_json(schema: dict) -> int:
    """Characters in the longest JSON a bounded schema admits: with at most one token a
    character, a generation budget that never cuts a reply short."""
    if "enum" in schema:
        return max(len(json.dumps(v)) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        props = schema["properties"]
        return 2 + sum(len(k) + 4 + longest_json(v) for k, v in props.items())
    if kind == "array":
        return 2 + schema["maxItems"] * (1 + longest_json(schema["items"]))
    if kind == "string":
        return 2 + schema["maxLength"]
    return {"boolean": 5, "integer": 12, "number": 24}[kind]


@dataclass
class CheckedFact:
    source: int
    quote: str
    value: str
    ok: bool
    problem: str | None = None
    moved_from: int | None = None  # the excerpt the model named, when the quote is elsewhere


@dataclass
class CalculationOutcome:
    description: str
    expression: str
    result: float | None = None
    error: str | None = None
    unsourced_inputs: list[str] = field(default_factory=list)
    inputs: list[dict] = field(default_factory=list)  # {text, value, sources: [n, ...]}
    # Set when a first try failed and one corrected call was made (finrag.answer.repair):
    # what the first try got wrong, and the corrected try's failure if it failed too.
    repair: str | None = None

    @property
    def formatted(self) -> str | None:
        return None if self.result is None else format_number(self.result)

    def as_dict(self) -> dict:
        return {
            "description": self.description,
            "expression": self.expression,
            "result": self.result,
            "formatted": self.formatted,
            "error": self.error,
            "unsourced_inputs": self.unsourced_inputs,
            "inputs": self.inputs,
            "repair": self.repair,
        }


def check_facts(facts: Sequence[Fact], context: Sequence[ContextChunk]) -> list[CheckedFact]:
    """A fact stands when its number is in the excerpt it names. Small models often name
    the wrong excerpt: when the number is not there but the quote is found in another
    excerpt that holds the number, the fact moves to that excerpt (and says so)."""
    by_n = {c.n: c for c in context}
    amounts = {c.n: parse_amounts(c.hit.content) for c in context}
    checked = []
    for fact in facts:
        numbers = material(parse_amounts(fact.value or fact.quote))

        def holds(n: int, numbers=numbers) -> bool:
            return n in by_n and all(found_in(a, amounts[n]) for a in numbers)

        if holds(fact.source):
            checked.append(CheckedFact(fact.source, fact.quote, fact.value, True))
            continue
        quoted = normalize(fact.quote)
        match = {
            n: _quote_match(quoted, by_n[n])
            for n in by_n
            if numbers and n != fact.source and holds(n)
        }
        elsewhere = [n for n, score in match.items() if score >= _QUOTE_MATCH]
        if elsewhere:
            best = max(elsewhere, key=match.__getitem__)
            checked.append(CheckedFact(best, fact.quote, fact.value, True, moved_from=fact.source))
            continue
        if fact.source not in by_n:
            problem = "no such excerpt"
        else:
            missing = [a.text for a in numbers if not found_in(a, amounts[fact.source])]
            problem = f"{', '.join(missing)} not in excerpt [{fact.source}]"
        checked.append(CheckedFact(fact.source, fact.quote, fact.value, False, problem))
    return checked


def _quote_match(quoted: str, chunk: ContextChunk) -> float:
    """How well a quote matches an excerpt as stored or as the model read it (tables in
    words, where a mangled header is repeated beside every value)."""
    views = [chunk.hit.content]
    if chunk.hit.kind == "table":
        views.append(chunk.render())
    return max(fuzz.partial_ratio(quoted, normalize(v)) for v in views)


def run_calculations(
    requests: Sequence[CalculationRequest], context: Sequence[ContextChunk]
) -> list[CalculationOutcome]:
    """Compute each expression; trace every input to the excerpts that hold it, and note
    inputs that appear in none."""
    amounts = {c.n: parse_amounts(c.hit.content) for c in context}
    outcomes = []
    for request in requests:
        outcome = CalculationOutcome(request.description, normalize_expression(request.expression))
        try:
            outcome.result = calculate(outcome.expression).value
        except CalculationError as exc:
            outcome.error = str(exc)
        for a in _inputs(outcome.expression):
            if abs(a.value) in _CONSTANTS:
                continue
            sources = [n for n, found in amounts.items() if found_in(a, found)]
            text = a.text.strip("()- ")  # the operators spaced out around it
            outcome.inputs.append({"text": text, "value": a.value, "sources": sources})
            if not sources:
                outcome.unsourced_inputs.append(text)
        outcomes.append(outcome)
    return outcomes


def _inputs(expression: str) -> list[Amount]:
    """The number literals of an expression; operators spaced out so '1577-1373' reads as
    two numbers, not a hyphenated word."""
    return parse_amounts(re.sub(r"([-+*/(),])", r" \1 ", expression))


def facts_for_prompt(facts: Sequence[CheckedFact], context: Sequence[ContextChunk]) -> str:
    by_n = {c.n: c for c in context}
    lines = []
    for fact in facts:
        if not fact.ok:
            continue
        where = by_n[fact.source]
        lines.append(f"[{fact.source}] ({where.document} {where.pages}) {fact.quote.strip()}")
    return "\n".join(lines) or "(none)"


def calculations_for_prompt(outcomes: Sequence[CalculationOutcome]) -> str:
    lines = [
        f"- {o.description}: {o.expression} = {o.formatted}"
        for o in outcomes
        if o.result is not None and not o.unsourced_inputs
    ]
    return "\n".join(lines) or "(none)"
