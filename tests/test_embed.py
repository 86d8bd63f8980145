"""Embedders: the ONNX runtime gives the model's own vectors; counts match the tokenizer."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from finrag.config import EmbedSettings
from finrag.embed import HashEmbedder, SentenceTransformerEmbedder, get_embedder
from finrag.embed.onnx import OnnxEmbedder

TEXTS = [
    "Net cash provided by operating activities was $6,439 million in 2018.",
    "Capital expenditures",
    "The Company's fiscal year is the 52- or 53-week period that ends on the last Saturday "
    "of September. " * 3,
]


def test_onnx_export_matches_torch(tmp_path: Path) -> None:
    onnx = get_embedder(EmbedSettings(), models_dir=tmp_path)
    assert isinstance(onnx, OnnxEmbedder)
    torch = get_embedder(EmbedSettings(runtime="torch"), models_dir=tmp_path)
    assert isinstance(torch, SentenceTransformerEmbedder)
    assert onnx.spec == torch.spec, "same model id: same vectors in the store"
    got, want = onnx.embed(TEXTS), torch.embed(TEXTS)
    assert got.shape == (3, 384)
    assert np.min(np.sum(got * want, axis=1)) > 0.9999
    assert list((tmp_path / "onnx").glob("*.onnx")), "exported once, kept for next time"
    onnx.threads = 1  # a second session with another thread count gives the same vectors
    assert np.allclose(onnx.embed(TEXTS), got, atol=1e-5)


def test_token_counts_include_special_tokens_and_never_truncate() -> None:
    embedder = get_embedder(EmbedSettings())
    assert embedder.max_tokens == 256
    short, long = embedder.count_tokens(["Capital expenditures", "word " * 600])
    assert short == 4  # [CLS] capital expenditures [SEP]
    assert long == 602, "the shipped tokenizer's truncation is switched off for counting"


def test_hash_embedder_is_deterministic_and_normalized() -> None:
    embedder = HashEmbedder(32)
    a, b = embedder.embed(["capital expenditure 2018", "capital expenditure 2018"])
    assert np.array_equal(a, b)
    assert abs(np.linalg.norm(a) - 1.0) < 1e-6
