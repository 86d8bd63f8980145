"""``--parser auto``: each PDF page read the cheapest way that reads it.

Text pages go through PyMuPDF's layout analysis, pages without a text layer through OCR
(when an engine is on the machine), and a document whose pages would still go unread
goes whole to the optional parser the user configured (``ingest.fallback_parser``). The
parser that did the work is recorded with the document (``finrag docs show``).
"""

from __future__ import annotations

from pathlib import Path

from finrag.errors import DocumentParseError, NoTextLayer, ParserUnavailable
from finrag.ingest.parse import ParsedDocument, optional_parser, page_ranges
from finrag.ingest.parse.ocr import find_ocr_engine
from finrag.ingest.parse.pdf import NO_ENGINE, OCR_OFF, PageProgress, PyMuPDFParser


class AutoPdfParser:
    name = "auto"
    reports_pages = True

    def __init__(self, ocr: str = "auto", fallback: str = "none") -> None:
        self.ocr = find_ocr_engine(ocr)
        self.no_ocr = OCR_OFF if ocr == "off" else NO_ENGINE
        self.fallback = fallback

    def parse(self, path: Path, on_page: PageProgress | None = None) -> ParsedDocument:
        try:
            parsed = PyMuPDFParser(self.ocr, self.no_ocr).parse(path, on_page)
        except NoTextLayer:
            if self.fallback == "none":
                raise
            return self._fallback(path, f"no page has a text layer and {self.no_ocr.why}")
        if parsed.skipped_pages and self.fallback != "none":
            why = f"page(s) {page_ranges(parsed.skipped_pages)} have no text layer"
            try:
                return self._fallback(path, why)
            except (ParserUnavailable, DocumentParseError) as exc:
                parsed.warnings.append(f"{why}; the {self.fallback} parser could not: {exc}")
        return parsed

    def _fallback(self, path: Path, why: str) -> ParsedDocument:
        parsed = optional_parser(self.fallback).parse(path)
        parsed.warnings.insert(0, f"parsed by {self.fallback}: {why}")
        return parsed
