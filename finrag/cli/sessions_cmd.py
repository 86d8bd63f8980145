"""`finrag sessions`: the conversations kept in the store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from finrag.agent.memory import (
    RESET_MARK,
    conversation_messages,
    list_conversations,
    remove_conversation,
)
from finrag.agent.transcript import conversation_markdown
from finrag.answer.status import WORDS
from finrag.cli.conventions import confirm_removal
from finrag.cli.render import Column, err, out, print_json, print_table
from finrag.cli.state import app_state
from finrag.db import open_store
from finrag.errors import UsageError
from finrag.files import FILE_MODE

app = typer.Typer(help="Chat sessions kept in the store.", no_args_is_help=True)


@app.command("list")
def list_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Every conversation, most recent first."""
    with open_store(app_state(ctx).settings) as store, store.connect() as conn:
        rows = list_conversations(conn)
    if as_json:
        print_json([r.as_dict() for r in rows])
        return
    if not rows:
        err.print("no sessions yet: `finrag chat` starts one")
        return
    print_table(
        [
            Column("session", no_wrap=True),
            Column("turns", justify="right"),
            "updated",
            "last question",
        ],
        [
            (r.name, r.turns, f"{r.updated_at:%Y-%m-%d %H:%M}", Text(r.last_question or ""))
            for r in rows
        ],
    )


@app.command("show")
def show_command(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Session name.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (with traces).")] = False,
) -> None:
    """A conversation's turns: questions, answers, citations."""
    with open_store(app_state(ctx).settings) as store, store.connect() as conn:
        messages = conversation_messages(conn, name)
    if messages is None:
        raise UsageError(f"no session named {name!r}", hint="see `finrag sessions list`")
    if as_json:
        print_json({"session": name, "messages": messages})
        return
    for m in messages:
        if m["role"] == "system":
            if m["content"] == RESET_MARK:
                out.print(
                    Text("\n— context reset here (/reset): later turns start afresh —", style="dim")
                )
            continue
        if m["role"] == "user":
            out.print(Text(f"\n[{m['turn']}] > {m['content']}", style="bold"))
            continue
        out.print(Text(m["content"]))
        for c in m["citations"]:
            pages = (
                c["pages"][0] if c["pages"][0] == c["pages"][-1] else "-".join(map(str, c["pages"]))
            )
            out.print(Text(f"  [{c['n']}] {c['document']} p.{pages}", style="dim"))
        trace = m["trace"] or {}
        if trace.get("trace"):
            t = trace["trace"]
            status = WORDS.get(trace.get("status") or "", "status not recorded")
            out.print(
                Text(
                    f"  {status} · {trace.get('intent')} · {' → '.join(t['path'])} · "
                    f"{t['total_ms'] / 1000:.1f} s",
                    style="dim",
                )
            )


@app.command("export")
def export_command(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Session name.")],
    out_file: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", metavar="FILE", help="Write the Markdown to FILE (default: stdout)."
        ),
    ] = None,
) -> None:
    """A conversation as Markdown: questions, answers, their numbers' status, citations
    (document and page) and calculations."""
    with open_store(app_state(ctx).settings) as store, store.connect() as conn:
        messages = conversation_messages(conn, name)
    if messages is None:
        raise UsageError(f"no session named {name!r}", hint="see `finrag sessions list`")
    text = conversation_markdown(name, messages)
    if out_file is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        out_file.write_text(text, encoding="utf-8")
        out_file.chmod(FILE_MODE)  # the user's questions: theirs alone
    except OSError as exc:
        raise UsageError(
            f"cannot write {out_file}: {exc.strerror}", hint="choose another --out FILE"
        ) from None
    turns = sum(1 for m in messages if m["role"] == "user")
    err.print(f"wrote {name!r} ({turns} turn(s)) to {out_file}")


@app.command("rm")
def rm_command(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Session name.")],
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Confirm: delete without asking.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Delete a conversation and its messages (asks first; --yes in scripts)."""
    with open_store(app_state(ctx).settings) as store, store.connect() as conn:
        messages = conversation_messages(conn, name)
        if messages is None:
            raise UsageError(f"no session named {name!r}", hint="see `finrag sessions list`")
        turns = sum(1 for m in messages if m["role"] == "user")
        if not yes:
            confirm_removal(
                f"rm deletes session {name!r} and its {turns} turn(s)",
                f"Delete session {name!r} and its {turns} turn(s)?",
                hint="pass --yes to confirm",
                kept="kept: nothing deleted",
            )
        removed = remove_conversation(conn, name)
    if not removed:
        raise UsageError(f"no session named {name!r}", hint="see `finrag sessions list`")
    if as_json:
        print_json({"removed": name, "turns": turns})
    else:
        err.print(f"removed session {name!r} ({turns} turn(s))")
