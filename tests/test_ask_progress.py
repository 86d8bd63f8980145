"""The live status line (finrag.cli.progress) and ask's output around it: stage, elapsed
time and tokens/s on a terminal; nothing animated when stderr is not one; a checked answer
on stdout, never a streamed draft; and the number statuses of a chat turn."""

from __future__ import annotations

import io

from rich.console import Console

from finrag.answer.status import check_numbers_status, overall_status
from finrag.cli.progress import Activity, seconds_words
from tests.corpus import make_hit


def _console(terminal: bool) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=terminal, width=100), buffer


def test_the_status_line_shows_stage_elapsed_total_and_tokens() -> None:
    console, buffer = _console(terminal=True)
    with Activity("retrieving", console=console) as activity:
        activity.stage("writing the answer")
        activity.tokens(5)
        activity.tokens()
        words = activity.describe()
        activity.line("a finished line")
    assert words.startswith("writing the answer · ") and " s · total " in words
    assert "6 tokens" in words
    assert [name for name, _s in activity.stages] == ["retrieving", "writing the answer"]
    assert "a finished line\n" in buffer.getvalue()


def test_no_animation_when_not_a_terminal_or_quiet() -> None:
    console, buffer = _console(terminal=False)
    with Activity("retrieving", console=console) as activity:
        activity.stage("reading the excerpts")
        activity.tokens(3)
    assert not activity.animated and buffer.getvalue() == ""

    quiet, buffer = _console(terminal=True)
    quiet.quiet = True
    with Activity("retrieving", console=quiet) as activity:
        activity.line("not shown")
    assert not activity.animated and buffer.getvalue() == ""


def test_seconds_words() -> None:
    assert seconds_words(4.24) == "4.2 s"
    assert seconds_words(37.4) == "37 s"
    assert seconds_words(302) == "5 min 02 s"


def test_number_statuses_from_facts_calculations_and_excerpts() -> None:
    from finrag.retrieve.context import ContextChunk

    excerpt = ContextChunk(1, make_hit(content="Our effective tax rate increased to 26.1%."))
    fact = {"n": 2, "value": "2220000000", "printed": "2,220", "label": "Gross profit"}
    checks = check_numbers_status(
        "Gross margin was 26.1% [1]. Gross profit was $2,220 million [2]. It was 9% [1].",
        excerpts=[excerpt],
        fact_values=[fact],
    )
    assert [(c.number, c.status) for c in checks] == [
        ("26.1%", "found_in_source"),
        ("$2,220 million", "verified"),
        ("9%", "unsupported"),
    ]
    assert checks[1].source == "stored fact [2]: Gross profit"
    assert overall_status(checks) == "unsupported"
    assert overall_status(checks[:2]) == "found_in_source"
    assert overall_status([]) == "no_numbers" and overall_status([], refused=True) == "refused"


def test_ask_prints_the_checked_answer_not_a_draft(tmp_path, database_url, store_and_settings):
    """Piped, the answer is printed once, as checked: the draft the model wrote first
    (with a number the check rejects) never reaches stdout."""
    import json
    import os

    from tests.conftest import run_finrag

    fact = {
        "answerable": True,
        "facts": [{"source": 1, "quote": "revenue fell 3% to $4.0", "value": "4.0"}],
        "calculations": [],
    }
    script = tmp_path / "replies.json"
    script.write_text(
        json.dumps(
            [
                fact,
                "Globex revenue was $5.0 billion in 2023 [1].",
                "Globex revenue fell 3% to $4.0 billion in 2023 [1].",
            ]
        )
    )
    env = dict(
        os.environ,
        FINRAG_DATABASE_URL=database_url,
        FINRAG_LLM__BACKEND="fake",
        FINRAG_LLM__FAKE_SCRIPT=str(script),
        # The extraction path rewrites once (the evidence path removes the claim instead).
        FINRAG_ANSWER__TEXT_MODE="extract",
    )
    result = run_finrag("ask", "What was Globex revenue in 2023?", "--k", "1", env=env)
    assert result.returncode == 0, result.stderr
    assert "$5.0 billion" not in result.stdout
    assert result.stdout.startswith("Globex revenue fell 3% to $4.0 billion in 2023 [1].\n")
    assert "a number was not in its sources: answering again\n" in result.stderr
    # Timings and status on their own line, never glued to the answer.
    assert any(
        line.startswith("status: found in source · fake") for line in result.stderr.splitlines()
    )
