"""Which embedding model the store's vectors come from: fixed once, checked on every open."""

from __future__ import annotations

import psycopg

from finrag.embed import EmbedderSpec
from finrag.errors import EmbeddingMismatch

HNSW_INDEX = "chunks_embedding_hnsw_idx"


def recorded_embedder(conn: psycopg.Connection) -> EmbedderSpec | None:
    row = conn.execute("SELECT model_id, dimension FROM embedding_model").fetchone()
    return EmbedderSpec(row[0], row[1]) if row else None


def ensure_embedding_space(conn: psycopg.Connection, spec: EmbedderSpec) -> EmbedderSpec:
    """Record ``spec`` on first use (typing the column, building the HNSW index);
    afterwards raise ``EmbeddingMismatch`` if the configured embedder differs."""
    with conn.transaction():
        # Serialize first use between processes: the table lock covers the whole setup.
        conn.execute("LOCK TABLE embedding_model IN EXCLUSIVE MODE")
        recorded = recorded_embedder(conn)
        if recorded is None:
            dim = int(spec.dimension)
            conn.execute(f"ALTER TABLE chunks ALTER COLUMN embedding TYPE vector({dim})")
            # m = 24, ef_construction = 96: recall@10 0.98 at 1M chunks with ef_search 400
            # (m = 16, ef_construction = 64 needed 800 for 0.97, 20 ms a search instead of
            # 14), for a build 1.1-2x as long and an index of the same size
            # (eval/bench/search.py --hnsw-builds). Stores built before keep their index.
            conn.execute(
                f"CREATE INDEX IF NOT EXISTS {HNSW_INDEX} ON chunks "
                "USING hnsw (embedding vector_cosine_ops) WITH (m = 24, ef_construction = 96)"
            )
            conn.execute(
                "INSERT INTO embedding_model (model_id, dimension) VALUES (%s, %s)",
                (spec.model_id, dim),
            )
            return spec
    if recorded != spec:
        raise EmbeddingMismatch(
            f"the store holds {recorded.dimension}-d vectors from {recorded.model_id}, "
            f"but the configured embedder is {spec.model_id} ({spec.dimension}-d)",
            hint=f"set the embedder back to {recorded.model_id.split(':', 1)[-1]!r} "
            "(FINRAG_EMBED__MODEL / FINRAG_EMBED__BACKEND), or start a new store with "
            "`finrag db reset --yes` (deletes every ingested document) or another FINRAG_HOME",
        )
    return recorded
