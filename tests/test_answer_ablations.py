"""`eval answers --compare` ablations (finrag.evaluate.variants, chat_asker): the variant
names parsed into settings, and one compare run on a real store with a scripted model,
each variant's model calls counted."""

from __future__ import annotations

import pytest

from finrag.errors import UsageError
from finrag.evaluate.answer_compare import compare_answers, comparison_rows
from finrag.evaluate.dataset import load_dataset
from finrag.evaluate.variants import FixedRetriever, parse_variant, parse_variants
from finrag.llm.fake import FakeLLM
from finrag.retrieve import Retriever, Variant
from tests.corpus import quoted
from tests.test_eval_answers import write_jsonl
from tests.test_graders import QUESTION, zephyr  # noqa: F401  (the store fixture)


def test_keys_change_the_settings_they_name() -> None:
    from finrag.config import load_settings

    settings = load_settings()
    assert parse_variant("base").settings(settings) is settings
    off = parse_variant("rerank:off").settings(settings)
    assert off.retrieve.reranker == "none"
    # rerank:on is the cross-encoder when one is configured, else the model.
    assert parse_variant("rerank:on").settings(settings).retrieve.reranker == "llm"
    with_ce = settings.model_copy(
        update={"retrieve": settings.retrieve.model_copy(update={"cross_encoder": "/m/ce"})}
    )
    assert parse_variant("rerank:on").settings(with_ce).retrieve.reranker == "cross-encoder"
    both = parse_variant("graders:on/persona:credit/backend:fake").settings(settings)
    assert both.answer.graders is True and both.answer.persona == "credit"
    assert both.llm.backend == "fake"
    assert parse_variant("no-llm").settings(settings).answer.use_llm is False
    assert parse_variant("facts:off").settings(settings).answer.facts_route is False
    assert parse_variant("mode:fast").settings(settings).answer.use_llm is False
    assert parse_variant("facts+text:no-llm").settings(settings).answer.use_llm is False
    assert parse_variant("naive").naive


def test_retrieval_and_graph_fix_the_retrieval_stages() -> None:
    default = Variant(rerank=False, pages=True)
    assert parse_variant("retrieval:dense").retrieval_variant(default).name == "dense"
    graph = parse_variant("graph:on").retrieval_variant(default)
    assert graph.name == "hybrid+filters+pages+graph"
    spec = parse_variant("retrieval:fts+filters/graph:on")
    assert spec.fixes_retrieval and spec.retrieval_variant(default).name == "fts+filters+graph"
    assert not parse_variant("rerank:llm").fixes_retrieval
    # The configured default searches the graph for entity questions: off turns that off
    # too, so no question, of any kind, gets the graph's chunks.
    from finrag.retrieve.retriever import uses_graph

    by_kind = Variant(rerank=False, pages=True, graph_kinds=("entity",))
    assert uses_graph(by_kind, "Who audits Apple?")
    off = parse_variant("graph:off").retrieval_variant(by_kind)
    assert not uses_graph(off, "Who audits Apple?") and off.graph_kinds == ()
    assert uses_graph(parse_variant("graph:on").retrieval_variant(by_kind), "What was revenue?")


def test_chat_stage_keys_run_the_chat_graph_with_the_others_as_chat_has_them() -> None:
    assert parse_variant("base").chat is None
    assert parse_variant("chat").chat == {"verify": "on", "hyde": "on", "decompose": "auto"}
    assert parse_variant("verify:off").chat == {"verify": "off", "hyde": "on", "decompose": "auto"}
    assert parse_variant("hyde:off/decompose:on").chat == {
        "verify": "on",
        "hyde": "off",
        "decompose": "on",
    }


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("base,reranker:off", "unknown variant 'reranker:off'"),
        ("rerank:maybe", "rerank takes off, on, llm or cross-encoder"),
        ("graph:yes", "graph takes on or off"),
        ("retrieval:bm25", "unknown retrieval variant"),
        ("persona:pirate", "no persona 'pirate'"),
        ("backend:gpt", "backend is one of auto, ollama, embedded, fake"),
        ("decompose:always", "decompose takes auto, on, off"),
        ("mode:slow", "mode is one of fast, balanced, precise"),
        (",", "no variant given"),
    ],
)
def test_a_bad_variant_is_a_usage_error_naming_it(text: str, words: str) -> None:
    with pytest.raises(UsageError, match=words):
        parse_variants(text)


def test_names_keep_their_order_once_each() -> None:
    assert parse_variants("base, verify:off,base,rerank:llm") == [
        "base",
        "verify:off",
        "rerank:llm",
    ]


def test_a_fixed_retriever_searches_with_its_variant(zephyr) -> None:  # noqa: F811
    store, settings = zephyr
    base = Retriever(store, settings)
    fixed = FixedRetriever(base, Variant.parse("fts+filters"))
    assert fixed.embedder is base.embedder
    with store.connect() as conn:
        found = fixed.retrieve(QUESTION, conn=conn)
    assert found.variant == "fts+filters"
    assert all(h.dense_rank is None for h in found.hits) and found.hits


