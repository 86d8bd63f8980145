"""Calibrate answer.cache_similarity: rewordings of one question must hit, other questions
about the same company and period must not.

    FINRAG_HOME=<a store holding the sample 10-Q> python eval/bench/cache_threshold.py [--json OUT]

Each group below holds rewordings of one question about Best Buy's Q2 FY2024 10-Q (the
bundled sample). For every pair of questions the script computes what the cache compares:
whether their keys are equal (resolved filters, the figures asked for, settings:
finrag.answer.cache.cache_key) and the cosine similarity of their embeddings (the store's
embedder). A pair *should hit* when both are in one group, and *must miss* otherwise. It
prints, for thresholds from 0.70 to 0.99, the rewordings that would hit and the other
questions that would (wrongly) hit, and the highest threshold with no wrong hit.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from finrag.answer.cache import cache_key
from finrag.answer.pipeline import Asker
from finrag.config import load_settings
from finrag.db import open_store

GROUPS = [
    [  # a figure: the facts route's key carries it
        "What was Best Buy's revenue in Q2 FY2024?",
        "How much revenue did Best Buy report in the second quarter of fiscal 2024?",
        "Best Buy revenue for Q2 of fiscal year 2024?",
        "What were Best Buy's total revenues in fiscal Q2 2024?",
    ],
    [
        "What were Best Buy's net earnings in Q2 FY2024?",
        "How much did Best Buy earn (net earnings) in the second quarter of fiscal 2024?",
        "What was Best Buy's net income for Q2 FY2024?",
    ],
    [
        "What was Best Buy's gross margin in Q2 FY2024?",
        "What was Best Buy's gross profit margin in the second quarter of fiscal 2024?",
    ],
    [  # text questions: only the similarity tells them apart
        "Why did Best Buy's revenue decline in Q2 FY2024?",
        "What drove the decrease in Best Buy's revenue in the second quarter of fiscal 2024?",
        "What were the reasons for Best Buy's lower revenue in Q2 FY2024?",
    ],
    [
        "What did Best Buy say about its effective tax rate in Q2 FY2024?",
        "How did Best Buy explain the change in its effective tax rate in Q2 FY2024?",
    ],
    [
        "What restructuring charges did Best Buy record in Q2 FY2024?",
        "What were Best Buy's restructuring charges in the second quarter of fiscal 2024?",
    ],
    [
        "How many stores did Best Buy close in Q2 FY2024?",
        "How many Best Buy stores were closed during the second quarter of fiscal 2024?",
    ],
    [
        "What are Best Buy's main risk factors in the Q2 FY2024 10-Q?",
        "Which risks does Best Buy highlight in its 10-Q for Q2 FY2024?",
    ],
    # Other questions on the same company and period: with no figure to tell them apart,
    # their keys are equal to the text groups' and only the similarity may part them.
    ["What did Best Buy say about its outlook in Q2 FY2024?"],
    ["What did Best Buy say about its inventory in Q2 FY2024?"],
    ["What legal proceedings did Best Buy disclose in Q2 FY2024?"],
    ["How many Best Buy stores were opened in Q2 FY2024?"],
    ["What did Best Buy say about share repurchases in Q2 FY2024?"],
    ["What did Best Buy say about its effective tax rate in Q2 FY2023?"],
    ["How did Best Buy's online revenue change in Q2 FY2024?"],
    ["What did Best Buy say about its Domestic segment in Q2 FY2024?"],
    ["What did Best Buy say about its International segment in Q2 FY2024?"],
    # The facts route reads both as revenue: only the words beside the figure part them.
    ["What was Best Buy's domestic revenue in Q2 FY2024?"],
    ["How did Best Buy's revenue change in Q2 FY2024?"],
    ["What was Best Buy's revenue in Q2 FY2023?"],  # another period
    ["What was Best Buy's operating income in Q2 FY2024?"],
    ["Why did Best Buy's gross margin change in Q2 FY2024?"],
    ["What did Best Buy say about its outlook for fiscal 2024?"],
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    settings = load_settings()
    questions = [(g, q) for g, group in enumerate(GROUPS) for q in group]
    with open_store(settings) as store:
        asker = Asker(store, settings)
        keys = {q: cache_key(q, asker.search(q)[0], settings, None).digest for _, q in questions}
        vectors = asker.retriever.embedder.embed([q for _, q in questions])
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    pairs = []
    for (i, (gi, qi)), (j, (gj, qj)) in itertools.combinations(enumerate(questions), 2):
        pairs.append(
            {
                "same_question": gi == gj,
                "same_key": keys[qi] == keys[qj],
                "similarity": float(unit[i] @ unit[j]),
                "a": qi,
                "b": qj,
            }
        )
    should = [p for p in pairs if p["same_question"]]
    must_not = [p for p in pairs if not p["same_question"] and p["same_key"]]
    rows = []
    for t in [x / 100 for x in range(70, 100)]:
        hits = sum(p["same_key"] and p["similarity"] >= t for p in should)
        wrong = sum(p["similarity"] >= t for p in must_not)
        rows.append({"threshold": t, "rewordings_hit": hits, "wrong_hits": wrong})
    safe = min((r["threshold"] for r in rows if r["wrong_hits"] == 0), default=None)
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "embedder": settings.embed.model,
        "questions": len(questions),
        "rewording_pairs": len(should),
        "rewording_pairs_with_equal_keys": sum(p["same_key"] for p in should),
        "other_pairs_with_equal_keys": len(must_not),
        "lowest_threshold_without_wrong_hits": safe,
        "thresholds": [r for r in rows if r["threshold"] in (0.7, 0.75, 0.8, 0.85, 0.9, 0.95)],
        "nearest_wrong": sorted(must_not, key=lambda p: -p["similarity"])[:5],
        "rewordings_missed_by_key": [p for p in should if not p["same_key"]],
        "rewordings_by_similarity": sorted(
            (p for p in should if p["same_key"]), key=lambda p: p["similarity"]
        ),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
