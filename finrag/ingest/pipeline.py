"""`finrag ingest` as a library call: discover -> (parse, chunk in workers) -> embed -> store.

Parsing and chunking of the next file run in a worker process while this process
embeds and stores the current one. Each document is written in one transaction:
an interrupted run leaves only whole documents, and the next run picks up the rest.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import os
import queue
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from finrag.config import Settings
from finrag.db import Store
from finrag.db.companies import resolve_company
from finrag.db.documents import find_duplicate, find_state, write_document
from finrag.db.stored_vectors import stored_vectors
from finrag.embed import Embedder, get_embedder
from finrag.errors import ModelNotAvailable
from finrag.facts.extract import FACTS_VERSION
from finrag.facts.store import check_coverage, write_calendar, write_facts
from finrag.graph.llm_pass import read_document
from finrag.graph.store import write_graph
from finrag.ingest.chunk import CHUNKER_VERSION
from finrag.ingest.discover import SourceFile, discover
from finrag.ingest.parse import PARSER_VERSION, parser_for
from finrag.ingest.parse.ocr import find_ocr_engine
from finrag.ingest.prepare import (
    Prepared,
    PrepareJob,
    discard_partial_cache,
    metadata_fields,
    prepare,
    worker_init,
)
from finrag.ingest.summaries import build_summaries
from finrag.llm import LLM, get_llm

# Statuses a file can end in. "failed" is the only one that makes the run unsuccessful.
INGESTED, REPLACED, UNCHANGED, STALE, DUPLICATE, FAILED, SKIPPED = (
    "ingested",
    "replaced",
    "unchanged",
    "stale",
    "duplicate",
    "failed",
    "skipped",
)


@dataclass
class FileResult:
    path: str
    status: str
    reason: str | None = None
    hint: str | None = None
    document_id: int | None = None
    pages: int = 0
    chunks: int = 0
    tables: int = 0
    facts: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    clause_splits: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    parse_cached: bool = False
    warnings: list[str] = field(default_factory=list)
    parser: str | None = None  # what read it: "pymupdf", "pymupdf+tesseract", "marker", ...
    ocr_pages: list[int] = field(default_factory=list)  # read by OCR
    skipped_pages: list[int] = field(default_factory=list)  # no text layer, and not read
    graph: dict[str, Any] | None = None  # the LLM's graph reading (--graph llm)
    # Facts, verified facts, and per cross-check the facts covered and failed
    # (finrag.facts.store.check_coverage).
    checks: dict[str, Any] = field(default_factory=dict)
    # Chunks whose vector was not computed for them: the same text came earlier in the
    # file, or the store already held it (filings repeat their boilerplate).
    vectors_reused: int = 0


@dataclass
class IngestReport:
    results: list[FileResult]
    elapsed_s: float
    stage_s: dict[str, float]

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.results)

    @property
    def failed(self) -> int:
        return self.count(FAILED)

    @property
    def pages(self) -> int:
        return sum(r.pages for r in self.results if r.status in (INGESTED, REPLACED))

    @property
    def chunks(self) -> int:
        return sum(r.chunks for r in self.results if r.status in (INGESTED, REPLACED))

    @property
    def ocr_pages(self) -> int:
        return sum(len(r.ocr_pages) for r in self.results if r.status in (INGESTED, REPLACED))

    @property
    def skipped_pages(self) -> int:
        return sum(len(r.skipped_pages) for r in self.results if r.status in (INGESTED, REPLACED))

    def as_dict(self) -> dict[str, Any]:
        return {
            "summary": {
                s: self.count(s)
                for s in (INGESTED, REPLACED, UNCHANGED, STALE, DUPLICATE, FAILED, SKIPPED)
            }
            | {
                "pages": self.pages,
                "chunks": self.chunks,
                "ocr_pages": self.ocr_pages,
                "skipped_pages": self.skipped_pages,
                "elapsed_s": round(self.elapsed_s, 3),
                "stage_s": {k: round(v, 3) for k, v in self.stage_s.items()},
            },
            "files": [r.__dict__ for r in self.results],
        }


@dataclass
class IngestEvent:
    """What ``on_event`` hears, always from the calling thread:

    - "planned": ``total`` files will be parsed, chunked, embedded and stored;
    - "progress": one file's ``stage`` moved on: "parse" (``done`` of ``total`` pages
      read; 0 of 0 as it starts), "chunk" (``total`` pages), "embed" (``done`` of
      ``total`` chunks), "store" (``total`` chunks);
    - "file": one file finished, skipped or failed (``result``);
    - "graph": with --graph llm, after every file is stored: the model has read ``done``
      of ``total`` passages of ``path`` (0 of N as it starts, N of N as it ends).
    """

    kind: str
    total: int = 0
    result: FileResult | None = None
    path: str | None = None
    stage: str | None = None
    done: int = 0


def pipeline_hash(settings: Settings, embedder: Embedder) -> str:
    """What decides a document's chunks and vectors: any change means re-ingest."""
    recipe = {
        "parser_version": PARSER_VERSION,
        # auto reads a text PDF exactly as pymupdf does (stores made before auto keep
        # their documents); what OCR read is recorded per document.
        "pdf_parser": "pymupdf" if settings.ingest.parser == "auto" else settings.ingest.parser,
        "chunker_version": CHUNKER_VERSION,
        "max_tokens": settings.ingest.max_tokens or embedder.max_tokens,
        "min_tokens": settings.ingest.min_tokens,
        "overlap_tokens": settings.ingest.overlap_tokens,
        "embedder": embedder.spec.model_id,
        "facts_version": FACTS_VERSION,
    }
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ingest(
    paths: Iterable[Path],
    settings: Settings,
    store: Store,
    *,
    overrides: dict[str, Any] | None = None,
    rebuild: bool = False,
    on_event: Callable[[IngestEvent], None] | None = None,
    embedder: Embedder | None = None,
    defer: Callable[[Path], bool] | None = None,
    llm: LLM | None = None,
) -> IngestReport:
    """Ingest every supported file under ``paths``; report each file's fate. A file for
    which ``defer`` is true (one still being written, under --watch) is left for later.
    With ingest.graph = llm, ``llm`` (default: the configured backend) then reads each
    stored file's passages for the graph (finrag.graph.llm_pass)."""
    started = time.perf_counter()
    notify = on_event or (lambda _event: None)
    embedder = embedder or get_embedder(settings.embed, settings.models_dir)
    adapt_threads = settings.embed.threads == 0 and hasattr(embedder, "threads")
    recipe = pipeline_hash(settings, embedder)
    files, skipped = discover(paths)
    if defer is not None:
        files = [f for f in files if not defer(f.path)]
    if settings.ingest.parser in ("marker", "llamaparse") and any(f.kind == "pdf" for f in files):
        # An optional parser that cannot run fails every PDF the same way: say so once, now.
        parser_for(files[0].path, "pdf", settings.ingest.parser)
    results = [FileResult(str(s.path), SKIPPED, s.reason) for s in skipped]
    for r in results:
        notify(IngestEvent("file", result=r))
    stage = {"hash": 0.0, "parse": 0.0, "chunk": 0.0, "facts": 0.0, "embed": 0.0, "store": 0.0}
    todo = plan(files, settings, store, recipe, rebuild, results, stage, notify)
    notify(IngestEvent("planned", total=len(todo)))
    jobs = [prepare_job(source, sha, settings, overrides) for source, sha in todo]

    def progress(path: str, stage_name: str, done: int, total: int) -> None:
        notify(IngestEvent("progress", total=total, path=path, stage=stage_name, done=done))

    feed = _ProgressFeed(progress)
    # Closed explicitly: an interrupt while this process embeds or stores ends the parser
    # workers now, not when the generator happens to be collected.
    documents = _prepared(jobs, settings.ingest.workers, feed)
    with store.connect() as conn, contextlib.closing(documents):
        for prepared, parsers_busy in documents:
            pace = _pace(embedder, parsers_busy) if adapt_threads else None
            result = _store_one(
                conn,
                prepared,
                embedder,
                recipe,
                stage,
                summaries=settings.ingest.summaries,
                feed=feed,
                # --rebuild embeds again what the store holds (a file's distinct texts once)
                reuse_stored=not rebuild,
                pace=pace,
            )
            results.append(result)
            notify(IngestEvent("file", result=result))
    if settings.ingest.graph == "llm":
        t0 = time.perf_counter()
        _read_graphs(results, settings, store, llm or get_llm(settings), notify)
        stage["graph"] = time.perf_counter() - t0
    order = {str(p): i for i, p in enumerate(sorted(r.path for r in results))}
    results.sort(key=lambda r: order[r.path])
    return IngestReport(results, time.perf_counter() - started, stage)


