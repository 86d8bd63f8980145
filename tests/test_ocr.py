"""Scanned pages: read by OCR when an engine is here (marked in the page's chunks, the
document and its citations), skipped and reported when not, and `doctor` says which.

The OCR tests run Tesseract (or RapidOCR) for real on pages of the bundled 10-Q rendered to
images; they are skipped, saying how to enable them, where no engine is installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finrag.config import load_settings
from finrag.doctor import _check_ocr
from finrag.ingest.parse import ocr
from finrag.ingest.parse.ocr import find_ocr_engine
from tests import pdfs
from tests.conftest import REPO, run_finrag

SAMPLE = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"
ENGINE = find_ocr_engine()
needs_ocr = pytest.mark.skipif(
    ENGINE is None,
    reason="no OCR engine here: apt-get install tesseract-ocr (or pip install "
    "'finrag-cli[ocr]') to run the OCR tests",
)


@needs_ocr
def test_a_scanned_filing_is_read_by_ocr_and_its_citations_say_so(
    home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "filings"
    folder.mkdir()
    # The cover (company, period) and the statement of earnings, as images only.
    scan = pdfs.scanned_pdf(folder / "BESTBUY_2024Q2_10Q.pdf", SAMPLE, [1, 4])

    result = run_finrag("ingest", str(folder), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    (file,) = report["files"]
    assert file["status"] == "ingested" and file["ocr_pages"] == [1, 2]
    assert file["parser"] == f"pymupdf+{ENGINE.name}" and file["skipped_pages"] == []
    assert report["summary"]["ocr_pages"] == 2

    shown = json.loads(run_finrag("docs", "show", str(scan), "--json").stdout)
    assert shown["parser"] == f"pymupdf+{ENGINE.name}" and shown["ocr_pages"] == [1, 2]

    # The statement's figures were read off the image into the facts store, and a
    # question about them is answered from it, citing the OCR'd page as such.
    answer = run_finrag("ask", "What was Best Buy's revenue in Q2 FY2024?", "--no-llm")
    assert answer.returncode == 0, answer.stderr
    assert "$9,583 million" in answer.stdout
    assert "BESTBUY_2024Q2_10Q p.2 (OCR)" in answer.stdout
    assert "stored fact [1]: Revenue FY2024 Q2 (read by OCR from a scan)" in answer.stdout
    data = json.loads(
        run_finrag("ask", "What was Best Buy's revenue in Q2 FY2024?", "--no-llm", "-j").stdout
    )
    assert data["citations"][0]["ocr"] is True and data["citations"][0]["page"] == 2

    hits = json.loads(run_finrag("search", "net earnings", "--json").stdout)["hits"]
    assert hits and all(h["ocr"] for h in hits)


def test_without_ocr_scanned_pages_are_skipped_and_named_and_text_pages_kept(
    home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "filings"
    folder.mkdir()
    mixed = pdfs.mixed_pdf(folder / "BESTBUY_2024Q2_10Q.pdf", SAMPLE, 4, 3)
    off = {"FINRAG_INGEST__OCR": "off"}

    result = run_finrag("ingest", str(folder), "--json", env=_env(off))
    assert result.returncode == 0, result.stderr
    (file,) = json.loads(result.stdout)["files"]
    assert file["status"] == "ingested" and file["skipped_pages"] == [2]
    assert file["ocr_pages"] == [] and file["parser"] == "pymupdf"
    (warning,) = [w for w in file["warnings"] if "without a text layer" in w]
    assert "skipped (ingest.ocr is off): 2" in warning
    assert "set ingest.ocr to auto" in warning
    human = run_finrag("ingest", str(folder), "--rebuild", env=_env(off))
    assert "1 pages without a text layer skipped" in human.stderr
    assert "warning: " in human.stderr and "set ingest.ocr to auto" in human.stderr

    # Unchanged and OCR still off: nothing to do.
    again = json.loads(run_finrag("ingest", str(folder), "--json", env=_env(off)).stdout)
    assert again["files"][0]["status"] == "unchanged"
    if ENGINE is None:
        return
    # Once OCR is here, the same unchanged file is read again, its scan too.
    now = json.loads(run_finrag("ingest", str(folder), "--json").stdout)
    (file,) = now["files"]
    assert file["status"] == "replaced" and file["ocr_pages"] == [2]
    assert file["skipped_pages"] == []
    shown = json.loads(run_finrag("docs", "show", str(mixed), "--json").stdout)
    assert shown["ocr_pages"] == [2] and shown["skipped_pages"] == []


def test_a_wholly_scanned_pdf_without_ocr_fails_with_the_way_to_read_it(
    home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "filings"
    folder.mkdir()
    pdfs.scanned_pdf(folder / "BESTBUY_2024Q2_10Q.pdf", SAMPLE, [4])
    result = run_finrag("ingest", str(folder), env=_env({"FINRAG_INGEST__PARSER": "pymupdf"}))
    assert result.returncode == 1, result.stderr
    assert "no text layer" in result.stderr and "--parser pymupdf does not OCR" in result.stderr
    assert "hint: to read such pages, use --parser auto" in result.stderr
    without = run_finrag("ingest", str(folder), env=_env({"FINRAG_INGEST__OCR": "off"}))
    assert "and ingest.ocr is off" in without.stderr
    assert "set ingest.ocr to auto" in without.stderr


def test_with_a_fallback_parser_a_scan_without_ocr_goes_to_it(
    store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from finrag.ingest.parse import optional
    from finrag.ingest.pipeline import ingest
    from tests.test_parsers_optional import _RecordedMarker

    settings, st = store
    monkeypatch.setattr(optional, "MarkerParser", _RecordedMarker)
    scan = pdfs.scanned_pdf(tmp_path / "BESTBUY_2024Q2_10Q.pdf", SAMPLE, [4])
    chosen = settings.model_copy(
        update={
            "ingest": settings.ingest.model_copy(
                update={"parser": "auto", "ocr": "off", "fallback_parser": "marker"}
            )
        }
    )
    (result,) = ingest([scan], chosen, st).results
    assert result.status == "ingested" and result.parser == "marker"
    assert result.warnings[0].startswith("parsed by marker: no page has a text layer")


def test_doctor_says_whether_scans_can_be_read(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings()
    if ENGINE is not None:
        check = _check_ocr(settings)
        assert check.status == "ok" and ENGINE.name in check.detail
    monkeypatch.setattr(ocr.shutil, "which", lambda _name: None)
    monkeypatch.setitem(ocr._LOADERS, "rapidocr", lambda: (None, "rapidocr: not installed"))
    ocr.ocr_status.cache_clear()
    try:
        check = _check_ocr(settings)
        assert check.status == "warn" and not check.required
        assert "tesseract: not installed" in check.detail and "skipped" in check.detail
        assert "apt-get install tesseract-ocr" in check.fix
        off = settings.model_copy(
            update={"ingest": settings.ingest.model_copy(update={"ocr": "off"})}
        )
        assert _check_ocr(off).status == "skip"
        plain = settings.model_copy(
            update={"ingest": settings.ingest.model_copy(update={"parser": "pymupdf"})}
        )
        assert _check_ocr(plain).detail == "not used by --parser pymupdf"
    finally:
        ocr.ocr_status.cache_clear()


def _env(extra: dict[str, str]) -> dict[str, str]:
    import os

    return {**os.environ, **extra}
