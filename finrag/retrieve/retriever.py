"""Question in, ranked chunks out: filters, hybrid search, rerank — and the ablations of it."""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg

from finrag.config import Settings
from finrag.db import Store
from finrag.db.companies import lookup_company
from finrag.embed import Embedder, get_embedder
from finrag.errors import UsageError
from finrag.graph import retrieve as graph_retrieval  # a module: it imports retrieve.hybrid
from finrag.llm.base import LLMError
from finrag.retrieve.filters import CompanyRef, QueryFilters, extract_query_filters
from finrag.retrieve.hybrid import SearchResult, search
from finrag.retrieve.intents import aim
from finrag.retrieve.pages import group_by_page
from finrag.retrieve.query import analyze_question
from finrag.retrieve.rerank import Reranker, get_reranker, rerank
from finrag.retrieve.summaries import SUMMARY_POOL, fuse_summary_chunks

if TYPE_CHECKING:
    from finrag.llm import LLM

_PARTS = {"dense", "fts", "hybrid", "filters", "rerank", "pages", "summaries", "graph", "sections"}


@dataclass(frozen=True)
class Variant:
    """Which stages run. The ablation names them: dense, fts, hybrid, hybrid+filters,
    hybrid+filters+rerank, hybrid+filters+pages, hybrid+filters+graph (and any other
    '+'-joined combination); +pages returns pages (finrag.retrieve.pages) instead of chunks.
    +graph:KIND fuses the graph's chunks only into questions of that kind
    (finrag.graph.retrieve.question_kind: entity, structure, other); repeat it for several."""

    dense: bool = True
    text: bool = True
    filters: bool = True
    rerank: bool = True
    pages: bool = False
    summaries: bool = False  # section summaries' chunks fused in (retrieve.summaries)
    graph: bool = False  # the chunks stating the asked relations fused in (finrag.graph)
    graph_kinds: tuple[str, ...] = ()  # ...for questions of these kinds only (graph False)
    sections: bool = False  # section kinds the question implies boosted (retrieve.intents)

    @classmethod
    def parse(cls, name: str) -> Variant:
        parts = [p.strip().lower() for p in name.split("+") if p.strip()]
        kinds = tuple(p.removeprefix("graph:") for p in parts if p.startswith("graph:"))
        parts = [p for p in parts if not p.startswith("graph:")]
        unknown = set(parts) - _PARTS
        unknown |= set(kinds) - set(graph_retrieval.QUESTION_KINDS)
        if unknown or not parts or parts[0] not in {"dense", "fts", "hybrid"}:
            raise UsageError(
                f"unknown retrieval variant {name!r}",
                hint="start with dense, fts or hybrid, then add +filters, +rerank, +pages, "
                "+summaries and/or +graph (or +graph:entity, +graph:structure), e.g. "
                "hybrid+filters+rerank",
            )
        return cls(
            dense=parts[0] in {"dense", "hybrid"},
            text=parts[0] in {"fts", "hybrid"},
            filters="filters" in parts,
            rerank="rerank" in parts,
            pages="pages" in parts,
            summaries="summaries" in parts,
            graph="graph" in parts,
            graph_kinds=() if "graph" in parts else tuple(sorted(set(kinds))),
            sections="sections" in parts,
        )

    @property
    def name(self) -> str:
        base = "hybrid" if self.dense and self.text else "dense" if self.dense else "fts"
        return (
            base
            + ("+filters" if self.filters else "")
            + ("+rerank" if self.rerank else "")
            + ("+pages" if self.pages else "")
            + ("+summaries" if self.summaries else "")
            + ("+graph" if self.graph else "")
            + "".join(f"+graph:{kind}" for kind in self.graph_kinds)
            + ("+sections" if self.sections else "")
        )


