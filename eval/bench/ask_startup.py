"""How long does a facts answer take, process start included? `finrag ask --no-llm` timed
whole, as a user's shell runs it, against `python -c pass` and `finrag --version` in the
same run (issue 29, item 7: p50 <= 1 s).

    flock /tmp/finrag-cpu.lock python eval/bench/ask_startup.py [--repeat 9]
        [--tree BEFORE_CHECKOUT] [--home DIR]

Every sample is a new process. ``--tree`` (repeatable) names checkouts to time side by
side (e.g. a `git worktree` of the commit before a change): each runs with its own tree
first on PYTHONPATH, against the same store. The store (``--home``, else one made here)
holds the bundled Best Buy 10-Q; the question is one its facts store answers.
Two server states: "cold" lets the embedded Postgres stop between samples (a lone
`finrag ask`, the server started by it), "warm" holds it up with `finrag db start` (as
after another command, or in a session). Prints JSON; ratios are to `python -c pass`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"
QUESTION = "What was Best Buy's revenue in Q2 fiscal 2024?"


# `python -m` puts the working directory first on sys.path, before PYTHONPATH: run every
# sample from a directory with no finrag in it, so each tree times its own code.
NEUTRAL = Path(tempfile.gettempdir())


def timed(argv: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=NEUTRAL)
    seconds = time.perf_counter() - t0
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return seconds


def finrag(tree: Path, home: Path, *args: str) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "PYTHONPATH": str(tree), "FINRAG_HOME": str(home)}
    return [sys.executable, "-m", "finrag", *args], env


def prepare(home: Path) -> None:
    """A store with the Best Buy sample."""
    argv, env = finrag(REPO, home, "-q", "ingest", str(SAMPLE))
    subprocess.run(argv, env=env, check=True, capture_output=True, cwd=NEUTRAL)


def facts_route(tree: Path, home: Path) -> str:
    """The route the tree's `ask --no-llm --json` took: the bench times facts answers."""
    argv, env = finrag(tree, home, "ask", "--no-llm", "--json", QUESTION)
    out = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=NEUTRAL).stdout
    try:
        return json.loads(out[out.index("{") :])["route"]
    except ValueError:
        return f"unreadable output: {out[:200]!r}"


def stats(samples: list[float], base: float) -> dict[str, float]:
    p50 = statistics.median(samples)
    return {
        "p50_s": round(p50, 3),
        "min_s": round(min(samples), 3),
        "max_s": round(max(samples), 3),
        "p50_over_python": round(p50 / base, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--tree", type=Path, action="append", default=[])
    parser.add_argument("--home", type=Path, default=None)
    args = parser.parse_args()
    trees = {"this tree": REPO, **{str(t): t.resolve() for t in args.tree}}
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp) / "home"
        if args.home is None:
            prepare(home)
        empty = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        python = [timed([sys.executable, "-c", "pass"], empty) for _ in range(args.repeat)]
        base = statistics.median(python)
        result = {
            "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus",
            "repeat": args.repeat,
            "question": QUESTION,
            "python -c pass": stats(python, base),
            "trees": {},
        }
        for name, tree in trees.items():
            row = {"route": facts_route(tree, home)}
            version = [timed(*finrag(tree, home, "--version")) for _ in range(args.repeat)]
            row["finrag --version"] = stats(version, base)
            ask = finrag(tree, home, "-q", "ask", "--no-llm", QUESTION)
            # An answer refused (exit 7) is timed too: the route above says which it was.
            row["ask --no-llm, server cold"] = stats(
                [timed(*ask, ok=(0, 7)) for _ in range(args.repeat)], base
            )
            start, stop = finrag(tree, home, "db", "start"), finrag(tree, home, "db", "stop")
            subprocess.run(start[0], env=start[1], check=True, capture_output=True, cwd=NEUTRAL)
            try:
                row["ask --no-llm, server warm"] = stats(
                    [timed(*ask, ok=(0, 7)) for _ in range(args.repeat)], base
                )
            finally:
                subprocess.run(stop[0], env=stop[1], capture_output=True, cwd=NEUTRAL)
            result["trees"][name] = row
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