def plan(
    files: list[SourceFile],
    settings: Settings,
    store: Store,
    recipe: str,
    rebuild: bool,
    results: list[FileResult],
    stage: dict[str, float],
    notify: Callable[[IngestEvent], None],
) -> list[tuple[SourceFile, str]]:
    """The files to ingest, with their hashes; each other file's fate (unchanged, stale,
    a duplicate) goes into ``results`` and is announced."""
    ocr_now = ocr_available(settings)
    todo: list[tuple[SourceFile, str]] = []
    with store.connect() as conn:
        for source in files:
            t0 = time.perf_counter()
            sha = file_sha256(source.path)
            stage["hash"] += time.perf_counter() - t0
            state = find_state(conn, str(source.path))
            if state and state[1] == sha and not rebuild and not (state[3] and ocr_now):
                # (A file whose scanned pages were skipped is read again once OCR is here.)
                status = UNCHANGED if state[2] == recipe else STALE
                reason = (
                    None
                    if status == UNCHANGED
                    else (
                        "ingested with other parser/chunker settings; `finrag ingest --rebuild` "
                        "re-chunks it"
                    )
                )
                results.append(FileResult(str(source.path), status, reason, document_id=state[0]))
                notify(IngestEvent("file", result=results[-1]))
                continue
            if state is None and (dup := find_duplicate(conn, sha, str(source.path))):
                results.append(FileResult(str(source.path), DUPLICATE, f"same content as {dup}"))
                notify(IngestEvent("file", result=results[-1]))
                continue
            todo.append((source, sha))
        conn.rollback()
    return todo


