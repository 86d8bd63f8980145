"""The answer cache's rows (sql/010_answer_cache.sql); what counts as a hit is decided in
finrag.answer.cache."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import psycopg

if TYPE_CHECKING:  # a type only: `ask` on the facts route never loads numpy
    import numpy as np


@dataclass
class CachedAnswer:
    id: int
    question: str
    similarity: float
    answer: dict[str, Any]
    created_at: datetime
    hits: int


def store_version(conn: psycopg.Connection) -> int:
    """Bumped by every change to the documents: an answer stands for one version."""
    return conn.execute("SELECT version FROM store_version").fetchone()[0]


def nearest(
    conn: psycopg.Connection, key: str, version: int, vector: np.ndarray
) -> CachedAnswer | None:
    """The entry under ``key`` for this store version whose question is nearest."""
    row = conn.execute(
        """
        SELECT id, question, 1 - (embedding <=> %(vec)s), answer, created_at, hits
        FROM answer_cache
        WHERE key = %(key)s AND store_version = %(version)s
        ORDER BY embedding <=> %(vec)s, id DESC
        LIMIT 1
        """,
        {"key": key, "version": version, "vec": vector},
    ).fetchone()
    return CachedAnswer(*row) if row else None


def record_hit(conn: psycopg.Connection, entry_id: int) -> None:
    conn.execute(
        "UPDATE answer_cache SET hits = hits + 1, last_hit_at = now() WHERE id = %s",
        (entry_id,),
    )


def put(
    conn: psycopg.Connection,
    *,
    question: str,
    vector: np.ndarray,
    key: str,
    key_words: dict[str, Any],
    version: int,
    answer: dict[str, Any],
) -> int:
    """Store an answer; an earlier entry for the same question and key is replaced, and
    entries of older store versions (never returned again) are dropped."""
    conn.execute(
        "DELETE FROM answer_cache WHERE store_version <> %s OR (key = %s AND question = %s)",
        (version, key, question),
    )
    return conn.execute(
        """
        INSERT INTO answer_cache (question, embedding, key, key_words, store_version, answer)
        VALUES (%s, %s, %s, %s, %s, %s) RETURNING id
        """,
        # An answer's figures may be Decimals (a change of two computed ratios): kept as the
        # text `--json` prints them.
        (question, vector, key, json.dumps(key_words), version, json.dumps(answer, default=str)),
    ).fetchone()[0]


def drop_stale(conn: psycopg.Connection) -> int:
    """Delete the answers written for an earlier store version (never returned again, but
    they quote the filings they came from); how many there were."""
    return conn.execute(
        "DELETE FROM answer_cache WHERE store_version <> (SELECT version FROM store_version)"
    ).rowcount


def clear(conn: psycopg.Connection) -> int:
    """Delete every cached answer; how many there were."""
    return conn.execute("DELETE FROM answer_cache").rowcount


def stats(conn: psycopg.Connection) -> dict[str, Any]:
    version = store_version(conn)
    total, current, hits = conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE store_version = %s), COALESCE(sum(hits), 0) "
        "FROM answer_cache",
        (version,),
    ).fetchone()
    return {"entries": total, "current": current, "hits": int(hits), "store_version": version}
