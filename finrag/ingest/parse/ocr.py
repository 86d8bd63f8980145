"""OCR for PDF pages without a text layer, through pymupdf4llm's own OCR path.

pymupdf4llm renders the page, recognises the text and lays it back on the page as
invisible text, then runs its usual layout analysis over it: an OCR'd statement comes out
as the same pipe table a born-digital one does, so chunking, table summaries and facts
need nothing special. Two engines can do the recognising:

- **Tesseract** (Debian's ``tesseract-ocr``), found through ``tesseract --list-langs``:
  the better reader of filings (words keep their spaces), so it is preferred.
- **RapidOCR** (``pip install 'finrag-cli[ocr]'``): ONNX models inside the wheel, no
  system package; it reads digits well but often runs words together.

Nothing here downloads anything.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

OCR_ENGINES = ("tesseract", "rapidocr")
OCR_LANGUAGE = "eng"
# Pages 3-6 of the sample 10-Q scanned at 200 dpi: OCR at 150/200/300/400 dpi read 210/224/
# 226/226 of their 241 printed numbers right, at 0.52/0.43/0.36/0.35 pages/s.
OCR_DPI = 300

ENABLE_HINT = (
    "install Tesseract (Debian/Ubuntu: `apt-get install tesseract-ocr`; macOS: "
    "`brew install tesseract`) or `pip install 'finrag-cli[ocr]'`, then ingest the file again"
)


@dataclass(frozen=True)
class OcrEngine:
    name: str  # "tesseract" | "rapidocr"
    version: str
    run: Callable[..., Any]  # pymupdf4llm's exec_ocr(page, dpi=, language=, keep_ocr_text=)

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}".strip()


@dataclass(frozen=True)
class OcrStatus:
    """What `finrag doctor` says: the engine OCR would use, or why there is none."""

    engine: OcrEngine | None
    detail: str


def find_ocr_engine(preferred: str = "auto") -> OcrEngine | None:
    """The engine ``preferred`` names ('auto': Tesseract, else RapidOCR; 'off': none), or
    None when it is not on this machine."""
    return ocr_status(preferred).engine


@cache
def ocr_status(preferred: str = "auto") -> OcrStatus:
    if preferred == "off":
        return OcrStatus(None, "off (ingest.ocr = off)")
    if preferred not in ("auto", *OCR_ENGINES):
        raise ValueError(f"unknown OCR engine {preferred!r}")
    reasons = []
    for name in OCR_ENGINES if preferred == "auto" else (preferred,):
        engine, reason = _LOADERS[name]()
        if engine is not None:
            return OcrStatus(engine, f"{engine.label} ({OCR_LANGUAGE}, {OCR_DPI} dpi)")
        reasons.append(reason)
    return OcrStatus(None, "; ".join(reasons))


def _tesseract() -> tuple[OcrEngine | None, str]:
    binary = shutil.which("tesseract")
    if binary is None:
        return None, "tesseract: not installed"
    try:
        listed = subprocess.run(
            [binary, "--list-langs"], capture_output=True, text=True, timeout=10, check=False
        )
        version = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"tesseract: does not run ({exc})"
    languages = {line.strip() for line in listed.stdout.splitlines()[1:]}
    if OCR_LANGUAGE not in languages:
        return None, f"tesseract: no '{OCR_LANGUAGE}' language data (tesseract-ocr-eng)"
    first = (version.stdout or version.stderr).split("\n", 1)[0]  # "tesseract 5.3.0"
    with _quiet():
        try:
            from pymupdf4llm.ocr import tesseract_api
        except Exception as exc:  # an old pymupdf4llm without its OCR package
            return None, f"tesseract: pymupdf4llm cannot drive it ({exc})"
    if tesseract_api.TESSDATA is None:
        return None, "tesseract: PyMuPDF finds no tessdata (set TESSDATA_PREFIX)"
    return OcrEngine(
        "tesseract", first.removeprefix("tesseract").strip(), tesseract_api.exec_ocr
    ), ""


def _rapidocr() -> tuple[OcrEngine | None, str]:
    try:
        from importlib.metadata import version

        found = version("rapidocr-onnxruntime")
    except Exception:
        return None, "rapidocr: not installed (pip install 'finrag-cli[ocr]')"
    with _quiet():
        try:
            from pymupdf4llm.ocr import rapidocr_api
        except Exception as exc:
            return None, f"rapidocr: pymupdf4llm cannot drive it ({exc})"
    if rapidocr_api.full_ocr is None:
        return None, "rapidocr: installed but does not load"
    return OcrEngine("rapidocr", found, rapidocr_api.exec_ocr), ""


_LOADERS = {"tesseract": _tesseract, "rapidocr": _rapidocr}


@contextlib.contextmanager
def _quiet():
    """pymupdf4llm's OCR modules print which backend they chose when imported."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield
