"""`finrag ask` as a library call: retrieve, extract facts, calculate, answer, check.

1. Retrieve (hybrid search with filters) the chunks for the question. A question about a
   company the store does not hold, about years no filing of the named company covers
   (finrag.answer.coverage), or one whose best chunk is not relevant, is refused here,
   naming what the store holds, without calling the model. The company filter is
   never dropped to find something; chunks flagged at ingest as instruction-like text
   are left out unless answer.include_flagged is set.
2. Extract: the model reads the labelled chunks and returns facts (source + quote) and
   the arithmetic to do as expressions (JSON, schema-constrained).
3. Python checks every fact against its chunk and computes every expression.
4. Answer: the model writes prose from the checked facts and results only (streamed).
5. Check: every number must be in a chunk its sentence cites, or be a calculation
   result. Otherwise the answer is regenerated once, then flagged.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from finrag.answer.cache import AnswerCache
from finrag.answer.citations import attach_citations, check_numbers, map_citations
from finrag.answer.coverage import (
    confine_to_period,
    held_filings,
    unheld_period,
    unheld_period_message,
)
from finrag.answer.extraction import (
    Extraction,
    calculations_for_prompt,
    check_facts,
    facts_for_prompt,
    longest_json,
    run_calculations,
)
from finrag.answer.phrasing import phrase
from finrag.answer.result import Answer
from finrag.answer.routing import Route, choose_route
from finrag.answer.status import settle
from finrag.config import Settings
from finrag.db import Store
from finrag.db.documents import CompanyCoverage, describe_coverage, store_coverage
from finrag.errors import FilterUnmatched, ModelNotAvailable
from finrag.llm import LLM, ChatResult, LLMError, LLMTimeout, ModelCrashed, get_llm
from finrag.llm.base import TIMEOUT_HINT, json_schema
from finrag.llm.fallback import recording_fallbacks
from finrag.llm.prompts import load_prompt
from finrag.personas import active_persona, with_persona
from finrag.retrieve import Retriever, SearchResult
from finrag.retrieve.context import ContextChunk, build_context, render_context
from finrag.retrieve.filters import QueryFilters

OnToken = Callable[[str], None]
# The extraction's reply always fits: its schema bounds every string and list.
EXTRACTION_BUDGET = longest_json(json_schema(Extraction)) + 16
OnEvent = Callable[[str], None]  # "retrieved", "extracted", "answering", "retrying"


class Asker:
    """Holds the retriever and the model so a session or an evaluation loads them once."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        llm: LLM | None = None,
        retriever: Retriever | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        if llm is None and settings.retrieve.reranker == "llm" and retriever is None:
            llm = get_llm(settings)  # one model for reranking and answering
        self._llm = llm
        self.retriever = retriever or Retriever(store, settings, llm=llm)

    @property
    def llm(self) -> LLM:
        if self._llm is None:
            self._llm = get_llm(self.settings)
        return self._llm

    def ask(
        self,
        question: str,
        *,
        k: int | None = None,
        overrides: dict[str, Any] | None = None,
        on_token: OnToken | None = None,
        on_event: OnEvent | None = None,
        on_progress: OnToken | None = None,
        strict_filters: bool = False,
        use_cache: bool = False,
    ) -> Answer:
        """Retrieve for the question, then answer from what was found. ``on_token`` hears
        the answer's text as it is written; ``on_progress`` every other piece the model
        writes (the extraction's JSON): for a progress line, not for display. With
        ``strict_filters``, a filter no filing matches fails (FilterUnmatched) before any
        model call, instead of being dropped. With ``use_cache`` (and answer.cache on), a
        question asked before, or reworded, on the same store is answered from the answer
        cache (finrag.answer.cache), and a new answer is kept there."""
        started = time.perf_counter()
        # Facts and refusals that need no passage come before the search, so no embedder
        # loads for them; not when a cached answer would spare the model's phrasing.
        cached = use_cache and self.settings.answer.cache and self.settings.answer.use_llm
        if not cached and (early := self._before_search(question, overrides)) is not None:
            early.timings["total"] = _since(started)
            return early
        found, coverage = self.search(question, k=k, overrides=overrides)
        if strict_filters and found.widened:
            dropped = " and ".join(found.widened_words())
            raise FilterUnmatched(
                f"no filing matches {dropped}; --strict-filters keeps the filter, so there "
                "is nothing to answer from",
                hint="`finrag docs list` shows what the store holds; without --strict-filters "
                "the answer searches without the filter and says so",
            )
        retrieve_s = _since(started)
        cache = self._cache() if use_cache and self.settings.answer.cache else None
        if cache is not None and (hit := cache.lookup(question, found, k)) is not None:
            answer, why = hit
            answer.cache = why.as_dict()
            answer.timings = {"retrieve": retrieve_s, "total": _since(started)}
            answer.tokens = {"prompt": 0, "completion": 0}
            return answer
        if on_event:
            on_event("retrieved")
        answer = self.answer_from(
            question,
            found,
            coverage,
            on_token=on_token,
            on_event=on_event,
            on_progress=on_progress,
        )
        answer.timings["retrieve"] = retrieve_s
        answer.timings["total"] = _since(started)
        # An answer the fallback model wrote is not kept: once Ollama is back, asking
        # again should get its answer, not the stand-in's.
        if cache is not None and not answer.refused and not answer.fallbacks:
            cache.put(answer, found, k)
        return answer

    def _cache(self) -> AnswerCache:
        return AnswerCache(self.store, self.settings, self.retriever.embedder)

    def search(
        self,
        question: str,
        *,
        k: int | None = None,
        overrides: dict[str, Any] | None = None,
        filters: QueryFilters | None = None,
    ) -> tuple[SearchResult, list[CompanyCoverage]]:
        """The chunks for a question, and what the store holds (for a refusal's reply)."""
        with self.store.connect() as conn:
            found = self.retriever.retrieve(
                question,
                k=k or self.settings.answer.k,
                overrides=overrides,
                conn=conn,
                filters=filters,
                with_flagged=self.settings.answer.include_flagged,
                keep=("company_ids",),
            )
            coverage = store_coverage(conn)
            conn.rollback()
        return found, coverage

    def _before_search(self, question: str, overrides: dict[str, Any] | None) -> Answer | None:
        """The answer when it needs no passage (a company the store lacks, a period no filing
        of it covers, a question the facts store answers); None: search first."""
        with self.store.connect() as conn:
            filters = Retriever.filters_for(conn, question, overrides)
            coverage = store_coverage(conn)
            conn.rollback()
        found = SearchResult(hits=[], filters=filters, applied={}, variant="none")
        unknown = filters.unknown_companies and not filters.companies
        if not unknown and not self._unheld_period(found, coverage):
            route = self._route(question, found, {})
            if route.name != "facts":
                return None
        return self.answer_from(question, found, coverage)

    def answer_from(
        self,
        question: str,
        found: SearchResult,
        coverage: list[CompanyCoverage],
        *,
        on_token: OnToken | None = None,
        on_event: OnEvent | None = None,
        on_progress: OnToken | None = None,
    ) -> Answer:
        """Refuse, or extract facts, calculate, write and check an answer from ``found``;
        every number it states gets its status (finrag.answer.status)."""
        with recording_fallbacks() as fallbacks:  # calls Ollama failed, answered in process
            answer = self._answer_from(question, found, coverage, on_token, on_event, on_progress)
        return settle(answer.add_fallbacks(fallbacks))

    def _answer_from(self, question, found, coverage, on_token, on_event, on_progress) -> Answer:
        started = time.perf_counter()
        notify = on_event or (lambda _e: None)
        answer = Answer(question=question, answer="")
        answer.retrieval = _retrieval_summary(found)
        # The facts route before the relevance floor: a stored fact answers whatever the
        # excerpts' scores; a company the store lacks is refused before either.
        refusal = self._refusal(found, coverage)
        if refusal and refusal[0] == "unknown-company":
            return _refused(answer, refusal, started)
        if unheld := self._unheld_period(found, coverage):
            return _refused(answer, ("unheld-period", unheld), started)
        route = self._route(question, found, answer.retrieval)
        if route.name == "facts":
            return self._facts_answer(route, answer.retrieval, started, notify)
        if refusal:
            return _refused(answer, refusal, started)
        # A measure the facts store lacks for the period asked: only that company's
        # passages for that period may answer (finrag.answer.coverage), or none.
        confined = confine_to_period(
            route.outcome if route.name == "text" else None, found, coverage
        )
        if isinstance(confined, str):
            return _refused(answer, ("not-for-period", confined), started)
        found = confined or found
        mixed = route.outcome.answer if route.name == "mixed" and route.outcome else None
        if not self.settings.answer.use_llm:
            return _without_model(answer, found, mixed, started)
        try:
            return self._model_answer(
                question, found, coverage, answer, mixed, started, on_token, notify, on_progress
            )
        except (LLMTimeout, ModelCrashed) as exc:
            if mixed is None:
                raise
            return _facts_after_timeout(answer, mixed, exc, started)

    def _model_answer(
        self, question, found, coverage, answer, mixed, started, on_token, notify, on_progress
    ) -> Answer:
        """Extract facts from the excerpts, calculate, write the answer and check it."""
        # Pages give their chunks breadth first up to the chunks the model reads: with
        # fewer pages than that, a page's second and third chunks fill the budget.
        context = build_context(found.hits, budget=self.settings.answer.k)
        if mixed is not None:
            context = _with_fact_sources(mixed, found)
            answer.route = "mixed"
        answer.chunks = context
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
        answer.warnings = _scope_flags(found)
        answer.flags += answer.warnings
        llm = self.llm
        answer.backend, answer.model = llm.backend, llm.model

        t0 = time.perf_counter()
        extracted = llm.chat(
            load_prompt("extract").messages(question=question, context=render_context(context)),
            output=Extraction,
            max_tokens=EXTRACTION_BUDGET,
            on_token=on_progress,
        )
        _count(answer, extracted)
        answer.timings["extract"] = _since(t0)
        extraction: Extraction = extracted.data
        answer.facts = check_facts(extraction.facts, context)
        answer.calculations = run_calculations(extraction.calculations, context)
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
            if c.error:
                answer.flags.append(f"calculation '{c.description}' failed: {c.error}")
            elif c.unsourced_inputs:
                answer.flags.append(
                    f"calculation '{c.description}' not used: inputs "
                    f"{', '.join(c.unsourced_inputs)} are in no source"
                )

        # No fact survived the check against its excerpt: whatever the model wrote next
        # would rest on nothing we can show, so say so instead (a wrong figure costs more
        # than a refusal).
        if not any(f.ok for f in answer.facts):
            answer.refused = True
            if extraction.answerable:
                answer.refusal = "unverified-facts"
                answer.answer = _unverified_message(found, context)
            else:
                answer.refusal = "not-in-context"
                answer.answer = _not_found_message(found, coverage)
            answer.timings["total"] = _since(started)
            return answer

        t0 = time.perf_counter()
        messages = load_prompt("answer").messages(
            question=question,
            facts=facts_for_prompt(answer.facts, context),
            calculations=calculations_for_prompt(answer.calculations),
        )
        messages = with_persona(messages, active_persona(self.settings))
        notify("answering")
        reply = llm.chat(messages, on_token=on_token)
        _count(answer, reply)
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
            _count(answer, reply)
            text, added = attach_citations(reply.text.strip(), answer.facts)
            problems = check_numbers(text, context, answer.facts, answer.calculations)
            answer.flags += [f"unverified number {p.describe()}" for p in problems]
        if added:
            answer.flags.append(
                "citations added by finrag where the model cited nothing: "
                + ", ".join(f"[{n}]" for n in added)
            )
        answer.unverified_numbers = [asdict(p) for p in problems]
        answer.timings["answer"] = _since(t0)
        answer.answer = text
        answer.citations, answer.invalid_citations = map_citations(text, context, answer.facts)
        answer.flags += [f"citation [{n}] names no source" for n in answer.invalid_citations]
        answer.flags += [
            f"source [{c.n}] holds instruction-like text ({c.flagged!r}): read it as a quote"
            for c in answer.citations
            if c.flagged
        ]
        if not answer.citations:
            answer.flags.append("the answer cites no source")
        answer.timings["total"] = _since(started)
        return answer

    def _route(self, question: str, found: SearchResult, trace: dict[str, Any]) -> Route:
        """The route for the question; ``trace`` records which and why."""
        if not self.settings.answer.facts_route:
            route = Route("text", "the facts route is off (answer.facts_route)")
        else:
            with self.store.connect() as conn:
                route = choose_route(conn, question, found.filters)
                conn.rollback()
            trace["facts_lookup_s"] = route.seconds
        trace["route"], trace["route_reason"] = route.name, route.reason
        return route

    def _facts_answer(
        self, route: Route, trace: dict[str, Any], started: float, notify: OnEvent
    ) -> Answer:
        """The facts route's answer, worded by the model when one is used (its numbers
        held to the template's), else the template."""
        answer = route.outcome.answer
        answer.retrieval = trace
        answer.timings["facts"] = route.seconds
        if self.settings.answer.use_llm:
            t0 = time.perf_counter()
            try:
                llm = self.llm
            except (LLMError, ModelNotAvailable) as exc:  # the numbers need no model
                answer.flags.append(f"no model to word the answer ({exc.message}): template")
                answer.timings["total"] = _since(started)
                return answer
            notify("phrasing")
            text, problem, tokens = phrase(llm, answer, active_persona(self.settings))
            answer.timings["phrase"] = _since(t0)
            answer.backend, answer.model = llm.backend, llm.model
            for key, count in tokens.items():
                answer.tokens[key] += count
            if text is not None:
                answer.answer = text
            else:
                answer.flags.append(problem)
        answer.timings["total"] = _since(started)
        return answer

    def _unheld_period(self, found: SearchResult, coverage) -> str | None:
        """The refusal when no filing of the named companies covers the years asked."""
        filters = found.filters
        if not (filters.companies and filters.years):
            return None
        with self.store.connect() as conn:
            filings = held_filings(conn, [c.id for c in filters.companies])
            conn.rollback()
        companies = unheld_period(filters, filings)
        return unheld_period_message(companies, filters, coverage) if companies else None

    def _refusal(self, found: SearchResult, coverage) -> tuple[str, str] | None:
        unknown = found.filters.unknown_companies
        if unknown and not found.filters.companies:
            return "unknown-company", (
                f"{' and '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not in your "
                f"filings, so I cannot answer that. {_holdings(coverage)}"
            )
        best = max((h.dense_score or -1.0 for h in found.hits), default=None)
        if best is None or best < self.settings.answer.min_relevance:
            return "not-relevant", _not_found_message(found, coverage)
        return None


