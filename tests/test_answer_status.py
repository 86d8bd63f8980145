"""`ask` through the CLI on the real embedded Postgres with a scripted model: each number's
status ("verified" only for stored facts and calculations on them, "found in source" for
a number merely printed in a cited excerpt, "unsupported" otherwise), the exit codes
scripts branch on, --timeout and its hint, answering from facts when the model times out,
and --format md."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from finrag.errors import ExitCode
from tests.conftest import run_finrag
from tests.test_facts_store import _store_apple

GLOBEX = "What was Globex revenue in 2023?"
GLOBEX_FACT = {
    "answerable": True,
    "facts": [{"source": 1, "quote": "revenue fell 3% to $4.0", "value": "4.0"}],
    "calculations": [],
}
GLOBEX_ANSWER = "Globex revenue fell 3% to $4.0 billion in 2023 [1]."
# The text route's reply: the claim and the quote it rests on (the answer above).
GLOBEX_QUOTED = {
    "answerable": True,
    "claims": [{"text": "Globex revenue fell 3% to $4.0 billion in 2023", "source": 1}],
}
APPLE = "What were Apple's total net sales in fiscal 2024?"


@pytest.fixture
def ask(store_and_settings, tmp_path: Path, database_url: str):
    """Run `finrag ask ARGS` with the model replaying ``replies``; the store holds ACME
    and Globex excerpts and Apple's statement of operations as facts."""
    store, settings = store_and_settings
    with store.connect() as conn:
        _store_apple(conn, settings)

    def run(*args: str, replies: list | None = None, **env: str):
        script = tmp_path / "replies.json"
        script.write_text(json.dumps(replies or []))
        full = dict(
            os.environ,
            FINRAG_DATABASE_URL=database_url,
            FINRAG_LLM__BACKEND="fake",
            FINRAG_LLM__FAKE_SCRIPT=str(script),
            **env,
        )
        return run_finrag("ask", *args, env=full)

    return run


def test_a_number_only_in_an_excerpt_is_found_in_source_not_verified(ask) -> None:
    replies = [GLOBEX_QUOTED]
    human = ask(GLOBEX, "--k", "1", replies=replies)
    assert human.returncode == 0, human.stderr
    assert "\nNumbers\n3%  found in source · excerpt [1]\n" in human.stdout
    assert "$4.0 billion  found in source · excerpt [1]" in human.stdout
    assert "verified" not in human.stdout
    assert "status: found in source" in human.stderr

    data = json.loads(ask(GLOBEX, "--k", "1", "--json", replies=replies).stdout)
    assert data["status"] == "found_in_source"
    assert [(n["number"], n["status"], n["source"]) for n in data["numbers"]] == [
        ("3%", "found_in_source", "excerpt [1]"),
        ("$4.0 billion", "found_in_source", "excerpt [1]"),
    ]

    strict = ask(GLOBEX, "--k", "1", "--strict", replies=replies)
    assert strict.returncode == ExitCode.UNVERIFIED == 8, "--strict: only verified passes"


def test_a_number_from_the_facts_store_is_verified(ask) -> None:
    human = ask(APPLE, "--no-llm", "--strict")
    assert human.returncode == 0, human.stderr
    assert "391,035" in human.stdout and "  verified · stored fact [1]: Total net sales" in (
        human.stdout
    )
    data = json.loads(ask(APPLE, "--no-llm", "--json").stdout)
    assert data["route"] == "facts" and data["status"] == "verified"
    assert {n["status"] for n in data["numbers"]} == {"verified"}


