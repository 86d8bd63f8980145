"""OCR speed and accuracy: scanned pages read per second, and how many of their printed
numbers come back as printed, against PyMuPDF reading the same pages' text layer.

    python eval/bench/ocr_speed.py [--pages 1-8] [--engine auto|tesseract|rapidocr]
        [--scan-dpi 200] [--ocr-dpi 300[,200,...]] [--repeat 2] [--json OUT]

Renders ``--pages`` of the bundled 10-Q to grey images at ``--scan-dpi`` (what a scanner
at that resolution hands over) as an image-only PDF; then, in this one process, parses the
text PDF of the same pages (the baseline: PyMuPDF's layout analysis) and the scan (OCR at
each ``--ocr-dpi`` through pymupdf4llm, then the same layout analysis), ``--repeat`` times
each, and prints seconds, pages/s, the ratio to the baseline and the printed numbers
(figures, dates, per-share amounts) the OCR'd Markdown holds as the text layer prints
them, with the machine.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pymupdf

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import finrag.ingest.parse.pdf as pdf_parser  # noqa: E402
from finrag.ingest.parse.ocr import find_ocr_engine  # noqa: E402
from finrag.ingest.parse.pdf import PyMuPDFParser  # noqa: E402
from tests.pdfs import scanned_pdf  # noqa: E402  (the scans the OCR tests read)

SAMPLE = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"
_NUMBER = re.compile(r"\(?\$?\s?\d[\d,]*\.?\d*\)?")


def page_list(spec: str) -> list[int]:
    first, _, last = spec.partition("-")
    return list(range(int(first), int(last or first) + 1))


def numbers(markdown: str) -> collections.Counter:
    return collections.Counter(re.sub(r"[\s$]", "", m) for m in _NUMBER.findall(markdown))


def write_pdfs(pages: list[int], dpi: int, folder: Path) -> tuple[Path, Path]:
    text = folder / "text.pdf"
    with pymupdf.open(SAMPLE) as original:
        subset = pymupdf.open()
        for number in pages:
            subset.insert_pdf(original, from_page=number - 1, to_page=number - 1)
        subset.save(text)
    return text, scanned_pdf(folder / "scan.pdf", SAMPLE, pages, dpi)


def timed(parser: PyMuPDFParser, path: Path, repeat: int):
    runs, parsed = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        parsed = parser.parse(path)
        runs.append(time.perf_counter() - started)
    return statistics.median(runs), [round(r, 2) for r in runs], parsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", default="1-8")
    ap.add_argument("--engine", default="auto")
    ap.add_argument("--scan-dpi", type=int, default=200)
    ap.add_argument("--ocr-dpi", default=str(pdf_parser.OCR_DPI))
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    engine = find_ocr_engine(args.engine)
    if engine is None:
        sys.exit(
            f"no OCR engine ({args.engine}): apt-get install tesseract-ocr, or "
            "pip install 'finrag-cli[ocr]'"
        )
    pages = page_list(args.pages)
    n = len(pages)
    with tempfile.TemporaryDirectory() as tmp:
        text, scan = write_pdfs(pages, args.scan_dpi, Path(tmp))
        base, base_runs, truth_doc = timed(PyMuPDFParser(), text, args.repeat)
        truth = sum((numbers(p.markdown) for p in truth_doc.pages), collections.Counter())
        rows = []
        for dpi in (int(d) for d in args.ocr_dpi.split(",")):
            pdf_parser.OCR_DPI = dpi
            ocr, ocr_runs, parsed = timed(PyMuPDFParser(engine), scan, args.repeat)
            seen = sum((numbers(p.markdown) for p in parsed.pages), collections.Counter())
            rows.append(
                {
                    "ocr_dpi": dpi,
                    "ocr_s": round(ocr, 2),
                    "ocr_pages_per_s": round(n / ocr, 2),
                    "ocr_vs_text": round(ocr / base, 1),
                    "numbers_as_printed": f"{sum((truth & seen).values())}/{sum(truth.values())}",
                    "ocr_pages_read": sum(p.ocr for p in parsed.pages),
                    "runs_s": ocr_runs,
                }
            )
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        "engine": engine.label,
        "pages": n,
        "scan_dpi": args.scan_dpi,
        "text_s": round(base, 2),
        "text_pages_per_s": round(n / base, 2),
        "text_runs_s": base_runs,
        "ocr": rows,
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
