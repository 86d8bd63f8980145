"""The CPU-heavy half of ingest, run in worker processes: parse (cached), read metadata, chunk.

Everything here is a pure function of the file and the settings, so it can run in
another process while the main one embeds and stores the previous document.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from finrag.errors import DocumentParseError, FinragError
from finrag.facts.extract import document_facts
from finrag.facts.model import Fact
from finrag.files import open_private, private_dir
from finrag.ingest.chunk import Chunk, Chunker, ChunkStats
from finrag.ingest.metadata import DocumentMetadata, resolve_metadata
from finrag.ingest.parse import (
    PARSER_VERSION,
    Page,
    ParsedDocument,
    bound_paragraphs,
    parser_for,
)
from finrag.ingest.sections import document_context


@dataclass
class PrepareJob:
    path: Path
    kind: str
    root: Path
    sha256: str
    parser: str  # preferred PDF parser
    cache_dir: Path
    embed_settings: Any  # EmbedSettings: its tokenizer measures chunks
    max_tokens: int | None
    min_tokens: int
    overlap_tokens: int
    overrides: dict[str, Any] = field(default_factory=dict)
    ocr: str = "auto"  # the OCR engine --parser auto may use
    fallback_parser: str = "none"
    max_chunks: int = 0  # more stops the file while it is chunked; 0: no limit


@dataclass
class Prepared:
    job: PrepareJob
    parser: str = ""
    pages: int = 0
    metadata: DocumentMetadata | None = None
    chunks: list[Chunk] = field(default_factory=list)
    stats: ChunkStats | None = None
    facts: list[Fact] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    cached: bool = False
    warnings: list[str] = field(default_factory=list)
    ocr_pages: list[int] = field(default_factory=list)
    skipped_pages: list[int] = field(default_factory=list)
    error: str | None = None
    hint: str | None = None


def _cache_file(job: PrepareJob, parser: str) -> Path:
    return job.cache_dir / "parsed" / f"{job.sha256}.{parser}.v{PARSER_VERSION}.json"


def _load_cached(path: Path) -> ParsedDocument | None:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return ParsedDocument(
            pages=[Page(p["number"], p["markdown"], p.get("ocr", False)) for p in raw["pages"]],
            parser=raw["parser"],
            declared=raw.get("declared", {}),
            warnings=raw.get("warnings", []),
            skipped_pages=raw.get("skipped_pages", []),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent or damaged: parse again


def _store_cached(path: Path, parsed: ParsedDocument) -> None:
    private_dir(path.parent)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    with open_private(tmp, "w", encoding="utf-8") as fh:
        json.dump(
            {
                "parser": parsed.parser,
                "declared": parsed.declared,
                "warnings": parsed.warnings,
                "skipped_pages": parsed.skipped_pages,
                "pages": [
                    {"number": p.number, "markdown": p.markdown, "ocr": p.ocr} for p in parsed.pages
                ],
            },
            fh,
        )
    tmp.replace(path)


def parsed_cache_files(cache_dir: Path, sha256: str) -> list[Path]:
    """The parsed-Markdown cache of a file with these bytes: every parser's, every version."""
    return sorted((cache_dir / "parsed").glob(f"{sha256}.*"))


def discard_partial_cache(cache_dir: Path, pid: int) -> None:
    """Remove what a parser process ``pid`` that was killed left written aside (never a
    cache entry: those appear whole, by rename)."""
    for partial in (cache_dir / "parsed").glob(f"*.{pid}.tmp"):
        partial.unlink(missing_ok=True)


_counters: dict[str, Any] = {}


def _token_counter(embed_settings: Any):
    """The embedder whose tokenizer measures chunks: built once per worker process, not
    once per document (its tokenizer.json is read on first use)."""
    from finrag.embed import get_embedder

    key = embed_settings.model_dump_json()
    if key not in _counters:
        _counters[key] = get_embedder(embed_settings)
    return _counters[key]


# (path, stage, done, total): a stage of one file moved on. "parse" counts pages read,
# "chunk" starts after them. Worker processes send these through the queue worker_init got.
Progress = Callable[[str, str, int, int], None]
_worker_progress: Progress | None = None


def _no_progress(_path: str, _stage: str, _done: int, _total: int) -> None:
    pass


