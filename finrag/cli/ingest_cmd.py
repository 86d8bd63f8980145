"""`finrag ingest`: filings in, with progress on stderr and a report on stdout."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from finrag.cli.render import err, print_json
from finrag.cli.state import app_state, with_options
from finrag.db import open_store
from finrag.errors import ExitCode, UsageError
from finrag.ingest.pipeline import FAILED, IngestEvent, IngestReport, ingest


def ingest_command(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(help="Files or folders of filings.")],
    company: Annotated[str | None, typer.Option(help="Company name for every file.")] = None,
    ticker: Annotated[str | None, typer.Option(help="Ticker for every file.")] = None,
    form: Annotated[str | None, typer.Option(help="Form type (10-K, 10-Q, 8-K...).")] = None,
    year: Annotated[int | None, typer.Option(help="Fiscal year.", min=1900, max=2200)] = None,
    quarter: Annotated[int | None, typer.Option(help="Fiscal quarter.", min=1, max=4)] = None,
    parser: Annotated[
        str | None, typer.Option(help="PDF parser: pymupdf (default), marker, llamaparse.")
    ] = None,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Re-chunk and re-embed unchanged files too.")
    ] = False,
    workers: Annotated[
        int | None, typer.Option(help="Parser processes beside embedding (0: none).", min=0)
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON report.")] = False,
) -> None:
    """Parse, chunk, embed and store filings (PDF, EDGAR HTML, Markdown, text)."""
    missing = [p for p in paths if not p.expanduser().exists() and not p.is_symlink()]
    if missing:  # like cp and rg: a path that is not there is a usage error, before any work
        raise UsageError(
            "no such file or folder: " + ", ".join(str(p) for p in missing),
            hint="nothing was ingested; check the path"
            + ("s" if len(missing) > 1 else ""),
        )
    state = app_state(ctx)
    settings = with_options(state.settings, "ingest", parser=parser, workers=workers)
    overrides = {
        "company": company,
        "ticker": ticker.upper() if ticker else None,
        "form_type": form.upper() if form else None,
        "fiscal_year": year,
        "fiscal_quarter": quarter,
    }
    store = open_store(settings)
    try:
        with _Progress(enabled=err.is_terminal) as progress:
            report = ingest(
                paths,
                settings,
                store,
                overrides=overrides,
                rebuild=rebuild,
                on_event=progress.update,
            )
    except KeyboardInterrupt:
        err.print(
            "interrupted: the documents stored so far are complete and kept; "
            "run the same command again to continue"
        )
        raise typer.Exit(ExitCode.INTERRUPTED) from None
    finally:
        store.close()
    if as_json:
        print_json(report.as_dict())
    _print_summary(report)
    if report.failed:
        done = len(report.results) - report.failed
        raise typer.Exit(ExitCode.PARTIAL if done else ExitCode.FAILED)


class _Progress:
    """Files, pages and chunks with an ETA on a terminal; nothing otherwise."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self.pages = 0
        self.chunks = 0
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=err,
            transient=True,
        )
        self.task = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            self.bar.start()
            self.task = self.bar.add_task("ingesting", total=None, detail="")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.bar.stop()

    def update(self, event: IngestEvent) -> None:
        if event.kind == "planned" and self.task is not None:
            self.bar.update(self.task, total=event.total)
            return
        result = event.result
        if result is None:
            return
        if result.status == FAILED and self.enabled:  # otherwise the summary lists it
            err.print(Text.assemble(("failed ", "bold red"), result.path, f": {result.reason}"))
        if self.task is None or result.status not in ("ingested", "replaced", FAILED):
            return
        self.pages += result.pages
        self.chunks += result.chunks
        self.bar.update(
            self.task,
            advance=1,
            detail=f"{self.pages} pages, {self.chunks} chunks  {Path(result.path).name[:28]}",
        )


def _print_summary(report: IngestReport) -> None:
    summary = report.as_dict()["summary"]
    parts = [
        f"{summary[k]} {k}"
        for k in ("ingested", "replaced", "unchanged", "stale", "duplicate", "failed", "skipped")
        if summary[k]
    ]
    line = (
        f"{', '.join(parts) or 'nothing to do'}; {report.pages} pages, {report.chunks} "
        f"chunks in {report.elapsed_s:.1f} s"
    )
    dropped: dict[str, int] = {}
    for r in report.results:
        for kind, n in r.dropped.items():
            dropped[kind] = dropped.get(kind, 0) + n
    if dropped:
        line += "; boilerplate dropped: " + ", ".join(
            f"{n} {k}" for k, n in sorted(dropped.items())
        )
    err.print(line, highlight=False)
    for r in report.results:
        if r.status in ("failed", "skipped", "stale") and not (
            err.is_terminal and r.status == FAILED
        ):
            err.print(Text(f"  {r.status}: {r.path}: {r.reason}"))
    sys.stderr.flush()
