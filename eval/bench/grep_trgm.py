"""Would a trigram index make `finrag grep` faster? The phrases of grep_counts.py, as grep
scans them (Postgres regular expressions), over a scratch table of N passages, without and
with a pg_trgm GIN index on the text; the index's build time and size beside.

    FINRAG_HOME=/tmp/bench-home flock /tmp/finrag-cpu.lock python eval/bench/grep_trgm.py \
        --pdf FILE.pdf [--pdf ...] [--sizes 20000,200000,1000000]

The passages are the PDFs' paragraphs (PyMuPDF's text blocks, as long as chunks), repeated
with a number appended until N; the table lives in a scratch schema of the store at
FINRAG_HOME (use a home of your own: it is created there and dropped at the end).
Times are the median of 3 runs of ``SELECT count(*) ... WHERE content ~* pattern``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from finrag.config import load_settings
from finrag.db import open_store
from finrag.retrieve.grep import GrepQuery

PHRASES = ["going concern", "material weakness*", "restructuring*", "share repurchase*"]


def passages(pdfs: list[Path]) -> list[str]:
    import pymupdf

    out = []
    for pdf in pdfs:
        with pymupdf.open(pdf) as doc:
            for page in doc:
                out += [b[4].strip() for b in page.get_text("blocks") if len(b[4].strip()) > 80]
    return out


def timed(conn, sql: str, params=()) -> tuple[float, object]:
    runs, result = [], None
    for _ in range(3):
        started = time.perf_counter()
        result = conn.execute(sql, params).fetchone()[0]
        runs.append((time.perf_counter() - started) * 1000)
    return statistics.median(runs), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf", type=Path, action="append", required=True)
    parser.add_argument("--sizes", default="20000,200000")
    args = parser.parse_args()
    seed = passages(args.pdf)
    patterns = {p: GrepQuery("phrase", (p,)).patterns[0] for p in PHRASES}
    report = {"seed_passages": len(seed), "sizes": []}
    with open_store(load_settings()) as store, store.connect(autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        conn.execute("DROP SCHEMA IF EXISTS grep_bench CASCADE")
        conn.execute("CREATE SCHEMA grep_bench")
        try:
            for size in (int(s) for s in args.sizes.split(",")):
                conn.execute("DROP TABLE IF EXISTS grep_bench.t")
                conn.execute("CREATE TABLE grep_bench.t (id bigint, content text)")
                conn.execute(
                    "INSERT INTO grep_bench.t SELECT n, (%s::text[])[1 + n %% %s] || ' ' || n "
                    "FROM generate_series(0, %s - 1) n",
                    (seed, len(seed), size),
                )
                conn.execute("VACUUM ANALYZE grep_bench.t")  # hint bits set: scans read alike
                row = {"rows": size, "seq_ms": {}, "trgm_ms": {}, "hits": {}}
                for phrase, pattern in patterns.items():
                    sql = "SELECT count(*) FROM grep_bench.t WHERE content ~* %s"
                    row["seq_ms"][phrase], row["hits"][phrase] = timed(conn, sql, (pattern,))
                started = time.perf_counter()
                conn.execute("CREATE INDEX t_trgm ON grep_bench.t USING gin (content gin_trgm_ops)")
                row["index_build_s"] = round(time.perf_counter() - started, 1)
                row["table_mb"] = conn.execute(
                    "SELECT pg_table_size('grep_bench.t') / 1e6"
                ).fetchone()[0]
                row["index_mb"] = conn.execute(
                    "SELECT pg_relation_size('grep_bench.t_trgm') / 1e6"
                ).fetchone()[0]
                conn.execute("ANALYZE grep_bench.t")
                for phrase, pattern in patterns.items():
                    sql = "SELECT count(*) FROM grep_bench.t WHERE content ~* %s"
                    ms, hits = timed(conn, sql, (pattern,))
                    assert hits == row["hits"][phrase], (phrase, hits, row["hits"][phrase])
                    plan = conn.execute("EXPLAIN " + sql, (pattern,)).fetchall()
                    used = any("t_trgm" in line[0] for line in plan)
                    row["trgm_ms"][phrase] = (round(ms, 1), "index" if used else "seq scan")
                row["seq_ms"] = {k: round(v, 1) for k, v in row["seq_ms"].items()}
                row["table_mb"] = round(float(row["table_mb"]), 1)
                row["index_mb"] = round(float(row["index_mb"]), 1)
                report["sizes"].append(row)
        finally:
            conn.execute("DROP SCHEMA IF EXISTS grep_bench CASCADE")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
