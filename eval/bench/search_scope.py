"""Filtered hybrid latency by the size of the filter's scope, on a store kept by search.py.

    python eval/bench/search_scope.py --home DIR [--queries 100] [--warmup 20] [--out FILE]

search.py's corpus is 20 companies x 10 years, so a company + year filter covers a
200th of the store (15,000 chunks at 3M), growing with it. A real store grows by
companies and filings instead: a company's year is a few filings (~500 chunks each)
whatever the store's size. Each step of search.py adds one document per company and year
("part N", its rows contiguous like a real filing's), so a kept store holds scopes of
several sizes: at 3M rows, parts of ~500, ~4,500 and ~10,000 chunks. This times finrag's
hybrid search (k = 10, default settings, the question analyzed as the product does) with
the scope set to the question's company and year's smallest part, each part, all of
them, and four filing-sized parts of the company (its year's and three other years'
smallest, as a year of a 10-K and three 10-Qs would be), reporting p50/p95 and the mean
rows in scope, so the latency a question pays can be read against the rows its filter
holds rather than against the store's size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # search.py's corpus and percentiles
import search as bench

Parts = dict[tuple[str, int], list[tuple[int, int]]]  # (company, year) -> (rows, doc id)


def scope(parts: Parts, company: str, year: int, which: int | str | None):
    """The (rows, document id) pairs a filter holds: the company and year's part ranked
    ``which`` by size, all of them (None), or ("company") four filing-sized parts of the
    company, its year's smallest and three other years'."""
    if which == "company":
        years = sorted({y for c, y in parts if c == company}, key=lambda y: y != year)
        return [min(parts[company, y]) for y in years[:4]]
    ranked = sorted(parts[company, year])
    return ranked if which is None else [ranked[which]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, required=True, help="a store kept by search.py")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    os.environ["FINRAG_HOME"] = str(args.home)

    from finrag.config import load_settings
    from finrag.db import open_store
    from finrag.embed import get_embedder
    from finrag.retrieve.hybrid import hybrid_search, text_query
    from finrag.retrieve.query import analyze_question

    settings = load_settings()
    store = open_store(settings)
    embedder = get_embedder(settings.embed, settings.models_dir)
    maker = bench.TextMaker(seed=23)  # questions search.py did not time
    questions = [maker.question() for _ in range(args.queries + args.warmup)]
    qvecs = embedder.embed([q for q, *_ in questions])
    texts = [text_query(analyze_question(q).search_text) for q, *_ in questions]
    cfg = settings.retrieve
    report: dict = {
        "settings": {
            "text_match_budget": cfg.text_match_budget,
            "text_first_stage": cfg.text_first_stage,
            "text_bounded_rows": cfg.text_bounded_rows,
            "text_bounded_terms": cfg.text_bounded_terms,
        },
        "scopes": {},
    }
    try:
        with store.connect() as conn:
            report["rows"] = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            parts: Parts = {}
            for doc_id, company, year, rows in conn.execute(
                "SELECT d.id, c.name, d.fiscal_year, count(*) FROM documents d "
                "JOIN companies c ON c.id = d.company_id JOIN chunks ch ON ch.document_id = d.id "
                "GROUP BY d.id, c.name, d.fiscal_year"
            ):
                parts.setdefault((company, year), []).append((rows, doc_id))
            conn.rollback()
            depth = min(len(p) for p in parts.values())
            scopes: dict = {f"part {i + 1} by size": i for i in range(depth)}
            scopes |= {"all parts": None, "4 smallest parts of the company": "company"}
            for name, which in scopes.items():
                samples, in_scope = [], []
                for i, (_, company, year, _) in enumerate(questions):
                    chosen = scope(parts, company, year, which)
                    t0 = time.perf_counter()
                    hybrid_search(conn, texts[i], qvecs[i], [d for _, d in chosen], cfg, k=10)
                    elapsed = (time.perf_counter() - t0) * 1000
                    conn.rollback()
                    if i >= args.warmup:
                        samples.append(elapsed)
                        in_scope.append(sum(r for r, _ in chosen))
                entry = bench.percentiles(samples) | {
                    "mean_rows_in_scope": round(statistics.mean(in_scope))
                }
                report["scopes"][name] = entry
                print(json.dumps({name: entry}), file=sys.stderr, flush=True)
    finally:
        store.close()
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
