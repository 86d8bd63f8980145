"""Every core for the embedder: as many threads as cores the parser processes leave."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from finrag.config import load_settings
from finrag.ingest.discover import discover
from finrag.ingest.pipeline import (
    _prepared,
    _ProgressFeed,
    embed_threads,
    file_sha256,
    prepare_job,
    usable_cores,
)


def test_threads_are_the_cores_the_parsers_leave() -> None:
    cores = usable_cores()
    assert embed_threads(0) == cores
    assert embed_threads(cores) == 1, "never none"
    assert embed_threads(cores + 3) == 1


def test_a_file_parsed_ahead_and_waiting_keeps_no_core_busy(home: Path, tmp_path: Path) -> None:
    """Files parsed ahead wait for the embedder; the parser process is then idle, and the
    embedder must hear so (it used to hear "parsing" while any file was waiting)."""
    folder = tmp_path / "f"
    folder.mkdir()
    for year in (2021, 2022, 2023):
        (folder / f"ACME_{year}_10K.md").write_text(f"# ACME {year}\n\nRevenue was $1 million.\n")
    settings = load_settings()
    files, _ = discover([folder])
    jobs = [prepare_job(f, file_sha256(f.path), settings, None) for f in files]
    documents = _prepared(jobs, 1, _ProgressFeed(lambda *_: None))
    with contextlib.closing(documents):
        first, busy = next(documents)
        assert first.error is None
        deadline = time.monotonic() + 60
        while busy() and time.monotonic() < deadline:  # the two later files finish parsing
            time.sleep(0.05)
        assert busy() == 0, "both later files are parsed: no parser is busy"
        assert embed_threads(busy()) == usable_cores()
        rest = [prepared.job.path.name for prepared, _ in documents]
    assert rest == ["ACME_2022_10K.md", "ACME_2023_10K.md"], "two files were still to embed"
