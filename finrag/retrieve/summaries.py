"""Summary nodes searched beside the chunks (RAPTOR's collapsed tree, mapped back to chunks).

The section and document summaries (sql/008, finrag.ingest.summaries) are searched with the
same two halves as the chunks — dense by exact scan, full text weighted by the chunks' IDF —
under the same document filters. A summary is never returned itself: a hit stands for its
section, whose best-matching chunks (by the same query) form a second ranking that is fused
with the chunk ranking, so page-level evaluation still counts only chunks' pages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import psycopg

from finrag.retrieve.hybrid import Hit, SearchResult, TextQuery, matching_documents, text_query

if TYPE_CHECKING:
    import numpy as np

    from finrag.config import RetrieveSettings

# The least harmful of 8 settings measured (issue 15, summaries report): more summaries, more
# chunks each, a higher weight, sections only, or boosting chunks already found all did worse.
# Even this one is below plain hybrid+filters on the hold-out, so the variant stays off.
SUMMARY_POOL = 50  # chunk-ranking depth to fuse with: a section's chunk may rank past k there
TOP_SUMMARIES = 3  # summaries whose sections contribute chunks
PER_SUMMARY = 1  # chunks each contributes: its best match for the query
SUMMARY_WEIGHT = 0.5  # the summaries' ranking against the chunks' in reciprocal rank fusion
_CANDIDATES = 50  # summaries each half ranks

_SQL = """
WITH query_terms AS (
    SELECT u.lexeme FROM unnest(to_tsvector('english', %(words)s)) AS u
    UNION
    SELECT unnest(%(exact)s::text[])
),
terms AS (  -- IDF from the chunks' lexeme counts: summaries are too few to have their own
    SELECT q.lexeme, quote_literal(q.lexeme)::tsquery AS q,
           ln(1 + (corpus.chunks - s.chunks + 0.5) / (s.chunks + 0.5)) AS idf
    FROM query_terms q
    JOIN lexeme_stats s USING (lexeme)
    CROSS JOIN (SELECT chunks FROM lexeme_stats WHERE lexeme = '') AS corpus
    WHERE s.chunks > 0
),
any_term AS (
    SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery AS q FROM terms
),
allowed AS (
    SELECT id, embedding, tsv FROM summaries
    WHERE %(docs)s::bigint[] IS NULL OR document_id = ANY(%(docs)s::bigint[])
),
dense AS (
    SELECT id, row_number() OVER (ORDER BY embedding <=> %(vec)s, id) AS rank
    FROM allowed
    WHERE %(dense)s
    ORDER BY embedding <=> %(vec)s, id
    LIMIT %(n)s
),
lexical AS (
    SELECT id, row_number() OVER (ORDER BY score DESC, id) AS rank
    FROM (
        SELECT a.id,
               (SELECT sum(t.idf * ts_rank_cd(a.tsv, t.q)) FROM terms t WHERE a.tsv @@ t.q)
                   AS score
        FROM allowed a
        WHERE a.tsv @@ (SELECT q FROM any_term)
        ORDER BY score DESC, a.id
        LIMIT %(n)s
    ) matched
),
picked AS (
    SELECT id, sum(1.0 / (%(rrf)s + rank)) AS score
    FROM (SELECT * FROM dense UNION ALL SELECT * FROM lexical) ranked
    GROUP BY id
    ORDER BY score DESC, id
    LIMIT %(top)s
),
members AS (
    SELECT p.id AS summary_id, p.score AS summary_score, c.id,
           CASE WHEN %(dense)s THEN 1 - (c.embedding <=> %(vec)s) END AS dense_score,
           CASE WHEN %(dense)s THEN row_number() OVER (
               PARTITION BY p.id ORDER BY c.embedding <=> %(vec)s, c.id) END AS dense_rank,
           CASE WHEN c.tsv @@ (SELECT q FROM any_term) THEN row_number() OVER (
               PARTITION BY p.id
               ORDER BY c.tsv @@ (SELECT q FROM any_term) DESC,
                        ts_rank_cd(c.tsv, (SELECT q FROM any_term)) DESC, c.id) END AS text_rank
    FROM picked p
    JOIN summaries s ON s.id = p.id
    JOIN chunks c ON c.document_id = s.document_id
                 AND (s.chunk_ids IS NULL OR c.id = ANY(s.chunk_ids))
    WHERE %(with_flagged)s OR c.flagged IS NULL
),
best AS (
    SELECT *, row_number() OVER (
               PARTITION BY summary_id
               ORDER BY COALESCE(1.0 / (%(rrf)s + dense_rank), 0)
                        + COALESCE(1.0 / (%(rrf)s + text_rank), 0) DESC, id) AS rank_in
    FROM members
)
SELECT c.id, c.document_id, d.path, co.name, d.fiscal_year, d.fiscal_quarter, d.form_type,
       c.kind, c.page_start, c.page_end, c.section_path, c.content,
       b.summary_score, NULL::int, b.dense_score, NULL::int, NULL::float8, c.flagged, c.ocr