def ocr_available(settings: Settings) -> bool:
    """Scanned pages can be read now: a file stored with them skipped is read again."""
    return settings.ingest.parser == "auto" and find_ocr_engine(settings.ingest.ocr) is not None


def prepare_job(
    source: SourceFile, sha: str, settings: Settings, overrides: dict[str, Any] | None
) -> PrepareJob:
    return PrepareJob(
        path=source.path,
        kind=source.kind,
        root=source.root,
        sha256=sha,
        parser=settings.ingest.parser,
        ocr=settings.ingest.ocr,
        fallback_parser=settings.ingest.fallback_parser,
        cache_dir=settings.cache_dir,
        embed_settings=settings.embed,
        max_tokens=settings.ingest.max_tokens,
        min_tokens=settings.ingest.min_tokens,
        overlap_tokens=settings.ingest.overlap_tokens,
        max_chunks=settings.ingest.max_chunks_per_document,
        overrides=overrides or {},
    )


def _read_graphs(
    results: list[FileResult],
    settings: Settings,
    store: Store,
    llm: LLM,
    notify: Callable[[IngestEvent], None],
) -> None:
    """The model's reading of every stored file of this run for the graph, after they are
    all stored (a model that fails costs no file its chunks). One it read before with the
    same model and prompt is skipped."""
    with store.connect() as conn:
        for result in results:
            if result.status not in (INGESTED, REPLACED, UNCHANGED) or not result.document_id:
                continue
            path = result.path

            def step(done: int, total: int, path: str = path) -> None:
                notify(IngestEvent("graph", total=total, path=path, done=done))

            try:
                reading = read_document(
                    conn,
                    result.document_id,
                    llm,
                    budget_s=settings.ingest.graph_budget_s,
                    max_chunks=settings.ingest.graph_max_chunks,
                    on_step=step,
                )
            except ModelNotAvailable as exc:  # no model at all: say what is safe
                raise ModelNotAvailable(
                    f"every file is stored, but no model could read them for the graph: "
                    f"{exc.message}",
                    hint=(exc.hint + "; then " if exc.hint else "")
                    + "run the same ingest again: it reads the filings not read yet",
                ) from None
            result.graph = reading.as_dict()


_AHEAD_PER_WORKER = 3
# Chunks embedded between two progress events: a multiple of every embedder's batch, and
# the chunks go in length order (as the ONNX embedder batches them), so the batches the
# model sees are the ones a single call would have made.
_EMBED_STEP = 32


class _ProgressFeed:
    """Parser processes' progress, passed on from this thread: each worker puts
    (path, stage, done, total) on ``queue``; ``drain`` hands what arrived to ``report``
    (while waiting for a prepared file, and between slices of embedding)."""

    def __init__(self, report: Callable[[str, str, int, int], None]) -> None:
        self.report = report
        self.queue: Any = None

    def drain(self) -> None:
        if self.queue is None:
            return
        while True:
            try:
                event = self.queue.get_nowait()
            except (queue.Empty, OSError, ValueError):
                return
            self.report(*event)

    def wait(self, future: Future[Prepared]) -> Prepared:
        """The future's result, passing on its progress while it runs."""
        while True:
            try:
                return future.result(timeout=0.2)
            except FutureTimeout:
                self.drain()
            finally:
                if future.done():
                    self.drain()


