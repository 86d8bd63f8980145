"""`finrag ingest --workers N`: the files become jobs in the database (finrag.db.ingest_jobs),
and N worker processes take them, each parsing, embedding and storing whole files.

Several machines sharing one database (``database_url``) each run `finrag ingest --workers
N` on the same folder (at the same path, e.g. a network mount): enqueueing is idempotent,
so each queues what is missing and every worker drains the one queue. A worker that dies
leaves its job leased; when the lease runs out another worker takes it over. A job is done
in the transaction that stores its document, so no document is stored twice or half.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import queue
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import psycopg

from finrag.config import Settings
from finrag.db import Store, open_store
from finrag.db.documents import find_duplicate, find_state
from finrag.db.ingest_jobs import (
    DONE,
    Job,
    claim,
    enqueue,
    finish,
    finished,
    mark_done,
    open_jobs,
    own,
    release,
    renew,
)
from finrag.embed import get_embedder
from finrag.ingest.discover import SourceFile, discover
from finrag.ingest.parse import parser_for
from finrag.ingest.pipeline import (
    DUPLICATE,
    FAILED,
    INGESTED,
    REPLACED,
    SKIPPED,
    UNCHANGED,
    FileResult,
    IngestEvent,
    IngestReport,
    WriteRefused,
    _ProgressFeed,
    _store_one,
    file_sha256,
    ocr_available,
    pipeline_hash,
    plan,
    prepare_job,
    usable_cores,
)
from finrag.ingest.prepare import prepare, worker_init

_log = logging.getLogger(__name__)

# A worker renews its lease every third of it; a dead worker's job is taken over within
# this long. Long enough for a stalled moment (a swap storm), short against a filing.
LEASE_S = 60.0
_POLL_S = 0.5
# A take that another worker took over: it stores nothing and reports nothing.
_SUPERSEDED = "superseded"


def ingest_with_workers(
    paths: Iterable[Path],
    settings: Settings,
    store: Store,
    *,
    workers: int,
    overrides: dict[str, Any] | None = None,
    rebuild: bool = False,
    on_event: Callable[[IngestEvent], None] | None = None,
    lease_s: float = LEASE_S,
) -> IngestReport:
    """Queue the files under ``paths`` that need ingesting, run ``workers`` worker processes
    until the queue is drained, and report each file's fate as `ingest` does."""
    started = time.perf_counter()
    notify = on_event or (lambda _event: None)
    recipe = pipeline_hash(settings, get_embedder(settings.embed, settings.models_dir))
    files, skipped = discover(paths)
    if settings.ingest.parser in ("marker", "llamaparse") and any(f.kind == "pdf" for f in files):
        # An optional parser that cannot run fails every PDF the same way: say so once, now.
        parser_for(files[0].path, "pdf", settings.ingest.parser)
    results = [FileResult(str(s.path), SKIPPED, s.reason) for s in skipped]
    for r in results:
        notify(IngestEvent("file", result=r))
    stage = {"hash": 0.0, "parse": 0.0, "chunk": 0.0, "facts": 0.0, "embed": 0.0, "store": 0.0}
    todo = plan(files, settings, store, recipe, rebuild, results, stage, notify)
    notify(IngestEvent("planned", total=len(todo)))
    with store.connect() as conn:
        ids = enqueue(conn, [(str(s.path), sha, _spec(s, rebuild, overrides)) for s, sha in todo])
    waiting = {job_id: str(source.path) for job_id, (source, _) in zip(ids, todo, strict=True)}
    if waiting:
        results += _run_workers(settings, store, workers, lease_s, waiting, notify, stage)
    order = {str(p): i for i, p in enumerate(sorted(r.path for r in results))}
    results.sort(key=lambda r: order[r.path])
    return IngestReport(results, time.perf_counter() - started, stage)


def _spec(source: SourceFile, rebuild: bool, overrides: dict[str, Any] | None) -> dict[str, Any]:
    """What a worker needs to know of a job beyond its path and hash."""
    return {
        "kind": source.kind,
        "root": str(source.root),
        "rebuild": rebuild,
        "overrides": overrides or {},
    }