def _refused(answer: Answer, refusal: tuple[str, str], started: float) -> Answer:
    answer.refused, answer.refusal, answer.answer = True, refusal[0], refusal[1]
    answer.timings["total"] = _since(started)
    return answer


def _without_model(
    answer: Answer, found: SearchResult, mixed: Answer | None, started: float
) -> Answer:
    """With the model off (--no-llm): the facts the store holds for the question when it
    has them (the reasons it also asks for need the model), else the excerpts to read."""
    if mixed is not None:
        mixed.retrieval = answer.retrieval
        mixed.route = "mixed"
        mixed.flags.append("the question also asks for reasons or a judgement: run with the model")
        mixed.timings["total"] = _since(started)
        return mixed
    best = sorted(found.hits, key=lambda h: -h.score)[:3]
    where = "; ".join(ContextChunk(n, h).label for n, h in enumerate(best, 1))
    answer.refused, answer.refusal = True, "no-llm"
    answer.answer = (
        "The facts store does not answer this question and the model is off (--no-llm), "
        f"so no answer is written ({answer.retrieval.get('route_reason')}). "
        f"Closest excerpts: {where or 'none'}."
    )
    answer.timings["total"] = _since(started)
    return answer


def _facts_after_timeout(
    answer: Answer, mixed: Answer, exc: LLMTimeout | ModelCrashed, started: float
) -> Answer:
    """The model timed out, or its process died, on a question the facts store partly
    answers: the stored figures, said to be all there is, rather than nothing."""
    mixed.retrieval = answer.retrieval
    mixed.route = "mixed"
    if isinstance(exc, ModelCrashed):  # the fix is the command's error line
        what, hint = exc.message, ""
    else:
        what, hint = f"the model timed out ({exc.message})", f" ({TIMEOUT_HINT})"
    mixed.flags.append(
        f"{what}: answered from the facts store only; the rest of the question needs "
        f"the model{hint}"
    )
    mixed.timings["total"] = _since(started)
    return mixed


