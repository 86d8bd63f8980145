"""Retrieval: filters from the question, hybrid search inside Postgres, reranking."""

from __future__ import annotations

from finrag.retrieve.filters import QueryFilters, extract_query_filters
from finrag.retrieve.hybrid import Hit, SearchResult
from finrag.retrieve.retriever import Retriever, Variant, retrieve

__all__ = [
    "Hit",
    "QueryFilters",
    "Retriever",
    "SearchResult",
    "Variant",
    "extract_query_filters",
    "retrieve",
]
