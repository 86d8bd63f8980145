"""The store: Postgres + pgvector, embedded by default, external by URL."""

from finrag.db.store import Store, open_store

__all__ = ["Store", "open_store"]
