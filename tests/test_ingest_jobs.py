"""`finrag ingest --workers N`: ingest jobs in the real embedded Postgres, taken by worker
processes; a dead worker's job taken over, a late write refused, re-enqueueing harmless."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from finrag.db.ingest_jobs import MAX_ATTEMPTS, claim, enqueue
from finrag.embed import get_embedder
from finrag.ingest.pipeline import file_sha256, pipeline_hash
from finrag.ingest.workers import _ProgressFeed, ingest_with_workers, run_job, work
from tests.conftest import REPO, run_finrag


def _filings(folder: Path, n: int) -> list[Path]:
    """``n`` small filings with different figures (parsed in milliseconds)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        path = folder / f"ACME_{2015 + i}_10K.md"
        path.write_text(
            f"# ACME Corp annual report {2015 + i}\n\n"
            f"Net revenue was ${1000 + 37 * i:,} million in fiscal {2015 + i}.\n\n"
            f"Operating income was ${200 + 11 * i} million; headcount was {900 + i}.\n"
        )
        paths.append(path)
    return paths


def _rows(st, sql: str, *params) -> list[tuple]:
    with st.connect() as conn:
        return conn.execute(sql, params).fetchall()


def _enqueue(st, paths: list[Path]) -> list[int]:
    with st.connect() as conn:
        return enqueue(
            conn,
            [(str(p), file_sha256(p), {"kind": "markdown", "root": str(p.parent)}) for p in paths],
        )


def test_two_workers_drain_the_queue_and_store_each_filing_once(store, tmp_path: Path) -> None:
    settings, st = store
    paths = _filings(tmp_path / "filings", 6)
    copy = tmp_path / "filings" / "copy_of_2015.md"
    copy.write_bytes(paths[0].read_bytes())  # same content at another path

    report = ingest_with_workers([tmp_path / "filings"], settings, st, workers=2)

    statuses = {Path(r.path).name: r.status for r in report.results}
    assert sorted(statuses.values()) == ["duplicate"] + ["ingested"] * 6, statuses
    stored = _rows(st, "SELECT path, count(*) FROM documents GROUP BY path")
    assert sorted(p for p, _ in stored) == sorted(str(p) for p in paths)
    assert all(n == 1 for _, n in stored)
    jobs = _rows(st, "SELECT state, attempts FROM ingest_jobs")
    assert sorted(jobs) == [("done", 1)] * 7
    # Every stored document's chunks were written once (no half, no second copy).
    per_doc = _rows(
        st,
        "SELECT d.path, count(c.id) FROM documents d JOIN chunks c "
        "ON c.document_id = d.id GROUP BY d.path",
    )
    assert {n for _, n in per_doc} == {r.chunks for r in report.results if r.chunks}

    again = ingest_with_workers([tmp_path / "filings"], settings, st, workers=2)
    assert again.count("unchanged") == 6 and again.count("duplicate") == 1
    assert len(_rows(st, "SELECT id FROM ingest_jobs")) == 7, "nothing queued again"


def test_a_killed_workers_job_is_taken_over_by_another(store, tmp_path: Path) -> None:
    settings, st = store
    [path] = _filings(tmp_path / "f", 1)
    [job_id] = _enqueue(st, [path])
    # A real worker process takes the job on a 1 s lease, then dies by SIGKILL: no
    # cleanup runs, its lease simply stops being renewed.
    doomed = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                """
                import sys, time
                from finrag.db import open_store
                from finrag.config import load_settings
                from finrag.db.ingest_jobs import claim
                store = open_store(load_settings())
                with store.connect() as conn:
                    print(claim(conn, "doomed", 1.0).id, flush=True)
                    time.sleep(600)
                """
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    try:
        assert int(doomed.stdout.readline()) == job_id
    finally:
        doomed.send_signal(signal.SIGKILL)
        doomed.wait()
    assert _rows(st, "SELECT state, worker FROM ingest_jobs") == [("running", "doomed")]

    assert work(settings, st, lease_s=30.0) == 1  # waits for the lease to run out
    [(state, attempts, worker, result)] = _rows(
        st, "SELECT state, attempts, worker, result FROM ingest_jobs"
    )
    assert (state, attempts, result["status"]) == ("done", 2, "ingested")
    assert worker != "doomed"
    assert _rows(st, "SELECT count(*) FROM documents") == [(1,)]


def test_a_job_that_killed_its_workers_too_often_fails(store, tmp_path: Path) -> None:
    _, st = store
    [path] = _filings(tmp_path / "f", 1)
    [job_id] = _enqueue(st, [path])
    with st.connect() as conn:
        conn.execute(
            "UPDATE ingest_jobs SET state = 'running', attempts = %s, worker = 'gone:1', "
            "lease_until = now() - interval '1 second' WHERE id = %s",
            (MAX_ATTEMPTS, job_id),
        )
        conn.commit()
        assert claim(conn, "next", 30.0) is None
    [(state, result)] = _rows(st, "SELECT state, result FROM ingest_jobs")
    assert state == "failed"
    assert f"stopped {MAX_ATTEMPTS} times" in result["reason"] and "gone:1" in result["reason"]
    assert _rows(st, "SELECT count(*) FROM documents") == [(0,)]


