"""The same sentence-transformers model, run by onnxruntime: 1.5x the speed of torch here.

The ONNX graph is exported once from the model's own weights into
``$FINRAG_HOME/models/onnx`` and checked against torch on probe sentences before it
is used (cosine > 0.9999), so the vectors are the model's vectors and the store's
model id stays the same. Models whose pooling is not mean pooling stay on torch.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from finrag.embed.local_model import SentenceTransformerEmbedder
from finrag.errors import ModelNotAvailable
from finrag.files import FILE_MODE, private_dir

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

_PROBES = [
    "Purchases of property, plant and equipment (PP&E) were $1,577 million in 2018.",
    "What was the company's free cash flow?",
    "Item 7. Management's Discussion and Analysis of Financial Condition",
]
_MIN_PROBE_COSINE = 0.9999
_lock = threading.Lock()


def supports_onnx(model_path: Path) -> bool:
    """Mean pooling followed by normalization: what we reproduce after the ONNX graph."""
    pooling = model_path / "1_Pooling" / "config.json"
    modules = model_path / "modules.json"
    if not (pooling.is_file() and modules.is_file()):
        return False
    config = json.loads(pooling.read_text())
    kinds = [m.get("type", "") for m in json.loads(modules.read_text())]
    return (
        config.get("pooling_mode_mean_tokens") is True
        and not any(
            config.get(k)
            for k in (
                "pooling_mode_cls_token",
                "pooling_mode_max_tokens",
                "pooling_mode_mean_sqrt_len_tokens",
            )
        )
        and len(kinds) <= 3
        and all(k.endswith(("Transformer", "Pooling", "Normalize")) for k in kinds)
    )


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class OnnxEmbedder(SentenceTransformerEmbedder):
    def __init__(
        self, model: str, *, models_dir: Path, batch_size: int = 16, threads: int = 0
    ) -> None:
        super().__init__(model, batch_size=batch_size)
        self.models_dir = models_dir
        self.threads = threads  # 0: every core; callers may change it between calls
        self._sessions: dict[int, object] = {}
        self._run_tokenizer = None

    def _graph_path(self) -> Path:
        weights = sorted(self.model_path.glob("*.safetensors")) or sorted(
            self.model_path.glob("*.bin")
        )
        fingerprint = hashlib.sha256()
        for f in weights:
            stat = f.stat()
            fingerprint.update(f"{f.name}:{stat.st_size}:{int(stat.st_mtime)}".encode())
        name = (
            self.model_path.name
            if self.model_path.name != "model"
            else (self.model_path.parent.name)
        )
        return self.models_dir / "onnx" / f"{name}-{fingerprint.hexdigest()[:12]}.onnx"

    def _ensure_session(self):
        threads = self.threads or _usable_cores()
        if threads in self._sessions:
            return self._sessions[threads]
        import onnxruntime as ort

        path = self._graph_path()
        with _lock:
            if not path.is_file():
                self._export(path)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Spinning threads burn the cores a parser process needs at the same time.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._sessions[threads] = session
        return session

    def _export(self, path: Path) -> None:
        """Export with torch, verify against torch, then publish atomically."""
        import numpy as np
        import torch

        try:
            import onnx  # noqa: F401  (torch's exporter needs it)
        except ImportError:
            raise ModelNotAvailable(
                "the onnx package is missing; cannot export the model",
                hint="pip install onnx, or set FINRAG_EMBED__RUNTIME=torch",
            ) from None
        from transformers import AutoModel
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        model = AutoModel.from_pretrained(str(self.model_path), local_files_only=True).eval()

        class Encoder(torch.nn.Module):
            def __init__(self, inner) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.inner(
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    token_type_ids=token_type_ids,
                ).last_hidden_state

        private_dir(path.parent)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        sample = torch.ones(2, 8, dtype=torch.long)
        axes = {0: "batch", 1: "tokens"}
        import warnings

        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Encoder(model),
                (sample, sample, torch.zeros_like(sample)),
                str(tmp),
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["last_hidden_state"],
                dynamic_axes={
                    "input_ids": axes,
                    "attention_mask": axes,
                    "token_type_ids": axes,
                    "last_hidden_state": axes,
                },
                opset_version=17,
                dynamo=False,
            )
        import onnxruntime as ort

        check = ort.InferenceSession(str(tmp), providers=["CPUExecutionProvider"])
        got = self._run(check, _PROBES)
        want = SentenceTransformerEmbedder.embed(self, _PROBES)
        cosine = float(np.min(np.sum(got * want, axis=1)))
        if cosine < _MIN_PROBE_COSINE:
            tmp.unlink(missing_ok=True)
            raise ModelNotAvailable(
                f"the ONNX export of {self.model_path} disagrees with torch (cosine {cosine:.5f})",
                hint="set FINRAG_EMBED__RUNTIME=torch",
            )
        tmp.chmod(FILE_MODE)  # torch wrote it with the umask's mode
        tmp.replace(path)
        log.info("exported %s (probe cosine %.6f)", path, cosine)

    def _run(self, session, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if self._run_tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self.model_path / "tokenizer.json"))
            tokenizer.no_padding()
            tokenizer.enable_truncation(self.max_tokens)  # what the model itself would do
            self._run_tokenizer = tokenizer
        order = np.argsort([len(t) for t in texts], kind="stable")  # similar lengths batch well
        out = np.zeros((len(texts), self.spec.dimension), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            index = order[start : start + self.batch_size]
            encodings = self._run_tokenizer.encode_batch([texts[i] for i in index])
            width = max(len(e.ids) for e in encodings)
            ids = np.zeros((len(index), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, enc in enumerate(encodings):
                ids[row, : len(enc.ids)] = enc.ids
                mask[row, : len(enc.ids)] = 1
            hidden = session.run(
                None,
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            summed = (hidden * mask[..., None]).sum(axis=1)
            pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            out[index] = pooled
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.spec.dimension), dtype=np.float32)
        return self._run(self._ensure_session(), list(texts))
