"""Migrations and the embedding space against a real Postgres (a fresh database each)."""

from __future__ import annotations

import threading

import numpy as np
import psycopg
import pytest
from pydantic import SecretStr

from finrag.config import load_settings
from finrag.db import open_store
from finrag.db.connection import connect, ensure_pgvector
from finrag.db.migrate import discover, migrate, status
from finrag.errors import EmbeddingMismatch, MigrationError


def settings_for(url: str, dimension: int = 64):
    return load_settings(
        database_url=SecretStr(url), embed={"backend": "hash", "dimension": dimension}
    )


def test_first_open_migrates_and_second_changes_nothing(database_url: str) -> None:
    store = open_store(settings_for(database_url))
    assert store.kind == "external"
    with store.connect() as conn:
        assert migrate(conn) == [], "already current"
        rows = conn.execute("SELECT version, name FROM finrag.schema_migrations").fetchall()
        assert rows == [(m.version, m.name) for m in discover()]
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'finrag'"
            ).fetchall()
        }
    assert {
        "documents",
        "chunks",
        "companies",
        "embedding_model",
        "conversations",
        "messages",
        "eval_runs",
        "schema_migrations",
    } <= tables
    open_store(settings_for(database_url))  # a second open is a no-op, not an error


def test_concurrent_first_opens_apply_migrations_once(database_url: str) -> None:
    errors: list[BaseException] = []
    applied: list[int] = []

    def run() -> None:
        try:
            with connect(database_url) as conn:
                ensure_pgvector(conn)
                applied.append(len(migrate(conn)))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sorted(applied) == [0, 0, 0, len(discover())]


def test_edited_migration_is_detected(database_url: str) -> None:
    open_store(settings_for(database_url))
    with connect(database_url) as conn:
        conn.execute("UPDATE finrag.schema_migrations SET checksum = 'edited' WHERE version = 1")
        conn.commit()
        with pytest.raises(MigrationError, match="changed after it was applied"):
            status(conn)


def test_migration_from_a_newer_finrag_is_detected(database_url: str) -> None:
    open_store(settings_for(database_url))
    with connect(database_url) as conn:
        conn.execute(
            "INSERT INTO finrag.schema_migrations (version, name, checksum) "
            "VALUES (999, 'future', 'x')"
        )
        conn.commit()
    with pytest.raises(MigrationError, match="newer version"):
        open_store(settings_for(database_url))


def test_embedding_dimension_is_recorded_and_enforced(database_url: str) -> None:
    store = open_store(settings_for(database_url, dimension=64))
    assert (store.embedder.model_id, store.embedder.dimension) == ("hash:64", 64)
    with store.connect() as conn:
        doc = conn.execute(
            "INSERT INTO documents (path, sha256, pipeline_hash, parser) "
            "VALUES ('/x.pdf', 'h', 'p', 'pymupdf') RETURNING id"
        ).fetchone()[0]
        insert = (
            "INSERT INTO chunks (document_id, ordinal, kind, content, embed_text, tokens, "
            "embedding) VALUES (%s, %s, 'text', 'c', 'capital expenditure', 2, %s)"
        )
        conn.execute(insert, (doc, 0, np.ones(64, dtype=np.float32)))
        conn.commit()
        with pytest.raises(psycopg.errors.DataException):
            conn.execute(insert, (doc, 1, np.ones(32, dtype=np.float32)))
        conn.rollback()
        tsv = conn.execute("SELECT tsv::text FROM chunks").fetchone()[0]
        assert "'capit'" in tsv and "'expenditur'" in tsv, "generated full-text column"
        index = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'chunks_embedding_hnsw_idx'"
        ).fetchone()
        assert index and "hnsw" in index[0]

    with pytest.raises(EmbeddingMismatch) as caught:
        open_store(settings_for(database_url, dimension=32))
    assert "64-d vectors from hash:64" in caught.value.message
    assert "finrag db reset" in caught.value.hint


def test_reset_switches_the_embedding_model_and_drops_data(database_url: str) -> None:
    store = open_store(settings_for(database_url, dimension=64))
    with store.connect() as conn:
        conn.execute(
            "INSERT INTO documents (path, sha256, pipeline_hash, parser) "
            "VALUES ('/x.pdf', 'h', 'p', 'pymupdf')"
        )
        conn.commit()
    store = open_store(settings_for(database_url, dimension=32), reset=True)
    assert store.embedder.dimension == 32
    with store.connect() as conn:
        assert conn.execute("SELECT count(*) FROM documents").fetchone()[0] == 0
        assert conn.execute("SELECT dimension FROM embedding_model").fetchone()[0] == 32


def test_reset_leaves_other_schemas_alone(database_url: str) -> None:
    """An external database may hold other applications' tables: reset drops only ours."""
    with connect(database_url) as conn:
        conn.execute("CREATE TABLE public.their_table (n int)")
        conn.commit()
    open_store(settings_for(database_url), reset=True)
    with connect(database_url) as conn:
        assert conn.execute("SELECT to_regclass('public.their_table')").fetchone()[0]
