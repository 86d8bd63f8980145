"""The naive baseline beside finrag in one `eval answers --compare` run, evidence recall,
and the figures the comparison reports: a real store, the model scripted."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from pydantic import SecretStr

from finrag.config import load_settings
from finrag.db import open_store
from finrag.errors import UsageError
from finrag.evaluate.answer_compare import compare_answers, versus, write_comparison
from finrag.evaluate.dataset import datasets_label, load_dataset, load_datasets
from finrag.evaluate.evidence import (
    best_recall,
    cited_passages,
    covered,
    from_gold,
    printed_quotes,
    quote_precision,
    token_recall,
    tokens,
)
from finrag.evaluate.naive import NAIVE_K, SYSTEM, NaiveAsker
from finrag.llm.fake import FakeLLM
from tests.corpus import excerpt_number
from tests.test_eval_answers import facts_db, write_jsonl  # noqa: F401 (a fixture)

SALES_QUOTE = "Total net sales | 391,035 | 383,285 | 394,328"
QUESTIONS = [
    {
        "id": "apple-sales-2023",
        "question": "What were Apple's total net sales in fiscal 2023?",
        "answer": "$383,285 million",
        "type": "metric",
        "evidence": [{"document": "APPLE_2024_10K.md", "page": 1, "text": SALES_QUOTE}],
    },
    {
        "id": "apple-ceo",
        "question": "Who is Apple's chief executive officer?",
        "answer": "Tim Cook",
        "type": "qualitative",
        "evidence": [{"document": "APPLE_2024_10K.md", "page": 1, "text": "Tim Cook, CEO"}],
    },
]


def test_tokens_recall_and_the_threshold() -> None:
    assert tokens("BCA revenues decreased by $11,040 million in 2024.") == [
        "bca",
        "revenues",
        "decreased",
        "11040",
        "million",
        "2024",
    ]
    assert tokens("|Asia Pacific|3,861|10|") == ["asia", "pacific", "3861", "10"]
    gold = "Gross margin increased, driven by a higher mix of Data Center revenue."
    assert token_recall(gold, [gold.upper()]) == 1.0
    half = token_recall(gold, ["gross margin increased driven"])
    assert half == 4 / 9 and covered(half) is False  # 9 content tokens: "by", "a", "of" are not
    assert covered(token_recall(gold, ["higher mix", "of Data Center revenue", "gross margin"]))
    assert token_recall("the of and", ["anything"]) is None  # no content tokens: no gold
    assert best_recall(["", gold, "nothing"], ["a higher mix of data center revenue"]) == 0.5556
    assert best_recall([""], ["x"]) is None


def test_a_quote_drawn_from_a_long_gold_passage() -> None:
    # A page-long gold passage: one right sentence covers little of it, but is drawn from it.
    page = (
        "Liquidity and capital resources. Cash flows from operations were $6.4 billion. "
        "Capital spending was $1.6 billion, and we returned $3.2 billion to shareholders "
        "through dividends. Net debt rose by $0.6 billion during the year."
    )
    right = "Capital spending was $1.6 billion, and we returned $3.2 billion to shareholders"
    assert covered(token_recall(page, [right])) is False
    assert quote_precision(page, right) == 1.0
    assert from_gold([page], ["Revenue grew in every region of the world.", right]) is True
    assert from_gold([page], ["Revenue grew in every region of the world this year."]) is False
    assert quote_precision(page, "Capital spending 1.6") is None  # too short to say
    assert from_gold([page], ["Capital spending 1.6"]) is False
    assert from_gold(["", "the of"], [right]) is None  # no gold text


def test_quotes_are_read_from_evidence_when_the_answer_has_it() -> None:
    cite = SimpleNamespace(n=2, quote="Revenue: $9,583")
    chunk = SimpleNamespace(n=2, hit=SimpleNamespace(content="Revenue | 9,583 | 10,329"))
    answer = SimpleNamespace(citations=[cite], chunks=[chunk])
    assert printed_quotes(answer) == (["Revenue: $9,583"], "citations")
    answer.evidence = [{"document": "X", "page": 4, "quote": "Revenue was $9,583 million"}]
    assert printed_quotes(answer) == (["Revenue was $9,583 million"], "evidence")
    answer.evidence = [SimpleNamespace(document="X", page=4, quote="as an object")]
    assert printed_quotes(answer) == (["as an object"], "evidence")
    assert cited_passages(answer) == ["Revenue | 9,583 | 10,329"]
    answer.chunks = []  # a passage not among the excerpts: its quote stands in
    assert cited_passages(answer) == ["Revenue: $9,583"]


def test_naive_runs_beside_finrag_with_ratios_and_newly_refused(
    facts_db: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    settings = load_settings(database_url=SecretStr(facts_db))
    dataset = write_jsonl(tmp_path / "qs.jsonl", QUESTIONS)
    questions = load_dataset(dataset)
    prompts = []

    def naive_sales(messages):
        prompts.append(messages)
        n = excerpt_number(messages, "383,285")
        return f"Apple's total net sales in fiscal 2023 were $383,285 million [{n}]."

    def naive_ceo(messages):
        prompts.append(messages)
        return "Tim Cook is Apple's chief executive officer [1]."

    # naive calls the model once a question; facts+text:no-llm never does.
    llm = FakeLLM([naive_sales, naive_ceo])
    out = tmp_path / "compare"
    with open_store(settings) as store:
        comparison = compare_answers(
            store,
            settings,
            questions,
            ["naive", "facts+text:no-llm"],
            dataset=dataset,
            out_dir=out,
            llm=llm,
        )
    assert not llm.replies and len(llm.calls) == 2
    system, user = prompts[0]
    assert system["content"] == SYSTEM and user["content"].endswith(
        "Question: What were Apple's total net sales in fiscal 2023?\nHelpful Answer:"
    )
    assert 1 <= user["content"].count("\n\n[") + 1 <= NAIVE_K  # numbered chunks, at most k

    naive, facts = comparison.variants["naive"], comparison.variants["facts+text:no-llm"]
    sales, ceo = naive.results
    assert sales.route == "naive" and sales.auto_correct is True and sales.citations == 1
    assert not ceo.refused and ceo.citations == 1
    assert naive.settings["variant"] == "naive"
    # The naive answer prints no quote; the passage it cites holds the gold row.
    assert sales.evidence_quote_recall == 0.0 and sales.quotes_from is None
    assert sales.evidence_passage_recall == 1.0
    f_sales, f_ceo = facts.results
    assert f_sales.route == "facts" and f_sales.auto_correct is True
    # finrag prints its evidence (the cells a facts answer rests on): the quotes come from it.
    assert f_sales.quotes_from == "evidence" and covered(f_sales.evidence_passage_recall)
    assert f_ceo.refused and f_ceo.evidence_quote_recall == 0.0

    against = versus(comparison)
    assert against["naive"]["correct_over_naive"] == 1.0
    assert against["facts+text:no-llm"]["newly_refused"] == ["apple-ceo"]
    assert against["facts+text:no-llm"]["newly_refused_vs"] == "naive"
    ratio = facts.summary["latency_s"]["p50"] / naive.summary["latency_s"]["p50"]
    assert against["facts+text:no-llm"]["latency_p50_over_naive"] == round(ratio, 2)
    assert naive.summary["evidence_recall_passages"] == {"value": 0.5, "n": 2}
    assert naive.summary["evidence_recall_quotes"] == {"value": 0.0, "n": 2}

    write_comparison(comparison, out)
    compared = (out / "comparison.md").read_text()
    assert "`naive` (dense top-5, no filters, no facts, no checks" in compared
    assert "| correct / naive | 1.00× |" in compared
    assert "| answerable newly refused (vs naive) | — | 1 |" in compared
    assert "| evidence recall: cited passages | 0.500 (2) |" in compared
    assert "| p50 / p95 s, route naive |" in compared


def test_several_files_run_as_one_set(tmp_path: Path) -> None:
    dev = write_jsonl(tmp_path / "dev.jsonl", QUESTIONS)
    negative = write_jsonl(
        tmp_path / "neg.jsonl",
        [{"id": "neg-1", "question": "Initech's revenue?", "answer": "", "answerable": False}],
    )
    both = load_datasets([dev, negative], limit=1)
    assert [q.id for q in both] == ["apple-sales-2023", "neg-1"]
    assert [q.answerable for q in both] == [True, False]
    assert str(datasets_label([dev, negative])) == f"{dev} + {negative}"
    assert datasets_label([dev]) == dev
    with pytest.raises(UsageError, match="ids repeat across"):
        load_datasets([dev, dev])


def test_the_recipes_dont_know_is_its_refusal(facts_db: str) -> None:  # noqa: F811
    settings = load_settings(database_url=SecretStr(facts_db))
    with open_store(settings) as store:
        asker = NaiveAsker(store, settings, llm=FakeLLM(["I don't know the answer to that."]))
        answer = asker.ask("Who audits Apple's financial statements?")
    assert answer.refused and answer.refusal == "dont-know" and answer.citations == []
    assert answer.route == "naive" and answer.retrieval["k"] == NAIVE_K
    assert 1 <= len(answer.chunks) <= NAIVE_K and answer.tokens["completion"] > 0
