"""`finrag fetch`: filings from SEC EDGAR into the filings folder, then ingested."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from finrag.cli.ingest_cmd import _print_summary, _Progress, interrupted_code
from finrag.cli.render import err, print_json
from finrag.cli.state import app_state
from finrag.errors import ExitCode
from finrag.fetch.edgar import parse_forms, parse_since
from finrag.fetch.run import CACHED, FAILED, FETCHED, FetchEvent, FetchReport, fetch_filings


def fetch_command(
    ctx: typer.Context,
    tickers: Annotated[list[str], typer.Argument(help="Tickers (AAPL) or SEC CIK numbers.")],
    forms: Annotated[
        str, typer.Option(help="Forms to fetch, comma-separated (as EDGAR names them).")
    ] = "10-K,10-Q",
    since: Annotated[
        str | None,
        typer.Option(help="Filed on or after this year (2022) or date (2022-06-30)."),
    ] = None,
    dest: Annotated[
        Path | None,
        typer.Option(help="Folder to fetch into (default: fetch.dest, else HOME/filings)."),
    ] = None,
    no_ingest: Annotated[
        bool, typer.Option("--no-ingest", help="Download only; ingest nothing.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print what was fetched, skipped and ingested.")
    ] = False,
) -> None:
    """Download filings from SEC EDGAR (online; only when asked) and ingest them.

    Needs fetch.user_agent (your name and e-mail, which the SEC requires) set once in
    config.toml or FINRAG_FETCH__USER_AGENT. At most 10 requests a second, retried with
    backoff; a filing already in the folder is not downloaded again, and an interrupted
    run resumes where it stopped. Offline it stops at once (exit 9) and changes nothing.
    """
    selected = parse_forms(forms)
    start = parse_since(since)
    settings = app_state(ctx).settings
    folder = (dest or settings.fetch.dest or settings.home / "filings").expanduser().absolute()
    try:
        report = fetch_filings(
            tickers, settings, forms=selected, since=start, dest=folder, on_event=_progress
        )
    except (KeyboardInterrupt, SystemExit) as exc:
        err.print(
            "interrupted: the filings fetched so far are whole and kept, no partial file is "
            "left; run the same command again to continue"
        )
        raise typer.Exit(interrupted_code(exc)) from None
    _print_fetch_summary(report)
    ingested = None
    if not no_ingest and report.paths:
        ingested = _ingest(report.paths, settings)
    if as_json:
        print_json({**report.as_dict(), "ingest": ingested.as_dict() if ingested else None})
    failed = report.count(FAILED) + (ingested.failed if ingested else 0)
    if failed:
        done = len(report.paths) - (ingested.failed if ingested else 0)
        raise typer.Exit(ExitCode.PARTIAL if done else ExitCode.FAILED)


def _progress(event: FetchEvent) -> None:
    if event.kind == "planned":
        err.print(
            f"{event.total} filing{'s' if event.total != 1 else ''} to check", highlight=False
        )
        return
    r = event.result
    if r is None:
        return
    f = r.filing
    what = f"{f.company.ticker} {f.form} filed {f.filing_date.isoformat()}"
    if r.status == FETCHED:
        err.print(Text(f"fetched {what}: {r.path.name}, {_size(r.size)}"))
    elif r.status == CACHED:
        err.print(Text(f"already there: {what}: {r.path.name}", style="dim"))
    else:
        err.print(Text.assemble(("failed ", "bold red"), f"{what}: {r.reason}"))


def _print_fetch_summary(report: FetchReport) -> None:
    size = sum(r.size for r in report.results if r.status == FETCHED)
    fetched = report.count(FETCHED)
    parts = [f"{fetched} fetched" + (f" ({_size(size)})" if fetched else "")]
    parts.append(f"{report.count(CACHED)} already there")
    if report.count(FAILED):
        parts.append(f"{report.count(FAILED)} failed")
    err.print(
        f"{', '.join(parts)} in {report.dest}; {report.requests} requests in "
        f"{report.elapsed_s:.1f} s",
        highlight=False,
    )


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.0f} KB"


def _ingest(paths: list[Path], settings):
    """`finrag ingest` on the filings of this run (fetched now or before): a filing stored
    and unchanged is skipped by its hash."""
    from finrag.db import open_store
    from finrag.ingest.pipeline import ingest

    store = open_store(settings)
    try:
        with _Progress(enabled=not err.quiet) as progress:
            report = ingest(paths, settings, store, on_event=progress.update)
    except (KeyboardInterrupt, SystemExit) as exc:
        err.print(
            "interrupted: the filings are fetched; the documents stored so far are complete; "
            "run `finrag ingest` on the folder, or this command again, to continue"
        )
        raise typer.Exit(interrupted_code(exc)) from None
    finally:
        store.close()
    _print_summary(report)
    return report
