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
from finrag.answer.status import REFUSED, WORDS
from finrag.cli.ask_cmd import print_calculations, print_citations, print_numbers
from finrag.cli.chat_commands import run_command
from finrag.cli.conventions import nothing_found
from finrag.cli.inputs import clean_option, clean_text
from finrag.cli.options import BackendOption, ModeOption
from finrag.cli.persona_view import PersonaOption, print_persona
from finrag.cli.progress import Activity, seconds_words
from finrag.cli.render import err, out, print_error
from finrag.cli.series_view import print_series_chart
from finrag.cli.state import app_state, with_mode_option, with_options
from finrag.db import open_store
from finrag.errors import FinragError, UsageError
from finrag.files import FILE_MODE
from finrag.llm.interrupt import ModelCallStopped
from finrag.personas import persona_name


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
    backend: BackendOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="With --input: one JSON object per turn on stdout.")
    ] = False,
    persona: PersonaOption = None,
    mode: ModeOption = None,
) -> None:
    """Talk to your filings: follow-ups, clarifications, multi-company comparisons."""
    session = clean_option(session)
    settings = with_mode_option(app_state(ctx).settings, mode)
    settings = with_options(settings, "llm", backend=backend)
    settings = with_options(settings, "answer", persona=persona_name(persona) or persona)
    if input_file is None and not sys.stdin.isatty():
        input_file = "-"
    if as_json and input_file is None:
        raise UsageError("--json needs --input FILE (or lines on stdin)")
    scripted = input_file is not None
    # No draft is streamed: while the model writes, a status line on stderr shows the
    # stage, the time and tokens/s; the answer is printed once it has passed its checks.
    progress = _Progress(steps=not as_json and err.is_terminal)
    with open_store(settings) as store:
        chat = ChatSession(
            store,
            settings,
            name=session,
            interactive=not scripted,
            on_token=progress.token,
            on_event=progress.event,
            on_step=progress.step,
        )
        progress.chat = chat
        if chat.resumed_turns or chat.stored_turns:
            err.print(
                f"resumed {chat.name!r}: {chat.stored_turns} earlier turn(s)"
                + (
                    f", {chat.resumed_turns} in the current context"
                    if chat.resumed_turns != chat.stored_turns
                    else ""
                )
            )
        elif not as_json:
            err.print(f"session {chat.name!r} (resume with --session {chat.name})")
        statuses: list[str] = []
        if scripted:
            statuses = _run_lines(chat, _lines(input_file), as_json=as_json, progress=progress)
        else:
            _repl(chat, settings.home / "chat_history", progress)
    if statuses and all(status == REFUSED for status in statuses):
        # As `ask` exits for its one question: declined, or not in the filings.
        nothing_found(
            "no question of the input was answered from the stored filings: the replies say why"
        )


# What each graph node leads to, as the status line says it while the next one works.
_AFTER_NODE = {
    "contextualize": "screening the question",
    "safety": "classifying the question",
    "intent": "searching the filings",
    "clarify": "searching the filings",
    "answer": "checking the answer against its excerpts",
    "verify": "checking again: searching once more",
    "retry": "checking the new answer against its excerpts",
    "decompose": "answering the sub-questions",
    "subanswer": "looking for what is still missing",
    "residue": "combining the answers",
    "combine": "checking the answer against its excerpts",
}
# The answering pipeline's events.
_EVENTS = {
    "retrieved": "reading the excerpts",
    "extracted": "checking facts and calculations",
    "phrasing": "wording the facts store's answer",
    "answering": "writing the answer (shown once checked)",
    "checking": "checking the answer's numbers",
    "retrying": "checking again",
}


