"""Conversations are never lost by accident (issue 16): /reset keeps the stored turns,
/forget and `sessions rm` ask first, a cancelled or resumed session still shows its last
answer, unknown commands list the commands, `sessions export` writes Markdown, and chat's
--json and human output carry the numbers' status words. Real embedded Postgres, fake model."""

from __future__ import annotations

import builtins
import json
import os
from pathlib import Path

from finrag.agent.memory import (
    conversation_messages,
    list_conversations,
    open_conversation,
    session_names,
)
from finrag.agent.session import ChatSession
from finrag.agent.transcript import conversation_markdown
from finrag.cli import chat_cmd
from finrag.llm.fake import FakeLLM
from tests.conftest import run_finrag
from tests.corpus import quoted
from tests.test_chat import SUPPORTED

QUESTION = "What was Globex revenue in 2023?"
# With answer.k = 1 the one excerpt is Globex's revenue page, so the scripted [1] is right.
GLOBEX_TURN = [
    {
        "answerable": True,
        "claims": [{"text": "Globex revenue fell 3% to $4.0 billion in 2023", "source": 1}],
    },
    SUPPORTED,
]


def _env(tmp_path: Path, database_url: str, replies: list) -> dict[str, str]:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies))
    return dict(
        os.environ,
        FINRAG_DATABASE_URL=database_url,
        FINRAG_LLM__BACKEND="fake",
        FINRAG_LLM__FAKE_SCRIPT=str(script),
        FINRAG_ANSWER__K="1",
    )


def _chat(tmp_path: Path, env: dict[str, str], session: str, *lines: str, json_out=True):
    turns = tmp_path / f"{session}.txt"
    turns.write_text("\n".join(lines) + "\n")
    args = ["chat", "--input", str(turns), "--session", session]
    result = run_finrag(*args, *(["--json"] if json_out else []), env=env)
    assert result.returncode == 0, result.stderr
    if not json_out:
        return result
    return [json.loads(line) for line in result.stdout.splitlines()]


def _listed(store) -> dict[str, int]:
    with store.connect() as conn:
        return {c.name: c.turns for c in list_conversations(conn)}


def test_reset_keeps_history_and_forget_needs_a_yes(store_and_settings, tmp_path, database_url):
    env = _env(tmp_path, database_url, GLOBEX_TURN * 2)
    turns = tmp_path / "turns.txt"
    turns.write_text("\n".join([QUESTION, "/reset", "/sources", QUESTION, "/foo", "/forget"]))
    script = run_finrag("chat", "--input", str(turns), "--session", "kept", "--json", env=env)
    assert script.returncode == 2, "a script's /forget without --yes stops it"
    assert "hint: write /forget --yes to confirm; nothing was deleted" in script.stderr
    objects = [json.loads(line) for line in script.stdout.splitlines()]
    _, reset, sources, second, foo, forget = objects
    assert "the 1 earlier turn(s) stay stored" in reset["result"]
    # After /reset the last answer is still there to inspect; the next turn starts afresh.
    assert sources["result"][0]["document"] == "GLOBEX_2023_10K.pdf"
    assert second["turn"] == 2 and second["standalone"] == QUESTION
    assert forget["result"] is None and forget["error"].startswith("/forget deletes 2 stored")
    assert "unknown command /foo" in foo["result"] and "/forget" in foo["result"]
    assert "/sources" in foo["result"] and "/quit" in foo["result"]
    assert _listed(store_and_settings[0]) == {"kept": 2}, (
        "neither /reset nor an unconfirmed /forget deletes"
    )

    shown = json.loads(run_finrag("sessions", "show", "kept", "--json", env=env).stdout)
    roles = [m["role"] for m in shown["messages"]]
    assert roles == ["user", "assistant", "system", "user", "assistant"]

    # A resumed session starts from the reset: the stored turns are not its context.
    store, settings = store_and_settings
    resumed = ChatSession(store, settings, name="kept", llm=FakeLLM([]))
    assert resumed.stored_turns == 2 and resumed.resumed_turns == 1
    assert resumed.last is not None and resumed.last.turn == 2

    gone = _chat(tmp_path, env, "kept", "/forget --yes", "/sources")
    assert gone[0]["result"] == "forgot 2 turn(s) of 'kept'"
    assert gone[1]["result"] == "nothing asked yet in this session"
    assert _listed(store_and_settings[0]) == {"kept": 0}


