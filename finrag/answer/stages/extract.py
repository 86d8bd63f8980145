"""Stage 4-5 of the mixed route (and of ``answer.text_mode = "extract"``): the model
reads whole excerpts and returns facts (source + quote) and the arithmetic to do as
expressions (JSON, schema-constrained); Python checks every fact against its excerpt
and computes every expression; the model then writes prose from the checked facts and
results only (streamed). A number in no cited excerpt and no result gets one rewrite,
then is flagged. Slower than the evidence route (two calls over long prompts), but the
only one with the calculator over excerpt numbers."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict

from finrag.answer.citations import attach_citations, check_numbers
from finrag.answer.extraction import (
    Extraction,
    calculations_for_prompt,
    check_facts,
    facts_for_prompt,
    longest_json,
    run_calculations,
)
from finrag.answer.repair import extraction_text, given_up, repair_calculations
from finrag.answer.result import Answer
from finrag.answer.stages import count, since
from finrag.answer.stages.check import cite
from finrag.answer.stages.gate import not_found_message, unverified_message
from finrag.config import Settings
from finrag.llm import LLM
from finrag.llm.base import json_schema
from finrag.llm.prompts import load_prompt
from finrag.personas import active_persona, with_persona
from finrag.retrieve import SearchResult
from finrag.retrieve.context import ContextChunk, build_context, render_context

OnToken = Callable[[str], None]
OnEvent = Callable[[str], None]
# The extraction's reply always fits: its schema bounds every string and list.
EXTRACTION_BUDGET = longest_json(json_schema(Extraction)) + 16


def excerpts(found: SearchResult, mixed: Answer | None, settings: Settings) -> list[ContextChunk]:
    """The excerpts the model reads: for the mixed route the facts' own first."""
    # Pages give their chunks breadth first up to the chunks the model reads: with
    # fewer pages than that, a page's second and third chunks fill the budget.
    if mixed is not None:
        return with_fact_sources(mixed, found)
    return build_context(found.hits, budget=settings.answer.k)


def extract_and_write(
    llm: LLM,
    settings: Settings,
    question: str,
    found: SearchResult,
    coverage,
    answer: Answer,
    context: list[ContextChunk],
    mixed: Answer | None,
    started: float,
    on_token: OnToken | None,
    notify: OnEvent,
    on_progress: OnToken | None,
) -> Answer:
    """Extract facts from the excerpts, calculate, write the answer and check it."""
    t0 = time.perf_counter()
    asked = load_prompt("extract").messages(question=question, context=render_context(context))
    extracted = llm.chat(
        asked,
        output=Extraction,
        max_tokens=EXTRACTION_BUDGET,
        on_token=on_progress,
    )
    count(answer, extracted)
    answer.timings["extract"] = since(t0)
    extraction: Extraction = extracted.data
    answer.facts = check_facts(extraction.facts, context)
    answer.calculations = run_calculations(extraction.calculations, context)
    # A failed calculation gets one corrected call with its error fed back.
    answer.calculations, repaired = repair_calculations(
        llm, asked, extraction_text(extraction), answer.calculations, context
    )
    if repaired is not None:
        count(answer, repaired)
    if mixed is not None:  # the store's numbers first: the model's only add to them
        shown = {c.n for c in context}  # a tagged fact may have no excerpt to cite
        answer.facts = [f for f in mixed.facts if f.source in shown] + answer.facts
        answer.calculations = mixed.calculations + answer.calculations
        answer.fact_values = mixed.fact_values
    notify("extracted")
    answer.flags += [
        f"fact from [{f.source}] dropped: {f.problem}" for f in answer.facts if not f.ok
    ] + [
        f"fact's source corrected from [{f.moved_from}] to [{f.source}], where its quote is"
        for f in answer.facts
        if f.moved_from is not None
    ]
    for c in answer.calculations:
        tried = f" ({c.repair})" if c.repair else ""
        if c.error:
            answer.flags.append(f"calculation '{c.description}' failed: {c.error}{tried}")
        elif c.unsourced_inputs:
            answer.flags.append(
                f"calculation '{c.description}' not used: inputs "
                f"{', '.join(c.unsourced_inputs)} are in no source{tried}"
            )
        elif c.repair:
            answer.flags.append(f"calculation '{c.description}' repaired: {c.repair}")

    # No fact survived the check against its excerpt: whatever the model wrote next
    # would rest on nothing we can show, so say so instead (a wrong figure costs more
    # than a refusal).
    if not any(f.ok for f in answer.facts):
        answer.refused = True
        if extraction.answerable:
            answer.refusal = "unverified-facts"
            answer.answer = unverified_message(found, context)
        else:
            answer.refusal = "not-in-context"
            answer.answer = not_found_message(found, coverage)
        answer.timings["total"] = since(started)
        return answer

    t0 = time.perf_counter()
    messages = load_prompt("answer").messages(
        question=question,
        facts=facts_for_prompt(answer.facts, context),
        calculations=calculations_for_prompt(answer.calculations),
    )
    messages = with_persona(messages, active_persona(settings))
    notify("answering")
    reply = llm.chat(messages, on_token=on_token)
    count(answer, reply)
    notify("checking")
    text, added = attach_citations(reply.text.strip(), answer.facts)
    problems = check_numbers(text, context, answer.facts, answer.calculations)
    if problems:
        notify("retrying")
        retry = load_prompt("answer_retry").messages(
            problems="; ".join(p.describe() for p in problems)
        )
        reply = llm.chat(
            [*messages, {"role": "assistant", "content": text}, *retry], on_token=on_token
        )
        count(answer, reply)
        text, added = attach_citations(reply.text.strip(), answer.facts)
        problems = check_numbers(text, context, answer.facts, answer.calculations)
        answer.flags += [f"unverified number {p.describe()}" for p in problems]
    if added:
        answer.flags.append(
            "citations added by finrag where the model cited nothing: "
            + ", ".join(f"[{n}]" for n in added)
        )
    answer.unverified_numbers = [asdict(p) for p in problems]
    answer.timings["answer"] = since(t0)
    answer.answer = text + given_up(answer.calculations)
    cite(answer, context)
    answer.timings["total"] = since(started)
    return answer


def with_fact_sources(mixed: Answer, found: SearchResult) -> list[ContextChunk]:
    """The excerpts printing the facts first ([1]..[m], as the facts cite them), then the
    retrieved ones not among them."""
    first = list(mixed.chunks)
    held = {c.hit.chunk_id for c in first}
    rest = [h for h in found.hits if h.chunk_id not in held]
    return first + [ContextChunk(len(first) + c.n, c.hit) for c in build_context(rest)]
