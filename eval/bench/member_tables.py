"""Segment, region and product members read from printed tables (finrag.facts.member_tables).

    flock /tmp/finrag-cpu.lock python eval/bench/member_tables.py [--cache DIR] [--show] PDF...

Each filing goes through ingest's own preparation (parse, cached in ``--cache`` by the
file's hash as ingest caches it; metadata, chunks, facts; no embedding, no database).
Counts, per filing and in all: member facts (cells with a segment/geography/product
dimension), how many of them the total check confirmed (``member_total``: the members
add up to the table's total row in every column), members by axis, and the blocks
(one measure by members in one table), and how many total rows of breakdown tables the
named rows above do not add up to (turned away). ``--show`` prints each block: page, axis,
measure, its members and the total they add up to.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from finrag.config import load_settings
from finrag.facts import member_tables as mt
from finrag.facts.member_tables import AXES, MEMBER_TOTAL
from finrag.ingest.prepare import prepare_file


def candidates(chunks, facts) -> tuple[int, int]:
    """Total rows of breakdown tables (rows-as-members layout) that close a run of two or
    more named rows, and how many of them those rows add up to: what the total check
    kept and what it turned away."""
    seen = kept = 0
    for rows, words in mt._tables(chunks, facts):
        run: list = []
        for row in rows:
            totalish = mt._TOTAL.match(row.label) or mt._measure_of_label(row.label)
            if totalish:
                names = [mt._clean(r.label) for r in run]
                cue = mt._axes(row.label, list(row.parents), words, names)
                if len(run) >= 2 and cue and not any(mt._measure_of_label(n) for n in names):
                    seen += 1
                    kept += bool(mt._run_summing(run, row))
                run = []
            else:
                run.append(row)
    return seen, kept


def prepared(path: Path, cache: Path):
    done = prepare_file(path, cache)
    if done.error:
        raise SystemExit(f"{path.name}: {done.error}")
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--cache", type=Path, default=None, help="parse cache (a home's cache)")
    parser.add_argument("--show", action="store_true", help="print every block")
    args = parser.parse_args(argv)
    cache = args.cache or load_settings().cache_dir
    totals: Counter[str] = Counter()
    for path in args.paths:
        done = prepared(path, cache)
        facts = done.facts
        seen, kept = candidates(done.chunks, facts)
        totals.update({"candidate_totals": seen, "totals_adding_up": kept})
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
            + f"  | total rows in breakdown tables {seen}, adding up {kept}"
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
        f"({', '.join(f'{a} {totals[a]}' for a in AXES)}); total rows closing two or more "
        f"named rows in breakdown tables: {totals['candidate_totals']}, of which the rows "
        f"above add up to {totals['totals_adding_up']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