def test_a_late_write_by_a_worker_whose_lease_ran_out_is_refused(store, tmp_path: Path) -> None:
    settings, st = store
    [path] = _filings(tmp_path / "f", 1)
    _enqueue(st, [path])
    embedder = get_embedder(settings.embed, settings.models_dir)
    recipe = pipeline_hash(settings, embedder)
    feed = _ProgressFeed(lambda *_: None)
    with st.connect() as conn:
        slow = claim(conn, "slow", 0.001)
        time.sleep(0.05)  # its lease runs out: the next claim takes the job over
        fast = claim(conn, "fast", 30.0)
        assert slow is not None and fast is not None and fast.id == slow.id
        assert fast.attempts == 2 and fast.token != slow.token

        late = run_job(conn, slow, settings, embedder, recipe, feed)
        assert late.status == "superseded"
        assert _rows(st, "SELECT count(*) FROM documents") == [(0,)], "nothing written"

        assert run_job(conn, fast, settings, embedder, recipe, feed).status == "ingested"
        # The slow worker tries again after the fast one stored it: it finds the document
        # stored, writes nothing, and its report is not recorded (the job is not its own).
        assert run_job(conn, slow, settings, embedder, recipe, feed).status == "unchanged"
    assert _rows(st, "SELECT count(*) FROM documents") == [(1,)]
    [(state, result)] = _rows(st, "SELECT state, result FROM ingest_jobs")
    assert (state, result["status"]) == ("done", "ingested"), "the slow take reported nothing"


def test_enqueueing_again_is_idempotent(store, tmp_path: Path) -> None:
    settings, st = store
    paths = _filings(tmp_path / "f", 2)
    first = _enqueue(st, paths)
    assert _enqueue(st, paths) == first, "a queued file keeps its one job"
    assert work(settings, st, lease_s=30.0) == 2
    chunks = _rows(st, "SELECT count(*) FROM chunks")

    # Queued again once done (another machine planned before these were stored): the
    # worker finds each document stored, stores nothing, and says so.
    assert _enqueue(st, paths) == first
    assert _rows(st, "SELECT DISTINCT state FROM ingest_jobs") == [("queued",)]
    assert work(settings, st, lease_s=30.0) == 2
    results = [r[0] for r in _rows(st, "SELECT result->>'status' FROM ingest_jobs")]
    assert results == ["unchanged", "unchanged"]
    assert _rows(st, "SELECT count(*) FROM documents") == [(2,)]
    assert _rows(st, "SELECT count(*) FROM chunks") == chunks


def test_a_queued_job_follows_its_file_and_this_runs_options(store, tmp_path: Path) -> None:
    settings, st = store
    [path] = _filings(tmp_path / "f", 1)
    [first] = _enqueue(st, [path])
    with st.connect() as conn:  # queued again with other options: the job takes them
        sha = file_sha256(path)
        spec = {"kind": "markdown", "root": str(path.parent), "overrides": {"company": "X"}}
        assert enqueue(conn, [(str(path), sha, spec)]) == [first]
    [(kept,)] = _rows(st, "SELECT spec FROM ingest_jobs WHERE id = %s", first)
    assert kept["overrides"] == {"company": "X"}

    # The file changes before a worker takes it: the job says so and stores nothing.
    path.write_text(path.read_text() + "\nRestated.\n")
    embedder = get_embedder(settings.embed, settings.models_dir)
    with st.connect() as conn:
        job = claim(conn, "w", 30.0)
        result = run_job(
            conn, job, settings, embedder, pipeline_hash(settings, embedder), _ProgressFeed(print)
        )
    assert (result.status, result.reason) == ("skipped", "the file changed after it was queued")
    assert _rows(st, "SELECT count(*) FROM documents") == [(0,)]

    # Queued again as it is now: an older version's queued job is closed, not run.
    [stale] = _enqueue(st, [path])
    path.write_text(path.read_text() + "\nRestated again.\n")
    [newest] = _enqueue(st, [path])
    assert newest != stale
    [(state, result)] = _rows(st, "SELECT state, result FROM ingest_jobs WHERE id = %s", stale)
    assert state == "done" and result["status"] == "skipped"
    assert work(settings, st, lease_s=30.0) == 1
    [(stored,)] = _rows(st, "SELECT sha256 FROM documents")
    assert stored == file_sha256(path)


def test_a_worker_told_enough_takes_no_further_job(store, tmp_path: Path) -> None:
    settings, st = store
    _enqueue(st, _filings(tmp_path / "f", 2))
    assert work(settings, st, lease_s=30.0, enough=lambda: True) == 0
    assert _rows(st, "SELECT DISTINCT state FROM ingest_jobs") == [("queued",)]


def test_cli_workers_json_report(home: Path, tmp_path: Path) -> None:
    _filings(tmp_path / "filings", 3)
    (tmp_path / "filings" / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    env = dict(os.environ, FINRAG_EMBED__BACKEND="hash")
    result = run_finrag("ingest", str(tmp_path / "filings"), "--workers", "2", "--json", env=env)
    assert result.returncode == 6, result.stderr  # partial: one file failed
    report = json.loads(result.stdout)
    assert report["summary"]["ingested"] == 3 and report["summary"]["failed"] == 1
    [failed] = [f for f in report["files"] if f["status"] == "failed"]
    assert failed["path"].endswith("broken.pdf") and "PDF" in failed["reason"]
    assert "3 ingested, 1 failed" in result.stderr

    refused = run_finrag("ingest", str(tmp_path / "filings"), "--workers", "2", "--watch", env=env)
    assert refused.returncode == 2 and "--watch" in refused.stderr


@pytest.mark.parametrize("workers", ["0", "65"])
def test_cli_workers_bounds(home: Path, tmp_path: Path, workers: str) -> None:
    result = run_finrag("ingest", str(tmp_path), "--workers", workers)
    assert result.returncode == 2