def usable_cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def embed_threads(parsers_busy: int) -> int:
    """Every core no parser process is using, and at least one."""
    return max(1, usable_cores() - parsers_busy)


def _pace(embedder: Embedder, parsers_busy: Callable[[], int]) -> Callable[[], None]:
    """Before each batch: as many embedding threads as cores the parsers leave idle. Asked
    per batch, not per file: HTML parses in seconds, so the parser is done long before
    the file's embedding is (1 thread throughout left a core idle for 96 % of an HTML
    ingest); a thread more than the free cores costs more than it gives (measured 31.7
    chunks/s on 1 thread, 54.5 on 2, with a parser busy beside: 16 % more CPU a chunk)."""

    def pace() -> None:
        embedder.threads = embed_threads(parsers_busy())  # type: ignore[attr-defined]

    return pace


def _prepared(
    jobs: list[PrepareJob], workers: int, feed: _ProgressFeed
) -> Iterator[tuple[Prepared, Callable[[], int]]]:
    """Prepared documents in job order, with a few files per worker in flight ahead;
    each comes with a count of the parser processes busy now (with later files)."""
    if workers <= 0 or len(jobs) == 0:
        for job in jobs:
            yield prepare(job, feed.report), lambda: 0
        return
    context = multiprocessing.get_context("spawn")  # no fork of a process holding torch/psycopg
    feed.queue = context.Queue()
    # Workers end when this process does, even by SIGKILL (worker_init). The kernel ties
    # that to the thread that started them: the one calling this, which outlives the pool.
    pool = ProcessPoolExecutor(
        workers,
        mp_context=context,
        initializer=worker_init,
        initargs=(os.getpid(), feed.queue),
    )
    pending: deque[Future[Prepared]] = deque()

    def busy() -> int:  # a file parsed ahead and waiting here keeps no core busy
        return min(workers, sum(not f.done() for f in pending))

    try:
        for job in jobs:
            pending.append(pool.submit(prepare, job))
            # Keep the parsers fed while this process embeds a long document; a few
            # prepared documents waiting here cost megabytes, not gigabytes.
            if len(pending) > _AHEAD_PER_WORKER * workers:
                yield feed.wait(pending.popleft()), busy
        while pending:
            yield feed.wait(pending.popleft()), busy
    except BaseException:  # Ctrl-C, SIGTERM (SystemExit), a failed store, an early close
        _stop_workers(pool, jobs[0].cache_dir)
        raise
    pool.shutdown(wait=True)