def answer(text: str):
    return quoted("$5.1 billion", text)


def test_one_compare_run_over_ask_and_chat_variants(zephyr, tmp_path) -> None:  # noqa: F811
    store, settings = zephyr
    answer_settings = settings.answer.model_copy(update={"graders": False})  # as configured
    settings = settings.model_copy(update={"answer": answer_settings})
    dataset = write_jsonl(
        tmp_path / "qs.jsonl",
        [
            {
                "id": "zephyr-revenue",
                "question": QUESTION,
                "answer": "$5.1 billion",
                "evidence": [{"document": "ZEPHYR_2023_10K.pdf", "page": 1}],
            }
        ],
    )
    full = "Zephyr's revenue rose 8% to $5.1 billion in 2023"
    unsupported = {"supported": False, "unsupported": ["the kite sales claim"]}
    llm = FakeLLM(
        [
            answer(full),  # base: one call
            answer(full),  # graders:on: passes the check, one call
            answer(full),  # retrieval:dense+filters: one call
            answer(full),  # verify:off: the chat graph's answer, nothing after
            answer(full),  # hyde:off: the answer, then the check fails: a caveat, no retry
            unsupported,
        ]
    )
    variants = ["base", "graders:on", "retrieval:dense+filters", "verify:off", "hyde:off"]
    comparison = compare_answers(
        store,
        settings,
        load_dataset(dataset),
        variants,
        dataset=dataset,
        out_dir=tmp_path / "out",
        llm=llm,
    )
    assert not llm.replies and len(llm.calls) == 6
    results = {name: report.results[0] for name, report in comparison.variants.items()}
    for name in variants:
        assert results[name].auto_correct is True, (name, results[name].answer)
    assert comparison.variants["graders:on"].settings["answer"]["graders"] is True
    checked = results["graders:on"].graders
    assert checked["answer_check"] == {"entity": True, "period": True, "measure": True}
    assert results["base"].graders is None
    base = results["base"]
    assert base.faithfulness == 1.0 and base.answer_relevance == 1.0
    # The quotes read come from page 1 (gold) and from pages that are not.
    assert 0 < base.context_precision < 1 and base.context_recall == 1.0
    caveat = results["hyde:off"]
    assert caveat.answer.endswith("Not supported by the cited excerpts: the kite sales claim.")
    assert caveat.faithfulness == 1.0, "the caveat is the pipeline speaking, not a claim"
    assert results["verify:off"].tokens["prompt"] > 0
    rows = dict(comparison_rows(comparison))
    assert rows["faithfulness (statements supported)"][0] == "1.000 (1)"
    assert rows["context precision / recall (pages)"][0].endswith(" / 1.000")
    assert "latency p50 / p95 s" in rows and "correct (auto)" in rows
    assert (tmp_path / "out" / "retrieval-dense+filters" / "answers.jsonl").is_file()


def test_decompose_on_splits_a_one_company_question(zephyr, tmp_path) -> None:  # noqa: F811
    store, settings = zephyr
    dataset = write_jsonl(
        tmp_path / "qs.jsonl",
        [{"id": "q", "question": QUESTION, "answer": "$5.1 billion", "evidence": []}],
    )
    sub = "What revenue did Zephyr report for 2023?"
    llm = FakeLLM(
        [
            {"sub_questions": [sub]},  # decompose
            answer("Zephyr's revenue rose 8% to $5.1 billion in 2023"),  # the sub-answer
            {"missing": []},  # residue: nothing missing
            "Zephyr's revenue was $5.1 billion in 2023 [1].",  # combine
            {"supported": True, "unsupported": []},  # verify
        ]
    )
    comparison = compare_answers(
        store,
        settings,
        load_dataset(dataset),
        ["decompose:on"],
        dataset=dataset,
        out_dir=None,
        llm=llm,
    )
    (r,) = comparison.variants["decompose:on"].results
    assert not llm.replies and r.route == "decomposed" and r.auto_correct is True
    assert r.faithfulness == 1.0


def test_a_chat_turn_whose_every_part_refused_is_scored_as_a_refusal() -> None:
    from finrag.agent.state import TurnState
    from finrag.answer.result import Answer
    from finrag.evaluate.chat_asker import _as_answer

    def part(refused: bool) -> Answer:
        return Answer(question="p", answer="x", refused=refused)

    turn = TurnState("Compare A and B", [], interactive=False, reply="Neither is held.")
    turn.sub_questions, turn.sub_answers = ["A?", "B?"], [part(True), part(True)]
    assert _as_answer(turn.question, turn).refused
    turn.sub_answers = [part(True), part(False)]
    assert not _as_answer(turn.question, turn).refused
