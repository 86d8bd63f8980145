"""OCR speed: pages/s reading scanned pages, against PyMuPDF reading the same pages' text.

    python eval/bench/ocr_speed.py [--pages 1-8] [--engine auto|tesseract|rapidocr]
        [--dpi 200] [--repeat 2] [--json OUT]

Renders ``--pages`` of the bundled 10-Q to grey images at ``--dpi`` (what a scanner at that
resolution would hand over) and writes them as an image-only PDF; then parses, in this one
process, the text PDF of the same pages (the baseline: PyMuPDF's layout analysis) and the
scan (OCR through pymupdf4llm, then the same layout analysis), each ``--repeat`` times,
and prints seconds, pages/s and the ratio, with the machine. Also counts how many of the
statement-of-earnings figures (page 4's Revenue, Gross profit, Operating income and Net
earnings for the quarter) the OCR'd Markdown holds as printed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pymupdf

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from finrag.ingest.parse.ocr import find_ocr_engine  # noqa: E402
from finrag.ingest.parse.pdf import PyMuPDFParser  # noqa: E402

SAMPLE = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"
FIGURES = ("9,583", "10,329", "2,220", "348", "274", "1.25")  # p.4, as printed


def page_list(spec: str) -> list[int]:
    first, _, last = spec.partition("-")
    return list(range(int(first), int(last or first) + 1))


def write_pdfs(pages: list[int], dpi: int, folder: Path) -> tuple[Path, Path]:
    text, scan = folder / "text.pdf", folder / "scan.pdf"
    with pymupdf.open(SAMPLE) as original:
        subset = pymupdf.open()
        subset.insert_pdf(original, from_page=pages[0] - 1, to_page=pages[-1] - 1)
        subset.save(text)
        scanned = pymupdf.open()
        for number in pages:
            page = original[number - 1]
            pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
            new = scanned.new_page(width=page.rect.width, height=page.rect.height)
            new.insert_image(new.rect, stream=pix.tobytes("png"))
        scanned.save(scan, deflate=True)
    return text, scan


def timed(parser: PyMuPDFParser, path: Path, repeat: int) -> tuple[list[float], object]:
    runs, parsed = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        parsed = parser.parse(path)
        runs.append(time.perf_counter() - started)
    return runs, parsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", default="1-8")
    ap.add_argument("--engine", default="auto")
    ap.add_argument("--dpi", type=int, default=200)
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
    with tempfile.TemporaryDirectory() as tmp:
        text, scan = write_pdfs(pages, args.dpi, Path(tmp))
        base_runs, _ = timed(PyMuPDFParser(), text, args.repeat)
        ocr_runs, parsed = timed(PyMuPDFParser(engine), scan, args.repeat)
    n = len(pages)
    base, ocr = statistics.median(base_runs), statistics.median(ocr_runs)
    earnings = (
        next((p.markdown for p in parsed.pages if p.number == pages.index(4) + 1), "")
        if 4 in pages
        else ""
    )
    found = [f for f in FIGURES if f in earnings]
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        "engine": engine.label,
        "pages": n,
        "dpi": args.dpi,
        "text_s": round(base, 2),
        "text_pages_per_s": round(n / base, 2),
        "ocr_s": round(ocr, 2),
        "ocr_pages_per_s": round(n / ocr, 2),
        "ocr_vs_text": round(ocr / base, 1),
        "ocr_pages_read": sum(p.ocr for p in parsed.pages),
        "earnings_figures_read": f"{len(found)}/{len(FIGURES)}" if 4 in pages else None,
        "runs": {
            "text_s": [round(r, 2) for r in base_runs],
            "ocr_s": [round(r, 2) for r in ocr_runs],
        },
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
