"""Dependent hops answered end to end: each question of a set through `ask` (the
library call behind the command), scored on what the plan picked and what the last hop
answered (issue 30, item 2).

    python eval/bench/hops.py [--home DIR] [--llm] [eval/datasets/hops_edgar.jsonl]

Each line: "question", the "entity" hop 1 must pick (a segment, a company), and the
"value" the last hop's answer must print (as the filing prints it). Without --llm the
model is off (`ask --no-llm`): the facts route answers or the hop is refused. Prints
JSON: per question the plan, the entity, the exit code, whether it scored; then totals.
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
    parser.add_argument(
        "file", nargs="?", type=Path, default=REPO / "eval/datasets/hops_edgar.jsonl"
    )
    parser.add_argument("--home", help="FINRAG_HOME of the store holding the filings")
    parser.add_argument("--llm", action="store_true", help="with the configured model on")
    args = parser.parse_args()
    if args.home:
        os.environ["FINRAG_HOME"] = args.home

    from finrag.cli.ask_cmd import ask_outcome
    from finrag.config import load_settings
    from finrag.db import open_store

    settings = load_settings()
    rows = [json.loads(line) for line in args.file.read_text().splitlines() if line.strip()]
    results = []
    for row in rows:
        outcome = ask_outcome(
            settings, row["question"], opened=open_store, no_llm=not args.llm, no_cache=True
        )
        plan = outcome.report.data.get("plan") or []
        picked = (plan[0].get("passes_on") or {}).get("value") if plan else None
        last = plan[-1] if plan else {}
        value_ok = last.get("status") == "answered" and row["value"] in (last.get("answer") or "")
        results.append(
            {
                "id": row["id"],
                "hops": len(plan),
                "entity": picked,
                "entity_ok": picked == row["entity"],
                "value_ok": value_ok,
                "statuses": [p["status"] for p in plan],
                "exit": outcome.report.code,
            }
        )
    total = len(results)
    summary = {
        "questions": total,
        "planned": sum(r["hops"] >= 2 for r in results),
        "entity_right": sum(r["entity_ok"] for r in results),
        "last_hop_right": sum(r["value_ok"] for r in results),
        "model": bool(args.llm),
    }
    print(json.dumps({"results": results, "summary": summary}, indent=1))


if __name__ == "__main__":
    main()
