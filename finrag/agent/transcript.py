"""A stored conversation as Markdown (`finrag sessions export NAME`): each question, its
answer, the status of its numbers, its citations (document and page) and calculations."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from finrag.agent.memory import RESET_MARK, turn_from_record
from finrag.agent.state import TurnResult
from finrag.answer.markdown import (
    calculations_list,
    escape,
    numbers_table,
    section,
    sources_list,
)
from finrag.answer.status import WORDS


def conversation_markdown(name: str, messages: list[dict[str, Any]]) -> str:
    """The conversation (messages as `conversation_messages` returns them) as one Markdown
    document, ending in a newline."""
    turns = [m for m in messages if m["role"] == "user"]
    lines = [f"# Chat session: {escape(name)}", ""]
    if messages:
        first, last = messages[0]["created_at"], messages[-1]["created_at"]
        lines += [f"{len(turns)} turn(s) · {_when(first)} – {_when(last)}", ""]
    else:
        lines += ["No turns stored.", ""]
    question = ""
    for m in messages:
        if m["role"] == "user":
            question = m["content"]
        elif m["role"] == "system":
            if m["content"] == RESET_MARK:
                lines += [
                    "---",
                    "",
                    "*Context reset here: later turns do not see earlier ones.*",
                    "",
                ]
        else:
            turn = turn_from_record(m["turn"], m["content"], m["citations"], m["trace"] or {})
            lines += turn_markdown(turn, question=question)
    return "\n".join(lines).rstrip("\n") + "\n"


def turn_markdown(turn: TurnResult, *, question: str = "") -> list[str]:
    lines = [f"## {turn.turn}. {escape(question or turn.question)}", ""]
    if turn.standalone and turn.standalone not in (question, turn.question):
        lines += [f"*Read as:* {escape(turn.standalone)}", ""]
    lines += [turn.reply.strip(), ""]
    status = WORDS.get(turn.status, turn.status.replace("_", " "))
    lines += [f"**Status:** {status} · {turn.intent}", ""]
    lines += section("**Numbers**", numbers_table(turn.numbers))
    lines += section("**Sources**", sources_list(turn.citations))
    lines += section("**Calculations**", calculations_list(turn.calculations))
    return lines


def _when(value: Any) -> str:
    return f"{value:%Y-%m-%d %H:%M}" if isinstance(value, datetime) else str(value)
