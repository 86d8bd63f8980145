"""`finrag sessions`: the conversations kept in the store."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from finrag.agent.memory import conversation_messages, list_conversations, remove_conversation
from finrag.cli.render import err, out, print_json
from finrag.cli.state import app_state
from finrag.db import open_store
from finrag.errors import UsageError

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
    table = Table()
    for column in ("session", "turns", "updated", "last question"):
        table.add_column(column, overflow="fold")
    for r in rows:
        table.add_row(
            r.name, str(r.turns), f"{r.updated_at:%Y-%m-%d %H:%M}", Text(r.last_question or "")
        )
    out.print(table)


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
            out.print(
                Text(
                    f"  {trace.get('intent')} · {' → '.join(t['path'])} · "
                    f"{t['total_ms'] / 1000:.1f} s",
                    style="dim",
                )
            )


@app.command("rm")
def rm_command(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Session name.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Delete a conversation and its messages."""
    with open_store(app_state(ctx).settings) as store, store.connect() as conn:
        removed = remove_conversation(conn, name)
    if not removed:
        raise UsageError(f"no session named {name!r}", hint="see `finrag sessions list`")
    if as_json:
        print_json({"removed": name})
    else:
        err.print(f"removed session {name!r}")
