"""A deterministic fake embedder for tests: bag-of-words feature hashing."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from finrag.embed.protocol import EmbedderSpec

if TYPE_CHECKING:
    import numpy as np


class HashEmbedder:
    """Deterministic bag-of-words feature hashing: a fake for tests, never for users.

    Texts sharing words get similar vectors, so retrieval tests stay meaningful.
    """

    max_tokens = 256

    def __init__(self, dimension: int = 64) -> None:
        self.spec = EmbedderSpec(f"hash:{dimension}", dimension)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(re.findall(r"\w+|[^\w\s]", t)) + 2 for t in texts]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), self.spec.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in re.findall(r"[a-z0-9]+", text.lower()):
                digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.spec.dimension
                out[row, bucket] += 1.0 if digest[4] & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms
