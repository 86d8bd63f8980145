"""`finrag chat`: a conversation over the filings, in a REPL or from a file of lines."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from finrag.agent.graph import TraceStep
from finrag.agent.session import ChatSession
from finrag.agent.state import TurnResult
from finrag.cli.ask_cmd import print_calculations, print_citations
from finrag.cli.chat_commands import run_command
from finrag.cli.inputs import clean_option, clean_text
from finrag.cli.render import err, out
from finrag.cli.state import app_state, with_options
from finrag.db import open_store
from finrag.errors import UsageError
from finrag.files import FILE_MODE


def chat_command(
    ctx: typer.Context,
    session: Annotated[
        str | None,
        typer.Option(help="Conversation name: resumes it if it exists (default: a new one)."),
    ] = None,
    input_file: Annotated[
        str | None,
        typer.Option(
            "--input",
            help="Run one line per turn from FILE ('-' for stdin), without asking anything back.",
        ),
    ] = None,
    backend: Annotated[
        str | None, typer.Option(help="LLM backend: auto, ollama, embedded (default: llm.backend).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="With --input: one JSON object per turn on stdout.")
    ] = False,
) -> None:
    """Talk to your filings: follow-ups, clarifications, multi-company comparisons."""
    session = clean_option(session)
    settings = with_options(app_state(ctx).settings, "llm", backend=backend)
    if input_file is None and not sys.stdin.isatty():
        input_file = "-"
    if as_json and input_file is None:
        raise UsageError("--json needs --input FILE (or lines on stdin)")
    scripted = input_file is not None
    streamer = _Streamer() if not as_json and out.is_terminal else None
    with open_store(settings) as store:
        chat = ChatSession(
            store,
            settings,
            name=session,
            interactive=not scripted,
            on_token=streamer.write if streamer else None,
            on_event=streamer.event if streamer else _event,
            on_step=None if as_json else _step if err.is_terminal else None,
        )
        if chat.resumed_turns:
            err.print(f"resumed {chat.name!r}: {chat.resumed_turns} earlier turn(s)")
        elif not as_json:
            err.print(f"session {chat.name!r} (resume with --session {chat.name})")
        if scripted:
            _run_lines(chat, _lines(input_file), as_json=as_json, streamer=streamer)
        else:
            _repl(chat, settings.home / "chat_history", streamer)


class _Streamer:
    """Writes the answer as it is generated, and remembers what the screen shows since
    the last retry, so that only what the graph added afterwards is printed again."""

    def __init__(self) -> None:
        self.shown = ""

    def write(self, piece: str) -> None:
        self.shown += piece
        sys.stdout.write(piece)
        sys.stdout.flush()

    def event(self, event: str) -> None:
        if event == "retrying" and self.shown:
            out.print()
            self.shown = ""
        _event(event)


def _event(event: str) -> None:
    if event.startswith("sub-question") or event == "retrying":
        err.print(Text(event if event != "retrying" else "checking again…", style="dim"))


def _step(step: TraceStep) -> None:
    err.print(Text(f"  · {step.node} {step.ms / 1000:.1f} s: {step.out[:100]}", style="dim"))


def _lines(source: str) -> Iterator[str]:
    """The lines of FILE or stdin; a byte that is not UTF-8 costs one character, not the
    session."""
    if source == "-":
        yield from (raw.decode("utf-8", errors="replace") for raw in sys.stdin.buffer)
        return
    path = Path(source)
    if not path.is_file():
        raise UsageError(f"no input file at {path}")
    yield from path.read_bytes().decode("utf-8", errors="replace").splitlines()


def _run_lines(
    chat: ChatSession, lines: Iterable[str], *, as_json: bool, streamer: _Streamer | None
) -> None:
    for line in lines:
        line = clean_text(line)
        if not line or line.startswith("#"):
            continue
        if line.startswith("/"):
            if run_command(chat, line, as_json=as_json) == "quit":
                return
            continue
        if not as_json:
            out.print(Text(f"> {line}", style="bold"))
        if streamer:
            streamer.shown = ""
        result = chat.turn(line)
        if as_json:
            sys.stdout.write(json.dumps(result.as_dict() | {"session": chat.name}, default=str))
            sys.stdout.write("\n")
            sys.stdout.flush()
        else:
            _show(result, streamer)


def _repl(chat: ChatSession, history_file: Path, streamer: _Streamer | None) -> None:
    try:
        import readline  # arrow keys and history for input()

        history_file.parent.mkdir(parents=True, exist_ok=True)
        if history_file.exists():
            readline.read_history_file(history_file)
    except (ImportError, OSError):
        readline = None
    err.print("Ask about your filings; /help lists commands.")
    try:
        while True:
            try:
                line = clean_text(input("you> "))
            except KeyboardInterrupt:  # at the prompt: a fresh line, like a shell
                out.print()
                continue
            except EOFError:
                out.print()
                return
            if not line:
                continue
            if line.startswith("/"):
                if run_command(chat, line, as_json=False) == "quit":
                    return
                continue
            if streamer:
                streamer.shown = ""
            try:
                result = chat.turn(line)
            except KeyboardInterrupt:
                out.print()
                err.print(Text("cancelled", style="yellow"))
                continue
            _show(result, streamer)
    finally:
        if readline is not None:
            with contextlib.suppress(OSError):
                readline.write_history_file(history_file)
                history_file.chmod(FILE_MODE)  # the user's questions: theirs alone


def _show(result: TurnResult, streamer: _Streamer | None) -> None:
    reply = result.reply
    assumed = caveat = ""
    if reply.startswith("Assumed: "):
        assumed, reply = reply.split("\n\n", 1)
    if "\n\nNot supported by the cited excerpts:" in reply:
        reply, caveat = reply.rsplit("\n\n", 1)
    shown = streamer.shown.strip() if streamer else ""
    if shown:
        out.print()
    if assumed:
        out.print(Text(assumed, style="italic"))
    if shown != reply.strip():  # not streamed, or replaced after streaming
        out.print(Text(reply))
    if caveat:
        out.print(Text(caveat, style="yellow"))
    print_citations(result.citations)
    print_calculations(result.calculations)
    for flag in result.flags:
        err.print(Text(f"check: {flag}", style="yellow"))
    trace = result.trace
    err.print(
        Text(
            f"{result.intent} · {trace['total_ms'] / 1000:.1f} s · {trace['tokens']['prompt']:,} "
            f"tokens in, {trace['tokens']['completion']:,} out",
            style="dim",
        )
    )
