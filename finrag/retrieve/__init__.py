"""Retrieval: filters from the question, hybrid search inside Postgres."""

from __future__ import annotations

from typing import Any

from finrag.config import Settings
from finrag.db import Store
from finrag.db.companies import lookup_company
from finrag.embed import Embedder, get_embedder
from finrag.errors import UsageError
from finrag.retrieve.filters import CompanyRef, QueryFilters, extract_query_filters
from finrag.retrieve.hybrid import SearchResult, SearchSettings, search

__all__ = ["QueryFilters", "SearchResult", "SearchSettings", "retrieve"]


def retrieve(
    store: Store,
    settings: Settings,
    question: str,
    *,
    k: int = 10,
    overrides: dict[str, Any] | None = None,
    embedder: Embedder | None = None,
) -> SearchResult:
    """Filters from the question (flags win), then filtered hybrid search."""
    embedder = embedder or get_embedder(settings.embed, settings.models_dir)
    vector = embedder.embed([question])[0]
    overrides = {key: v for key, v in (overrides or {}).items() if v}
    with store.connect() as conn:
        filters = extract_query_filters(question, conn)
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
        return search(conn, question, vector, filters, SearchSettings(k=k))
