"""Vectors the store already holds for chunk texts: an identical text is embedded once.

One store holds one embedding space (finrag.db.embedding_space: the model is fixed when the
store is made and checked on every open), so any stored chunk with the same ``embed_text``
carries the vector the embedder would compute again. Looked up by the text's md5 (the
index of sql/016); the texts are compared here, so a collision only costs an embedding.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import psycopg

if TYPE_CHECKING:
    import numpy as np

_PER_QUERY = 500  # hashes per look-up: bounded parameters, and rows, per round trip


def text_md5(text: str) -> str:
    """What Postgres's md5(text) gives for ``text`` in a UTF-8 database."""
    return hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()


def stored_vectors(conn: psycopg.Connection, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """A stored vector for each of ``texts`` the store holds a chunk of, by text.

    The connection must have pgvector's types registered (Store.connect does)."""
    wanted = {text_md5(t): t for t in dict.fromkeys(texts)}
    hashes = list(wanted)
    found: dict[str, np.ndarray] = {}
    for start in range(0, len(hashes), _PER_QUERY):
        rows = conn.execute(
            "SELECT DISTINCT ON (md5(embed_text)) md5(embed_text), embed_text, embedding "
            "FROM chunks WHERE md5(embed_text) = ANY(%s) AND embedding IS NOT NULL",
            (hashes[start : start + _PER_QUERY],),
        )
        for digest, text, vector in rows:
            if wanted.get(digest) == text:
                found[text] = _as_array(vector)
    return found


def _as_array(vector) -> np.ndarray:
    import numpy as np

    # pgvector's psycopg types hand back a Vector (binary results) or an array (text).
    return np.asarray(vector.to_numpy() if hasattr(vector, "to_numpy") else vector, np.float32)
