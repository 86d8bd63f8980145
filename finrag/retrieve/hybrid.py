"""Hybrid retrieval in one round trip: HNSW dense top-N and full-text top-N, fused in SQL.

Fusion is weighted reciprocal rank fusion, ``w_dense / (rrf_k + rank_dense) + w_text /
(rrf_k + rank_text)``, or a weighted sum of min-max normalized scores (each half scaled
to [0, 1] over its own N candidates). Filters become a list of document ids (the
documents table is small), applied to both halves; ``hnsw.iterative_scan`` keeps a
filtered dense search returning N rows.

Chunks flagged at ingest as instruction-like text (finrag.ingest.injection) can be left
out of both halves, as answers do by default.

Full-text ranking is BM25-style: each query lexeme is weighted by its inverse document
frequency (chunk counts kept in ``lexeme_stats``, sql/003), its frequency in the chunk
saturating with k1. ts_rank_cd alone has no IDF, so a question's filler words ("amount",
"details") weighed as much as its subject ("expenditure"). Terms found in more than
``text_common_share`` of all chunks are left out: they carry almost no weight and would
make the index return most of the table.

Postgres has no ranked full-text index: every row the match returns is scored. When even
the rarest term is in more chunks than ``text_match_budget`` (a company's name at a
million chunks), and so are the filtered documents if any, the bounded first stage
(``text_first_stage``) scores only ``text_bounded_rows`` of them, read through the GIN
index pattern by pattern: the rows holding the rarest term split by which of the next
rarest terms they hold, the patterns whose terms weigh most (IDF) first
(eval/RESULTS.md: its latency and its agreement with the scan).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import psycopg

from finrag.config import RetrieveSettings
from finrag.retrieve.filters import QueryFilters

if TYPE_CHECKING:
    import numpy as np

_STOP = frozenset(
    {
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
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9&.\-]*")
# The same tokens finrag.exact_terms() indexes (sql/002_exact_terms.sql): PP&E, 10-K, M&A.
_EXACT = re.compile(
    r"(?<![A-Za-z0-9&/-])((?=[A-Z0-9&/-]*[A-Z])[A-Z0-9]{1,6}(?:[&/-][A-Z0-9]{1,6})+)"
    r"(?![A-Za-z0-9&/-])"
)

# Each filter as a condition on documents; the order is the order in which they are dropped.
_FILTER_SQL = {
    "quarter": "fiscal_quarter = %s",
    "years": "fiscal_year = ANY(%s)",
    "company_ids": "company_id = ANY(%s)",
    "form_types": "form_type = ANY(%s)",
}
_WIDENING_ORDER = tuple(_FILTER_SQL)


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
    score: float  # fused
    dense_rank: int | None
    dense_score: float | None  # cosine similarity
    text_rank: int | None
    text_score: float | None  # ts_rank_cd
    flagged: str | None = None  # instruction-like words found at ingest (prompt injection?)
    ocr: bool = False  # its page had no text layer: the text was read by OCR
    rerank_score: float | None = None


@dataclass
class SearchResult:
    hits: list[Hit]
    filters: QueryFilters
    applied: dict[str, Any]  # the filters actually used in the final search
    widened: list[str] = field(default_factory=list)  # filters dropped because nothing matched
    variant: str = "hybrid+filters"
    reranker: str | None = None
    query: str = ""  # what the halves searched with (the question, analyzed)
    timings_ms: dict[str, float] = field(default_factory=dict)

    def widened_words(self) -> list[str]:
        """Each filter dropped because no filing matched it, in words with its value:
        'fiscal year 1999', 'Q3', 'company Acme Corp', 'form 8-K'."""
        f = self.filters
        words = {
            "years": "fiscal year " + " or ".join(map(str, f.years)),
            "quarter": f"Q{f.quarter}",
            "company_ids": "company " + " or ".join(c.name for c in f.companies),
            "form_types": "form " + " or ".join(f.form_types),
        }
        return [words.get(key, key) for key in self.widened]


_BM25_K1 = 1.2


@dataclass(frozen=True)
class TextQuery:
    words: str  # content words, space-separated; Postgres stems them ('english')
    exact: tuple[str, ...] = ()  # glued acronyms as finrag.exact_terms indexes them

    @property
    def empty(self) -> bool:
        return not (self.words or self.exact)


def text_query(question: str) -> TextQuery:
    """'What was 3M's FY2018 PP&E?' -> words '3M FY2018', exact ('ppe',)."""
    question = question.replace("’", "'")
    exact = tuple(dict.fromkeys(re.sub(r"[&/-]", "", m).lower() for m in _EXACT.findall(question)))
    rest = _EXACT.sub(" ", question)
    words = [w for w in _WORD.findall(rest) if w.lower() not in _STOP and len(w) > 1]
    return TextQuery(words=" ".join(dict.fromkeys(words)), exact=exact)


