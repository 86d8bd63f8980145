"""Ingest speed on real filings, against the PDF parser alone on the same files.

    python eval/bench/ingest.py [--folder ../shared/financebench-dev/pdfs] [--limit N]

Runs, in one process: (1) `ingest` of the folder into an empty FINRAG_HOME with the
default settings, (2) the same again on the unchanged folder, (3) the PDF parser
alone over the same files. Prints pages/s end to end, per-stage seconds, and the
ratio end-to-end / parser-alone. The one-time ONNX export of the embedder happens
before the clock starts and is reported on its own.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_FOLDER = REPO.parent / "shared" / "financebench-dev" / "pdfs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--folder", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--limit", type=int, default=0, help="first N files only")
    parser.add_argument("--out", type=Path, help="also write the JSON report here")
    args = parser.parse_args()
    if not args.folder.is_dir():
        sys.exit(f"no filings at {args.folder}: this benchmark reads ../shared")
    files = sorted(args.folder.glob("*.pdf"))[: args.limit or None]

    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "filings"
        run.mkdir()
        for f in files:
            (run / f.name).symlink_to(f.resolve())
        os.environ["FINRAG_HOME"] = str(Path(tmp) / "home")

        from finrag.config import load_settings
        from finrag.db import open_store
        from finrag.embed import get_embedder
        from finrag.ingest.parse.pdf import PyMuPDFParser
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
        t0 = time.perf_counter()
        again = ingest([run], settings, store, embedder=embedder)
        rerun_s = time.perf_counter() - t0
        store.close()

        t0 = time.perf_counter()
        parser_pages = 0
        for f in files:
            parser_pages += len(PyMuPDFParser().parse(f).pages)
        parser_s = time.perf_counter() - t0

    pages = report.pages
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "files": len(files),
        "pages": pages,
        "chunks": report.chunks,
        "failed": [r.path for r in report.results if r.status == "failed"],
        "end_to_end_s": round(ingest_s, 1),
        "end_to_end_pages_per_s": round(pages / ingest_s, 2),
        "stage_s": {k: round(v, 1) for k, v in report.stage_s.items()},
        "parser_alone_s": round(parser_s, 1),
        "parser_alone_pages_per_s": round(parser_pages / parser_s, 2),
        "ratio_end_to_end_vs_parser": round((pages / ingest_s) / (parser_pages / parser_s), 3),
        "rerun_unchanged_s": round(rerun_s, 2),
        "rerun_unchanged_files": again.count("unchanged"),
        "embedder_warmup_s": round(warmup_s, 1),
        "settings": {
            "workers": settings.ingest.workers,
            "embed_runtime": settings.embed.runtime,
            "embed_batch": settings.embed.batch_size,
        },
        "measured_at": time.strftime("%Y-%m-%d %H:%M"),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