def _run_workers(
    settings: Settings,
    store: Store,
    workers: int,
    lease_s: float,
    waiting: dict[int, str],
    notify: Callable[[IngestEvent], None],
    stage: dict[str, float],
) -> list[FileResult]:
    """Start the workers; pass on their progress and each of our jobs' report as it
    finishes (whichever worker, on whichever machine, finished it)."""
    context = multiprocessing.get_context("spawn")  # no fork of a process holding psycopg
    progress = context.Queue()
    # Set once this run's files are finished: a worker then takes no further job (another
    # machine's, or one a dead run left), so the command ends with its own files.
    enough = context.Event()
    threads = max(1, usable_cores() // workers)  # a core each: one parses, another embeds
    processes = [
        context.Process(
            target=worker_main,
            args=(settings, lease_s, threads, progress, os.getpid(), enough),
            name=f"finrag-ingest-worker-{n}",
        )
        for n in range(workers)
    ]
    for process in processes:
        process.start()
    reported: list[FileResult] = []

    def collect(conn: psycopg.Connection) -> None:
        for job_id, _state, report in finished(conn, list(waiting)):
            waiting.pop(job_id)
            result = FileResult(**report)
            for name in ("parse", "chunk", "facts", "embed", "store"):
                stage[name] += result.timings.get(name, 0.0)
            reported.append(result)
            notify(IngestEvent("file", result=result))

    try:
        with store.connect() as conn:
            while waiting:
                _drain(progress, notify)
                collect(conn)
                if waiting and not any(p.is_alive() for p in processes):
                    collect(conn)  # what the last worker finished as it ended
                    codes = sorted({p.exitcode for p in processes})
                    for path in waiting.values():
                        reported.append(
                            FileResult(
                                path,
                                FAILED,
                                f"still queued: the worker processes ended (exit {codes})",
                                "run the same command again; the queue keeps the job",
                            )
                        )
                    break
                time.sleep(_POLL_S)
    except BaseException:  # Ctrl-C, SIGTERM: the workers give their jobs back, then end
        _stop(processes)
        raise
    enough.set()
    # A worker that put progress on the queue cannot exit until it is read: keep reading
    # while each finishes the job in hand.
    while any(p.is_alive() for p in processes):
        _drain(progress, notify)
        for process in processes:
            process.join(timeout=_POLL_S / len(processes))
    _drain(progress, notify)
    return reported


def _drain(progress: Any, notify: Callable[[IngestEvent], None]) -> None:
    while True:
        try:
            path, stage_name, done, total = progress.get_nowait()
        except (queue.Empty, OSError, ValueError):
            return
        notify(IngestEvent("progress", total=total, path=path, stage=stage_name, done=done))


def _stop(processes: list[multiprocessing.process.BaseProcess]) -> None:
    """SIGTERM first: a worker gives its job back to the queue as it ends."""
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=10.0)
        if process.is_alive():  # its job's lease runs out and another worker takes it
            process.kill()
            process.join(timeout=2.0)


def worker_main(
    settings: Settings,
    lease_s: float,
    threads: int,
    progress: Any,
    parent_pid: int | None,
    enough: Any = None,
) -> None:
    """A worker process: drain the queue (or stop taking jobs once ``enough`` is set),
    then end. SIGTERM gives the job in hand back to the queue."""
    worker_init(parent_pid, progress)

    def on_sigterm(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_sigterm)
    # Ctrl-C reaches the whole process group; the parent answers it with SIGTERM to each
    # worker. One signal, not two racing through the give-back.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    store = open_store(settings)
    try:
        work(
            settings,
            store,
            lease_s=lease_s,
            threads=threads,
            report=progress.put,
            enough=enough.is_set if enough is not None else None,
        )
    except (KeyboardInterrupt, SystemExit):
        sys.exit(143)
    finally:
        store.close()


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def work(
    settings: Settings,
    store: Store,
    *,
    lease_s: float = LEASE_S,
    threads: int = 0,
    report: Callable[[tuple], None] | None = None,
    enough: Callable[[], bool] | None = None,
) -> int:
    """Take jobs until none is open anywhere (a running one may yet be left by a dead
    worker, so this waits for those too) or ``enough`` says stop; return how many this
    worker finished."""
    embedder = get_embedder(settings.embed, settings.models_dir)
    if threads and hasattr(embedder, "threads"):
        embedder.threads = threads
    recipe = pipeline_hash(settings, embedder)
    feed = _ProgressFeed(lambda *event: report(event) if report else None)
    name = worker_name()
    done = 0
    with store.connect() as conn:
        while True:
            if enough is not None and enough():
                return done
            job = claim(conn, name, lease_s)
            if job is None:
                if open_jobs(conn) == 0:
                    return done
                time.sleep(_POLL_S)
                continue
            with _Heartbeat(store, job, lease_s):
                try:
                    run_job(conn, job, settings, embedder, recipe, feed)
                except (KeyboardInterrupt, SystemExit):
                    _give_back(store, conn, job)
                    raise
                except Exception as exc:  # a defect, not the file's: fail it, keep working
                    conn.rollback()
                    reason = f"the worker failed: {type(exc).__name__}: {exc}"
                    finish(conn, job, "failed", FileResult(job.path, FAILED, reason).__dict__)
            done += 1


