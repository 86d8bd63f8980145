"""The chat REPL's slash commands: /sources, /trace, /filters, /reset, /forget, /kpi,
/persona, /help, /quit."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.text import Text

from finrag.agent.session import ChatSession
from finrag.cli.ask_cmd import print_citations
from finrag.cli.kpi_cmd import chat_kpi
from finrag.cli.persona_view import persona_command
from finrag.cli.render import err, out, print_error
from finrag.errors import FinragError, UsageError

COMMANDS = {
    "/sources": "citations of the last answer, with quotes",
    "/trace": "the last turn's path through the graph, with timings and tokens",
    "/filters": "the filters the last question set (company, year, quarter, form)",
    "/reset": "start a fresh context (earlier turns stay stored: `finrag sessions show`)",
    "/forget": "delete this conversation's stored turns (asks first; /forget --yes in scripts)",
    "/kpi": "KPIs by period from the facts store: "
    "/kpi AAPL [--kpi gross_margin] [--years 2022-2024]",
    "/persona": "who answers are written for: /persona (show), "
    "/persona credit|equity|esg|retail (switch), /persona off",
    "/help": "this list",
    "/quit": "leave (Ctrl-D works too; Ctrl-C cancels an answer, not the session)",
}
HELP = "Commands:\n" + "\n".join(f"  {name:<10} {what}" for name, what in COMMANDS.items())
QUIT = ("/quit", "/exit", "/q")
YES = ("--yes", "-y", "yes")


def run_command(
    chat: ChatSession, line: str, *, as_json: bool, interactive: bool = False
) -> str | None:
    """Run one slash command; "quit" when the session should end. ``interactive``: a
    person at the prompt, who can be asked to confirm."""
    words = line.split()
    name = words[0].lower()
    last = chat.last
    data: Any
    if name in QUIT:
        return "quit"
    if name == "/help":
        data = HELP
    elif name == "/reset":
        chat.reset()
        kept = chat.stored_turns
        data = "context reset: the next question starts a fresh conversation" + (
            f"; the {kept} earlier turn(s) stay stored (/forget deletes them)" if kept else ""
        )
    elif name == "/forget":
        confirmed = any(w.lower() in YES for w in words[1:])
        if chat.stored_turns and not confirmed and not interactive:
            # A script cannot answer a question: it must say --yes, or it stops here (exit 2).
            message = f"/forget deletes {chat.stored_turns} stored turn(s) of {chat.name!r}"
            if as_json:
                _json_line({"command": name, "result": None, "error": message})
            raise UsageError(message, hint="write /forget --yes to confirm; nothing was deleted")
        data = _forget(chat, confirmed=confirmed)
    elif name == "/kpi":
        try:
            data = chat_kpi(chat.store, line, as_json=as_json)
        except FinragError as exc:  # a typo in a command costs the command, not the session
            print_error(exc.message, exc.hint, label=exc.label)
            return None
        if data is None:  # printed already
            return None
    elif name == "/persona":
        try:
            data = persona_command(chat, words[1:], as_json=as_json)
        except FinragError as exc:  # a typo costs the command, not the session
            print_error(exc.message, exc.hint, label=exc.label)
            return None
    elif name not in COMMANDS:
        data = f"unknown command {name}. " + HELP
    elif last is None:
        data = "nothing asked yet in this session"
    elif name == "/sources":
        data = [c.as_dict() for c in last.citations]
    elif name == "/trace":
        data = last.trace
    else:  # /filters
        data = last.filters
    if as_json:
        _json_line({"command": name, "result": data})
        return None
    if isinstance(data, str):
        out.print(Text(data))
    elif name == "/sources":
        _turn_label(last)
        print_citations(last.citations) if last.citations else out.print("no citations")
    elif name == "/trace":
        _turn_label(last)
        for step in data["steps"]:
            tokens = step["tokens"]
            out.print(
                Text(
                    f"{step['node']:<14} {step['ms'] / 1000:7.2f} s  {tokens['prompt']:>6} in "
                    f"{tokens['completion']:>5} out  {step['out']}"
                )
            )
            for fallback in step.get("fallbacks", []):  # Ollama failed, the embedded answered
                out.print(Text(f"{'':<14} fallback: {fallback['words']}", style="yellow"))
    else:
        _turn_label(last)
        out.print(Text(filters_words(data)))
    return None


def filters_words(filters: dict[str, Any]) -> str:
    """The filters a question set, as words: 'company: Best Buy Co., Inc. · year: 2024'."""
    parts = []
    for key, label in (
        ("companies", "company"),
        ("years", "fiscal year"),
        ("quarter", "quarter"),
        ("form_types", "form"),
    ):
        value = filters.get(key)
        if value in (None, [], ""):
            continue
        if key == "quarter":
            value = f"Q{value}"
        elif isinstance(value, list):
            value = ", ".join(map(str, value))
        parts.append(f"{label}: {value}")
    if filters.get("unknown_companies"):
        parts.append("not in the store: " + ", ".join(filters["unknown_companies"]))
    return " · ".join(parts) or "no filters: every filing was searched"


def _turn_label(last: Any) -> None:
    """Which turn a command speaks of: after a cancelled turn or a resume, not the latest line."""
    err.print(Text(f"turn {last.turn}: {last.question}", style="dim"))


def _json_line(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data, default=str) + "\n")
    sys.stdout.flush()


def _forget(chat: ChatSession, *, confirmed: bool) -> str:
    """Delete the stored turns once the user said so: --yes, or y at the prompt."""
    if not chat.stored_turns:
        return "nothing stored to forget"
    if not confirmed:
        what = f"{chat.stored_turns} stored turn(s) of {chat.name!r}"
        try:
            answer = input(f"Delete {what}? This cannot be undone [y/N] ")
        except (EOFError, KeyboardInterrupt):
            answer = ""
            out.print()
        if answer.strip().lower() not in ("y", "yes"):
            return "kept: nothing deleted"
    deleted = chat.forget()
    return f"forgot {deleted} turn(s) of {chat.name!r}"
