"""Segment, region and product members read from printed tables (finrag.facts.member_tables).

    flock /tmp/finrag-cpu.lock python eval/bench/member_tables.py [--cache DIR] [--show] PDF...

Each filing goes through ingest's own preparation (parse, cached in ``--cache`` by the
file's hash as ingest caches it; metadata, chunks, facts; no embedding, no database).
Counts, per filing and in all: member facts (cells with a segment/geography/product
dimension), how many of them the total check confirmed (``member_total``: the members
add up to the table's total row in every column), members by axis, and the blocks
(one measure by members in one table). ``--show`` prints each block: page, axis,
measure, its members and the total they add up to.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections import Counter
from pathlib import Path

from finrag.config import load_settings
from finrag.facts.member_tables import AXES, MEMBER_TOTAL
from finrag.ingest.prepare import PrepareJob, prepare


def prepared_facts(path: Path, cache: Path):
    settings = load_settings(ingest={"workers": 0})
    job = PrepareJob(
        path=path,
        kind="html" if path.suffix.lower() in (".htm", ".html") else "pdf",
        root=path.parent,
        sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        parser=settings.ingest.parser,
        cache_dir=cache,
        embed_settings=settings.embed,
        max_tokens=settings.ingest.max_tokens,
        min_tokens=settings.ingest.min_tokens,
        overlap_tokens=settings.ingest.overlap_tokens,
    )
    done = prepare(job)
    if done.error:
        raise SystemExit(f"{path.name}: {done.error}")
    return done.facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--cache", type=Path, default=None, help="parse cache (a home's cache)")
    parser.add_argument("--show", action="store_true", help="print every block")
    args = parser.parse_args(argv)
    cache = args.cache or load_settings().cache_dir
    totals: Counter[str] = Counter()
    for path in args.paths:
        facts = prepared_facts(path, cache)
        members = [f for f in facts if any(axis in AXES for axis, _ in f.dimensions)]
        confirmed = [f for f in members if MEMBER_TOTAL in f.checks]
        axes = Counter(next(a for a, _ in f.dimensions if a in AXES) for f in members)
        blocks: dict[tuple, list] = {}
        for f in members:
            dims = tuple(p for p in f.dimensions if p[0] in AXES)
            key = (f.page, f.chunk_ordinal // 1000 if f.chunk_ordinal else 0, f.concept, dims[:-1])
            blocks.setdefault(key, []).append(f)
        totals.update({"filings": 1, "members": len(members), "confirmed": len(confirmed), **axes})
        totals["with_members"] += bool(members)
        print(
            f"{path.name:42} member facts {len(members):4}  confirmed {len(confirmed):4}  "
            + "  ".join(f"{a} {axes[a]}" for a in AXES)
        )
        if args.show:
            for (page, _, concept, outer), cells in blocks.items():
                names = list(dict.fromkeys(f.dimensions[len(outer)][1] for f in cells))
                axis = cells[0].dimensions[len(outer)][0]
                where = f" within {outer[0][1]}" if outer else ""
                print(f"    p{page} {axis}{where} {concept}: {', '.join(names)}")
    print(
        f"\n{totals['filings']} filings, {totals['with_members']} with members: "
        f"{totals['members']} member facts, {totals['confirmed']} confirmed by their total "
        f"({', '.join(f'{a} {totals[a]}' for a in AXES)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