def prepare(job: PrepareJob, on_progress: Progress | None = None) -> Prepared:
    """Parse, read metadata and chunk one file; never raises for a bad file."""
    result = Prepared(job)
    progress = on_progress or _worker_progress or _no_progress
    name = str(job.path)
    try:
        started = time.perf_counter()
        progress(name, "parse", 0, 0)
        if job.path.stat().st_size == 0:
            raise DocumentParseError("empty file (0 bytes)")
        parser = parser_for(
            job.path, job.kind, job.parser, ocr=job.ocr, fallback=job.fallback_parser
        )
        cache = _cache_file(job, parser.name)
        parsed = _load_cached(cache)
        if parsed is not None and parsed.skipped_pages and getattr(parser, "ocr", None):
            parsed = None  # pages skipped for want of OCR, and an engine is here now
        result.cached = parsed is not None
        if parsed is None and getattr(parser, "reports_pages", False):
            parsed = parser.parse(job.path, on_page=lambda n, of: progress(name, "parse", n, of))
        elif parsed is None:
            parsed = parser.parse(job.path)
        if not result.cached:
            if not any(p.markdown.strip() for p in parsed.pages):
                raise DocumentParseError("the parser found no text")
            _store_cached(cache, parsed)
        for page in parsed.pages:  # after the cache: what it holds stays as the parser wrote it
            page.markdown = bound_paragraphs(page.markdown)
        result.parser, result.pages = parsed.parser, len(parsed.pages)
        result.warnings = list(parsed.warnings)
        result.ocr_pages, result.skipped_pages = parsed.ocr_pages, list(parsed.skipped_pages)
        result.timings["parse"] = time.perf_counter() - started
        progress(name, "parse", result.pages, result.pages)

        started = time.perf_counter()
        progress(name, "chunk", 0, result.pages)
        result.metadata = resolve_metadata(job.path, job.root, parsed, job.overrides)
        result.warnings += [
            f"the file name and the filing disagree on the {c}" for c in result.metadata.conflicts
        ]
        if result.metadata.calendar and result.metadata.calendar.ambiguous:
            result.warnings.append(
                f"fiscal calendar unknown ({result.metadata.calendar.ambiguous}): "
                "its facts carry no fiscal year or quarter"
            )
        embedder = _token_counter(job.embed_settings)
        chunker = Chunker(
            embedder.count_tokens,
            max_tokens=min(job.max_tokens or embedder.max_tokens, embedder.max_tokens),
            min_tokens=job.min_tokens,
            overlap_tokens=job.overlap_tokens,
            max_chunks=job.max_chunks,
        )
        result.chunks, result.stats = chunker.chunk(parsed, document_context(result.metadata))
        if result.ocr_pages:  # a chunk's citation says its text was read by OCR
            ocr = set(result.ocr_pages)
            for chunk in result.chunks:
                chunk.ocr = not ocr.isdisjoint(range(chunk.page_start, chunk.page_end + 1))
        if not result.chunks:
            raise DocumentParseError("no text left after removing boilerplate")
        result.timings["chunk"] = time.perf_counter() - started

        started = time.perf_counter()
        meta = result.metadata
        try:
            result.facts = document_facts(
                job.path,
                job.kind,
                result.chunks,
                period_end=meta.period_end if isinstance(meta.period_end, date) else None,
                fiscal_quarter=meta.fiscal_quarter,
                calendar=meta.calendar,
                form=meta.form_type,
            )
        except FinragError as exc:  # the text is still worth having without its numbers
            result.warnings.append(f"no facts read: {exc.message}")
        result.timings["facts"] = time.perf_counter() - started
    except FinragError as exc:
        result.error, result.hint = exc.message, exc.hint
    except Exception as exc:  # one odd file must not stop the others
        result.error = f"{type(exc).__name__}: {exc}"
        result.hint = "this looks like a bug in finrag; rerun with --debug and report it"
        if os.environ.get("FINRAG_DEBUG"):
            traceback.print_exc()
    return result


def prepare_file(path: Path, cache_dir: Path, settings: Any = None) -> Prepared:
    """One file prepared as ingest prepares it (parse, cached in ``cache_dir`` by the
    file's hash; metadata, chunks, facts), with no database and no embedding: for scripts
    and benches that read what ingest would store."""
    if settings is None:
        from finrag.config import load_settings

        settings = load_settings(ingest={"workers": 0})
    job = PrepareJob(
        path=path,
        kind="html" if path.suffix.lower() in (".htm", ".html") else "pdf",
        root=path.parent,
        sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        parser=settings.ingest.parser,
        cache_dir=cache_dir,
        embed_settings=settings.embed,
        max_tokens=settings.ingest.max_tokens,
        min_tokens=settings.ingest.min_tokens,
        overlap_tokens=settings.ingest.overlap_tokens,
    )
    return prepare(job)


def metadata_fields(meta: DocumentMetadata) -> dict[str, Any]:
    return {
        "form_type": meta.form_type,
        "fiscal_year": meta.fiscal_year,
        "fiscal_quarter": meta.fiscal_quarter,
        "period_end": meta.period_end if isinstance(meta.period_end, date) else None,
        "metadata_source": dict(meta.sources),
    }


def worker_init(parent_pid: int | None = None, progress_queue: Any = None) -> None:
    """Each parser process: one thread for the numeric libraries, so two processes do not
    fight over two cores with spinning thread pools; an end when ``parent_pid`` ends; and
    its files' progress sent to ``progress_queue`` (a multiprocessing queue), if given."""
    global _worker_progress
    if progress_queue is not None:
        _worker_progress = lambda *event: progress_queue.put(event)  # noqa: E731
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    if parent_pid is not None:
        _die_with_parent(parent_pid)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_parent(parent_pid: int) -> None:
    """A parent killed with SIGKILL runs no cleanup: its workers would wait on their task
    queue forever, holding their memory and the resource tracker's pipe (which keeps that
    process alive too). Linux kills them with it; elsewhere a thread watches."""
    armed = False
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    # The parent may have died before the line above: then this process was reparented.
    if os.getppid() != parent_pid:
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(1.0)
    os._exit(1)
