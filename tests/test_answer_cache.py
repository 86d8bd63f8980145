"""The semantic answer cache through the CLI, on the real store and the real embedder
(all-MiniLM-L6-v2, which answer.cache_similarity is calibrated for): a rewording is
answered from the cache, saying so; another period, company or figure never is; an
ingest or removal makes every cached answer stale; --no-cache and `cache clear`."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from finrag.answer.pipeline import Asker
from finrag.config import load_settings
from finrag.db import open_store
from finrag.llm import LLMError
from finrag.llm.fake import FakeLLM
from tests import pdfs
from tests.conftest import REPO, clean_env, ingested_home, run_finrag

SAMPLE = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"
REVENUE = "What was Best Buy's revenue in Q2 FY2024?"
REWORDED = "How much revenue did Best Buy report in the second quarter of fiscal 2024?"
NOT_ANSWERABLE = {"answerable": False, "facts": [], "calculations": []}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    # MiniLM, not the tests' hash embedder: the similarity threshold is calibrated for it.
    folder = tmp_path_factory.mktemp("cache")
    with ingested_home(folder / "home", [SAMPLE], "sentence-transformers") as home:
        yield home


def ask(home: Path, question: str, *args: str, **env: str) -> dict:
    result = run_finrag("ask", question, "--json", *args, env=_env(home, **env))
    assert result.returncode in (0, 7), result.stderr
    return json.loads(result.stdout)


def _env(home: Path, **extra: str) -> dict[str, str]:
    return clean_env(FINRAG_HOME=str(home), FINRAG_EMBED__BACKEND="sentence-transformers", **extra)


def test_a_rewording_hits_and_other_periods_companies_and_figures_never_do(home: Path) -> None:
    # Without the model a facts answer is not kept: asked again, reworded, the facts store
    # answers it anew before any search (a cache lookup would load the embedder).
    first = ask(home, REVENUE, "--no-llm")
    assert first["cache"] is None and "$9,583 million" in first["answer"]
    again = ask(home, REWORDED, "--no-llm")
    assert again["cache"] is None and again["retrieval"]["variant"] == "none"
    assert again["question"] == REWORDED and again["answer"] == first["answer"]
    assert again["citations"] == first["citations"] and again["status"] == "verified"

    # With the model on, a facts answer is kept (it spares the model's wording); worded
    # alike, asked about something else: never the cached answer (in process: one embedder
    # load for the lot).
    with _asker(home) as asker:
        assert asker.ask(REVENUE, use_cache=True).cache is None
        hit = asker.ask(REWORDED, use_cache=True).cache
        assert hit["question"] == REVENUE and hit["similarity"] >= 0.7
        for other in (
            "What was Best Buy's revenue in Q2 FY2023?",  # another period
            "What was Best Buy's domestic revenue in Q2 FY2024?",  # a part of the figure
            "What was Best Buy's operating income in Q2 FY2024?",  # another figure
            "What was Apple's revenue in Q2 FY2024?",  # a company the store does not hold
        ):
            assert asker.ask(other, use_cache=True).cache is None, other
        assert asker.ask(REWORDED, use_cache=True).cache is not None
        assert asker.ask(REWORDED, use_cache=False).cache is None  # ask --no-cache


@contextlib.contextmanager
def _asker(home: Path) -> Iterator[Asker]:
    with pytest.MonkeyPatch.context() as mp:
        for name, value in _env(home).items():
            if name.startswith("FINRAG_"):
                mp.setenv(name, value)
        settings = load_settings()
        with open_store(settings) as store:
            yield Asker(store, settings, llm=_NoWording())


class _NoWording(FakeLLM):
    """A model that never words a facts answer (its template is kept, and cached) and
    finds nothing in excerpts (a refusal, never cached): finrag's own answers, model on."""

    def chat(self, messages, *, output=None, **kwargs):
        if output is not None:
            return FakeLLM([NOT_ANSWERABLE]).chat(messages, output=output, **kwargs)
        raise LLMError("no wording here")


