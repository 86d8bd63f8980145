"""Calibrate answer.min_relevance: the best chunk's cosine similarity for questions the
store answers, against questions it cannot (off-topic), on an ingested store.

    FINRAG_HOME=... python eval/bench/refusal_threshold.py DATASET [--offtopic FILE]

DATASET is an answerable question set (finrag's JSONL or FinanceBench's); the default
off-topic set is eval/datasets/offtopic.jsonl (our own questions about anything but
filings). Retrieval is the `ask` pipeline's (hybrid + filters, k = answer.k). Prints
both distributions and, per candidate threshold, how many answerable questions would
be refused and how many off-topic ones would reach the model.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def best_scores(retriever, questions: list[str], k: int) -> list[float]:
    scores = []
    for q in questions:
        found = retriever.retrieve(q, k=k)
        scores.append(max((h.dense_score or -1.0 for h in found.hits), default=-1.0))
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--offtopic", type=Path, default=REPO / "eval/datasets/offtopic.jsonl")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    from finrag.config import load_settings
    from finrag.db import open_store
    from finrag.evaluate.dataset import load_dataset
    from finrag.retrieve import Retriever

    settings = load_settings()
    store = open_store(settings)
    try:
        retriever = Retriever(store, settings)
        k = settings.answer.k
        answerable = best_scores(retriever, [q.question for q in load_dataset(args.dataset)], k)
        offtopic_questions = [
            json.loads(line)["question"]
            for line in args.offtopic.read_text().splitlines()
            if line.strip()
        ]
        offtopic = best_scores(retriever, offtopic_questions, k)
    finally:
        store.close()
    rows = []
    for t in [x / 100 for x in range(10, 55, 5)]:
        rows.append(
            {
                "threshold": t,
                "answerable_refused": sum(s < t for s in answerable),
                "offtopic_passed": sum(s >= t for s in offtopic),
            }
        )
    report = {
        "answerable": {
            "n": len(answerable),
            "min": round(min(answerable), 3),
            "p10": round(statistics.quantiles(answerable, n=10)[0], 3),
            "median": round(statistics.median(answerable), 3),
        },
        "offtopic": {
            "n": len(offtopic),
            "max": round(max(offtopic), 3),
            "p90": round(statistics.quantiles(offtopic, n=10)[-1], 3),
            "median": round(statistics.median(offtopic), 3),
        },
        "thresholds": rows,
        "current": settings.answer.min_relevance,
    }
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
