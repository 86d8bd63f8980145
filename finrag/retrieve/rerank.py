"""Rerankers: score (question, chunk) pairs more carefully than fusion can.

No cross-encoder ships in the package registries, so ``cross-encoder`` loads one the
user already has (a local directory, or the Hugging Face cache) and never downloads;
``llm`` asks the configured language model to rank the candidates (listwise).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from finrag.errors import ModelNotAvailable

if TYPE_CHECKING:
    from finrag.config import Settings
    from finrag.retrieve.hybrid import Hit


class Reranker(Protocol):
    name: str

    def score(self, question: str, hits: Sequence[Hit]) -> list[float]:
        """One relevance score per hit, higher is better."""
        ...


def rerank(reranker: Reranker, question: str, hits: list[Hit], *, top: int) -> list[Hit]:
    """The first ``top`` hits reordered by the reranker's scores (ties keep fused order);
    the rest follow unchanged."""
    head, tail = hits[:top], hits[top:]
    if not head:
        return hits
    for hit, score in zip(head, reranker.score(question, head), strict=True):
        hit.rerank_score = float(score)
    head = sorted(head, key=lambda h: -(h.rerank_score or 0.0))  # sorted() is stable
    return head + tail


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder the user provides; loaded on first use."""

    name = "cross-encoder"

    def __init__(self, model: str, *, batch_size: int = 16) -> None:
        self.model = model
        self.batch_size = batch_size
        self._encoder = None

    def _load(self):
        if self._encoder is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import CrossEncoder

            try:
                self._encoder = CrossEncoder(self.model, device="cpu", local_files_only=True)
            except (OSError, ValueError) as exc:
                where = (
                    f"directory {self.model}"
                    if Path(self.model).expanduser().exists()
                    else f"{self.model!r} (not a directory, not in the Hugging Face cache)"
                )
                raise ModelNotAvailable(
                    f"cannot load the cross-encoder from {where}: {type(exc).__name__}",
                    hint="no cross-encoder ships with finrag; on a connected machine run "
                    "`huggingface-cli download cross-encoder/ms-marco-MiniLM-L6-v2 --local-dir "
                    "DIR`, copy DIR here and set retrieve.cross_encoder = 'DIR'; or set "
                    "retrieve.reranker = 'none' or 'llm'",
                ) from None
        return self._encoder

    def score(self, question: str, hits: Sequence[Hit]) -> list[float]:
        encoder = self._load()
        scores = encoder.predict(
            [(question, h.content) for h in hits],
            batch_size=self.batch_size,
            show_progress_bar=False,
        )
        return [float(s) for s in scores]


def get_reranker(settings: Settings) -> Reranker | None:
    """The configured reranker, or None; cheap until its first ``score``."""
    choice = settings.retrieve.reranker
    if choice == "none":
        return None
    if choice == "cross-encoder":
        if not settings.retrieve.cross_encoder:
            raise ModelNotAvailable(
                "retrieve.reranker is 'cross-encoder' but retrieve.cross_encoder is not set",
                hint="set FINRAG_RETRIEVE__CROSS_ENCODER to a local CrossEncoder directory",
            )
        return CrossEncoderReranker(settings.retrieve.cross_encoder)
    raise ModelNotAvailable(
        "the llm reranker needs the LLM backends, which this build does not have yet",
        hint="set retrieve.reranker = 'none' or 'cross-encoder'",
    )
