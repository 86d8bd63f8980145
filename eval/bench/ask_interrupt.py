"""How long `finrag ask` takes to exit after Ctrl-C while the embedded model works.

    flock /tmp/cpu.lock python eval/bench/ask_interrupt.py [--repeat 3] [--after 5]
        [--question "..."] [--pythonpath /work/before16] [--json OUT]

Starts `python -m finrag ask QUESTION` on the embedded model (FINRAG_HOME as set), waits
until the model file is mapped into the process (the model has started loading) plus
``--after`` seconds (prompt evaluation under way), sends SIGINT as a terminal's Ctrl-C
does, and measures the seconds until the process has exited. Each repetition is a fresh
process. ``--pythonpath`` runs another checkout (the code before a change; run it from
that checkout's folder, or the current folder's finrag comes first on sys.path).
A run whose process ignores the signal is killed after ``--wait`` seconds
(``gave_up``), or ends with exit 0 having answered: both count in ``not_stopped``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUESTION = "What was Best Buy's effective tax rate in Q2 FY2024?"


def model_mapped(pid: int) -> bool:
    """The process has a .gguf file mapped: llama.cpp has opened the model."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False
    return ".gguf" in maps


def one_run(args: argparse.Namespace) -> dict:
    env = dict(os.environ, FINRAG_LLM__BACKEND="embedded")
    if args.pythonpath:
        env["PYTHONPATH"] = args.pythonpath
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "finrag", "ask", args.question],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    loaded_at = None
    while proc.poll() is None and time.perf_counter() - started < args.wait:
        if model_mapped(proc.pid):
            loaded_at = time.perf_counter()
            break
        time.sleep(0.05)
    if loaded_at is None:
        proc.kill()
        __out, err = proc.communicate()
        return {"error": "the model never started", "stderr": err[-400:], "rc": proc.returncode}
    time.sleep(args.after)
    if proc.poll() is not None:
        __out, err = proc.communicate()
        return {"error": "finished before the signal", "rc": proc.returncode}
    sent = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    try:
        _out, err = proc.communicate(timeout=args.wait)
    except subprocess.TimeoutExpired:
        proc.kill()
        __out, err = proc.communicate()
    exit_s = time.perf_counter() - sent
    return {
        "exit_s": round(exit_s, 3),
        "rc": proc.returncode,
        "model_seen_s": round(loaded_at - started, 2),
        "stderr_tail": err.strip().splitlines()[-3:],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--after", type=float, default=5.0, help="seconds after the model opens")
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("--pythonpath", default=None, help="run this checkout's finrag")
    parser.add_argument("--wait", type=float, default=180.0, help="give up after, seconds")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args()
    runs = []
    for i in range(args.repeat):
        run = one_run(args)
        runs.append(run)
        print(f"run {i + 1}: {json.dumps(run)}", file=sys.stderr, flush=True)
    times = [r["exit_s"] for r in runs if "exit_s" in r]
    summary = {
        "question": args.question,
        "code": args.pythonpath or "this checkout",
        "after_s": args.after,
        "finrag_home": os.environ.get("FINRAG_HOME"),
        "machine": f"{platform.machine()} {os.cpu_count()} cpus",
        "exit_s": times,
        "median_exit_s": statistics.median(times) if times else None,
        "max_exit_s": max(times) if times else None,
        "exit_codes": [r.get("rc") for r in runs],
        "not_stopped": sum(bool(r.get("gave_up")) or r.get("rc") == 0 for r in runs),
        "runs": runs,
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
