"""Text-route latency, old against new in one run: the extraction path (the model reads
whole excerpts, extracts facts, then writes: answer.text_mode = "extract", the text route
before issue 29) against the evidence path (quotes selected without the model, one
schema-constrained call: "evidence"), on the embedded model.

    FINRAG_HOME=<a store holding the sample 10-Q> flock /tmp/finrag-cpu.lock \\
        python eval/bench/text_route_latency.py [--limit N] [--json OUT]

The questions are our own phrasings over Best Buy's Q2 FY2024 10-Q (examples/), of the
kinds the text route takes: drivers, categories and segments, yes/no, outlook, legal.
Both modes answer each question in turn (old, then new), in one process with the model
loaded once (a warm-up call first), so machine load falls on both alike. Alternating
costs the new path its cached system prompt between questions (llama.cpp keeps one
sequence): a session asking several questions runs faster than measured here.
Prints per-question seconds and tokens, p50 and p95 per mode, and the ratio old / new.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from finrag.answer.pipeline import Asker
from finrag.config import load_settings
from finrag.db import open_store
from finrag.llm import LLMTimeout, get_llm

QUESTIONS = [
    "What drove the comparable sales decline in Best Buy's consumer electronics category?",
    "Why did Best Buy's gross profit rate improve in the second quarter of fiscal 2024?",
    "Which product categories drove the decline in Best Buy's domestic revenue in Q2 FY2024?",
    "Did Best Buy repurchase shares of its common stock in the second quarter of fiscal 2024?",
    "What are Best Buy's reportable segments?",
    "Is Best Buy a party to any material legal proceedings?",
    "What did Best Buy say about the outlook for consumer demand?",
    "Does Best Buy pay a quarterly dividend?",
]
MODES = ("extract", "evidence")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    rank = q * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=len(QUESTIONS))
    parser.add_argument("--json", type=Path, help="write every answer and the summary here")
    args = parser.parse_args()

    base = load_settings(llm={"backend": "embedded"})
    settings = {
        mode: base.model_copy(
            update={"answer": base.answer.model_copy(update={"text_mode": mode, "cache": False})}
        )
        for mode in MODES
    }
    llm = get_llm(base)
    t0 = time.perf_counter()
    llm.chat([{"role": "user", "content": "Say OK."}], max_tokens=2)  # loads the model
    load_s = time.perf_counter() - t0
    rows = []
    with open_store(base) as store:
        askers = {mode: Asker(store, settings[mode], llm=llm) for mode in MODES}
        for question in QUESTIONS[: args.limit]:
            for mode in MODES:
                started = time.perf_counter()
                try:
                    answer = askers[mode].ask(question)
                except LLMTimeout as exc:  # counted at its limit: a slow mode is not dropped
                    seconds = time.perf_counter() - started
                    rows.append(
                        {
                            "mode": mode,
                            "question": question,
                            "seconds": round(seconds, 2),
                            "refused": "timeout",
                            "prompt_tokens": 0,
                            "completion_tokens": 0,
                            "error": exc.message,
                        }
                    )
                    print(f"{mode:8} {seconds:6.1f} s  timed out  {question[:60]}", flush=True)
                    continue
                seconds = time.perf_counter() - started
                rows.append(
                    {
                        "mode": mode,
                        "question": question,
                        "seconds": round(seconds, 2),
                        "route": answer.route,
                        "refused": answer.refusal if answer.refused else None,
                        "prompt_tokens": answer.tokens["prompt"],
                        "completion_tokens": answer.tokens["completion"],
                        "answer": answer.answer,
                        "evidence": answer.evidence,
                    }
                )
                print(
                    f"{mode:8} {seconds:6.1f} s  prompt {answer.tokens['prompt']:5} "
                    f"out {answer.tokens['completion']:4}  "
                    f"{'refused ' + answer.refusal if answer.refused else answer.route}  "
                    f"{question[:60]}",
                    flush=True,
                )
    summary = {}
    for mode in MODES:
        times = [r["seconds"] for r in rows if r["mode"] == mode]
        summary[mode] = {
            "n": len(times),
            "p50_s": round(statistics.median(times), 1),
            "p95_s": round(percentile(times, 0.95), 1),
            "mean_prompt_tokens": round(
                statistics.mean(r["prompt_tokens"] for r in rows if r["mode"] == mode)
            ),
            "refused": sum(bool(r["refused"]) for r in rows if r["mode"] == mode),
        }
    ratio = summary["extract"]["p50_s"] / summary["evidence"]["p50_s"]
    print()
    for mode in MODES:
        s = summary[mode]
        print(
            f"{mode:8} p50 {s['p50_s']:6.1f} s  p95 {s['p95_s']:6.1f} s  "
            f"prompt tokens (mean) {s['mean_prompt_tokens']}  refused {s['refused']}/{s['n']}"
        )
    print(f"old / new p50: {ratio:.2f}x  (model load {load_s:.1f} s, not counted)")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores; model {llm.model}")
    if args.json:
        args.json.write_text(
            json.dumps({"summary": summary, "ratio_p50": round(ratio, 2), "rows": rows}, indent=1)
        )


if __name__ == "__main__":
    main()
