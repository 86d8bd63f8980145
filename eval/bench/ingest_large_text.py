"""`finrag ingest` of one huge text file: a 50 MB single line, and 50 MB of ordinary prose;
or (--folder) issue 27's folder: that line beside a 10-Q, a garbage .html and a link loop.

    python eval/bench/ingest_large_text.py [--size-mb 50] [--kinds one-line,normal]
    python eval/bench/ingest_large_text.py --folder [--size-mb 50] [--embedder default]
        [--max-chunks N] [--limit-s 600]

Each file is made in a temporary folder from the same filing-like sentences: "one-line"
has no newline at all, "normal" has paragraphs of a few sentences wrapped at 80 columns.
Each is ingested by the real CLI (`python -m finrag ingest FILE --json`, default workers)
into one fresh FINRAG_HOME with the hash embedder, so the clock measures parsing,
chunking and storing rather than a neural model. A tiny file is ingested first so the
database's one-time set-up is not on the clock. Prints wall seconds, MB/s, chunks, the
report's per-stage seconds and the machine's load when the run started.

--folder builds one folder: ACME_2023_10K.txt (one sentence repeated on a single line,
--size-mb of it), the Best Buy 10-Q of examples/, garbage.html (random bytes) and loop_a,
loop_b (symbolic links to each other); and ingests it with the configured embedder
(default: the shipped MiniLM; --embedder hash for the fake) under a wall-clock limit
(--limit-s: past it the run is killed and reported as "> N s"). Prints the seconds, the
exit code, every file's status and reason as the JSON report gives them, and the report
lines the CLI wrote on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_SUBJECTS = ("Net revenue", "Operating income", "Gross margin", "Free cash flow", "Backlog")
_VERBS = ("increased", "decreased", "was flat at", "rose to", "fell to")
_CAUSES = (
    "higher demand in the Americas",
    "the divestiture of the consumer segment",
    "foreign currency headwinds",
    "lower restructuring charges",
    "pricing actions taken in the second half",
)


def sentences(rng: random.Random):
    while True:
        yield (
            f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} ${rng.randint(1, 9999):,} million "
            f"in fiscal {rng.randint(2015, 2024)}, mainly because of {rng.choice(_CAUSES)}."
        )


def make_file(path: Path, size: int, *, one_line: bool) -> None:
    rng = random.Random(7)
    # No "(Exact name of registrant ...)" caption: a cover reader that searches for it
    # scans the whole line (what made a 400 KB line cost 5-8 s before).
    cover = "FORM 10-K For the fiscal year ended December 31, 2023 ACME HOLDINGS INC."
    parts, written = [cover], len(cover)
    source = sentences(rng)
    while written < size:
        if one_line:
            piece = " " + next(source)
        else:
            paragraph = " ".join(next(source) for _ in range(rng.randint(3, 8)))
            piece = "\n\n" + _wrap(paragraph, 80)
        parts.append(piece)
        written += len(piece)
    path.write_text("".join(parts), encoding="utf-8")


def _wrap(text: str, width: int) -> str:
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join([*lines, line])


def ingest(path: Path, env: dict[str, str]) -> dict:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "finrag", "ingest", str(path), "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        return {"exit": done.returncode, "seconds": round(seconds, 1), "stderr": done.stderr[-600:]}
    report = json.loads(done.stdout)
    (result,) = report["files"]
    return {
        "exit": 0,
        "status": result["status"],
        "seconds": round(seconds, 1),
        "chunks": report["summary"]["chunks"],
        "stage_s": report["summary"]["stage_s"],
        "company": result["metadata"].get("company"),
    }


SENTENCE = (
    "Net revenue increased $1,234 million in fiscal 2023, mainly because of higher demand "
    "in the Americas."
)
SAMPLE = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"


def make_folder(folder: Path, size: int) -> None:
    """Issue 27's folder: a runaway one-line text beside a 10-Q and two bad entries."""
    folder.mkdir()
    copies = size // (len(SENTENCE) + 1)
    (folder / "ACME_2023_10K.txt").write_text(" ".join([SENTENCE] * copies), encoding="utf-8")
    shutil.copy(SAMPLE, folder / SAMPLE.name)
    (folder / "garbage.html").write_bytes(random.Random(12).randbytes(64 * 1024))
    (folder / "loop_a").symlink_to("loop_b")
    (folder / "loop_b").symlink_to("loop_a")


def ingest_folder(folder: Path, env: dict[str, str], limit_s: float) -> dict:
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "finrag", "ingest", str(folder), "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=limit_s,
        )
    except subprocess.TimeoutExpired:
        return {"exit": None, "seconds": f"> {limit_s:.0f}", "files": "no report: stopped"}
    seconds = time.perf_counter() - started
    out: dict = {"exit": done.returncode, "seconds": round(seconds, 1)}
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return out | {"stderr": done.stderr[-2000:]}
    out["files"] = {
        Path(f["path"]).name: {
            k: f[k] for k in ("status", "reason", "chunks", "vectors_reused") if k in f
        }
        for f in report["files"]
    }
    out["stage_s"] = report["summary"]["stage_s"]
    out["stderr"] = [line for line in done.stderr.splitlines() if line.strip()][-40:]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=float, default=50.0)
    parser.add_argument("--kinds", default="one-line,normal")
    parser.add_argument("--folder", action="store_true", help="issue 27's folder (see above)")
    parser.add_argument(
        "--embedder",
        choices=("default", "hash"),
        help="default: hash; with --folder: the configured one (MiniLM)",
    )
    parser.add_argument("--max-chunks", type=int, help="ingest.max_chunks_per_document")
    parser.add_argument("--limit-s", type=float, default=600.0, help="--folder: stop after")
    parser.add_argument("--out", type=Path, help="also write the JSON result here")
    args = parser.parse_args()
    size = int(args.size_mb * 1_000_000)
    load = os.getloadavg()
    results = {}
    embedder = args.embedder or ("default" if args.folder else "hash")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("FINRAG_")}
        env |= {"FINRAG_HOME": str(folder / "home")}
        if embedder == "hash":
            env["FINRAG_EMBED__BACKEND"] = "hash"
        if args.max_chunks is not None:
            env["FINRAG_INGEST__MAX_CHUNKS_PER_DOCUMENT"] = str(args.max_chunks)
        env["XDG_CONFIG_HOME"] = str(folder / "config")  # no user settings file
        # The store's creation and the embedder's first load are not on the clock.
        (folder / "warmup.md").write_text("# Warm-up\n\nThe store is created here.\n")
        warmup = ingest(folder / "warmup.md", env)
        if args.folder:
            make_folder(folder / "filings", size)
            results["folder"] = ingest_folder(folder / "filings", env, args.limit_s)
        for kind in args.kinds.split(",") if not args.folder else []:
            path = folder / f"ACME_2023_10K_{kind}.txt"
            make_file(path, size, one_line=kind == "one-line")
            mb = path.stat().st_size / 1e6
            result = ingest(path, env) | {"mb": round(mb, 1)}
            result["mb_per_s"] = round(mb / result["seconds"], 2)
            results[kind] = result
            path.unlink()
        # As root the cluster lives outside the temporary folder: delete it too.
        from finrag.db.embedded import EmbeddedServer

        EmbeddedServer(folder / "home").delete_cluster()
    out = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "load_avg_at_start": [round(x, 2) for x in load],
        "embedder": embedder,
        "max_chunks_per_document": args.max_chunks,
        "warmup_s": warmup["seconds"],
        "results": results,
        "max_child_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "git_commit": subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M"),
    }
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
