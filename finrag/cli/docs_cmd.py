"""`finrag docs`: what the store holds, one document in detail, and removal."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Annotated, Any

import typer

from finrag.cli.conventions import confirm_removal, words
from finrag.cli.options import JsonOption
from finrag.cli.render import Column, err, out, print_json, print_table
from finrag.cli.state import app_state
from finrag.config import Settings
from finrag.db import Store, open_store
from finrag.db.companies import document_aliases
from finrag.db.documents import StoredDocument, get_document, list_documents
from finrag.errors import UsageError
from finrag.facts.checks import coverage_line
from finrag.facts.store import check_coverage, document_calendar
from finrag.ingest.remove import remove_documents

app = typer.Typer(help="List, show and remove ingested documents.", no_args_is_help=True)


def _period(doc) -> str:
    if doc.fiscal_year is None:
        return ""
    return f"FY{doc.fiscal_year}" + (f" Q{doc.fiscal_quarter}" if doc.fiscal_quarter else "")


@app.command("list")
def list_command(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Every ingested document with its company, form, period and size."""
    docs = documents(app_state(ctx).settings, opened=open_store)
    if as_json:
        print_json([d.as_dict() for d in docs])
        return
    if not docs:
        err.print("no documents yet: `finrag ingest PATH` adds some")
        return
    columns = [Column("id", justify="right", no_wrap=True), "company", "ticker", "form"]
    columns += [Column("period", no_wrap=True), Column("pages", justify="right", no_wrap=True)]
    columns += [Column("chunks", justify="right", no_wrap=True), "file"]
    print_table(
        columns,
        (
            [
                d.id,
                d.company or "",
                d.ticker or "",
                d.form_type or "",
                _period(d),
                d.pages or "",
                d.chunks,
                Path(d.path).name,
            ]
            for d in docs
        ),
    )


@app.command("show")
def show(
    ctx: typer.Context,
    ref: Annotated[str, typer.Argument(help="Document id, path, or file name.")],
    as_json: JsonOption = False,
) -> None:
    """One document: metadata and where each field came from, chunk counts, the names
    its company answers to in questions, its fiscal calendar, and how many of its facts
    each cross-check covers and fails."""
    shown = document_details(app_state(ctx).settings, ref, opened=open_store)
    if as_json:
        print_json(shown)
        return
    checks = shown.pop("fact_checks")
    for key, value in shown.items():
        out.print(f"{key:>16}: {words(value)}", highlight=False)
    if checks.get("facts"):
        out.print(f"{'fact checks':>16}: {coverage_line(checks)}", highlight=False)


def documents(
    settings: Settings, *, opened: Callable[[Settings], AbstractContextManager[Store]]
) -> list[StoredDocument]:
    """Every stored document: `docs list` (its --json is each one's ``as_dict()``)."""
    with opened(settings) as store, store.connect() as conn:
        return list_documents(conn)


def document_details(
    settings: Settings, ref: str, *, opened: Callable[[Settings], AbstractContextManager[Store]]
) -> dict[str, Any]:
    """One document in detail, as `docs show --json` prints it; an unknown ``ref`` is a
    usage error."""
    with opened(settings) as store, store.connect() as conn:
        doc = get_document(conn, ref)
        aliases = document_aliases(conn, doc.id) if doc is not None else []
        calendar = document_calendar(conn, doc.id) if doc is not None else None
        checks = check_coverage(conn, doc.id) if doc is not None else {}
    if doc is None:
        raise UsageError(f"no document {ref!r}", hint="see `finrag docs list`")
    return {
        **doc.as_dict(),
        "company_aliases": aliases,
        "fiscal_calendar": calendar.describe() if calendar else None,
        "fact_checks": checks,
    }


@app.command("rm")
def rm(
    ctx: typer.Context,
    refs: Annotated[list[str], typer.Argument(help="Document ids, paths, or file names.")],
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Confirm: remove without asking.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Remove documents with everything made from them: chunks and vectors, facts, graph,
    parsed-Markdown cache, cached answers, and a company left without filings (asks
    first; --yes in scripts)."""
    settings = app_state(ctx).settings
    with open_store(settings) as store, store.connect() as conn:
        docs = []
        for ref in refs:
            doc = get_document(conn, ref)
            if doc is None:
                raise UsageError(f"no document {ref!r}", hint="nothing was removed")
            if doc.id not in {d.id for d in docs}:
                docs.append(doc)
        what = _removal_words(docs)
        if not yes:
            confirm_removal(
                f"rm removes {what} and everything made from it",
                f"Remove {what} and everything made from it?",
                hint="pass --yes to confirm; nothing was removed",
                kept="kept: nothing removed",
            )
        removal = remove_documents(conn, [d.id for d in docs], settings.cache_dir)
    if as_json:
        removed = [{"id": d.id, "path": d.path, "chunks": d.chunks} for d in docs]
        print_json({"removed": removed, **removal.as_dict()})
    for doc in docs:
        err.print(f"removed {doc.path} ({doc.chunks} chunks)", highlight=False)
    if removal.companies:
        err.print(
            f"removed {', '.join(removal.companies)}: no filing of "
            f"{'it' if len(removal.companies) == 1 else 'theirs'} is left",
            highlight=False,
        )


def _removal_words(docs) -> str:
    if len(docs) == 1:
        return f"{Path(docs[0].path).name} ({docs[0].chunks} chunks)"
    return f"{len(docs)} documents ({sum(d.chunks for d in docs)} chunks)"
