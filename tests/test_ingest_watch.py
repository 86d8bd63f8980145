"""`finrag ingest DIR --watch` with real file events: a file added mid-session is ingested
and found by a search run beside the watch, a file still being written waits until it is
complete, a deleted file's document goes, and Ctrl-C stops the watch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests import pdfs
from tests.conftest import REPO, run_finrag

ACME = (
    "# ACME Corp annual report 2023\n\n"
    "ACME Corp sells anvils. Its anvil revenue was $1,234 million.\n"
)


def _wait_for(predicate, what: str, timeout: float = 90.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.5)
    raise AssertionError(f"gave up waiting for {what}")


class _Documents:
    """What the store holds, asked in process: polling through `finrag docs list` started a
    Python a second, a core's worth of CPU taken from the watcher under test."""

    def __init__(self) -> None:
        from finrag.config import load_settings
        from finrag.db import open_store

        self.store = open_store(load_settings())  # the server the watcher started

    def __call__(self) -> set[str]:
        with self.store.connect() as conn:
            return {Path(p).name for (p,) in conn.execute("SELECT path FROM documents")}


def test_watch_follows_the_folder_while_questions_run_beside_it(home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "filings"
    folder.mkdir()
    pdfs.good_pdf(folder / "GLOBEX_2023_10K.pdf")
    env = dict(os.environ)
    watcher = subprocess.Popen(
        [sys.executable, "-m", "finrag", "ingest", str(folder), "--watch", "--json"],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # The folder as it is (a file written under two seconds ago waits a round).
        for _ in range(3):
            if json.loads(watcher.stdout.readline())["summary"]["ingested"]:
                break
        _files = _Documents()
        assert _files() == {"GLOBEX_2023_10K.pdf"}

        # A file added mid-session is ingested, and a question asked meanwhile finds it.
        (folder / "ACME_2023_10K.md").write_text(ACME)
        _wait_for(lambda: "ACME_2023_10K.md" in _files(), "the new file")
        hits = json.loads(run_finrag("search", "anvil revenue", "--json", env=env).stdout)["hits"]
        assert hits and Path(hits[0]["path"]).name == "ACME_2023_10K.md"

        # A PDF copied slowly is left alone while its bytes are still arriving.
        made = pdfs.good_pdf(tmp_path / "INITECH_2023_10K.pdf", pages=6, text="Initech's staplers.")
        source = made.read_bytes()
        target = folder / made.name
        step = len(source) // 8 + 1
        with target.open("wb") as fh:
            for start in range(0, len(source), step):
                fh.write(source[start : start + step])
                fh.flush()
                time.sleep(0.5)
                assert target.name not in _files()
        _wait_for(lambda: target.name in _files(), "the copied PDF")

        # A deleted file's document is removed.
        (folder / "ACME_2023_10K.md").unlink()
        _wait_for(lambda: "ACME_2023_10K.md" not in _files(), "the removal")
    finally:
        # SIGTERM, as systemd or `docker stop` end it (Ctrl-C's SIGINT exits 130).
        watcher.send_signal(signal.SIGTERM)
        out, err = watcher.communicate(timeout=60)
        if "_files" in locals():
            _files.store.close()
    assert watcher.returncode == 143, err
    assert "stopped watching" in err and "waiting for" in err
    rounds = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert not any(f["status"] == "failed" for r in rounds for f in r["files"])  # never half-read
    assert any(r["removed"] for r in rounds)
