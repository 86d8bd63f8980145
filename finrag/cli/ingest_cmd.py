"""`finrag ingest`: filings in, with progress on stderr and a report on stdout."""

from __future__ import annotations

import json
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from finrag.cli.render import err, out, print_json
from finrag.cli.state import app_state, with_options
from finrag.db import open_store
from finrag.errors import ExitCode, UsageError
from finrag.facts.checks import coverage_line
from finrag.ingest.pipeline import FAILED, FileResult, IngestEvent, IngestReport, ingest


def ingest_command(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(help="Files or folders of filings.")],
    company: Annotated[str | None, typer.Option(help="Company name for every file.")] = None,
    ticker: Annotated[str | None, typer.Option(help="Ticker for every file.")] = None,
    form: Annotated[str | None, typer.Option(help="Form type (10-K, 10-Q, 8-K...).")] = None,
    year: Annotated[int | None, typer.Option(help="Fiscal year.", min=1900, max=2200)] = None,
    quarter: Annotated[int | None, typer.Option(help="Fiscal quarter.", min=1, max=4)] = None,
    parser: Annotated[
        str | None,
        typer.Option(
            help="PDF parser: auto (default: PyMuPDF, and OCR for pages without a text "
            "layer), pymupdf (no OCR), marker, llamaparse."
        ),
    ] = None,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Re-chunk and re-embed unchanged files too.")
    ] = False,
    workers: Annotated[
        int | None,
        typer.Option(
            help="Run N worker processes that take the files as jobs from the database; "
            "machines sharing one database_url can each run some on the same folder. "
            "Without it: one process embeds beside ingest.workers parser processes.",
            min=1,
            max=64,
        ),
    ] = None,
    graph: Annotated[
        str | None,
        typer.Option(
            help="Knowledge graph: rules (default), or llm: the rules, then the LLM reads "
            "the passages likeliest to name customers, competitors, acquisitions (bounded "
            "by ingest.graph_budget_s per filing; a filing read before is skipped).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON report.")] = False,
    watch: Annotated[
        bool,
        typer.Option(
            "--watch",
            help="Keep watching: ingest new and changed files, remove deleted ones, until "
            "Ctrl-C (--json: one report per line).",
        ),
    ] = False,
) -> None:
    """Parse, chunk, embed and store filings (PDF, EDGAR HTML, Markdown, text)."""
    missing = [p for p in paths if not p.expanduser().exists() and not p.is_symlink()]
    if missing:  # a usage error, refused before any work: a typo never starts a long ingest
        raise UsageError(
            "no such file or folder: " + ", ".join(str(p) for p in missing),
            hint="nothing was ingested; check the path" + ("s" if len(missing) > 1 else ""),
        )
    state = app_state(ctx)
    if workers is not None and watch:
        raise UsageError(
            "--workers and --watch cannot be combined",
            hint="run `finrag ingest --workers N` on the folder, then --watch without --workers",
        )
    settings = with_options(state.settings, "ingest", parser=parser, graph=graph)
    if workers is not None and settings.ingest.graph == "llm":
        raise UsageError(
            "--workers and the LLM graph (ingest.graph = llm) cannot be combined",
            hint="ingest with --workers and --graph rules, then again with --graph llm: "
            "it reads the filings stored",
        )
    overrides = {
        "company": company,
        "ticker": ticker.upper() if ticker else None,
        "form_type": form.upper() if form else None,
        "fiscal_year": year,
        "fiscal_quarter": quarter,
    }
    store = open_store(settings)
    if watch:
        try:
            _watch(paths, settings, store, overrides=overrides, as_json=as_json)
        finally:
            store.close()
        return
    try:
        with _Progress(enabled=not err.quiet) as progress:
            if workers is None:
                report = ingest(
                    paths,
                    settings,
                    store,
                    overrides=overrides,
                    rebuild=rebuild,
                    on_event=progress.update,
                )
            else:
                from finrag.ingest.workers import ingest_with_workers

                report = ingest_with_workers(
                    paths,
                    settings,
                    store,
                    workers=workers,
                    overrides=overrides,
                    rebuild=rebuild,
                    on_event=progress.update,
                )
    except (KeyboardInterrupt, SystemExit) as exc:  # Ctrl-C; SIGTERM raises SystemExit
        err.print(
            "interrupted: the documents stored so far are complete and kept; "
            "run the same command again to continue"
        )
        raise typer.Exit(interrupted_code(exc)) from None
    finally:
        store.close()
    if as_json:
        print_json(report.as_dict())
    _print_summary(report)
    if report.failed:
        done = len(report.results) - report.failed
        raise typer.Exit(ExitCode.PARTIAL if done else ExitCode.FAILED)