FROM best b
JOIN chunks c ON c.id = b.id
JOIN documents d ON d.id = c.document_id
LEFT JOIN companies co ON co.id = d.company_id
WHERE b.rank_in <= %(per)s
ORDER BY b.summary_score DESC, b.summary_id, b.rank_in
"""


def summary_chunks(
    conn: psycopg.Connection,
    query: TextQuery,
    vector: np.ndarray | None,
    docs: list[int] | None,
    settings: RetrieveSettings,
    *,
    with_flagged: bool = True,
) -> list[Hit]:
    """The best-matching chunks of the sections whose summaries the query finds, in the
    order of their summaries (a chunk once, at its best place)."""
    if docs == [] or (vector is None and query.empty):
        return []
    dense = vector is not None
    if vector is None:  # a zero vector keeps the statement valid; the dense parts are off
        import numpy as np

        dim = conn.execute("SELECT dimension FROM embedding_model").fetchone()[0]
        vector = np.zeros(dim, dtype=np.float32)
    rows = conn.execute(
        _SQL,
        {
            "words": query.words,
            "exact": list(query.exact),
            "docs": docs,
            "vec": vector,
            "dense": dense,
            "n": _CANDIDATES,
            "rrf": float(settings.rrf_k),
            "top": TOP_SUMMARIES,
            "per": PER_SUMMARY,
            "with_flagged": with_flagged,
        },
    ).fetchall()
    seen: set[int] = set()
    hits: list[Hit] = []
    for row in rows:
        if row[0] not in seen:
            seen.add(row[0])
            hits.append(Hit(*row))
    return hits


def fuse_summary_chunks(
    conn: psycopg.Connection,
    result: SearchResult,
    question: str,
    vector: np.ndarray | None,
    settings: RetrieveSettings,
    *,
    full_text: bool = True,
    with_flagged: bool = True,
) -> list[Hit]:
    """The chunk ranking and the summaries' chunk ranking fused by reciprocal rank, under
    the filters the chunk search ended with; the same halves as the chunk search."""
    query = text_query(question) if full_text else TextQuery("")
    docs = matching_documents(conn, result.applied)
    extra = summary_chunks(conn, query, vector, docs, settings, with_flagged=with_flagged)
    scores: dict[int, float] = {}
    hits: dict[int, Hit] = {}
    for weight, ranking in ((1.0, result.hits), (SUMMARY_WEIGHT, extra)):
        for rank, hit in enumerate(ranking, 1):
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + weight / (settings.rrf_k + rank)
            hits.setdefault(hit.chunk_id, hit)
    fused = sorted(scores, key=lambda cid: (-scores[cid], cid))
    for cid in fused:
        hits[cid].score = scores[cid]
    return [hits[cid] for cid in fused]