def _repl(chat: ChatSession, lines: list[str], monkeypatch, tmp_path: Path) -> None:
    """The REPL as a person drives it, each input() answered from ``lines``."""
    feed = iter(lines)

    def fake_input(prompt: str = "") -> str:
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr(builtins, "input", fake_input)
    chat_cmd._repl(chat, tmp_path / "history", chat_cmd._Progress(steps=False))


def _ctrl_c(_messages):
    raise KeyboardInterrupt  # as the signal handler raises it during a model call


ACME_TURN = [
    quoted("$310 million", "ACME's capital expenditures were $310 million in 2023"),
    SUPPORTED,
]


def test_sources_after_a_cancelled_turn_show_the_previous_turn(
    store_and_settings, tmp_path, monkeypatch, capsys
):
    store, settings = store_and_settings
    chat = ChatSession(store, settings, name="cancel", llm=FakeLLM([*ACME_TURN, _ctrl_c]))
    lines = ["What were ACME's capital expenditures in 2023?", "And Globex's revenue?"]
    _repl(chat, [*lines, "/sources", "/filters"], monkeypatch, tmp_path)
    captured = capsys.readouterr()
    assert "cancelled: nothing stored; /sources, /trace and /filters still show turn 1" in (
        captured.err
    )
    # Once under turn 1's answer, once for /sources after the cancelled turn 2.
    assert captured.out.count("] ACME_2023_10K p.3 · Item 7") == 2
    assert "company: ACME · fiscal year: 2023" in captured.out  # /filters, in words
    assert "turn 1: What were ACME's capital expenditures in 2023?" in captured.err
    assert chat.stored_turns == 1 and chat.last.turn == 1


def test_forget_at_the_prompt_asks_first(store_and_settings, tmp_path, monkeypatch, capsys):
    store, settings = store_and_settings
    chat = ChatSession(store, settings, name="ask", llm=FakeLLM(ACME_TURN))
    chat.turn("What were ACME's capital expenditures in 2023?")
    _repl(chat, ["/forget", "n", "/reset"], monkeypatch, tmp_path)
    assert "kept: nothing deleted" in capsys.readouterr().out
    assert ChatSession(store, settings, name="ask", llm=FakeLLM([])).stored_turns == 1
    _repl(chat, ["/forget", "y"], monkeypatch, tmp_path)
    assert "forgot 1 turn(s) of 'ask'" in capsys.readouterr().out
    assert ChatSession(store, settings, name="ask", llm=FakeLLM([])).stored_turns == 0


def test_a_resumed_session_shows_its_last_stored_turn(store_and_settings, tmp_path, database_url):
    env = _env(tmp_path, database_url, GLOBEX_TURN)
    _chat(tmp_path, env, "resume", QUESTION)
    sources, filters, trace = _chat(tmp_path, env, "resume", "/sources", "/filters", "/trace")
    assert sources["result"][0]["document"] == "GLOBEX_2023_10K.pdf"
    assert sources["result"][0]["pages"] == [2, 2]
    assert filters["result"]["companies"] == ["Globex"]
    assert trace["result"]["path"][-1] == "verify"
    human = _chat(tmp_path, env, "resume", "/sources", json_out=False)
    assert "resumed 'resume': 1 earlier turn(s)" in human.stderr
    assert "[1] GLOBEX_2023_10K p.2" in human.stdout


def test_chat_says_which_numbers_are_verified(store_and_settings, tmp_path, database_url):
    env = _env(tmp_path, database_url, GLOBEX_TURN * 2)
    (turn,) = _chat(tmp_path, env, "words", QUESTION)
    # $4.0 billion is printed in the cited excerpt, not traced to a stored fact.
    assert turn["status"] == "found_in_source" and turn["verified"] is False
    assert {"number": "$4.0 billion", "status": "found_in_source"}.items() <= next(
        n for n in turn["numbers"] if "4.0" in n["number"]
    ).items()
    human = _chat(tmp_path, env, "words2", QUESTION, json_out=False)
    assert "status: found in source · relevant" in human.stderr
    numbers = human.stdout.split("Numbers", 1)[1]
    assert "found in source" in numbers and "verified" not in numbers


