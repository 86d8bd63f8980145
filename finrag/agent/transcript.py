"""A stored conversation as Markdown (`finrag sessions export NAME`): each question, its
answer, the status of its numbers, its citations (document and page) and calculations."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from finrag.agent.memory import RESET_MARK, turn_from_record
from finrag.agent.state import TurnResult
from finrag.answer.status import WORDS
from finrag.retrieve.context import page_label


def conversation_markdown(name: str, messages: list[dict[str, Any]]) -> str:
    """The conversation (messages as `conversation_messages` returns them) as one Markdown
    document, ending in a newline."""
    turns = [m for m in messages if m["role"] == "user"]
    lines = [f"# Chat session: {_escape(name)}", ""]
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
    lines = [f"## {turn.turn}. {_escape(question or turn.question)}", ""]
    if turn.standalone and turn.standalone not in (question, turn.question):
        lines += [f"*Read as:* {_escape(turn.standalone)}", ""]
    lines += [turn.reply.strip(), ""]
    status = WORDS.get(turn.status, turn.status.replace("_", " "))
    lines += [f"**Status:** {status} · {turn.intent}", ""]
    if turn.numbers:
        lines += ["| Number | Status | Source |", "|---|---|---|"]
        seen = set()
        for n in turn.numbers:
            key = (n["number"], n["status"])
            if key in seen:
                continue
            seen.add(key)
            lines.append(
                f"| {_cell(n['number'])} | {WORDS.get(n['status'], n['status'])} | "
                f"{_cell(n.get('source') or '—')} |"
            )
        lines.append("")
    if turn.citations:
        lines += ["**Sources**", ""]
        for c in turn.citations:
            pages = page_label(c.pages[0], c.pages[-1]) if c.pages else ""
            where = " · ".join(p for p in (f"{c.document} {pages}".strip(), c.section) if p)
            ref = f" (`{c.ref}`)" if c.path else ""
            lines.append(f"- [{c.n}] {_escape(where)}{ref}")
            if c.quote:
                lines.append(f"  > {_escape(c.quote)}")
        lines.append("")
    used = [c for c in turn.calculations if c.result is not None and not c.unsourced_inputs]
    if used:
        lines += ["**Calculations**", ""]
        for c in used:
            inputs = ", ".join(
                f"{i['text']} [{','.join(map(str, i['sources']))}]"
                if i.get("sources")
                else i["text"]
                for i in c.inputs
            )
            lines.append(f"- {_escape(c.description)}: `{c.expression} = {c.formatted}`")
            if inputs:
                lines.append(f"  - inputs: {inputs}")
        lines.append("")
    return lines


def _when(value: Any) -> str:
    return f"{value:%Y-%m-%d %H:%M}" if isinstance(value, datetime) else str(value)


def _escape(text: str) -> str:
    """Text that Markdown would read as markup, shown as written (citation brackets stay)."""
    return text.replace("*", "\\*").replace("_", "\\_").replace("`", "\\`")


def _cell(text: str) -> str:
    return _escape(text).replace("|", "\\|").replace("\n", " ")