class _Progress:
    """One turn's progress on stderr: a live line (stage, elapsed, tokens/s) and, on a
    terminal, each finished graph step on a line of its own above it."""

    def __init__(self, *, steps: bool) -> None:
        self.show_steps = steps
        self.chat: ChatSession | None = None
        self.activity: Activity | None = None

    @contextlib.contextmanager
    def turn(self) -> Iterator[Activity]:
        with Activity("understanding the question") as activity:
            self.activity = activity
            try:
                yield activity
            finally:
                self.activity = None

    def token(self, _piece: str) -> None:
        if self.activity:
            self.activity.tokens()

    def event(self, event: str) -> None:
        if self.activity is None:
            return
        if event.startswith("sub-question"):
            self.activity.line(Text(event, style="dim"))
            self.activity.stage(event.split(":", 1)[0])
        elif event == "retrying":
            self.activity.stage("checking again: answering once more")
            self.activity.line(Text("checking again…", style="yellow"))
        else:
            self.activity.stage(_EVENTS.get(event, event))

    def step(self, step: TraceStep) -> None:
        if self.activity is None:
            return
        state = self.chat.current if self.chat else None
        if step.node == "verify" and step.out.startswith("unsupported") and state:
            # The checker's verdict in full, on lines of their own, before the retry.
            self.activity.line(
                Text("the check found claims the cited excerpts do not support:", style="yellow")
            )
            for claim in state.unsupported:
                self.activity.line(Text(f"  - {claim}", style="yellow"))
        elif self.show_steps:
            self.activity.line(
                Text(f"  · {step.node} {seconds_words(step.ms / 1000)}: {step.out}", style="dim")
            )
        self.activity.stage(_AFTER_NODE.get(step.node, f"after {step.node}"))


def _ask(chat: ChatSession, line: str, progress: _Progress) -> TurnResult:
    with progress.turn():
        return chat.turn(line)


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
    chat: ChatSession, lines: Iterable[str], *, as_json: bool, progress: _Progress
) -> list[str]:
    """Each line a turn or a /command; the status of each turn, in order."""
    statuses: list[str] = []
    for line in lines:
        line = clean_text(line)
        if not line or line.startswith("#"):
            continue
        if line.startswith("/"):
            if run_command(chat, line, as_json=as_json) == "quit":
                return statuses
            continue
        if not as_json:
            out.print(Text(f"> {line}", style="bold"))
        result = _ask(chat, line, progress)
        statuses.append(result.status)
        if as_json:
            sys.stdout.write(json.dumps(result.as_dict() | {"session": chat.name}, default=str))
            sys.stdout.write("\n")
            sys.stdout.flush()
        else:
            _show(result)
    return statuses


def _repl(chat: ChatSession, history_file: Path, progress: _Progress) -> None:
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
                if run_command(chat, line, as_json=False, interactive=True) == "quit":
                    return
                continue
            try:
                result = _ask(chat, line, progress)
            except (KeyboardInterrupt, ModelCallStopped):
                out.print()
                err.print(Text(_cancelled(chat), style="yellow"))
                continue
            except FinragError as exc:  # a failed turn costs the turn, not the session
                print_error(exc.message, exc.hint, label=exc.label)
                err.print(Text(_cancelled(chat, failed=True), style="yellow"))
                continue
            out.print()  # the answer apart from the step lines above it
            _show(result)
    finally:
        if readline is not None:
            with contextlib.suppress(OSError):
                readline.write_history_file(history_file)
                history_file.chmod(FILE_MODE)  # the user's questions: theirs alone


def _cancelled(chat: ChatSession, *, failed: bool = False) -> str:
    """What a cancelled (or failed) turn leaves: nothing stored; the last answer stands."""
    what = "turn failed" if failed else "cancelled"
    if chat.last is None:
        return f"{what}: nothing stored"
    return f"{what}: nothing stored; /sources, /trace and /filters still show turn {chat.last.turn}"


def _show(result: TurnResult) -> None:
    """The checked answer, its numbers' status words, citations and calculations on
    stdout; checks and timings on stderr, each on a line of its own."""
    reply = result.reply
    assumed = caveat = ""
    if reply.startswith("Assumed: "):
        assumed, reply = reply.split("\n\n", 1)
    if "\n\nNot supported by the cited excerpts:" in reply:
        reply, caveat = reply.rsplit("\n\n", 1)
    if assumed:
        out.print(Text(assumed, style="italic"))
    out.print(Text(reply))
    if caveat:
        out.print(Text(caveat, style="yellow"))
    print_series_chart(result.series)
    print_numbers(result.numbers)
    print_citations(result.citations)
    print_calculations(result.calculations)
    print_persona(result.persona)
    for flag in result.flags:
        err.print(Text(f"check: {flag}", style="yellow"))
    trace = result.trace
    status = WORDS.get(result.status, result.status)
    err.print(
        Text(
            f"status: {status} · {result.intent} · {seconds_words(trace['total_ms'] / 1000)} · "
            f"{trace['tokens']['prompt']:,} tokens in, {trace['tokens']['completion']:,} out",
            style="dim",
        )
    )
