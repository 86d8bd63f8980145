"""Hybrid retrieval in one round trip: HNSW dense top-N and full-text top-N, fused in SQL.

Fusion is weighted reciprocal rank fusion: score = w_dense / (k + rank_dense) +
w_text / (k + rank_text). Filters become a list of document ids (the documents table
is small), applied to both halves; `hnsw.iterative_scan` keeps a filtered dense search
returning N rows. The question's words are OR-ed for full-text search: a question is
not a boolean query, and ts_rank_cd already rewards chunks that match more of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import psycopg

from finrag.retrieve.filters import QueryFilters

if TYPE_CHECKING:
    import numpy as np

_STOP = {
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "when",
    "where",
    "why",
    "how",
    "was",
    "were",
    "is",
    "are",
    "the",
    "a",
    "an",
    "of",
    "for",
    "in",
    "on",
    "to",
    "and",
    "or",
    "did",
    "does",
    "do",
    "its",
    "their",
    "company",
    "companys",
    "much",
    "many",
    "give",
    "tell",
    "me",
    "please",
    "by",
    "from",
    "with",
    "as",
    "at",
    "be",
    "this",
    "that",
    "according",
}


# Each filter as a condition on documents; the order is the order in which they are dropped.
_FILTER_SQL = {
    "quarter": "fiscal_quarter = %s",
    "years": "fiscal_year = ANY(%s)",
    "company_ids": "company_id = ANY(%s)",
    "form_types": "form_type = ANY(%s)",
}
_WIDENING_ORDER = tuple(_FILTER_SQL)


@dataclass
class SearchSettings:
    candidates: int = 40  # N per half
    k: int = 10  # results returned
    rrf_k: int = 60
    dense_weight: float = 1.0
    text_weight: float = 1.0
    ef_search: int = 100


@dataclass
class Hit:
    chunk_id: int
    document_id: int
    document: str
    company: str | None
    fiscal_year: int | None
    fiscal_quarter: int | None
    form_type: str | None
    kind: str
    page_start: int | None
    page_end: int | None
    section_path: list[str]
    content: str
    score: float
    dense_rank: int | None
    dense_score: float | None
    text_rank: int | None
    text_score: float | None


@dataclass
class SearchResult:
    hits: list[Hit]
    filters: QueryFilters
    applied: dict[str, Any]  # the filters actually used in the final search
    widened: list[str] = field(default_factory=list)  # filters dropped because nothing matched


def text_query(question: str) -> str:
    """'What was 3M's FY2018 capex?' -> '3M OR FY2018 OR capex' (websearch syntax)."""
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9&.\-]*", question.replace("’", "'"))
    kept = [w for w in words if w.lower() not in _STOP and len(w) > 1]
    return " OR ".join(dict.fromkeys(kept))


def matching_documents(conn: psycopg.Connection, applied: dict[str, Any]) -> list[int] | None:
    """Ids of the documents the filters allow; None when nothing is filtered."""
    if not applied:
        return None
    clauses = [_FILTER_SQL[key] for key in applied]
    params = list(applied.values())
    rows = conn.execute(
        f"SELECT id FROM documents WHERE {' AND '.join(clauses)}", params
    ).fetchall()
    return [r[0] for r in rows]


_SQL = """
WITH dense AS (
    SELECT id, dist, row_number() OVER (ORDER BY dist) AS rank
    FROM (
        SELECT id, embedding <=> %(vec)s AS dist
        FROM chunks
        WHERE %(docs)s::bigint[] IS NULL OR document_id = ANY(%(docs)s::bigint[])
        ORDER BY embedding <=> %(vec)s
        LIMIT %(n)s
    ) nearest
),
lexical AS (
    SELECT id, score, row_number() OVER (ORDER BY score DESC, id) AS rank
    FROM (
        SELECT c.id, ts_rank_cd(c.tsv, q.query) AS score
        FROM chunks c, websearch_to_tsquery('english', %(text)s) AS q(query)
        WHERE c.tsv @@ q.query
          AND (%(docs)s::bigint[] IS NULL OR c.document_id = ANY(%(docs)s::bigint[]))
        ORDER BY score DESC
        LIMIT %(n)s
    ) matched
)
SELECT c.id, c.document_id, d.path, co.name, d.fiscal_year, d.fiscal_quarter, d.form_type,
       c.kind, c.page_start, c.page_end, c.section_path, c.content,
       COALESCE(%(wd)s / (%(rrf)s + dense.rank), 0)
         + COALESCE(%(wt)s / (%(rrf)s + lexical.rank), 0) AS fused,
       dense.rank, 1 - dense.dist, lexical.rank, lexical.score
FROM dense FULL OUTER JOIN lexical USING (id)
JOIN chunks c ON c.id = COALESCE(dense.id, lexical.id)
JOIN documents d ON d.id = c.document_id
LEFT JOIN companies co ON co.id = d.company_id
ORDER BY fused DESC, c.id
LIMIT %(k)s
"""


def hybrid_search(
    conn: psycopg.Connection,
    question: str,
    vector: np.ndarray,
    applied: dict[str, Any],
    settings: SearchSettings,
) -> list[Hit]:
    docs = matching_documents(conn, applied)
    if docs == []:
        return []
    with conn.transaction():
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        conn.execute(f"SET LOCAL hnsw.ef_search = {int(settings.ef_search)}")
        rows = conn.execute(
            _SQL,
            {
                "vec": vector,
                "docs": docs,
                "n": settings.candidates,
                "text": text_query(question),
                "wd": float(settings.dense_weight),
                "wt": float(settings.text_weight),
                "rrf": float(settings.rrf_k),
                "k": settings.k,
            },
        ).fetchall()
    return [Hit(*row) for row in rows]


def search(
    conn: psycopg.Connection,
    question: str,
    vector: np.ndarray,
    filters: QueryFilters,
    settings: SearchSettings | None = None,
) -> SearchResult:
    """Filtered hybrid search; when the filters leave nothing, widen them in the order
    quarter, year, company, form — and say so."""
    settings = settings or SearchSettings()
    applied = {
        key: value
        for key, value in (
            ("company_ids", [c.id for c in filters.companies]),
            ("years", filters.years),
            ("quarter", filters.quarter),
            ("form_types", filters.form_types),
        )
        if value
    }
    widened: list[str] = []
    hits = hybrid_search(conn, question, vector, applied, settings)
    for key in _WIDENING_ORDER:
        if hits or not applied:
            break
        if key in applied:
            del applied[key]
            widened.append(key)
            hits = hybrid_search(conn, question, vector, applied, settings)
    return SearchResult(hits=hits, filters=filters, applied=applied, widened=widened)
