"""Ingest with worker processes taking jobs from Postgres (`finrag ingest --workers N`), on the
embedded server and on a separate server reached by URL, against the default ingest.

    python eval/bench/ingest_workers.py --folder ../shared/edgar-html --limit 3 [--workers 1,2]

In one process, each run into an empty store: (1) the default `ingest` (one process
embedding beside a parser process) on the embedded server: the baseline; (2) the queue
with N workers on the embedded server, for each N; (3) the same on a second PostgreSQL
server started here from the embedded binaries (its own data directory, TCP on
127.0.0.1, its own pgvector), reached by `database_url` as any external server would be.
Prints pages/s of each and its ratio to the baseline, and what the store holds per chunk
(bytes of every finrag table and index, of the HNSW index alone), for the growth model in
eval/RESULTS.md. The embedder's one-time ONNX export happens before the clocks start.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_FOLDER = REPO.parent / "shared" / "edgar-html"
SUFFIXES = (".pdf", ".html", ".htm")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--folder", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--limit", type=int, default=0, help="first N files only")
    parser.add_argument("--workers", default="1,2", help="worker counts to run")
    parser.add_argument("--out", type=Path, help="also write the JSON report here")
    args = parser.parse_args()
    folder = args.folder.resolve()
    if not folder.is_dir():
        sys.exit(f"no filings at {folder}: this benchmark reads ../shared")
    files = sorted(f for f in folder.iterdir() if f.suffix.lower() in SUFFIXES)
    files = files[: args.limit or None]
    counts = [int(n) for n in args.workers.split(",")]

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        filings = root / "filings"
        filings.mkdir()
        for f in files:
            (filings / f.name).symlink_to(f)
        models = root / "models"
        _warm_up(root, models)
        runs = [_run(root, "default", "embedded", 0, filings, models)]
        for n in counts:
            runs.append(_run(root, f"workers {n}", "embedded", n, filings, models))
        with _external_server(root / "external") as admin_url:
            for n in counts:
                url = _fresh_database(admin_url, f"run_w{n}")
                runs.append(_run(root, f"workers {n}", "external", n, filings, models, url))
    base = runs[0]["pages_per_s"]
    for run in runs:
        run["ratio_vs_default"] = round(run["pages_per_s"] / base, 3)
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "folder": str(folder),
        "files": len(files),
        "runs": runs,
        "measured_at": time.strftime("%Y-%m-%d %H:%M"),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


def _warm_up(root: Path, models: Path) -> None:
    """Export the embedder to ONNX once, into the models folder every run shares."""
    home = root / "warm-up"
    home.mkdir()
    models.mkdir()
    (home / "models").symlink_to(models)
    os.environ["FINRAG_HOME"] = str(home)
    from finrag.config import load_settings
    from finrag.embed import get_embedder

    settings = load_settings()
    get_embedder(settings.embed, settings.models_dir).embed(["warm up"])


def _run(
    root: Path,
    name: str,
    server: str,
    workers: int,
    filings: Path,
    models: Path,
    url: str | None = None,
) -> dict:
    from pydantic import SecretStr

    from finrag.config import load_settings
    from finrag.db import open_store
    from finrag.ingest.pipeline import ingest
    from finrag.ingest.workers import ingest_with_workers

    home = root / f"home-{server}-{workers}"
    home.mkdir()
    (home / "models").symlink_to(models)
    os.environ["FINRAG_HOME"] = str(home)
    settings = load_settings(**({"database_url": SecretStr(url)} if url else {}))
    store = open_store(settings)  # the embedded server's start is outside the clock
    try:
        t0 = time.perf_counter()
        if workers:
            report = ingest_with_workers([filings], settings, store, workers=workers)
        else:
            report = ingest([filings], settings, store)
        elapsed = time.perf_counter() - t0
        sizes = _sizes(store)
    finally:
        store.close()
    print(f"{name} on {server}: {report.pages} pages in {elapsed:.1f} s", file=sys.stderr)
    return {
        "run": name,
        "server": server if not url else f"{server} (TCP 127.0.0.1, database_url)",
        "workers": workers,
        "pages": report.pages,
        "chunks": report.chunks,
        "failed": report.failed,
        "seconds": round(elapsed, 1),
        "pages_per_s": round(report.pages / elapsed, 2),
        "chunks_per_s": round(report.chunks / elapsed, 2),
        "stage_s": {k: round(v, 1) for k, v in report.stage_s.items()},
        **sizes,
    }


def _sizes(store) -> dict:
    """Bytes the store holds per chunk: every finrag table with its indexes and TOAST,
    and the HNSW index alone."""
    with store.connect() as conn:
        chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        total = conn.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'finrag' AND c.relkind = 'r'"
        ).fetchone()[0]
        chunks_table = conn.execute("SELECT pg_total_relation_size('chunks')").fetchone()[0]
        hnsw = conn.execute("SELECT pg_relation_size('chunks_embedding_hnsw_idx')").fetchone()[0]
    return {
        "store_bytes_per_chunk": round(total / max(chunks, 1)),
        "chunks_table_bytes_per_chunk": round(chunks_table / max(chunks, 1)),
        "hnsw_bytes_per_chunk": round(hnsw / max(chunks, 1)),
    }


@contextmanager
def _external_server(data: Path) -> Iterator[str]:
    """A second PostgreSQL from the embedded binaries: its own data directory, TCP on a
    free local port, trust for local TCP (a throwaway cluster), pgvector from the bundle."""
    from finrag.db.embedded import postgres_bin_path
    from finrag.db.server_layout import SERVER_USER_WHEN_ROOT

    bin_dir = postgres_bin_path()
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        as_user = ["runuser", "-u", SERVER_USER_WHEN_ROOT, "--"]
        entry = pwd.getpwnam(SERVER_USER_WHEN_ROOT)
        data.mkdir(mode=0o700)
        os.chown(data, entry.pw_uid, entry.pw_gid)
        data.parent.chmod(0o755)
    port = _free_port()
    initdb = [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]
    subprocess.run(
        [*as_user, *initdb, "--encoding=UTF8", "--locale=C.UTF-8"],
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -c listen_addresses=127.0.0.1 -k {data}"
    pg_ctl = [str(bin_dir / "pg_ctl"), "-D", str(data)]
    subprocess.run(
        [*as_user, *pg_ctl, "-o", options, "-w", "-l", str(data / "log"), "start"],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*as_user, *pg_ctl, "-m", "fast", "stop"],
            capture_output=True,
        )
        shutil.rmtree(data, ignore_errors=True)


def _fresh_database(admin_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + f"/{name}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    main()
