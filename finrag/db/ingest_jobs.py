"""The ingest job queue (sql/017): files as rows that worker processes take, lease and finish.

Any number of workers, on any machines sharing the database, take jobs with
``FOR UPDATE SKIP LOCKED`` (two never take the same one, and none waits on another's
lock). A take is a lease with a fresh token: the worker renews it while it works; when a
worker dies its lease runs out and the next ``claim`` takes the job over, and the old
token no longer matches, so a late write by the old worker is refused (``own``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import psycopg

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
# A job whose worker died this many times is failed, not taken again: a file that kills
# its worker (out of memory, a parser crash) must not kill every worker in turn.
MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class Job:
    id: int
    path: str
    sha256: str
    spec: dict[str, Any]
    token: uuid.UUID
    attempts: int


def enqueue(
    conn: psycopg.Connection, files: Iterable[tuple[str, str, dict[str, Any]]]
) -> list[int]:
    """Queue (path, sha256, spec) jobs; return their ids, in order. A file already queued
    keeps its job with this run's spec (its options), a running one keeps its job as it
    is (enqueueing twice is harmless); a finished one is queued again, since the caller
    found its document missing or out of date. A queued job for an earlier version of the
    file (another hash at the same path) is closed: that content is gone."""
    ids = []
    for path, sha256, spec in files:
        conn.execute(
            """
            UPDATE ingest_jobs
               SET state = 'done', finished_at = now(),
                   result = jsonb_build_object('status', 'skipped', 'path', path, 'reason',
                       'the file changed after it was queued: its new content is queued')
             WHERE path = %s AND sha256 <> %s AND state = 'queued'
            """,
            (path, sha256),
        )
        row = conn.execute(
            """
            INSERT INTO ingest_jobs AS j (path, sha256, spec) VALUES (%s, %s, %s)
            ON CONFLICT (path, sha256) DO UPDATE
               SET state = 'queued', spec = EXCLUDED.spec, attempts = 0, worker = NULL,
                   token = NULL, lease_until = NULL, result = NULL, finished_at = NULL,
                   enqueued_at = now()
             WHERE j.state IN ('done', 'failed')
            RETURNING id
            """,
            (path, sha256, json.dumps(spec)),
        ).fetchone()
        if row is None:  # queued or running already: the conflict updated nothing
            conn.execute(
                "UPDATE ingest_jobs SET spec = %s WHERE path = %s AND sha256 = %s "
                "AND state = 'queued'",
                (json.dumps(spec), path, sha256),
            )
            row = conn.execute(
                "SELECT id FROM ingest_jobs WHERE path = %s AND sha256 = %s", (path, sha256)
            ).fetchone()
        ids.append(row[0])
    conn.commit()
    return ids


def claim(conn: psycopg.Connection, worker: str, lease_s: float) -> Job | None:
    """Take the oldest job nobody holds (queued, or its lease run out); None if none."""
    conn.execute(
        """
        UPDATE ingest_jobs
           SET state = 'failed', finished_at = now(), token = NULL,
               result = jsonb_build_object('status', 'failed', 'path', path, 'reason',
                   format('its worker stopped %%s times while ingesting it (last: %%s)',
                          attempts, worker))
         WHERE state = 'running' AND lease_until < now() AND attempts >= %s
        """,
        (MAX_ATTEMPTS,),
    )
    row = conn.execute(
        """
        UPDATE ingest_jobs
           SET state = 'running', attempts = attempts + 1, worker = %s,
               token = gen_random_uuid(), lease_until = now() + make_interval(secs => %s)
         WHERE id = (SELECT id FROM ingest_jobs
                      WHERE state = 'queued' OR (state = 'running' AND lease_until < now())
                      ORDER BY id LIMIT 1
                      FOR UPDATE SKIP LOCKED)
        RETURNING id, path, sha256, spec, token, attempts
        """,
        (worker, lease_s),
    ).fetchone()
    conn.commit()
    return Job(*row) if row else None


def renew(conn: psycopg.Connection, job: Job, lease_s: float) -> bool:
    """Extend the lease; False if the job is no longer this take's (taken over, finished)."""
    row = conn.execute(
        "UPDATE ingest_jobs SET lease_until = now() + make_interval(secs => %s) "
        "WHERE id = %s AND token = %s AND state = 'running' RETURNING id",
        (lease_s, job.id, job.token),
    ).fetchone()
    conn.commit()
    return row is not None


def own(conn: psycopg.Connection, job: Job) -> bool:
    """Inside the transaction that writes the job's document: lock the job's row and say
    whether this take still holds it. Another worker's take waits on the lock until this
    transaction ends, and then sees the job done."""
    row = conn.execute(
        "SELECT token, state FROM ingest_jobs WHERE id = %s FOR UPDATE", (job.id,)
    ).fetchone()
    return row is not None and row[0] == job.token and row[1] == RUNNING


def mark_done(conn: psycopg.Connection, job: Job, result: dict[str, Any]) -> None:
    """Inside the document's transaction: the job is done, with its report, exactly when
    the document is stored."""
    conn.execute(
        "UPDATE ingest_jobs SET state = 'done', result = %s, finished_at = now(), "
        "lease_until = NULL WHERE id = %s",
        (json.dumps(result, default=str), job.id),
    )


def finish(conn: psycopg.Connection, job: Job, state: str, result: dict[str, Any]) -> bool:
    """Finish a job that stored no document (failed, unchanged, a duplicate) with its
    report; False if another take holds the job now, whose report will count instead."""
    row = conn.execute(
        """
        UPDATE ingest_jobs
           SET state = %s, result = %s, finished_at = now(), lease_until = NULL
         WHERE id = %s AND token = %s AND state = 'running'
        RETURNING id
        """,
        (state, json.dumps(result, default=str), job.id, job.token),
    ).fetchone()
    conn.commit()
    return row is not None


def release(conn: psycopg.Connection, job: Job) -> None:
    """Give a job back untouched (the worker was stopped): queued for the next worker, and
    this take not counted against the job's attempts."""
    conn.execute(
        "UPDATE ingest_jobs SET state = 'queued', token = NULL, lease_until = NULL, "
        "attempts = greatest(attempts - 1, 0) WHERE id = %s AND token = %s AND state = 'running'",
        (job.id, job.token),
    )
    conn.commit()


def open_jobs(conn: psycopg.Connection) -> int:
    """Jobs queued or running anywhere: a worker keeps polling while a running one may yet
    be left by a dead worker."""
    count = conn.execute(
        "SELECT count(*) FROM ingest_jobs WHERE state IN ('queued', 'running')"
    ).fetchone()[0]
    conn.commit()
    return int(count)


def finished(conn: psycopg.Connection, ids: list[int]) -> list[tuple[int, str, dict | None]]:
    """(id, state, result) of those of ``ids`` that are done or failed, with a report."""
    rows = conn.execute(
        "SELECT id, state, result FROM ingest_jobs WHERE id = ANY(%s) "
        "AND state IN ('done', 'failed') AND result IS NOT NULL",
        (ids,),
    ).fetchall()
    conn.commit()
    return [(r[0], r[1], r[2]) for r in rows]
