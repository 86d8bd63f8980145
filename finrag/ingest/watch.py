"""`finrag ingest PATH --watch`: keep the store in step with folders while they change.

The folders are ingested once, then watched (watchfiles: inotify on Linux, FSEvents on
macOS). After each burst of changes has been quiet for the debounce, the same ingest runs
again over the same paths, so a new or changed file is ingested exactly as a first run
would (metadata read from the same folder layout; unchanged files cost a hash), and a
deleted file's document is removed. A file still being written (its size or mtime moved
within ``settle_s``) is left for the next round, so a half-copied PDF is never read.
`ask`, `search` and `chat` keep working on the store meanwhile: each ingest stores a
document in one transaction.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from finrag.config import Settings
from finrag.db import Store
from finrag.db.documents import list_documents
from finrag.ingest.discover import KINDS
from finrag.ingest.pipeline import IngestReport, ingest
from finrag.ingest.remove import remove_documents

DEBOUNCE_MS = 1500  # a copy of a folder arrives as one batch, not one per file
SETTLE_S = 2.0  # a file unchanged this long is complete enough to read


@dataclass
class WatchRound:
    """What one round did: the ingest over the watched paths, the documents removed for
    files that are gone, and the files left for later (still being written)."""

    report: IngestReport
    removed: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        statuses = {r.status for r in self.report.results}
        return bool(self.removed or statuses - {"unchanged", "duplicate"})

    def as_dict(self) -> dict:
        return {**self.report.as_dict(), "removed": self.removed, "waiting": self.waiting}


def still_written(settle_s: float = SETTLE_S) -> Callable[[Path], bool]:
    """Whether a file was modified within the last ``settle_s`` seconds."""

    def check(path: Path) -> bool:
        try:
            return time.time() - path.stat().st_mtime < settle_s
        except OSError:
            return False  # gone: discovery reports it

    return check


def sync(
    paths: list[Path], settings: Settings, store: Store, *, settle_s: float = SETTLE_S, **kwargs
) -> WatchRound:
    """One round: ingest what is new or changed under ``paths`` (files still being written
    wait), then remove the documents of files under them that are gone."""
    waiting: list[str] = []
    settling = still_written(settle_s)

    def defer(path: Path) -> bool:
        if settling(path):
            waiting.append(str(path))
            return True
        return False

    report = ingest(paths, settings, store, defer=defer, **kwargs)
    roots = {p.expanduser().absolute() for p in paths} | {p.expanduser().resolve() for p in paths}
    with store.connect() as conn:
        gone = [
            doc
            for doc in list_documents(conn)
            if any(Path(doc.path).is_relative_to(root) for root in roots)
            and not Path(doc.path).exists()
        ]
        if gone:  # as `finrag docs rm` removes them
            remove_documents(conn, [doc.id for doc in gone], settings.cache_dir)
        conn.commit()
    return WatchRound(report, [doc.path for doc in gone], waiting)


def watch(
    paths: list[Path],
    settings: Settings,
    store: Store,
    *,
    stop: threading.Event | None = None,
    settle_s: float = SETTLE_S,
    debounce_ms: int = DEBOUNCE_MS,
    **kwargs,
) -> Iterator[WatchRound]:
    """A round now, then one after every burst of changes to a filing under ``paths`` (and
    again while files are still being written), until ``stop`` is set or Ctrl-C."""
    from watchfiles import watch as file_changes

    current = sync(paths, settings, store, settle_s=settle_s, **kwargs)
    yield current
    roots = [p.expanduser() for p in paths]
    while not (stop and stop.is_set()):
        # While a file waits to settle, wake up to look again even if nothing moves.
        timeout_ms = int(settle_s * 1000) if current.waiting else 5000
        for changes in file_changes(
            *roots,
            watch_filter=_filings,
            debounce=debounce_ms,
            stop_event=stop,
            rust_timeout=timeout_ms,
            yield_on_timeout=True,
        ):
            if changes or current.waiting:
                break
        else:
            return  # stopped
        if stop and stop.is_set():
            return
        current = sync(paths, settings, store, settle_s=settle_s, **kwargs)
        yield current


def _filings(_change, path: str) -> bool:
    """Only the files ingest reads (and folders, whose removal removes their files)."""
    suffix = Path(path).suffix.lower()
    return suffix in KINDS or not suffix
