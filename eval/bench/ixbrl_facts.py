"""Inline XBRL fact extraction against the HTML parse of the same filings.

    python eval/bench/ixbrl_facts.py [--repeat 3] [FILE ...]

For each EDGAR filing (default: ../shared/edgar-html/*.html) times
``extract_ixbrl_facts`` and ``EdgarHtmlParser().parse`` in the same process, the best
of ``--repeat`` runs each, and prints seconds, their ratio, the fact count and how many
facts were skipped, with the machine's load when the run started.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

from finrag.facts.ixbrl import extract_ixbrl_facts
from finrag.ingest.parse.html import EdgarHtmlParser

REPO = Path(__file__).resolve().parents[2]


def best_of(repeat: int, run) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    files = args.files or sorted((REPO.parent / "shared" / "edgar-html").glob("*.html"))
    print(f"{platform.python_version()} load={os.getloadavg()[0]:.2f} repeat={args.repeat}")
    print(f"{'filing':32} {'MB':>5} {'facts':>6} {'skip':>5} {'ixbrl s':>8} {'html s':>7} ratio")
    for path in files:
        facts_s, result = best_of(args.repeat, lambda p=path: extract_ixbrl_facts(p))
        html_s, _ = best_of(args.repeat, lambda p=path: EdgarHtmlParser().parse(p))
        size = path.stat().st_size / 1e6
        print(
            f"{path.name:32} {size:5.2f} {len(result.facts):6} {len(result.skipped):5} "
            f"{facts_s:8.3f} {html_s:7.3f} {facts_s / html_s:5.2f}"
        )


if __name__ == "__main__":
    main()