def _with_fact_sources(mixed: Answer, found: SearchResult) -> list[ContextChunk]:
    """The excerpts printing the facts first ([1]..[m], as the facts cite them), then the
    retrieved ones not among them."""
    first = list(mixed.chunks)
    held = {c.hit.chunk_id for c in first}
    rest = [h for h in found.hits if h.chunk_id not in held]
    return first + [ContextChunk(len(first) + c.n, c.hit) for c in build_context(rest)]


def _not_found_message(found: SearchResult, coverage) -> str:
    searched = _searched(found)
    return f"I could not find that in your filings ({searched}). {_holdings(coverage)}"


def _unverified_message(found: SearchResult, context: list[ContextChunk]) -> str:
    closest = "; ".join(c.label for c in sorted(context, key=lambda c: -c.hit.score)[:3])
    return (
        f"I found excerpts that may hold the answer ({_searched(found)}), but none of the facts "
        f"read from them matched their text, so I give no figure. Closest: {closest}."
    )


def _searched(found: SearchResult) -> str:
    f = found.filters
    parts = []
    if f.companies and "company_ids" in found.applied:
        parts.append(", ".join(c.name for c in f.companies))
    if f.years and "years" in found.applied:
        parts.append("fiscal " + ", ".join(map(str, f.years)))
    if f.quarter and "quarter" in found.applied:
        parts.append(f"Q{f.quarter}")
    if f.form_types and "form_types" in found.applied:
        parts.append(", ".join(f.form_types))
    where = "searched " + (" ".join(parts) if parts else "every filing")
    if found.widened:
        where += f"; no filing matches {' and '.join(found.widened_words())}, so it was dropped"
    return where


def _scope_flags(found: SearchResult) -> list[str]:
    """What the answer does not cover of what was asked: never silent."""
    flags = []
    if found.widened:
        dropped = " and ".join(found.widened_words())
        flags.append(f"no filing matches {dropped}: searched without that filter")
    unknown = found.filters.unknown_companies
    if unknown and found.filters.companies:
        held = " and ".join(c.name for c in found.filters.companies)
        flags.append(
            f"{' and '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not in your "
            f"filings: answered for {held} only"
        )
    return flags


def _holdings(coverage) -> str:
    return f"The store holds: {describe_coverage(coverage)}."


def _retrieval_summary(found: SearchResult) -> dict[str, Any]:
    return {
        "variant": found.variant,
        "filters": found.filters.matched,
        "applied": found.applied,
        "widened": found.widened,
        "timings_ms": found.timings_ms,
        "best_dense_score": max((h.dense_score or -1.0 for h in found.hits), default=None),
    }


def _count(answer: Answer, result: ChatResult) -> None:
    answer.tokens["prompt"] += result.prompt_tokens
    answer.tokens["completion"] += result.completion_tokens


def _since(t0: float) -> float:
    return round(time.perf_counter() - t0, 3)


__all__ = ["Answer", "Asker", "ContextChunk"]
