"""Render the JSON lines of `finrag chat --input FILE --json` as a Markdown transcript with
each turn's node path and per-node timings.

    finrag chat --input eval/datasets/chat_demo.txt --json --session demo > turns.jsonl
    python eval/render_chat.py turns.jsonl > transcript.md
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def render(lines: list[dict]) -> str:
    out: list[str] = []
    for row in lines:
        if "command" in row:
            result = json.dumps(row["result"], default=str)[:300]
            out.append(f"**{row['command']}** → `{result}`\n")
            continue
        trace = row.get("trace") or {}
        out.append(f"### Turn {row['turn']}: {row['question']}\n")
        if row.get("standalone") and row["standalone"] != row["question"]:
            out.append(f"*standalone:* {row['standalone']}  ")
        out.append(f"*intent:* `{row['intent']}` · *filters:* `{json.dumps(row['filters'])}`")
        if row.get("sub_questions"):
            out.append(f"  \n*sub-questions:* {' | '.join(row['sub_questions'])}")
        out.append("\n")
        out.append("> " + row["answer"].strip().replace("\n", "\n> ") + "\n")
        for c in row.get("citations", []):
            pages = "-".join(str(p) for p in sorted({p for p in c.get("pages") or [] if p}))
            out.append(f"- [{c['n']}] {c['document']} p.{pages}: “{c.get('quote', '')[:120]}”")
        for calc in row.get("calculations", []):
            out.append(f"- calc: `{calc.get('expression')}` = {calc.get('result')}")
        if row.get("flags"):
            out.append(f"- flags: {'; '.join(row['flags'])}")
        if row.get("assumptions"):
            out.append(f"- assumed: {'; '.join(row['assumptions'])}")
        # status words (issue 16): "verified" only for numbers traced to stored facts
        status = row.get("status") or ("verified" if row.get("verified") else "not verified")
        out.append(f"- status: {status.replace('_', ' ')}\n")
        out.append("| node | ms | tokens in/out | output |\n|---|---|---|---|")
        for step in trace.get("steps", []):
            tokens = step.get("tokens") or {}
            text = step["out"].replace("|", "/").replace("\n", " ")[:110]
            tok = f"{tokens.get('prompt', 0)}/{tokens.get('completion', 0)}"
            out.append(f"| {step['node']} | {step['ms']:,.0f} | {tok} | {text} |")
        totals = trace.get("tokens", {})
        out.append(
            f"| **total** | **{trace.get('total_ms', 0):,.0f}** | "
            f"{totals.get('prompt', 0)}/{totals.get('completion', 0)} | |\n"
        )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("turns", type=Path, help="JSON lines from finrag chat --json")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.turns.read_text().splitlines() if line.strip()]
    sys.stdout.write(render(rows))


if __name__ == "__main__":
    main()