def test_a_model_answer_comes_back_without_a_model_call(home: Path, tmp_path: Path) -> None:
    question = "What was Best Buy's effective tax rate in Q2 FY2024?"
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                {
                    "answerable": True,
                    "claims": [{"text": "Best Buy's effective tax rate was 26.1%", "source": 1}],
                },
            ]
        )
    )
    fake = {"FINRAG_LLM__BACKEND": "fake", "FINRAG_LLM__FAKE_SCRIPT": str(script)}
    # The facts store computes this rate now: with its route off, the model answers.
    fake["FINRAG_ANSWER__FACTS_ROUTE"] = "false"
    first = ask(home, question, **fake)
    assert first["cache"] is None and first["backend"] == "fake" and not first["refused"]
    assert first["route"] == "text" and "26.1%" in first["answer"]
    script.write_text("[]")  # a model call now would fail: nothing left to reply
    reworded = "What was the effective tax rate of Best Buy in the second quarter of fiscal 2024?"
    again = ask(home, reworded, **fake)
    assert again["cache"]["question"] == question and again["answer"] == first["answer"]
    assert again["tokens"] == {"prompt": 0, "completion": 0}
    result = run_finrag("ask", question.replace("2024", "2023"), "--json", env=_env(home, **fake))
    assert "no reply left" in result.stderr  # another year: asked anew (and the script is dry)


def test_text_questions_share_a_key_only_with_the_same_content_words() -> None:
    from finrag.answer.cache import content_words
    from finrag.retrieve.filters import QueryFilters

    def words(question: str) -> list[str]:
        return content_words(question, QueryFilters(), ["Best Buy"])

    closed = words("How many stores did Best Buy close in Q2 FY2024?")
    assert closed == words("How many Best Buy stores were closed during Q2 FY2024?")
    # Embedded, these are as close as true rewordings (cosine 0.94 and 0.95 with MiniLM).
    assert closed != words("How many Best Buy stores were opened in Q2 FY2024?")
    assert words("What did Best Buy say about its Domestic segment in Q2 FY2024?") != words(
        "What did Best Buy say about its International segment in Q2 FY2024?"
    )


def test_an_ingest_makes_cached_answers_stale_and_clear_empties_the_cache(
    home: Path, tmp_path: Path
) -> None:
    other = pdfs.good_pdf(tmp_path / "ACME_2023_10K.pdf")
    with _asker(home) as asker:

        def cached() -> bool:
            return asker.ask(REVENUE, use_cache=True).cache is not None

        asker.ask(REVENUE, use_cache=True)
        assert cached()
        stats = json.loads(run_finrag("cache", "stats", "--json", env=_env(home)).stdout)
        assert stats["current"] >= 1 and stats["hits"] >= 1

        assert run_finrag("ingest", str(other), env=_env(home)).returncode == 0
        assert not cached()  # the store changed
        assert cached()
        assert run_finrag("docs", "rm", str(other), "--yes", env=_env(home)).returncode == 0
        assert not cached()

    cleared = json.loads(run_finrag("cache", "clear", "--json", env=_env(home)).stdout)
    assert cleared["removed"] >= 1
    stats = json.loads(run_finrag("cache", "stats", "--json", env=_env(home)).stdout)
    assert stats["entries"] == 0


def test_a_mixed_answer_with_a_change_of_two_ratios_is_kept(home: Path, tmp_path: Path) -> None:
    # The change of a computed margin carries Decimal inputs: the cache once failed to
    # write it, and the answer already given ended in an internal error.
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"answerable": True, "claims": []}]))
    fake = {"FINRAG_LLM__BACKEND": "fake", "FINRAG_LLM__FAKE_SCRIPT": str(script)}
    question = (
        "What drove the change in Best Buy's gross margin in the second quarter of fiscal 2024?"
    )
    first = ask(home, question, **fake)
    assert first["route"] == "mixed" and not first["refused"], first["answer"]
    script.write_text("[]")
    again = ask(home, question, **fake)
    assert again["cache"] is not None and again["answer"] == first["answer"]