class Retriever:
    """Holds the embedder and reranker so a session or an evaluation loads them once."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        llm: LLM | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.embedder = embedder or get_embedder(settings.embed, settings.models_dir)
        self.reranker = reranker if reranker is not None else get_reranker(settings, llm=llm)

    def default_variant(self) -> Variant:
        """Every stage the settings turn on; the graph for the question kinds
        retrieve.graph_kinds names (`ask` and `chat` search with this variant)."""
        return Variant(
            rerank=self.reranker is not None,
            pages=self.settings.retrieve.group_by_page,
            sections=self.settings.retrieve.section_intents,
            graph_kinds=tuple(sorted(set(self.settings.retrieve.graph_kinds))),
        )

    def retrieve(
        self,
        question: str,
        *,
        k: int | None = None,
        overrides: dict[str, Any] | None = None,
        variant: Variant | None = None,
        conn: psycopg.Connection | None = None,
        filters: QueryFilters | None = None,
        with_flagged: bool = True,
        keep: Collection[str] = (),
    ) -> SearchResult:
        """Filters from the question (flags win; ``filters`` given replace both), filtered
        hybrid search, then rerank, then (+pages) group by page: ``k`` pages. ``with_flagged``
        False leaves out chunks flagged as instruction-like text; filters named in ``keep``
        are never widened away."""
        variant = variant or self.default_variant()
        use_graph = uses_graph(variant, question)
        if variant.rerank and self.reranker is None:
            raise UsageError(
                f"variant {variant.name} needs a reranker, and retrieve.reranker is 'none'",
                hint="set FINRAG_RETRIEVE__RERANKER=llm (or cross-encoder with "
                "FINRAG_RETRIEVE__CROSS_ENCODER=DIR)",
            )
        if conn is None:
            with self.store.connect() as own:
                return self.retrieve(
                    question,
                    k=k,
                    overrides=overrides,
                    variant=variant,
                    conn=own,
                    filters=filters,
                    with_flagged=with_flagged,
                    keep=keep,
                )
        settings = self.settings.retrieve
        k = k or settings.k
        timings: dict[str, float] = {}
        # Both halves search with the question's focus and the filing vocabulary for what it
        # asks; filters still come from the whole question.
        query = analyze_question(question).search_text if settings.query_analysis else question
        t0 = time.perf_counter()
        vector = self.embedder.embed([query])[0] if variant.dense else None
        timings["embed"] = _ms_since(t0)
        t0 = time.perf_counter()
        if filters is None:
            filters = self.filters_for(conn, question, overrides)
        timings["filters"] = _ms_since(t0)
        t0 = time.perf_counter()
        fetch = max(k, settings.rerank_candidates) if variant.rerank else k
        if variant.pages:  # k pages from the candidates of both halves, not from k chunks
            fetch = max(fetch, settings.candidates)
        if variant.summaries:  # a summarized section's chunk may rank past k among chunks
            fetch = max(fetch, SUMMARY_POOL)
        if use_graph:  # the same for a chunk the graph finds
            fetch = max(fetch, graph_retrieval.GRAPH_POOL)
        if variant.sections:  # a boosted chunk may come from past the first k
            fetch = max(fetch, 4 * k)
        result = search(
            conn,
            query,
            vector,
            filters,
            settings,
            k=fetch,
            use_filters=variant.filters,
            full_text=variant.text,
            with_flagged=with_flagged,
            keep=keep,
        )
        conn.rollback()
        timings["search"] = _ms_since(t0)
        if variant.summaries:
            t0 = time.perf_counter()
            result.hits = fuse_summary_chunks(
                conn,
                result,
                query,
                vector,
                settings,
                full_text=variant.text,
                with_flagged=with_flagged,
            )
            conn.rollback()
            timings["summaries"] = _ms_since(t0)
        if use_graph:
            t0 = time.perf_counter()
            result.hits, _ = graph_retrieval.fuse_graph_chunks(
                conn,
                result,
                question,
                rrf_k=settings.rrf_k,
                weight=settings.graph_weight,
                with_flagged=with_flagged,
            )
            conn.rollback()
            timings["graph"] = _ms_since(t0)
        if variant.sections:
            t0 = time.perf_counter()
            result.hits = aim(conn, result.hits, question, result.filters, k)
            conn.rollback()
            timings["sections"] = _ms_since(t0)
        if variant.rerank and self.reranker is not None:
            t0 = time.perf_counter()
            try:
                result.hits = rerank(
                    self.reranker, question, result.hits, top=settings.rerank_candidates
                )
                result.reranker = self.reranker.name
            except LLMError as exc:  # a model that fails to rank leaves the fused order
                result.reranker = f"{self.reranker.name} failed ({exc.message}): fused order"
            timings["rerank"] = _ms_since(t0)
        if variant.pages:
            reranked = any(h.rerank_score is not None for h in result.hits)
            result.hits = group_by_page(result.hits, k, by_rank=reranked)
        result.hits = result.hits[:k]
        result.query = query
        result.variant = variant.name
        result.timings_ms = timings
        return result

    @staticmethod
    def filters_for(
        conn: psycopg.Connection, question: str, overrides: dict[str, Any] | None
    ) -> QueryFilters:
        """Filters read from the question; each override (a CLI flag) replaces its field."""
        filters = extract_query_filters(question, conn)
        overrides = {key: v for key, v in (overrides or {}).items() if v}
        if company := overrides.get("company"):
            found = lookup_company(conn, company)
            if found is None:
                raise UsageError(
                    f"no company {company!r} in the store", hint="see `finrag docs list`"
                )
            filters.companies = [CompanyRef(*found)]
            filters.matched["company"] = ["--company"]
        if year := overrides.get("year"):
            filters.years, filters.matched["fiscal_year"] = [year], ["--year"]
        if quarter := overrides.get("quarter"):
            filters.quarter, filters.matched["quarter"] = quarter, ["--quarter"]
        if form := overrides.get("form"):
            filters.form_types, filters.matched["form_type"] = [form.upper()], ["--form"]
        return filters


def uses_graph(variant: Variant, question: str) -> bool:
    """Whether the graph's chunks are fused in for this question under ``variant``."""
    if variant.graph:
        return True
    return bool(variant.graph_kinds) and (
        graph_retrieval.question_kind(question) in variant.graph_kinds
    )


def _ms_since(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)


def retrieve(
    store: Store,
    settings: Settings,
    question: str,
    *,
    k: int | None = None,
    overrides: dict[str, Any] | None = None,
    embedder: Embedder | None = None,
) -> SearchResult:
    """One question through the configured pipeline (a Retriever used once)."""
    return Retriever(store, settings, embedder=embedder).retrieve(
        question, k=k, overrides=overrides
    )
