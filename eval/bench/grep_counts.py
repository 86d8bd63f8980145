"""Phrase screening over a store: hits by company for a few phrases, and how long each
scan took (`finrag grep`, issue 31 item 4). Reads the store only.

    FINRAG_HOME=/tmp/dev-home flock /tmp/finrag-cpu.lock python eval/bench/grep_counts.py \
        [--repeat 3] [--json]

Each query runs ``--repeat`` times on one connection; the figure is the median of
``GrepResult.elapsed_ms`` (the Postgres scan and the scope count; the Python that drops
repeated text and cuts sentences is in the wall time beside it). Prints a Markdown table:
one row per company, one column per query, "hits (filings)".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

from finrag.config import load_settings
from finrag.db import open_store
from finrag.retrieve.grep import GrepQuery, grep

QUERIES = [
    GrepQuery("phrase", ("going concern",)),
    GrepQuery("phrase", ("material weakness*",)),
    GrepQuery("phrase", ("restructuring*",)),
    GrepQuery("near", ("covenant*", "waiver*"), within=10),
    GrepQuery("phrase", ("share repurchase*",)),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="JSON instead of Markdown")
    args = parser.parse_args()
    settings = load_settings()
    runs = []
    with open_store(settings) as store, store.connect() as conn:
        for query in QUERIES:
            scans, walls = [], []
            for _ in range(args.repeat):
                started = time.perf_counter()
                result = grep(conn, query)
                walls.append((time.perf_counter() - started) * 1000)
                scans.append(result.elapsed_ms)
            by_company: dict[str, list[int]] = {}
            for count in result.counts:
                cell = by_company.setdefault(count.company or "(unknown)", [0, 0])
                cell[0] += count.hits
                cell[1] += count.filings
            runs.append(
                {
                    "query": query.describe(),
                    "hits": len(result.hits),
                    "filings": len({h.document_id for h in result.hits}),
                    "documents_scanned": result.documents_scanned,
                    "chunks_scanned": result.chunks_scanned,
                    "scan_ms_median": round(statistics.median(scans), 1),
                    "wall_ms_median": round(statistics.median(walls), 1),
                    "by_company": by_company,
                }
            )
        companies = [r[0] for r in conn.execute("SELECT name FROM companies ORDER BY name")]
    machine = f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores"
    if args.json:
        print(json.dumps({"machine": machine, "runs": runs}, indent=2))
        return
    print(
        f"machine: {machine}; store: {runs[0]['documents_scanned']} filings, "
        f"{runs[0]['chunks_scanned']:,} chunks\n"
    )
    print("| company | " + " | ".join(r["query"] for r in runs) + " |")
    print("|---|" + "---|" * len(runs))
    for name in companies:
        cells = []
        for r in runs:
            hits, filings = r["by_company"].get(name, [0, 0])
            cells.append(f"{hits} ({filings})" if hits else "0")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("| **all** | " + " | ".join(f"**{r['hits']}** ({r['filings']})" for r in runs) + " |")
    print("| scan ms (median) | " + " | ".join(str(r["scan_ms_median"]) for r in runs) + " |")
    print("| wall ms (median) | " + " | ".join(str(r["wall_ms_median"]) for r in runs) + " |")


if __name__ == "__main__":
    main()