def matching_documents(conn: psycopg.Connection, applied: dict[str, Any]) -> list[int] | None:
    """Ids of the documents the filters allow; None when nothing is filtered."""
    if not applied:
        return None
    clauses = [_FILTER_SQL[key] for key in applied]
    rows = conn.execute(
        f"SELECT id FROM documents WHERE {' AND '.join(clauses)}", list(applied.values())
    ).fetchall()
    return [r[0] for r in rows]


_SQL = """
WITH dense AS (
    SELECT id, 1 - dist AS score, row_number() OVER (ORDER BY dist, id) AS rank
    FROM (
        SELECT id, embedding <=> %(vec)s AS dist
        FROM chunks
        WHERE (%(docs)s::bigint[] IS NULL OR document_id = ANY(%(docs)s::bigint[]))
          AND (%(with_flagged)s OR flagged IS NULL)
        ORDER BY embedding <=> %(vec)s
        LIMIT %(n_dense)s
    ) nearest
),
query_terms AS (
    SELECT u.lexeme FROM unnest(to_tsvector('english', %(words)s)) AS u
    UNION
    SELECT unnest(%(exact)s::text[])
),
terms AS (
    SELECT q.lexeme, s.chunks AS df, corpus.chunks AS total,
           ln(1 + (corpus.chunks - s.chunks + 0.5) / (s.chunks + 0.5)) AS idf,
           row_number() OVER (ORDER BY s.chunks, q.lexeme) AS rarity
    FROM query_terms q
    JOIN lexeme_stats s USING (lexeme)
    CROSS JOIN (SELECT chunks FROM lexeme_stats WHERE lexeme = '') AS corpus
    WHERE s.chunks > 0
),
kept AS (  -- common terms out, but never all of them: the rarest stays
    SELECT lexeme, idf, df, rarity, quote_literal(lexeme)::tsquery AS q,
           -- Rows are matched by the rarest terms only, while their chunk counts add up to
           -- the budget. Every kept term still scores the matched rows.
           coalesce(sum(df) OVER (ORDER BY df, lexeme ROWS BETWEEN UNBOUNDED PRECEDING
                                  AND 1 PRECEDING), 0) < %(budget)s AS matches
    FROM terms
    WHERE df <= %(common)s * total OR rarity = 1
),
bounded AS (  -- too many rows to score: the rarest term's, or the filtered documents'
    SELECT %(bounded)s AND min(df) > %(budget)s
           AND (%(docs)s::bigint[] IS NULL
                OR (SELECT count(*) FROM (SELECT FROM chunks
                                          WHERE document_id = ANY(%(docs)s::bigint[])
                                          LIMIT %(budget)s + 1) AS scope) > %(budget)s)
           AS active
    FROM kept
),
patterns AS (
    -- The rows holding the rarest term, split by which of the next rarest kept terms they
    -- hold: bit i of a mask is the (i + 2)-th rarest term, present or absent (the terms
    -- after those do not split). A pattern weighs the IDF of the terms it holds; heavier
    -- patterns are read first. Together they are the rows the scan would score.
    SELECT mask,
           (SELECT coalesce(sum(idf), 0) FROM kept
            WHERE rarity BETWEEN 2 AND %(split)s::int + 1
              AND mask & (1 << (rarity::int - 2)) <> 0) AS weight,
           (SELECT string_agg(CASE WHEN rarity = 1 OR mask & (1 << (rarity::int - 2)) <> 0
                                   THEN '' ELSE '!' END || quote_literal(lexeme),
                              ' & ' ORDER BY rarity)
            FROM kept WHERE rarity <= %(split)s::int + 1)::tsquery AS q
    FROM generate_series(0, (1 << least(%(split)s::int, (SELECT count(*) FROM kept)::int - 1)) - 1)
         AS mask
),
matched AS (
    SELECT c.id, c.tsv  -- the scan: every row holding a matching term
    FROM chunks c
    WHERE NOT (SELECT active FROM bounded)
      AND c.tsv @@ (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery
                    FROM kept WHERE matches)
      AND (%(docs)s::bigint[] IS NULL OR c.document_id = ANY(%(docs)s::bigint[]))
      AND (%(with_flagged)s OR c.flagged IS NULL)
    UNION ALL
    (SELECT found.id, found.tsv  -- bounded: the first rows, pattern by pattern
     -- The nested loop walks the patterns in the subquery's order and stops at the limit.
     -- The inner LIMIT keeps the patterns outside: without it, a filtered search read the
     -- documents' rows first and took them in storage order, whatever their pattern.
     FROM (SELECT q FROM patterns ORDER BY weight DESC, mask DESC) AS pattern
     CROSS JOIN LATERAL (
         SELECT c.id, c.tsv FROM chunks c
         WHERE c.tsv @@ pattern.q
           AND (%(docs)s::bigint[] IS NULL OR c.document_id = ANY(%(docs)s::bigint[]))
           AND (%(with_flagged)s OR c.flagged IS NULL)
         LIMIT %(bounded_rows)s
     ) AS found
     WHERE (SELECT active FROM bounded)
     LIMIT %(bounded_rows)s)
),
lexical AS (
    SELECT id, score, row_number() OVER (ORDER BY score DESC, id) AS rank
    FROM (
        SELECT m.id,
               (SELECT sum(t.idf * t.tf * (%(k1)s + 1) / (t.tf + %(k1)s))
                FROM (SELECT kept.idf, ts_rank_cd(m.tsv, kept.q) * 10 AS tf  -- 0.1 per hit
                      FROM kept WHERE m.tsv @@ kept.q) AS t) AS score
        FROM matched m
        ORDER BY score DESC, m.id
        LIMIT %(n_text)s
    ) scored
),
joined AS (
    SELECT COALESCE(dense.id, lexical.id) AS id,
           dense.rank AS dense_rank, dense.score AS dense_score,
           lexical.rank AS text_rank, lexical.score AS text_score,
           min(dense.score) OVER () AS dmin, max(dense.score) OVER () AS dmax,
           min(lexical.score) OVER () AS tmin, max(lexical.score) OVER () AS tmax
    FROM dense FULL OUTER JOIN lexical USING (id)
),
fused AS (
    SELECT *,
        CASE WHEN %(fusion)s = 'rrf' THEN
            COALESCE(%(wd)s / (%(rrf)s + dense_rank), 0)
            + COALESCE(%(wt)s / (%(rrf)s + text_rank), 0)
        ELSE
            %(wd)s * CASE WHEN dense_score IS NULL THEN 0 WHEN dmax = dmin THEN 1
                          ELSE (dense_score - dmin) / (dmax - dmin) END
            + %(wt)s * CASE WHEN text_score IS NULL THEN 0 WHEN tmax = tmin THEN 1
                            ELSE (text_score - tmin) / (tmax - tmin) END
        END AS fused
    FROM joined
)
SELECT c.id, c.document_id, d.path, co.name, d.fiscal_year, d.fiscal_quarter, d.form_type,
       c.kind, c.page_start, c.page_end, c.section_path, c.content,
       f.fused, f.dense_rank, f.dense_score, f.text_rank, f.text_score, c.flagged,
       c.ocr
FROM fused f
JOIN chunks c ON c.id = f.id
JOIN documents d ON d.id = c.document_id
LEFT JOIN companies co ON co.id = d.company_id
ORDER BY f.fused DESC, c.id
LIMIT %(k)s
"""


