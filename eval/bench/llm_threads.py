"""Embedded LLM speed by thread count: prompt (prefill) and generation tokens per second.

    python eval/bench/llm_threads.py [--model bundled|PATH.gguf] [--threads 1,2] [--repeat 3]

Loads the model once per (n_threads, n_threads_batch) pair, in this process, and times
a ~1,500-token filing excerpt prompt (what `ask` sends) and 128 generated tokens, each
repeated; reports medians. The baseline is n_threads = n_threads_batch = 1 in the same
run. Optional ``--busy`` keeps one core busy with a spinning process, as when the
embedder or a parser shares the machine.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import statistics
import time
from pathlib import Path

EXCERPT = (
    "Revenue for the second quarter was $9,583 million, compared with $10,329 million in "
    "the prior-year quarter, a decrease of 7.2%. Comparable sales declined 6.2%. Gross "
    "profit rate increased 0.6 percentage points to 22.5%. Selling, general and "
    "administrative expenses were $1,742 million, or 18.2% of revenue. Operating income "
    "was $347 million. "
)


def spin() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="bundled")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--busy", action="store_true", help="keep one core busy meanwhile")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    from llama_cpp import Llama

    from finrag.config import load_settings
    from finrag.llm.model_files import resolve_gguf

    settings = load_settings()
    model = resolve_gguf(args.model, settings.models_dir).path
    counts = [int(t) for t in args.threads.split(",")]
    prompt = "Excerpts:\n" + EXCERPT * 18 + "\nQuestion: What was revenue?\nAnswer:"
    busy = multiprocessing.Process(target=spin, daemon=True) if args.busy else None
    if busy:
        busy.start()
    rows = []
    try:
        for n_threads in counts:
            for n_batch in counts:
                llama = Llama(
                    model_path=str(model),
                    n_ctx=4096,
                    n_threads=n_threads,
                    n_threads_batch=n_batch,
                    verbose=False,
                )
                tokens = llama.tokenize(prompt.encode())
                prefill, generate = [], []
                for _ in range(args.repeat):
                    llama.reset()  # no prefix reuse from the last repeat
                    t0 = time.perf_counter()
                    stream = llama.generate(tokens, temp=0.0)
                    next(stream)  # the whole prompt is evaluated before the first token
                    t1 = time.perf_counter()
                    prefill.append(len(tokens) / (t1 - t0))
                    n = 0
                    for _token in stream:
                        n += 1
                        if n == 128:
                            break
                    generate.append(n / (time.perf_counter() - t1))
                rows.append(
                    {
                        "n_threads": n_threads,
                        "n_threads_batch": n_batch,
                        "prompt_tokens": len(tokens),
                        "prefill_tok_s": round(statistics.median(prefill), 1),
                        "generate_tok_s": round(statistics.median(generate), 1),
                    }
                )
                llama.close()
                print(json.dumps(rows[-1]), flush=True)
    finally:
        if busy:
            busy.terminate()
    base = rows[0]
    for row in rows:
        row["prefill_ratio"] = round(row["prefill_tok_s"] / base["prefill_tok_s"], 2)
        row["generate_ratio"] = round(row["generate_tok_s"] / base["generate_tok_s"], 2)
    report = {
        "model": str(model),
        "busy_core": args.busy,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "rows": rows,
    }
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
