"""Stage 1, retrieve: the chunks for a question (hybrid search with the question's
filters; the company filter is never dropped to find something; chunks flagged at
ingest as instruction-like text are left out unless answer.include_flagged is set), what
the store holds (for a refusal's reply), and the search in words."""

from __future__ import annotations

from typing import Any

from finrag.config import Settings
from finrag.db import Store
from finrag.db.documents import CompanyCoverage, store_coverage
from finrag.retrieve import Retriever, SearchResult
from finrag.retrieve.filters import QueryFilters


def search(
    store: Store,
    retriever: Retriever,
    settings: Settings,
    question: str,
    *,
    k: int | None = None,
    overrides: dict[str, Any] | None = None,
    filters: QueryFilters | None = None,
) -> tuple[SearchResult, list[CompanyCoverage]]:
    """The chunks for a question, and what the store holds."""
    with store.connect() as conn:
        found = retriever.retrieve(
            question,
            k=k or settings.answer.k,
            overrides=overrides,
            conn=conn,
            filters=filters,
            with_flagged=settings.answer.include_flagged,
            keep=("company_ids",),
        )
        coverage = store_coverage(conn)
        conn.rollback()
    return found, coverage


def retrieval_summary(found: SearchResult) -> dict[str, Any]:
    return {
        "variant": found.variant,
        "filters": found.filters.matched,
        "applied": found.applied,
        "widened": found.widened,
        "timings_ms": found.timings_ms,
        "best_dense_score": max((h.dense_score or -1.0 for h in found.hits), default=None),
    }


def searched(found: SearchResult) -> str:
    """'searched ACME fiscal 2023', and any filter dropped because nothing matched it."""
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


def scope_flags(found: SearchResult) -> list[str]:
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
