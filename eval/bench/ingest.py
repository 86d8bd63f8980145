"""Ingest speed on real filings, against the PDF parser alone or against an earlier commit.

    python eval/bench/ingest.py [--folder ../shared/financebench-dev/pdfs] [--limit N]
    python eval/bench/ingest.py --folder ../shared/edgar-html --limit 3 --baseline 40304e8

Without --baseline, in one process: (1) `ingest` of the folder into an empty FINRAG_HOME
with the default settings, (2) the same again on the unchanged folder, (3) the PDF parser
alone over the same PDFs. Prints pages/s end to end, per-stage seconds, and the ratio
end-to-end / parser-alone.

With --baseline REV: the same ingest (1), each in a fresh process and an empty
FINRAG_HOME, with the code of commit REV (`git archive`) and with this tree, --repeat
rounds in alternating order; prints each run and the ratio of pages/s this tree / REV.
The one-time ONNX export and load of the embedder happens before the clock starts and is
reported on its own.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_FOLDER = REPO.parent / "shared" / "financebench-dev" / "pdfs"
SUFFIXES = (".pdf", ".html", ".htm")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--folder", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--limit", type=int, default=0, help="first N files only")
    parser.add_argument("--out", type=Path, help="also write the JSON report here")
    parser.add_argument("--names", help="these files of the folder only (comma-separated)")
    parser.add_argument("--baseline", metavar="REV", help="compare with this commit's code")
    parser.add_argument(
        "--repeat", type=int, default=1, help="with --baseline: rounds, alternating the order"
    )
    parser.add_argument("--single", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.folder.is_dir():
        sys.exit(f"no filings at {args.folder}: this benchmark reads ../shared")
    args.folder = args.folder.resolve()
    files = sorted(f for f in args.folder.iterdir() if f.suffix.lower() in SUFFIXES)
    if args.names:
        files = [f for f in files if f.name in args.names.split(",")]
    files = files[: args.limit or None]
    result = _compare(args, files) if args.baseline else _run(files, full=not args.single)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


def _compare(args: argparse.Namespace, files: list[Path]) -> dict:
    """Each side in its own process, its own code on the path, the same files."""
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baseline"
        base.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", args.baseline, "finrag", "sql", "prompts"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        current = Path(tmp) / "current"  # a copy: edits made while it runs change nothing
        for part in ("finrag", "sql", "prompts"):
            shutil.copytree(REPO / part, current / part, ignore=shutil.ignore_patterns("*.pyc"))
        models = Path(tmp) / "models"  # one ONNX export, outside both clocks
        sides = [(f"baseline {args.baseline}", base), ("this tree", current)]
        runs: dict[str, list[dict]] = {name: [] for name, _ in sides}
        for i in range(args.repeat):  # ABBA...: a drift in the machine's load hits both
            for name, tree in sides if i % 2 == 0 else sides[::-1]:
                env = dict(os.environ, PYTHONPATH=str(tree), BENCH_MODELS=str(models))
                command = [sys.executable, __file__, "--single", "--folder", str(args.folder)]
                command += ["--names", ",".join(f.name for f in files)]
                out = subprocess.run(
                    command, env=env, check=True, stdout=subprocess.PIPE, text=True, cwd=tmp
                ).stdout
                runs[name].append(json.loads(out))
    before, after = runs.values()

    def speed(side: list[dict]) -> float:
        return sum(r["pages"] for r in side) / sum(r["end_to_end_s"] for r in side)

    return {
        "machine": before[0]["machine"],
        "folder": str(args.folder),
        "files": [f.name for f in files],
        "runs": runs,
        "pages_per_s": {name: round(speed(side), 3) for name, side in runs.items()},
        "ratio_pages_per_s": round(speed(after) / speed(before), 3),
        "ratio_per_round": [
            round(a["end_to_end_pages_per_s"] / b["end_to_end_pages_per_s"], 3)
            for a, b in zip(after, before, strict=True)
        ],
        "measured_at": time.strftime("%Y-%m-%d %H:%M"),
    }


def _run(files: list[Path], *, full: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "filings"
        run.mkdir()
        for f in files:
            (run / f.name).symlink_to(f.resolve())
        home = Path(tmp) / "home"
        home.mkdir()
        if models := os.environ.get("BENCH_MODELS"):
            Path(models).mkdir(exist_ok=True)
            (home / "models").symlink_to(models)
        os.environ["FINRAG_HOME"] = str(home)

        import finrag
        from finrag.config import load_settings
        from finrag.db import open_store
        from finrag.embed import get_embedder
        from finrag.ingest.pipeline import ingest

        settings = load_settings()
        store = open_store(settings)
        t0 = time.perf_counter()
        embedder = get_embedder(settings.embed, settings.models_dir)
        embedder.embed(["warm up: export and load the embedding model"])
        warmup_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        report = ingest([run], settings, store, embedder=embedder)
        ingest_s = time.perf_counter() - t0
        rerun_s, again = None, None
        if full:
            t0 = time.perf_counter()
            again = ingest([run], settings, store, embedder=embedder)
            rerun_s = time.perf_counter() - t0
        store.close()

        parser_s, parser_pages = None, 0
        pdfs = [f for f in files if f.suffix.lower() == ".pdf"]
        if full and pdfs:
            from finrag.ingest.parse.pdf import PyMuPDFParser

            t0 = time.perf_counter()
            for f in pdfs:
                parser_pages += len(PyMuPDFParser().parse(f).pages)
            parser_s = time.perf_counter() - t0

    pages = report.pages
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "code": str(Path(finrag.__file__).parents[1]),
        "files": len(files),
        "pages": pages,
        "chunks": report.chunks,
        "failed": [r.path for r in report.results if r.status == "failed"],
        "end_to_end_s": round(ingest_s, 1),
        "end_to_end_pages_per_s": round(pages / ingest_s, 2),
        "chunks_per_s": round(report.chunks / ingest_s, 2),
        "stage_s": {k: round(v, 1) for k, v in report.stage_s.items()},
        "embedder_warmup_s": round(warmup_s, 1),
        "settings": {
            "workers": settings.ingest.workers,
            "embed_runtime": settings.embed.runtime,
            "embed_batch": settings.embed.batch_size,
            "embed_threads": settings.embed.threads,
        },
        "measured_at": time.strftime("%Y-%m-%d %H:%M"),
    }
    if again is not None and rerun_s is not None:
        result["rerun_unchanged_s"] = round(rerun_s, 2)
        result["rerun_unchanged_files"] = again.count("unchanged")
    if parser_s:
        result["parser_alone_s"] = round(parser_s, 1)
        result["parser_alone_pages_per_s"] = round(parser_pages / parser_s, 2)
        result["ratio_end_to_end_vs_parser"] = round(
            (pages / ingest_s) / (parser_pages / parser_s), 3
        )
    return result


if __name__ == "__main__":
    main()