def test_sessions_export_writes_markdown_and_rm_asks_first(
    store_and_settings, tmp_path, database_url
):
    env = _env(tmp_path, database_url, GLOBEX_TURN)
    _chat(tmp_path, env, "export", QUESTION, "/reset")
    target = tmp_path / "out" / "export.md"
    target.parent.mkdir()
    result = run_finrag("sessions", "export", "export", "--out", str(target), env=env)
    assert result.returncode == 0, result.stderr
    assert "wrote 'export' (1 turn(s))" in result.stderr and result.stdout == ""
    text = target.read_text()
    assert text.startswith("# Chat session: export\n")
    assert f"## 1. {QUESTION}" in text
    assert "Globex revenue fell 3% to $4.0 billion in 2023 [1]." in text
    assert "**Status:** found in source" in text
    assert "| $4.0 billion | found in source |" in text
    assert "- [1] GLOBEX_2023_10K p.2" in text and "(`GLOBEX_2023_10K.pdf#page=2`)" in text
    assert "*Context reset here" in text
    piped = run_finrag("sessions", "export", "export", env=env)
    assert piped.returncode == 0 and piped.stdout == text
    missing = run_finrag("sessions", "export", "nope", env=env)
    assert missing.returncode == 2 and "no session named 'nope'" in missing.stderr

    refused = run_finrag("sessions", "rm", "export", env=env)  # stdin is not a terminal
    assert refused.returncode == 2 and "pass --yes to confirm" in refused.stderr
    assert _listed(store_and_settings[0]) == {"export": 1}
    removed = run_finrag("sessions", "rm", "export", "--yes", env=env)
    assert removed.returncode == 0 and "removed session 'export' (1 turn(s))" in removed.stderr
    assert _listed(store_and_settings[0]) == {}


def test_session_names_for_completion(store_and_settings) -> None:
    store, settings = store_and_settings
    for name in ("alpha", "beta"):
        ChatSession(store, settings, name=name, llm=FakeLLM([]))
    with store.connect() as conn:
        conn.execute("UPDATE conversations SET updated_at = now() WHERE name = 'beta'")
        conn.commit()
        assert session_names(conn) == ["beta", "alpha"]
        assert session_names(conn, "al") == ["alpha"]


LONG_CLAIM = (
    "Globex's revenue fell because of weaker demand in every region, lower prices on its "
    "main product lines and the loss of two large customers, none of which the excerpt says"
)


def test_the_checked_answer_is_printed_once_with_the_verdict_in_full(
    store_and_settings, tmp_path, database_url
):
    claim = "Globex revenue fell 3% to $4.0 billion in 2023, on weaker demand everywhere"
    draft = f"{claim} [1]."
    reply = {"answerable": True, "claims": [{"text": claim, "source": 1}]}
    retry = {"query": "Globex revenue 2023", "passage": "Revenue fell 3% to $4.0 billion."}
    unsupported = {"supported": False, "unsupported": [LONG_CLAIM]}
    env = _env(tmp_path, database_url, [reply, unsupported, retry, reply, unsupported])
    result = _chat(tmp_path, env, "verdict", QUESTION, json_out=False)
    # The verdict in full (it was cut at 100 characters), each claim on a line of its own.
    assert f"  - {LONG_CLAIM}\n" in result.stderr
    assert "\nchecking again…\n" in result.stderr
    # The draft is never printed as an answer: only the checked reply, once, with its caveat.
    assert result.stdout.count(draft) == 1
    assert "Not supported by the cited excerpts: " + LONG_CLAIM in result.stdout
    assert "status: found in source · relevant" in result.stderr


def test_a_turn_stored_before_status_words_is_never_read_as_verified(store_and_settings):
    store, settings = store_and_settings
    with store.connect() as conn:
        conversation = open_conversation(conn, "old")
        conn.execute(
            "INSERT INTO messages (conversation_id, turn, role, content) "
            "VALUES (%s, 1, 'user', %s)",
            (conversation, QUESTION),
        )
        record = {"question": QUESTION, "intent": "relevant", "verified": True}  # pre-issue 16
        conn.execute(
            "INSERT INTO messages (conversation_id, turn, role, content, trace) "
            "VALUES (%s, 1, 'assistant', %s, %s)",
            (conversation, "Revenue fell 3% to $4.0 billion [1].", json.dumps(record)),
        )
        conn.commit()
        markdown = conversation_markdown("old", conversation_messages(conn, "old"))
    last = ChatSession(store, settings, name="old", llm=FakeLLM([])).last
    assert last.status == "not_recorded" and last.verified is False
    assert "**Status:** not recorded · relevant" in markdown
