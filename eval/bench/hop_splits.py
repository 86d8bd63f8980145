"""Which questions does `ask` split into dependent hops? Every question of the given
question sets through the hop planner's rules (finrag.answer.hop_plan), against a store's
companies: how many the rules split, and how many have the shape that would ask the model
for a plan. A single-hop set should split none: each split is a question answered
differently from before (issue 30, item 2).

    python eval/bench/hop_splits.py [--home DIR] FILE.jsonl...

Each file holds one JSON object a line with "question" (and "id"). Prints JSON: per file
the counts and the ids split (never a question's words: some sets are licensed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--home", help="FINRAG_HOME of the store whose companies are read")
    args = parser.parse_args()
    if args.home:
        os.environ["FINRAG_HOME"] = args.home

    from finrag.answer.hop_plan import looks_dependent, plan_hops
    from finrag.config import load_settings
    from finrag.db import open_store

    report = {}
    with open_store(load_settings()) as store, store.connect() as conn:
        for path in args.files:
            rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            split, shaped = [], []
            for i, row in enumerate(rows):
                ident = row.get("id") or row.get("financebench_id") or f"line {i + 1}"
                plan = plan_hops(conn, row["question"])
                if plan is not None:
                    split.append({"id": ident, "hops": len(plan.hops)})
                elif looks_dependent(row["question"]):
                    shaped.append(ident)
            report[path.name] = {
                "questions": len(rows),
                "split_by_rules": len(split),
                "shape_for_the_model": len(shaped),
                "split": split,
                "shaped": shaped,
            }
        conn.rollback()
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