def _stop_workers(pool: ProcessPoolExecutor, cache_dir: Path) -> None:
    """End the parser processes now. A plain shutdown waits for the file each one is
    parsing: a large PDF kept an interrupted ingest running for over a minute. Nothing of
    a killed parse is kept (only whole documents are stored, by this process; the parse
    cache is written aside and renamed), but the file it was writing aside is removed."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=2.0)
        if process.is_alive():
            process.kill()
            process.join(timeout=2.0)
        if process.pid is not None:
            discard_partial_cache(cache_dir, process.pid)


def _store_one(
    conn,
    prepared: Prepared,
    embedder: Embedder,
    recipe: str,
    stage: dict[str, float],
    *,
    summaries: bool,
    feed: _ProgressFeed,
    reuse_stored: bool = True,
    pace: Callable[[], None] | None = None,
    guard: Callable[[Any], None] | None = None,
    written: Callable[[Any, FileResult], None] | None = None,
) -> FileResult:
    """Embed and store one prepared file in one transaction. ``guard`` runs first in it
    and may refuse the write (WriteRefused); ``written`` runs last, with the file's
    report, and commits or rolls back with the document (the job queue's hooks)."""
    job = prepared.job
    result = FileResult(
        str(job.path),
        FAILED,
        prepared.error,
        prepared.hint,
        pages=prepared.pages,
        timings=dict(prepared.timings),
        parse_cached=prepared.cached,
        warnings=list(prepared.warnings),
        parser=prepared.parser or None,
        ocr_pages=prepared.ocr_pages,
        skipped_pages=prepared.skipped_pages,
    )
    stage["parse"] += prepared.timings.get("parse", 0.0)
    stage["chunk"] += prepared.timings.get("chunk", 0.0)
    stage["facts"] += prepared.timings.get("facts", 0.0)
    if prepared.error is not None:
        return result
    meta, chunks, stats = prepared.metadata, prepared.chunks, prepared.stats
    assert meta is not None and stats is not None
    try:
        t0 = time.perf_counter()
        vectors, result.vectors_reused = _embed_reporting(
            embedder, chunks, str(job.path), feed, conn if reuse_stored else None, pace
        )
        result.timings["embed"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        feed.report(str(job.path), "store", len(chunks), len(chunks))
        with conn.transaction():
            if guard is not None:
                guard(conn)
            existed = find_state(conn, str(job.path)) is not None
            company = resolve_company(conn, meta.company_aliases, meta.ticker)
            company_id = company[0] if company else None
            result.document_id = write_document(
                conn,
                fields={
                    "path": str(job.path),
                    "sha256": job.sha256,
                    "pipeline_hash": recipe,
                    "parser": prepared.parser,
                    "company_id": company_id,
                    "pages": prepared.pages,
                    "ocr_pages": prepared.ocr_pages,
                    "skipped_pages": prepared.skipped_pages,
                    **metadata_fields(meta),
                },
                chunks=chunks,
                vectors=vectors,
            )
            result.facts = write_facts(conn, result.document_id, company_id, prepared.facts)
            write_calendar(conn, result.document_id, company_id, meta.calendar)
            result.checks = check_coverage(conn, result.document_id)
            write_graph(conn, result.document_id, company_id)  # from the chunks (sql/011)
            if summaries:  # from the chunks just stored
                build_summaries(conn, result.document_id, embedder)
            result.timings["store"] = time.perf_counter() - t0
            stored = _stored(
                result, REPLACED if existed else INGESTED, chunks, stats, meta, company
            )
            if written is not None:
                written(conn, stored)
    except WriteRefused as refused:  # rolled back: another outcome, said by the guard
        result.status, result.reason = refused.status, refused.reason
        return result
    except Exception as exc:  # the transaction rolled back: nothing of this file remains
        result.reason = f"could not store: {type(exc).__name__}: {exc}"
        return result
    stored.timings["store"] = time.perf_counter() - t0  # the commit included
    stage["embed"] += stored.timings["embed"]
    stage["store"] += stored.timings["store"]
    return stored


class WriteRefused(Exception):
    """A guard's refusal to write a file: its ``status`` and ``reason`` (e.g. a duplicate,
    or a job another worker has taken over)."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


def _stored(result: FileResult, status: str, chunks, stats, meta, company) -> FileResult:
    """The report of a file whose document is written."""
    stored = FileResult(**{**result.__dict__, "timings": dict(result.timings)})
    stored.status = status
    stored.reason = None
    stored.chunks = len(chunks)
    stored.tables = stats.table_chunks
    stored.dropped = dict(stats.dropped)
    stored.clause_splits = stats.clause_splits
    stored.metadata = {
        "company": company[1] if company else None,
        "ticker": meta.ticker,
        "form_type": meta.form_type,
        "fiscal_year": meta.fiscal_year,
        "fiscal_quarter": meta.fiscal_quarter,
        "period_end": meta.period_end.isoformat() if meta.period_end else None,
        "sources": meta.sources,
        "calendar": meta.calendar.describe() if meta.calendar else None,
        "conflicts": list(meta.conflicts),
    }
    return stored


def _embed_reporting(
    embedder: Embedder,
    chunks: list,
    path: str,
    feed: _ProgressFeed,
    conn=None,
    pace: Callable[[], None] | None = None,
):
    """The chunks' vectors, in order, and how many of them were not computed for them: each
    distinct text is embedded once, and not at all when the store behind ``conn`` holds it
    (one embedding space per store). An "embed" progress event (chunks with their vector,
    of all) as it starts and after every _EMBED_STEP texts embedded."""
    import numpy as np

    texts = [c.embed_text for c in chunks]
    known = stored_vectors(conn, texts) if conn is not None else {}
    if conn is not None:
        conn.rollback()  # a read: the document's own transaction starts clean
    uses = Counter(texts)
    todo = sorted((t for t in uses if t not in known), key=len)
    waiting = sum(uses[t] for t in todo)
    feed.report(path, "embed", 0, len(texts))
    for start in range(0, len(todo), _EMBED_STEP):
        batch = todo[start : start + _EMBED_STEP]
        if pace is not None:
            pace()
        known.update(zip(batch, embedder.embed(batch), strict=True))
        waiting -= sum(uses[t] for t in batch)
        feed.drain()  # the next file's pages, read meanwhile
        feed.report(path, "embed", len(texts) - waiting, len(texts))
    if not texts:
        return embedder.embed([]), 0
    if not todo:
        feed.report(path, "embed", len(texts), len(texts))
    return np.stack([known[t] for t in texts]), len(texts) - len(todo)