def _watch(paths, settings, store, *, overrides, as_json: bool) -> None:
    """Ingest, then keep the store in step with ``paths`` until Ctrl-C."""
    from finrag.ingest.watch import watch

    shown = " ".join(str(p) for p in paths)
    # watchfiles runs the signal handlers while it waits, drops what they raise and raises
    # KeyboardInterrupt instead: SIGTERM is remembered here to exit 143, not 130.
    terminated: list[int] = []
    previous = signal.getsignal(signal.SIGTERM)

    def on_sigterm(signum: int, frame: object) -> None:
        terminated.append(signum)
        if callable(previous):
            previous(signum, frame)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        for n, round_ in enumerate(watch(paths, settings, store, overrides=overrides)):
            if as_json:
                out.file.write(json.dumps(round_.as_dict(), default=str) + "\n")
                out.file.flush()
            if n == 0 or round_.changed:
                _print_summary(round_.report)
            for path in round_.removed:
                err.print(Text(f"removed {path}: the file is gone"))
            for path in round_.waiting:
                err.print(Text(f"waiting for {path}: still being written", style="dim"))
            if n == 0:
                err.print(
                    Text(f"watching {shown} for new, changed and deleted filings (Ctrl-C stops)")
                )
            sys.stderr.flush()
    except (KeyboardInterrupt, SystemExit) as exc:
        err.print("stopped watching: every document stored is complete")
        code = 128 + terminated[-1] if terminated else interrupted_code(exc)
        raise typer.Exit(code) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def interrupted_code(exc: BaseException) -> int:
    """130 for Ctrl-C (SIGINT), the code a SIGTERM's SystemExit carries (143)."""
    if isinstance(exc, SystemExit) and isinstance(exc.code, int):
        return exc.code
    return ExitCode.INTERRUPTED


# How far a file is, by stage: parsing is about half of a PDF's time, embedding the rest
# (measured on the sample 10-Q: parse 13.6 s, chunk 1.4 s, embed 11.6 s, store 0.2 s).
_STAGE_SHARE = {
    "parse": (0.0, 0.5),
    "chunk": (0.5, 0.05),
    "embed": (0.55, 0.43),
    "store": (0.98, 0.02),
}
_STAGE_ORDER = list(_STAGE_SHARE)
_STAGE_WORDS = {"parse": "parsing", "chunk": "chunking", "embed": "embedding", "store": "storing"}


class _Remaining(TimeRemainingColumn):
    """The ETA on the overall line only."""

    def render(self, task):
        return super().render(task) if task.fields.get("overall") else Text("")


@dataclass
class _FileState:
    name: str
    started: float
    stage: str = "parse"
    stage_started: float = 0.0
    pages: tuple[int, int] = (0, 0)
    chunks: tuple[int, int] = (0, 0)
    task: TaskID | None = None

    def fraction(self) -> float:
        base, share = _STAGE_SHARE[self.stage]
        done, total = self.chunks if self.stage == "embed" else self.pages
        part = done / total if self.stage in ("parse", "embed") and total else 0.0
        return base + share * part

    def detail(self) -> str:
        pages = f"pages {self.pages[0]}/{self.pages[1]}" if self.pages[1] else "pages ?"
        chunks = f"chunks {self.chunks[0]}/{self.chunks[1]}" if self.chunks[1] else "chunks -"
        return f"{_STAGE_WORDS[self.stage]:<9}  {pages:<13} {chunks}"


