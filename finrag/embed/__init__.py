"""Embedders: text -> L2-normalized float32 vectors, behind one small protocol.

``describe_embedder`` tells the model id and dimension without loading a model,
so opening the store stays cheap; the model itself loads on the first ``embed``.
Implementations: ``hashed`` (tests), ``local_model`` (torch), ``onnx`` (the same
weights on onnxruntime), ``ollama_server``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from finrag.embed.hashed import HashEmbedder
from finrag.embed.local_model import SentenceTransformerEmbedder, resolve_model_path
from finrag.embed.protocol import Embedder, EmbedderSpec

if TYPE_CHECKING:
    from finrag.config import EmbedSettings

__all__ = [
    "Embedder",
    "EmbedderSpec",
    "HashEmbedder",
    "SentenceTransformerEmbedder",
    "describe_embedder",
    "get_embedder",
    "resolve_model_path",
]


def describe_embedder(settings: EmbedSettings) -> EmbedderSpec:
    """Model id and dimension of the configured embedder, without loading it."""
    return get_embedder(settings).spec


def get_embedder(settings: EmbedSettings, models_dir: Path | None = None) -> Embedder:
    """The configured embedder; cheap until its first ``embed`` call.

    With ``models_dir`` (where an exported ONNX graph may be kept) and the onnx
    runtime selected, the model runs on onnxruntime; otherwise on torch.
    """
    if settings.backend == "hash":
        return HashEmbedder(settings.dimension or 64)
    if settings.backend == "ollama":
        from finrag.embed.ollama_server import OllamaEmbedder

        return OllamaEmbedder(settings)
    if settings.runtime == "onnx" and models_dir is not None:
        from finrag.embed.onnx import OnnxEmbedder, supports_onnx

        model_path = resolve_model_path(settings.model)
        if supports_onnx(model_path):
            return OnnxEmbedder(
                settings.model,
                models_dir=models_dir,
                batch_size=settings.batch_size,
                threads=settings.threads,
            )
    return SentenceTransformerEmbedder(settings.model, batch_size=settings.batch_size)
