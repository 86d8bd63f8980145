"""The iXBRL-gold set asked as `finrag ask --no-llm` asks it, each answer sorted by
whether it is right and whether finrag called it verified.

    FINRAG_HOME=... python eval/bench/gold_verified.py eval/datasets/ixbrl_gold.jsonl

The store in FINRAG_HOME must hold the filings (`finrag ingest ../shared/edgar-html`).
Right = the gold number is stated (the same numeric check as `finrag eval answers`).
Prints one table: right and verified, right but not verified, wrong and verified (the
number that must stay 0: a verified figure that is wrong), wrong and not verified,
missing (no answer); then every answer that is not right and verified, with why.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from finrag.answer.pipeline import Asker
from finrag.answer.status import VERIFIED
from finrag.config import load_settings
from finrag.db import open_store
from finrag.evaluate.correctness import score_correctness
from finrag.evaluate.dataset import load_dataset

KINDS = ("right, verified", "right, unverified", "wrong and verified", "wrong, unverified")


def classify(gold: str, answer) -> str:
    if answer.refused or not answer.answer.strip():
        return "missing"
    computed = [c.result for c in answer.calculations if c.result is not None]
    right = score_correctness(gold, answer.answer, computed).numeric
    verified = answer.status == VERIFIED
    if right:
        return KINDS[0] if verified else KINDS[1]
    return KINDS[2] if verified else KINDS[3]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--json", type=Path, help="also write every answer's class here")
    args = parser.parse_args()
    questions = load_dataset(args.dataset)
    settings = load_settings(answer={"use_llm": False})
    counts: Counter[str] = Counter()
    rows = []
    with open_store(settings) as store:
        asker = Asker(store, settings)
        for q in questions:
            answer = asker.ask(q.question)
            kind = classify(q.answer, answer)
            counts[kind] += 1
            rows.append(
                {
                    "id": q.id,
                    "kind": kind,
                    "gold": q.answer,
                    "answer": answer.answer,
                    "status": answer.status,
                    "route": answer.route,
                    "warnings": answer.warnings,
                }
            )
    total = len(questions)
    print(f"{total} questions, ask --no-llm")
    print("| | questions | share |\n|---|---|---|")
    for kind in (*KINDS, "missing"):
        print(f"| {kind} | {counts[kind]} | {counts[kind] / total:.3f} |")
    right = counts[KINDS[0]] + counts[KINDS[1]]
    print(f"| right, all | {right} | {right / total:.3f} |")
    for row in rows:
        if row["kind"] != KINDS[0]:
            why = "; ".join(row["warnings"])[:300]
            print(f"- {row['id']} [{row['kind']}] gold {row['gold']}: {row['answer'][:160]} {why}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