def hybrid_search(
    conn: psycopg.Connection,
    query: TextQuery,
    vector: np.ndarray | None,
    docs: list[int] | None,
    settings: RetrieveSettings,
    *,
    k: int,
    with_flagged: bool = True,
) -> list[Hit]:
    """One statement: the dense half (skipped without a vector), the full-text half
    (skipped without words), fused; ``docs`` None means every document."""
    if docs == [] or (vector is None and query.empty):
        return []
    n_dense = settings.candidates if vector is not None else 0
    with conn.transaction():
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        conn.execute(f"SET LOCAL hnsw.ef_search = {max(settings.ef_search, n_dense)}")
        rows = conn.execute(
            _SQL,
            {
                # A zero vector keeps the statement valid when the dense half is off.
                "vec": vector if vector is not None else _zero_vector(conn),
                "docs": docs,
                "with_flagged": with_flagged,
                "n_dense": n_dense,
                "n_text": 0 if query.empty else settings.candidates,
                "words": query.words,
                "exact": list(query.exact),
                "common": float(settings.text_common_share),
                "budget": settings.text_match_budget,
                "bounded": settings.text_first_stage == "bounded",
                "bounded_rows": settings.text_bounded_rows,
                "split": settings.text_bounded_terms,
                "k1": _BM25_K1,
                "fusion": settings.fusion,
                "wd": float(settings.dense_weight),
                "wt": float(settings.text_weight),
                "rrf": float(settings.rrf_k),
                "k": k,
            },
        ).fetchall()
    return [Hit(*row) for row in rows]


