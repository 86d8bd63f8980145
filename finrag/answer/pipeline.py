"""`finrag ask` as a library call: the stages of finrag.answer.stages, in order.

retrieve → gate (refusals that need no model) → route (the facts route answers here)
→ evidence (the text route's quotes, selected by id) → compose (the model writes around
them) → check (numbers, citations, status). The mixed route, and answer.text_mode =
"extract", read whole excerpts instead (finrag.answer.stages.extract).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from finrag.answer import graders
from finrag.answer.cache import AnswerCache
from finrag.answer.coverage import confine_to_period
from finrag.answer.implied_company import Implied, implied_company
from finrag.answer.result import Answer
from finrag.answer.stages import (
    check,
    compose,
    decisive,
    evidence,
    extract,
    gate,
    ranking,
    revision,
    since,
)
from finrag.answer.stages import count as count_tokens
from finrag.answer.stages import route as routing
from finrag.answer.stages.retrieve import retrieval_summary, scope_flags, search
from finrag.answer.status import settle
from finrag.config import Settings
from finrag.db import Store
from finrag.db.documents import CompanyCoverage, store_coverage
from finrag.errors import FilterUnmatched
from finrag.llm import LLM, LLMTimeout, ModelCrashed, get_llm
from finrag.llm.fallback import recording_fallbacks
from finrag.personas import active_persona
from finrag.retrieve import Retriever, SearchResult
from finrag.retrieve.context import ContextChunk, build_context
from finrag.retrieve.filters import QueryFilters

EVIDENCE_BREADTH = 3  # chunks scored for quotes, per chunk the extraction path reads
OnToken = Callable[[str], None]
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
        writes (its JSON): for a progress line, not for display. With ``strict_filters``,
        a filter no filing matches fails (FilterUnmatched) before any model call, instead
        of being dropped. With ``use_cache`` (and answer.cache on), a question asked
        before, or reworded, on the same store is answered from the answer cache
        (finrag.answer.cache), and a new answer is kept there."""
        implied = self._implied(question, overrides)
        if implied is not None:  # the question names no company; the store allows one
            overrides = {**(overrides or {}), "company": implied.name}
        answer = self._ask(
            question,
            k=k,
            overrides=overrides,
            on_token=on_token,
            on_event=on_event,
            on_progress=on_progress,
            strict_filters=strict_filters,
            use_cache=use_cache,
        )
        if implied is not None:
            answer.warnings.append(implied.note)
            if not answer.refused:
                answer.answer = f"{answer.answer} ({implied.note})"
        return answer

    def _implied(self, question: str, overrides: dict[str, Any] | None) -> Implied | None:
        if overrides and overrides.get("company"):
            return None
        with self.store.connect() as conn:
            filters = Retriever.filters_for(conn, question, overrides)
            found = implied_company(conn, filters)
            conn.rollback()
        return found

    def _ask(
        self,
        question: str,
        *,
        k: int | None,
        overrides: dict[str, Any] | None,
        on_token: OnToken | None,
        on_event: OnEvent | None,
        on_progress: OnToken | None,
        strict_filters: bool,
        use_cache: bool,
    ) -> Answer:
        started = time.perf_counter()
        # Facts and refusals that need no passage come before the search, so no embedder
        # loads for them; not when a cached answer would spare the model's phrasing.
        cached = use_cache and self.settings.answer.cache and self.settings.answer.use_llm
        if not cached and (early := self._before_search(question, overrides)) is not None:
            early.timings["total"] = since(started)
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
        retrieve_s = since(started)
        cache = self._cache() if use_cache and self.settings.answer.cache else None
        if cache is not None and (hit := cache.lookup(question, found, k)) is not None:
            answer, why = hit
            answer.cache = why.as_dict()
            answer.timings = {"retrieve": retrieve_s, "total": since(started)}
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
        answer.timings["total"] = since(started)
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
        return search(
            self.store,
            self.retriever,
            self.settings,
            question,
            k=k,
            overrides=overrides,
            filters=filters,
        )

    def _before_search(self, question: str, overrides: dict[str, Any] | None) -> Answer | None:
        """The answer when it needs no passage (a company the store lacks, a period no filing
        of it covers, a question the facts store answers); None: search first."""
        with self.store.connect() as conn:
            filters = Retriever.filters_for(conn, question, overrides)
            coverage = store_coverage(conn)
            conn.rollback()
        found = SearchResult(hits=[], filters=filters, applied={}, variant="none")
        if gate.before_route(self.store, found, coverage) is None:
            chosen = routing.route(self.store, self.settings, question, found, {})
            if chosen.name != "facts":
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
        """Refuse, or answer from ``found`` by the route the question takes; every number
        the answer states gets its status (finrag.answer.status)."""
        with recording_fallbacks() as fallbacks:  # calls Ollama failed, answered in process
            answer = graders.graded_answer(  # answer.graders: passages graded, answer checked
                self.settings,
                question,
                found,
                lambda f: self._answer_from(question, f, coverage, on_token, on_event, on_progress),
            )
        answer = settle(answer.add_fallbacks(fallbacks))
        if not answer.evidence and not answer.refused:
            answer.evidence = check.evidence_of(answer)
        return answer

    def _answer_from(self, question, found, coverage, on_token, on_event, on_progress) -> Answer:
        started = time.perf_counter()
        notify = on_event or (lambda _e: None)
        answer = Answer(question=question, answer="")
        answer.retrieval = retrieval_summary(found)
        if refusal := gate.before_route(self.store, found, coverage):
            return gate.refused(answer, refusal, started)
        chosen = routing.route(self.store, self.settings, question, found, answer.retrieval)
        if chosen.name == "facts":
            return routing.facts_answer(
                chosen, self.settings, lambda: self.llm, answer.retrieval, started, notify
            )
        if refusal := gate.not_relevant(self.settings, found, coverage):
            return gate.refused(answer, refusal, started)
        # A measure the facts store lacks for the period asked: only that company's
        # passages for that period may answer (finrag.answer.coverage), or none.
        confined = confine_to_period(
            chosen.outcome if chosen.name == "text" else None, found, coverage
        )
        if isinstance(confined, str):
            return gate.refused(answer, ("not-for-period", confined), started)
        found = confined or found
        if chosen.name == "text" and (read := self._read_without_model(question, found, started)):
            read.retrieval = {**answer.retrieval, **read.retrieval}
            return read
        mixed = chosen.outcome.answer if chosen.name == "mixed" and chosen.outcome else None
        if not self.settings.answer.use_llm:
            refused = gate.without_model(answer, found, mixed, started)
            if mixed is None:  # no answer is written, but the quotes that would be read
                refused.evidence = [e.as_dict() for e in self._select(question, found).chosen]
            return refused
        answer.warnings = scope_flags(found)
        answer.flags += answer.warnings
        try:
            if self.settings.answer.text_mode == "evidence" and not evidence.needs_arithmetic(
                question
            ):
                return self._evidence_answer(
                    question, found, answer, mixed, started, on_token, notify, on_progress
                )
            return self._extraction_answer(
                question, found, coverage, answer, mixed, started, on_token, notify, on_progress
            )
        except (LLMTimeout, ModelCrashed) as exc:
            if mixed is None:
                raise
            return routing.facts_after_timeout(answer, mixed, exc, started)

    def _read_without_model(self, question, found, started) -> Answer | None:
        """A text-route question whose answer is arithmetic on printed figures: a ranking
        of a table's rows, a revised figure beside the old one. No model reads these."""
        for stage in (ranking.ranked_answer, revision.revision_answer):
            if (read := stage(question, found, started)) is not None:
                return read
        return None

    def _extraction_answer(
        self, question, found, coverage, answer, mixed, started, on_token, notify, on_progress
    ) -> Answer:
        context = extract.excerpts(found, mixed, self.settings)
        if mixed is not None:
            answer.route = "mixed"
        elif self.settings.answer.text_mode == "evidence":
            answer.retrieval["text_mode"] = "extract: the question asks for arithmetic"
        check.show_context(answer, context)
        llm = self.llm
        answer.backend, answer.model = llm.backend, llm.model
        return extract.extract_and_write(
            llm,
            self.settings,
            question,
            found,
            coverage,
            answer,
            context,
            mixed,
            started,
            on_token,
            notify,
            on_progress,
        )

    def _evidence_answer(
        self, question, found, answer, mixed, started, on_token, notify, on_progress
    ) -> Answer:
        """The text route: quotes selected by id, the answer written around them. On the
        mixed route the stored figures come first, as the facts route wrote them (their
        sources [1]..[m]), and the quotes, numbered after them, give the reasons."""
        t0 = time.perf_counter()
        selection = self._select(question, found)
        answer.timings["evidence"] = since(t0)
        first = list(mixed.chunks) if mixed is not None else []
        chosen = [replace(e, n=e.n + len(first)) for e in selection.chosen]
        # A conclusion the filing states in a fixed form decides the yes/no, not the model.
        decided = decisive.litigation(question, selection.pool) if mixed is None else None
        if decided is not None:
            quote = next((e for e in chosen if e.text == decided.quote), None)
            if quote is None:
                n = len(first) + len(chosen) + 1
                quote = evidence.Evidence(n, decided.quote, decided.chunk)
                chosen.append(quote)
        answer.retrieval["evidence"] = {
            "candidates": selection.candidates,
            "terms": selection.terms,
            "selected": [{"n": e.n, "score": e.score} for e in chosen],
        }
        quotes = first + [e.as_chunk() for e in chosen]
        check.show_context(answer, quotes)
        if mixed is not None:
            answer.route = "mixed"
            answer.facts, answer.calculations = mixed.facts, mixed.calculations
            answer.fact_values = mixed.fact_values
            answer.flags += mixed.flags
        notify("extracted")
        if not chosen:
            if mixed is not None:
                return routing.figures_only(
                    answer, mixed, "no sentence found gives the reasons", started
                )
            return gate.no_evidence(answer, found, selection.closest, started)
        llm = self.llm
        answer.backend, answer.model = llm.backend, llm.model
        t0 = time.perf_counter()
        notify("answering")
        composed = compose.compose(
            llm,
            question,
            chosen,
            persona=active_persona(self.settings),
            on_progress=on_progress,
        )
        count_tokens(answer, composed.result)
        answer.timings["answer"] = since(t0)
        if decided is not None:
            composed.verdict, composed.decisive = decided.verdict, quote.n
            composed.answerable = True
            answer.retrieval["evidence"]["decided"] = "the filing's conclusion on litigation"
        notify("checking")
        if mixed is not None:
            composed.verdict = None  # the stored figures decide a yes/no, not a quote
            if not composed.answerable:
                why = "the model found no reasons in the closest quotes"
                return routing.figures_only(answer, mixed, why, started)
        elif not composed.answerable and not composed.verdict:
            return gate.no_evidence(answer, found, chosen[:3], started, read=True)
        claims, problems = check.without_unsupported(
            [c for c, _ in composed.claims], quotes, answer.facts, answer.calculations
        )
        if mixed is not None:
            claims, turned = check.without_contrary(claims, mixed.answer, question)
            answer.flags += [f"removed: a reason that turns the move around: {c}" for c in turned]
            if not claims and turned:
                why = "the reasons the model wrote said the measure moved the other way"
                return routing.figures_only(answer, mixed, why, started)
        text = compose.write(composed, chosen, claims)
        if not text and mixed is None and evidence.asks_for_figure(question):
            # A figure was asked and no quote holds the one the model wrote: the best
            # quote alone would read as an answer without giving one.
            return gate.no_evidence(answer, found, chosen[:3], started, read=True)
        if not text and mixed is None:  # every claim removed: the best quote, as printed
            best = chosen[0]
            text = f"The filing says: “{best.text.rstrip()}” [{best.n}]."
        if mixed is not None:
            text = f"{mixed.answer} {text}".strip()
        if problems:
            text += " " + check.removed_note(problems)
            check.record_problems(answer, problems)
        answer.answer = text
        if on_token:
            on_token(text)
        check.cite(answer, quotes)
        by_n = {e.n: e for e in chosen}
        # The stored figures' sources keep the rows the facts route cited ("Gross profit:
        # 44,301"), not a line of their table that re-citing picks by the answer's words.
        from_facts = {c.n: c for c in mixed.citations} if mixed is not None else {}
        for c in answer.citations:  # the quote whole, as printed: not clipped
            if c.n in by_n:
                c.quote = by_n[c.n].text
            elif c.n in from_facts:
                c.quote = from_facts[c.n].quote
        answer.timings["total"] = since(started)
        return answer

    def _select(self, question: str, found: SearchResult) -> evidence.Selection:
        # The model reads a few quotes, not the chunks: so the quotes are chosen from all
        # the retrieved pages' chunks, not the answer.k the extraction path reads.
        context = build_context(found.hits, budget=self.settings.answer.k * EVIDENCE_BREADTH)
        names = found.filters.company_words()
        return evidence.select(
            question,
            context,
            ignore=names,
            embed=self._embed,
            keep=self.settings.answer.evidence,
        )

    def _embed(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, v)) for v in self.retriever.embedder.embed(texts)]


__all__ = ["Answer", "Asker", "ContextChunk"]
