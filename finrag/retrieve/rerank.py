"""Rerankers: score (question, chunk) pairs more carefully than fusion can.

No cross-encoder ships in the package registries, so ``cross-encoder`` loads one the
user already has (a local directory, or the Hugging Face cache) and never downloads;
``llm`` asks the configured language model to rank the candidates (listwise): slow on
a laptop CPU (one long prompt per question), so it is off by default.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel

from finrag.errors import ModelNotAvailable
from finrag.text import clip

if TYPE_CHECKING:
    from finrag.config import Settings
    from finrag.llm import LLM
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


class Ranking(BaseModel):
    ranking: list[int]


class LLMReranker:
    """Listwise: the model sees the candidates numbered, with their document and page, and
    returns their order. A candidate's score is its share of the list below it (first of
    n: 1.0, last: 1/n); candidates the model leaves out score 0 and keep their fused order."""

    name = "llm"

    def __init__(self, llm: LLM, *, excerpt_chars: int = 400) -> None:
        self.llm = llm
        self.excerpt_chars = excerpt_chars

    def score(self, question: str, hits: Sequence[Hit]) -> list[float]:
        from finrag.llm.prompts import load_prompt
        from finrag.retrieve.context import page_label

        passages = "\n\n".join(
            f"[{i}] {Path(h.document).stem} {page_label(h.page_start, h.page_end)}\n"
            f"{clip(h.content, self.excerpt_chars)}"
            for i, h in enumerate(hits, 1)
        )
        reply = self.llm.chat(
            load_prompt("rerank").messages(question=question, passages=passages),
            output=Ranking,
            max_tokens=8 * len(hits) + 16,
        )
        order = list(dict.fromkeys(n for n in reply.data.ranking if 1 <= n <= len(hits)))
        scores = [0.0] * len(hits)
        for position, n in enumerate(order):
            scores[n - 1] = (len(hits) - position) / len(hits)
        return scores


def get_reranker(settings: Settings, *, llm: LLM | None = None) -> Reranker | None:
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
    if llm is None:
        from finrag.llm import get_llm

        llm = get_llm(settings)
    return LLMReranker(llm)