def _zero_vector(conn: psycopg.Connection):
    import numpy as np

    dim = conn.execute("SELECT dimension FROM embedding_model").fetchone()[0]
    return np.zeros(dim, dtype=np.float32)


def applied_filters(filters: QueryFilters) -> dict[str, Any]:
    """The filters as SQL parameters, only those that are set."""
    return {
        key: value
        for key, value in (
            ("company_ids", [c.id for c in filters.companies]),
            ("years", filters.years),
            ("quarter", filters.quarter),
            ("form_types", filters.form_types),
        )
        if value
    }


def search(
    conn: psycopg.Connection,
    question: str,
    vector: np.ndarray | None,
    filters: QueryFilters,
    settings: RetrieveSettings,
    *,
    k: int | None = None,
    use_filters: bool = True,
    full_text: bool = True,
    with_flagged: bool = True,
    keep: Collection[str] = (),
) -> SearchResult:
    """Filtered hybrid search; when the filters leave nothing, drop first each filter no
    filing meets on its own, then widen in the order quarter, year, company, form — and
    say so. Filters named in ``keep`` are never dropped (an answer about one company must
    not come from another's filing)."""
    k = k or settings.k
    query = text_query(question) if full_text else TextQuery("")
    applied = applied_filters(filters) if use_filters else {}
    widened: list[str] = []

    def run() -> list[Hit]:
        docs = matching_documents(conn, applied)
        return hybrid_search(conn, query, vector, docs, settings, k=k, with_flagged=with_flagged)

    hits = run()
    if not hits and applied:
        # The culprit first: a 10-K asked for as an 8-K keeps its fiscal year, and the
        # warning names only the filter that matched nothing.
        for key in _WIDENING_ORDER:
            if (
                key in applied
                and key not in keep
                and not matching_documents(conn, {key: applied[key]})
            ):
                del applied[key]
                widened.append(key)
        if widened:
            hits = run()
    for key in _WIDENING_ORDER:
        if hits or not applied:
            break
        if key in applied and key not in keep:
            del applied[key]
            widened.append(key)
            hits = run()
    return SearchResult(hits=hits, filters=filters, applied=applied, widened=widened)


def fuse_results(first: SearchResult, second: SearchResult, *, k: int) -> SearchResult:
    """Two rankings made one by reciprocal rank fusion (the same chunk, or the same page
    when the results are pages, counted once)."""
    scores: dict[object, float] = {}
    hits: dict[object, Hit] = {}
    for result in (first, second):
        for rank, hit in enumerate(result.hits, 1):
            unit = _unit(hit)
            scores[unit] = scores.get(unit, 0.0) + 1 / (60 + rank)
            hits.setdefault(unit, hit)
    order = sorted(scores, key=lambda unit: -scores[unit])[:k]
    merged = [hits[unit] for unit in order]
    for unit, hit in zip(order, merged, strict=True):
        hit.score = scores[unit]
    return SearchResult(
        hits=merged,
        filters=first.filters,
        applied=first.applied,
        widened=first.widened,
        variant="rewrite+hyde",
    )


def _unit(hit: Hit) -> object:
    """What a result stands for: its page (finrag.retrieve.pages.PageHit), else its chunk.
    Two rankings of pages may name one page by different best chunks."""
    page = getattr(hit, "page", None)
    return ("page", hit.document_id, page) if page is not None else hit.chunk_id
