"""Opening the store: pick the server, check pgvector, migrate, pin the embedding model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import psycopg

from finrag.config import Settings
from finrag.db.connection import SCHEMA, ServerInfo, connect, ensure_pgvector, redact
from finrag.db.embedded import EmbeddedServer
from finrag.db.embedding_space import ensure_embedding_space
from finrag.db.migrate import migrate
from finrag.embed import EmbedderSpec, describe_embedder


@dataclass
class Store:
    """A ready database: reachable, pgvector present, schema current, embedder agreed."""

    url: str
    kind: Literal["embedded", "external"]
    server: ServerInfo
    embedder: EmbedderSpec
    embedded: EmbeddedServer | None = None

    def connect(self, *, autocommit: bool = False) -> psycopg.Connection:
        from pgvector.psycopg import register_vector

        conn = connect(self.url, autocommit=autocommit)
        register_vector(conn)
        return conn

    @property
    def display_url(self) -> str:
        return redact(self.url)

    def close(self) -> None:
        """Let go of the embedded server (it stops if this was its last client)."""
        if self.embedded is not None:
            self.embedded.release()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def server_url(settings: Settings) -> tuple[str, EmbeddedServer | None]:
    """The URL to use, starting (and joining) the embedded server when none is configured."""
    if settings.database_url is not None:
        return settings.database_url.get_secret_value(), None
    server = EmbeddedServer(settings.home)
    return server.acquire(), server


def open_store(settings: Settings, *, reset: bool = False) -> Store:
    """Connect, check, migrate; raise a ``DatabaseError`` subclass that says what to do.

    ``reset`` first drops every finrag table (documents, chunks, conversations...):
    the way out of an embedding-model mismatch.
    """
    url, embedded = server_url(settings)
    try:
        with connect(url) as conn:
            server = ensure_pgvector(conn)
            if reset:
                conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
                conn.commit()
            migrate(conn)
            embedder = ensure_embedding_space(conn, describe_embedder(settings.embed))
    except BaseException:
        if embedded is not None:
            embedded.release()
        raise
    return Store(
        url=url,
        kind="embedded" if embedded else "external",
        server=server,
        embedder=embedder,
        embedded=embedded,
    )
