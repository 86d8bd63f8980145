"""`finrag cache`: the answer cache (finrag.answer.cache) in numbers, and emptying it."""

from __future__ import annotations

import typer

from finrag.cli.options import JsonOption
from finrag.cli.render import err, out, print_json
from finrag.cli.state import app_state
from finrag.db import answer_cache as rows
from finrag.db import open_store

app = typer.Typer(
    help="The answer cache: questions asked again are answered from it.", no_args_is_help=True
)


@app.command("stats")
def stats_command(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """How many answers are cached, how many stand for the store as it is, and hits."""
    with open_store(app_state(ctx).settings) as store, store.connect() as conn:
        found = rows.stats(conn)
    if as_json:
        print_json(found)
        return
    out.print(
        f"{found['entries']} cached answer(s), {found['current']} for the store as it is "
        f"(version {found['store_version']}); {found['hits']} hit(s)",
        highlight=False,
    )


@app.command("clear")
def clear_command(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Delete every cached answer (the filings and conversations stay)."""
    with open_store(app_state(ctx).settings) as store, store.connect() as conn:
        removed = rows.clear(conn)
        conn.commit()
    if as_json:
        print_json({"removed": removed})
        return
    err.print(f"removed {removed} cached answer(s)", highlight=False)