def _give_back(store: Store, conn: psycopg.Connection, job: Job) -> None:
    """Put the job in hand back in the queue, on a fresh connection if a signal broke this
    one mid-query; a second SIGTERM waits until it is done."""
    blocked = {signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        try:
            conn.rollback()
            release(conn, job)
        except psycopg.Error:
            with contextlib.suppress(psycopg.Error), store.connect() as fresh:
                release(fresh, job)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, blocked)


def run_job(
    conn: psycopg.Connection,
    job: Job,
    settings: Settings,
    embedder: Any,
    recipe: str,
    feed: _ProgressFeed,
) -> FileResult:
    """One file: parse, chunk, embed, and store it with the job done in one transaction."""
    rebuild = bool(job.spec.get("rebuild"))
    path = Path(job.path)
    if not path.is_file() or file_sha256(path) != job.sha256:
        # Parsing today's bytes under the queued hash would store them as the old version.
        why = "the file is gone" if not path.is_file() else "the file changed after it was queued"
        result = FileResult(job.path, SKIPPED, why, "run the same command again to queue it")
        finish(conn, job, DONE, result.__dict__)
        return result
    state = find_state(conn, job.path)
    conn.rollback()
    fresh = state and state[1] == job.sha256 and state[2] == recipe
    # (A file stored with its scanned pages skipped is read again once OCR is here.)
    if fresh and not rebuild and not (state[3] and ocr_available(settings)):
        # Stored already, by a plain `finrag ingest` meanwhile, or queued again: keep it.
        result = FileResult(job.path, UNCHANGED, document_id=state[0])
        finish(conn, job, DONE, result.__dict__)
        return result
    source = SourceFile(Path(job.path), job.spec["kind"], Path(job.spec["root"]))
    prepared = prepare(
        prepare_job(source, job.sha256, settings, job.spec.get("overrides")), feed.report
    )

    def guard(c: psycopg.Connection) -> None:
        if not own(c, job):
            raise WriteRefused(_SUPERSEDED, "another worker took this job over")
        # Two paths with the same content, written at once by two workers: one is stored,
        # the other found a duplicate, as one process storing them in turn would say.
        c.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (job.sha256,))
        if find_state(c, job.path) is None and (dup := find_duplicate(c, job.sha256, job.path)):
            raise WriteRefused(DUPLICATE, f"same content as {dup}")

    def written(c: psycopg.Connection, result: FileResult) -> None:
        mark_done(c, job, result.__dict__)

    stage = dict.fromkeys(("parse", "chunk", "facts", "embed", "store"), 0.0)  # the job's own
    result = _store_one(
        conn,
        prepared,
        embedder,
        recipe,
        stage,
        summaries=settings.ingest.summaries,
        feed=feed,
        reuse_stored=not rebuild,
        guard=guard,
        written=written,
    )
    if result.status not in (INGESTED, REPLACED, _SUPERSEDED):
        finish(conn, job, "failed" if result.status == FAILED else DONE, result.__dict__)
    return result


class _Heartbeat:
    """Renews a job's lease from a thread on its own connection while the worker works."""

    def __init__(self, store: Store, job: Job, lease_s: float) -> None:
        self.store, self.job, self.lease_s = store, job, lease_s
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> _Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=5.0)

    def _run(self) -> None:
        try:
            conn = self.store.connect()
        except Exception as exc:  # the lease runs out; the write's guard refuses a late write
            _log.warning(
                "%s: its lease cannot be renewed (%s); past %.0f s another worker may take it over",
                self.job.path,
                exc,
                self.lease_s,
            )
            return
        with conn:
            warned = False
            while not self.stop.wait(self.lease_s / 3):
                try:
                    if not renew(conn, self.job, self.lease_s):
                        return  # done, or taken over
                except psycopg.Error as exc:
                    if not warned:
                        _log.warning("%s: renewing its lease failed (%s)", self.job.path, exc)
                        warned = True
                    with contextlib.suppress(psycopg.Error):
                        conn.rollback()
