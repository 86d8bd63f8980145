"""Presets (answer.mode, --mode): what each sets, and that an explicit setting wins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from finrag.config import MODES, explain_settings, load_settings, with_mode
from finrag.db import open_store
from finrag.errors import UsageError
from finrag.evaluate.answer_compare import compare_answers, parse_variants, write_comparison
from finrag.evaluate.dataset import load_dataset
from finrag.llm.fake import FakeLLM
from tests.conftest import clean_env, run_finrag
from tests.test_eval_answers import NO_QUOTE_ANSWERS, ROUTED, facts_db, write_jsonl

__all__ = ["facts_db"]  # the fixture, imported for this module's tests


def _sources(settings, config_file=None) -> dict[str, str]:
    return {r.key: r.source for r in explain_settings(settings, config_file)}


def test_balanced_is_the_defaults_and_sets_nothing() -> None:
    assert MODES["balanced"] == {}
    settings = load_settings()
    assert settings.answer.mode == "balanced"
    assert settings.answer.k == 6 and settings.retrieve.reranker == "none"
    assert not any(s.startswith("mode") for s in _sources(settings).values())


def test_a_mode_from_the_environment_sets_what_no_source_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FINRAG_ANSWER__MODE", "precise")
    monkeypatch.setenv("FINRAG_ANSWER__EVIDENCE", "4")  # explicit: kept
    settings = load_settings()
    assert settings.retrieve.reranker == "llm"
    assert settings.answer.k == 10
    assert settings.answer.evidence == 4
    sources = _sources(settings)
    assert sources["answer.k"] == "mode precise"
    assert sources["retrieve.reranker"] == "mode precise"
    assert sources["answer.evidence"] == "env FINRAG_ANSWER__EVIDENCE"
    assert sources["answer.mode"] == "env FINRAG_ANSWER__MODE"


def test_a_whole_section_from_the_environment_is_explicit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FINRAG_ANSWER", '{"mode": "fast", "k": 5}')
    settings = load_settings()
    assert settings.answer.k == 5  # given in the section's JSON
    assert settings.answer.use_llm is False and settings.answer.evidence == 3  # the mode's


def test_the_file_sets_a_mode_and_a_flag_changes_it(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[answer]\nmode = "precise"\nk = 5\n\n[retrieve]\nrerank_candidates = 30\n')
    settings = load_settings(config)
    assert (settings.answer.k, settings.answer.evidence) == (5, 8)
    assert settings.retrieve.reranker == "llm"
    assert _sources(settings, config)["answer.k"] == f"file {config}"

    # `--mode fast` over it: the fast values, the file's k still
    fast = with_mode(settings, "fast")
    assert fast.answer.mode == "fast"
    assert (fast.answer.k, fast.answer.evidence, fast.answer.use_llm) == (5, 3, False)
    assert fast.retrieve.reranker == "none"
    assert fast.retrieve.rerank_candidates == 30  # no mode touches it
    # `--mode balanced`: what precise set goes back to its default
    balanced = with_mode(settings, "balanced")
    assert balanced.retrieve.reranker == "none" and balanced.answer.evidence == 5
    assert balanced.answer.k == 5
    assert _sources(balanced, config)["answer.evidence"] == "default"


def test_an_override_is_explicit_and_survives_a_mode() -> None:
    settings = load_settings(answer={"k": 7}, retrieve={"reranker": "none"})
    precise = with_mode(settings, "precise")
    assert precise.answer.k == 7 and precise.retrieve.reranker == "none"
    assert precise.answer.evidence == 8
    with pytest.raises(UsageError, match="unknown mode"):
        with_mode(settings, "thorough")


def test_an_unknown_mode_in_the_environment_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from finrag.errors import ConfigError

    monkeypatch.setenv("FINRAG_ANSWER__MODE", "thorough")
    with pytest.raises(ConfigError, match=r"answer\.mode"):
        load_settings()


def test_config_show_prints_what_the_mode_sets(tmp_path: Path) -> None:
    env = clean_env(FINRAG_HOME=str(tmp_path / "home"), FINRAG_ANSWER__K="7")
    shown = run_finrag("config", "show", "--mode", "precise", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["mode"] == "precise"
    assert data["mode_sets"]["answer.k"] == {"value": 10, "applied": False}
    assert data["mode_sets"]["retrieve.reranker"] == {"value": "llm", "applied": True}
    settings = data["settings"]
    assert settings["answer.k"] == {"value": 7, "source": "env FINRAG_ANSWER__K"}
    assert settings["answer.evidence"] == {"value": 8, "source": "mode precise"}
    assert settings["answer.mode"] == {"value": "precise", "source": "flag --mode"}

    table = run_finrag("config", "show", env={**env, "FINRAG_ANSWER__MODE": "fast"})
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert "answer.use_llm\tfalse\tmode fast" in lines
    assert "answer.k\t7\tenv FINRAG_ANSWER__K" in lines
    caption = next(line for line in lines if line.startswith("# mode fast sets:"))
    assert "answer.k = 3 (set explicitly: kept)" in caption
    assert "retrieve.reranker = none" in caption


def test_compare_accepts_the_modes() -> None:
    assert parse_variants("mode:fast,mode:balanced,mode:precise") == [
        "mode:fast",
        "mode:balanced",
        "mode:precise",
    ]
    with pytest.raises(UsageError, match="mode:slow"):
        parse_variants("mode:fast,mode:slow")


def test_compare_runs_each_mode_with_its_settings(facts_db: str, tmp_path: Path) -> None:
    # answer.evidence given explicitly: every mode keeps it
    settings = load_settings(database_url=SecretStr(facts_db), answer={"evidence": 4})
    questions = load_dataset(write_jsonl(tmp_path / "qs.jsonl", ROUTED))

    def reply(messages):
        if "You rank excerpts" in str(messages[0].get("content", "")):
            return {"ranking": list(range(1, 41))}
        return NO_QUOTE_ANSWERS

    llm = FakeLLM([reply] * 40)
    calls_after: dict[str, int] = {}

    def on_question(name, _result, _resumed) -> None:
        calls_after[name] = len(llm.calls)

    with open_store(settings) as store:
        comparison = compare_answers(
            store,
            settings,
            questions,
            ["mode:fast", "mode:balanced", "mode:precise"],
            dataset=tmp_path / "qs.jsonl",
            out_dir=tmp_path / "out",
            llm=llm,
            on_question=on_question,
        )
    fast, balanced, precise = (comparison.variants[f"mode:{m}"] for m in MODES)
    assert fast.settings["answer"]["mode"] == "fast"
    assert fast.settings["answer"]["use_llm"] is False and fast.settings["answer"]["k"] == 3
    assert balanced.settings["answer"]["k"] == 6
    assert balanced.settings["retrieve"]["reranker"] == "none"
    assert precise.settings["retrieve"]["reranker"] == "llm"
    assert precise.settings["answer"]["k"] == 10
    assert {r.settings["answer"]["evidence"] for r in (fast, balanced, precise)} == {4}
    # fast ran first and asked the model nothing; only precise reranked
    assert calls_after["mode:fast"] == 0
    outputs = [c["output"] for c in llm.calls]
    assert outputs.count("Ranking") >= 1
    assert "Ranking" not in outputs[: calls_after["mode:balanced"]]
    assert fast.results[0].route == "facts" and fast.results[0].auto_correct is True
    assert (tmp_path / "out" / "mode-fast").is_dir()
    # the comparison's tables name each mode (this crashed on a mode variant)
    written = write_comparison(comparison, tmp_path / "out")
    tables = "".join(p.read_text() for p in written if p.suffix == ".md")
    assert "answer.mode=precise" in tables and "mode:fast" in tables


def test_ask_mode_flag_yields_to_explicit_settings(facts_db: str, tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text("[]")  # a model call fails: the facts answer keeps its template, says so
    env = clean_env(
        FINRAG_DATABASE_URL=facts_db,
        FINRAG_EMBED__BACKEND="hash",
        FINRAG_LLM__BACKEND="fake",
        FINRAG_LLM__FAKE_SCRIPT=str(script),
        FINRAG_ANSWER__CACHE="false",
    )
    question = ROUTED[0]["question"]

    def model_called(extra: dict[str, str], mode: str) -> bool:
        shown = run_finrag("ask", question, "--mode", mode, "--json", env={**env, **extra})
        assert shown.returncode == 0, shown.stderr
        answer = json.loads(shown.stdout)
        assert answer["route"] == "facts"
        return any("could not phrase" in flag for flag in answer["flags"])

    assert not model_called({}, "fast")  # fast: no model phrasing
    assert model_called({}, "precise")
    assert not model_called({"FINRAG_ANSWER__USE_LLM": "false"}, "precise")  # explicit wins
    bad = run_finrag("ask", question, "--mode", "thorough", env=env)
    assert bad.returncode == 2 and "unknown mode" in bad.stderr


def test_no_llm_drops_a_modes_llm_reranker_but_not_an_explicit_one() -> None:
    from finrag.cli.state import without_model

    precise = without_model(with_mode(load_settings(), "precise"))
    assert precise.answer.use_llm is False and precise.retrieve.reranker == "none"
    assert precise.answer.k == 10  # the rest of the mode stays
    asked = without_model(with_mode(load_settings(retrieve={"reranker": "llm"}), "fast"))
    assert asked.retrieve.reranker == "llm"
