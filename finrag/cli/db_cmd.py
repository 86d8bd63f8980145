"""`finrag db`: the embedded server's lifecycle, and a way into whichever database is used."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Annotated

import typer

from finrag.cli.conventions import words
from finrag.cli.options import JsonOption
from finrag.cli.progress import Activity, seconds_words
from finrag.cli.render import err, out, print_json
from finrag.cli.state import app_state
from finrag.config import Settings
from finrag.db import open_store
from finrag.db.connection import connect, ensure_pgvector, redact
from finrag.db.embedded import EmbeddedServer, postgres_bin_path
from finrag.embed import get_embedder
from finrag.errors import DatabaseError, DatabaseUnavailable, ExitCode, UsageError
from finrag.ingest.summaries import summarize_store

app = typer.Typer(help="Manage the database.", no_args_is_help=True)


def _embedded_only(settings: Settings, action: str) -> EmbeddedServer:
    if settings.database_url is not None:
        raise UsageError(
            f"`finrag db {action}` manages the embedded server, but FINRAG_DATABASE_URL "
            "points at an external one",
            hint="start and stop that server with its own tools (e.g. docker compose)",
        )
    return EmbeddedServer(settings.home)


@app.command("status")
def status(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Show which database finrag uses and whether it is up (starts nothing)."""
    settings = app_state(ctx).settings
    if settings.database_url is not None:
        url = settings.database_url.get_secret_value()
        data: dict[str, object] = {"kind": "external", "url": redact(url)}
        try:
            with connect(url) as conn:
                info = ensure_pgvector(conn)
            data |= {
                "reachable": True,
                "server_version": info.server_version,
                "pgvector": info.pgvector_version,
            }
        except DatabaseError as exc:
            data |= {"reachable": False, "error": exc.message}
        if as_json:
            print_json(data)
        else:
            for key, value in data.items():
                out.print(f"{key:>15}: {words(value)}")
        if not data["reachable"]:
            raise typer.Exit(ExitCode.DATABASE)
        return
    st = EmbeddedServer(settings.home).status()
    data = {
        "kind": "embedded",
        "pgdata": str(st.pgdata),
        "initialized": st.initialized,
        "running": st.running,
        "pid": st.pid,
        "pinned": st.pinned,
        "clients": st.clients,
        "url": st.url,
    }
    if as_json:
        print_json(data)
        return
    for key, value in data.items():
        out.print(f"{key:>12}: {words(value)}")


@app.command("start")
def start(ctx: typer.Context) -> None:
    """Start the embedded server and keep it running between commands."""
    server = _embedded_only(app_state(ctx).settings, "start")
    with Activity("starting the embedded server") as activity:
        url = server.start()
        # Open the store once so migrations and the embedding model are settled now.
        activity.stage("checking migrations and the embedding model")
        open_store(app_state(ctx).settings).close()
    err.print(
        f"embedded server running ({seconds_words(activity.elapsed)}); it stays up until "
        f"`finrag db stop` ({url})"
    )


@app.command("stop")
def stop(
    ctx: typer.Context,
    force: Annotated[
        bool, typer.Option("--force", help="Stop even while other finrag processes use it.")
    ] = False,
) -> None:
    """Stop the embedded server (it also stops by itself when no finrag process needs it)."""
    server = _embedded_only(app_state(ctx).settings, "stop")
    with Activity("stopping the embedded server"):
        stopped = server.stop(force=force)
    err.print("embedded server stopped" if stopped else "embedded server was not running")


@app.command("url")
def url(
    ctx: typer.Context,
    show_password: Annotated[
        bool, typer.Option("--show-password", help="Do not mask the password.")
    ] = False,
) -> None:
    """Print the database URL (for psql, pg_dump or your own scripts)."""
    settings = app_state(ctx).settings
    if settings.database_url is not None:
        value = settings.database_url.get_secret_value()
        typer.echo(value if show_password else redact(value))
        return
    st = EmbeddedServer(settings.home).status()
    if st.url is None:
        raise DatabaseUnavailable(
            "the embedded server is not running, so it has no URL yet",
            hint="`finrag db start` starts it and keeps it running",
        )
    typer.echo(st.url)


@app.command(
    "psql",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def psql(ctx: typer.Context) -> None:
    """Open psql (bundled with the embedded server) on finrag's database; extra args go to psql."""
    store = open_store(app_state(ctx).settings)
    try:
        code = subprocess.call(
            [str(postgres_bin_path() / "psql"), store.url, *ctx.args],
            env={**os.environ, "PGOPTIONS": "-c search_path=finrag,public"},
        )
    finally:
        store.close()
    raise typer.Exit(code)


@app.command("reset")
def reset(
    ctx: typer.Context,
    yes: Annotated[
        bool, typer.Option("--yes", help="Confirm: delete every ingested document and chat.")
    ] = False,
) -> None:
    """Drop every finrag table and start an empty store (e.g. to change embedding model)."""
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("reset deletes all finrag data", hint="pass --yes to confirm")
        typer.confirm("Delete every ingested document, chunk and conversation?", abort=True)
    with Activity("dropping and recreating the store"):
        store = open_store(app_state(ctx).settings, reset=True)
        store.close()
    err.print(f"store reset; embedding model now {store.embedder.model_id}")


@app.command("summarize")
def summarize(
    ctx: typer.Context,
    missing: Annotated[
        bool, typer.Option("--missing", help="Only documents that have no summaries yet.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Build the section and document summaries of the stored documents (ingest builds
    them for the documents it stores; this is for a store ingested before)."""
    settings = app_state(ctx).settings
    started = time.perf_counter()
    with (
        Activity("summarizing sections and documents"),
        open_store(settings) as store,
        store.connect() as conn,
    ):
        written = summarize_store(
            conn, get_embedder(settings.embed, settings.models_dir), missing_only=missing
        )
    data = {
        "documents": len(written),
        "summaries": sum(written.values()),
        "elapsed_s": round(time.perf_counter() - started, 2),
    }
    if as_json:
        print_json(data)
    else:
        err.print(
            f"{data['summaries']} summaries for {data['documents']} documents "
            f"in {data['elapsed_s']} s"
        )