def test_an_unsupported_number_exits_with_its_own_code(ask) -> None:
    # The extraction path keeps a number it could not verify, flagged (the text route's
    # evidence path removes it instead: tests/test_answer_evidence.py).
    wrong = "Globex revenue was $5.0 billion in 2023 [1]."
    extract = {"FINRAG_ANSWER__TEXT_MODE": "extract"}
    result = ask(GLOBEX, "--k", "1", "--json", replies=[GLOBEX_FACT, wrong, wrong], **extract)
    assert result.returncode == ExitCode.UNVERIFIED, result.stderr
    data = json.loads(result.stdout)
    assert data["status"] == "unsupported"
    assert data["numbers"] == [
        {
            "number": "$5.0 billion",
            "status": "unsupported",
            "source": "not in the cited excerpts",
            "sentence": wrong,
        }
    ]
    human = ask(GLOBEX, "--k", "1", replies=[GLOBEX_FACT, wrong, wrong], **extract)
    assert human.returncode == 8
    assert "$5.0 billion  unsupported · not in the cited excerpts" in human.stdout


def test_timeout_option_reaches_the_model_and_its_hint_says_how_to_raise_it(ask) -> None:
    result = ask(GLOBEX, "--k", "1", "--timeout", "7", replies=[{"__error__": "timeout"}])
    assert result.returncode == ExitCode.MODEL, result.stderr
    assert "took longer than 7 s" in result.stderr
    hint = result.stderr.split("hint:", 1)[1]
    assert "--timeout" in hint and "FINRAG_LLM__TIMEOUT_S" in hint and "llm.timeout_s" in hint

    from_env = ask(
        GLOBEX, "--k", "1", replies=[{"__error__": "timeout"}], FINRAG_LLM__TIMEOUT_S="9"
    )
    assert "took longer than 9 s" in from_env.stderr

    bad = ask(GLOBEX, "--timeout", "0")
    assert bad.returncode == ExitCode.USAGE


def test_a_model_timeout_on_a_facts_question_answers_from_the_facts(ask) -> None:
    result = ask(APPLE, "--json", replies=[{"__error__": "timeout"}])
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["route"] == "facts" and data["status"] == "verified"
    assert "391,035" in data["answer"]
    assert any("took longer than 300 s" in f and "template kept" in f for f in data["flags"])


def test_format_md(ask) -> None:
    result = ask(GLOBEX, "--k", "1", "--format", "md", replies=[GLOBEX_QUOTED])
    assert result.returncode == 0, result.stderr
    md = result.stdout
    assert md.startswith(f"## {GLOBEX}\n\n{GLOBEX_ANSWER}\n\n**Status:** found in source")
    assert "| $4.0 billion | found in source | excerpt [1] |" in md
    assert "### Sources\n\n- [1] GLOBEX_2023_10K p.2" in md
    assert "\x1b[" not in md and "╭" not in md

    bad = ask(GLOBEX, "--format", "yaml")
    assert bad.returncode == ExitCode.USAGE and "--format" in bad.stderr


def test_a_model_timeout_on_a_question_that_also_asks_why_keeps_the_stored_figures(ask) -> None:
    question = "How did Apple's total net sales change in fiscal 2024 and why?"
    result = ask(question, "--json", replies=[{"__error__": "timeout"}])
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["route"] == "mixed" and data["status"] == "verified", data["answer"]
    assert "391,035" in data["answer"]
    (flag,) = [f for f in data["flags"] if "timed out" in f]
    assert "answered from the facts store only" in flag and "--timeout" in flag


def test_a_dropped_filter_is_a_warning_even_when_quiet_and_strict_filters_fail(ask) -> None:
    question = "What did Globex's 8-K say about revenue in 2023?"  # it holds a 10-K only
    widened = ask("--quiet", question, "--k", "1", replies=[GLOBEX_QUOTED])
    assert widened.returncode == 0, widened.stderr
    assert "warning: no filing matches form 8-K: searched without that filter" in (widened.stderr)
    assert "status:" not in widened.stderr, "--quiet keeps the warning, not the notes"

    # No replies scripted: reaching the model would fail with another exit code.
    strict = ask(question, "--strict-filters")
    assert strict.returncode == ExitCode.NO_ANSWER, strict.stderr
    assert strict.stdout == ""
    assert "no filing matches form 8-K" in strict.stderr
    assert "finrag docs list" in strict.stderr