class _Progress:
    """Ingest's progress on stderr. On a terminal: files n/N with an ETA, and a line per
    file in flight with its stage, pages read, chunks embedded and time. Otherwise (a log):
    a line as each file starts a stage, and as it ends. Nothing with --quiet."""

    def __init__(self, *, enabled: bool) -> None:
        self.live = enabled and err.is_terminal
        self.lines = enabled and not err.is_terminal and not err.quiet
        self.files: dict[str, _FileState] = {}
        self.finished = 0
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=24),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            _Remaining(),
            console=err,
            transient=True,
        )
        self.overall: TaskID | None = None
        self.graph_task: TaskID | None = None

    def __enter__(self) -> _Progress:
        if self.live:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live:
            self.bar.stop()

    def update(self, event: IngestEvent) -> None:
        if event.kind == "planned":
            self._planned(event.total)
        elif event.kind == "progress" and event.path is not None and event.stage is not None:
            self._moved(event.path, event.stage, event.done, event.total)
        elif event.kind == "graph" and event.path is not None:
            self._graph(event.path, event.done, event.total)
        elif event.result is not None:
            self._finished(event.result)

    def _planned(self, total: int) -> None:
        if self.live and total:
            self.overall = self.bar.add_task(
                "files", total=total, detail=f"0/{total}", overall=True
            )
        elif self.lines and total:
            err.print(f"ingesting {total} file{'s' if total > 1 else ''}", highlight=False)

    def _moved(self, path: str, stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        state = self.files.get(path)
        if state is None:
            state = self.files[path] = _FileState(Path(path).name, now, stage, now)
            if self.live:
                state.task = self.bar.add_task(
                    "  " + state.name[:32], total=1.0, detail=state.detail(), overall=False
                )
        if _STAGE_ORDER.index(stage) < _STAGE_ORDER.index(state.stage):
            return  # a parser's late word about a stage this file has left
        if stage != state.stage:
            if self.lines:
                err.print(self._stage_done(state, now), highlight=False)
            state.stage, state.stage_started = stage, now
        if stage == "parse" and total:
            state.pages = (done, total)
        elif stage in ("embed", "store"):
            state.chunks = (done, total)
        if self.lines and stage == "parse" and done == 0 and total == 0:
            err.print(f"{state.name}: parsing", highlight=False)
        self._redraw(state)

    def _graph(self, path: str, done: int, total: int) -> None:
        """The model reading a stored file's passages for the graph (--graph llm)."""
        name = Path(path).name
        if self.live:
            if done == 0:
                self.graph_task = self.bar.add_task(
                    "  " + name[:32], total=max(total, 1), detail="reading for the graph"
                )
            elif self.graph_task is not None:
                self.bar.update(self.graph_task, completed=done, detail=f"passages {done}/{total}")
            if done == total and self.graph_task is not None:
                self.bar.remove_task(self.graph_task)
                self.graph_task = None
        elif self.lines and done == 0:
            err.print(f"{name}: the model reads {total} passages for the graph", highlight=False)

    def _stage_done(self, state: _FileState, now: float) -> str:
        took = f"{now - state.stage_started:.1f} s"
        if state.stage == "parse":
            return f"{state.name}: {state.pages[1]} pages read in {took}"
        if state.stage == "embed":
            return f"{state.name}: {state.chunks[1]} chunks embedded in {took}"
        if state.stage == "chunk":
            return f"{state.name}: chunked in {took}"
        return f"{state.name}: stored in {took}"

    def _redraw(self, state: _FileState | None = None) -> None:
        if not self.live:
            return
        if state is not None and state.task is not None:
            self.bar.update(state.task, completed=state.fraction(), detail=state.detail())
        if self.overall is not None:
            active = sum(f.fraction() for f in self.files.values())
            total = self.bar.tasks[self.overall].total or 0
            self.bar.update(
                self.overall,
                completed=self.finished + active,
                detail=f"{self.finished}/{int(total)}",
            )

    def _finished(self, result: FileResult) -> None:
        state = self.files.pop(result.path, None)
        if state is not None and state.task is not None:
            self.bar.remove_task(state.task)
        if result.status == FAILED and self.live:  # otherwise the summary lists it
            err.print(Text.assemble(("failed ", "bold red"), result.path, f": {result.reason}"))
        if result.status not in ("ingested", "replaced", FAILED):
            return
        if state is not None:
            self.finished += 1
            if result.status != FAILED:
                took = time.perf_counter() - state.started
                line = (
                    f"{result.status} {state.name}: {result.pages} pages, {result.chunks} "
                    f"chunks in {took:.1f} s"
                )
                if self.live or self.lines:
                    err.print(line, highlight=False)
        self._redraw()


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
    if report.ocr_pages:
        line += f"; {report.ocr_pages} pages read by OCR"
    if report.skipped_pages:
        line += f"; {report.skipped_pages} pages without a text layer skipped"
    if dropped:
        line += "; boilerplate dropped: " + ", ".join(
            f"{n} {k}" for k, n in sorted(dropped.items())
        )
    err.print(line, highlight=False)
    readings = [r.graph for r in report.results if r.graph and not r.graph["skipped"]]
    if readings:
        err.print(_graph_line(readings, len(report.results)), highlight=False)
    for r in report.results:
        if r.status in ("ingested", "replaced") and r.checks.get("facts"):
            err.print(Text(f"  facts: {Path(r.path).name}: {coverage_line(r.checks)}"))
    for r in report.results:
        for warning in r.warnings if r.status in ("ingested", "replaced") else ():
            err.print(Text(f"  warning: {r.path}: {warning}"))
    for r in report.results:
        if r.status in ("failed", "skipped", "stale") and not (
            err.is_terminal and r.status == FAILED
        ):
            err.print(Text(f"  {r.status}: {r.path}: {r.reason}"))
            if r.hint and r.status == FAILED:
                err.print(Text(f"    hint: {r.hint}"))
    sys.stderr.flush()


def _graph_line(readings: list[dict], files: int) -> str:
    """One line on the model's graph reading: what it kept, what it left, what it cost."""
    read = sum(g["chunks_read"] for g in readings)
    line = (
        f"graph ({readings[0]['model']}): {sum(g['relations'] for g in readings)} relations "
        f"from {read} passages of {len(readings)} filing{'s' if len(readings) > 1 else ''} "
        f"in {sum(g['seconds'] for g in readings):.1f} s"
    )
    if dropped := sum(g["dropped"] for g in readings):
        line += f"; {dropped} proposed that the passages do not state, dropped"
    if failed := sum(g["failed"] for g in readings):
        line += f"; {failed} calls failed"
    if cut := sum(not g["complete"] for g in readings):
        line += f"; {cut} not read to the end (ingest.graph_budget_s, or failing calls)"
    return line
