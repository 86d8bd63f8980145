"""PDF -> Markdown pages with PyMuPDF's layout mode (tables come out as pipe tables).

Pages without a text layer (scans) are read by OCR when an engine is given
(finrag.ingest.parse.ocr); without one they are skipped, and the document says which.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from finrag.errors import DocumentParseError, NoTextLayer
from finrag.ingest.parse import Page, ParsedDocument, page_ranges
from finrag.ingest.parse.ocr import ENABLE_HINT, OCR_DPI, OCR_LANGUAGE, OcrEngine

_BOLD = re.compile(r"\*\*")
# _italic_ markers PyMuPDF adds around words; never an underscore inside a word.
_ITALIC = re.compile(r"(?<![\w_])_(?=\S)([^_\n]*?\S)_(?![\w_])")
_BR = re.compile(r"\s*<br\s*/?>\s*", re.IGNORECASE)
_INLINE_TAGS = re.compile(r"</?(u|b|i|em|strong|sup|sub|span|mark|s)\b[^>]*>", re.IGNORECASE)
_MIN_TEXT_CHARS = 20  # fewer over the whole file (or on a page with an image): no text layer


def clean_markdown(text: str) -> str:
    """Drop emphasis and stray HTML line breaks: noise for embeddings and full-text search."""
    text = _BR.sub(" ", text)
    text = _INLINE_TAGS.sub("", text)
    text = _BOLD.sub("", text)
    return _ITALIC.sub(r"\1", text)


@dataclass(frozen=True)
class NoOcr:
    """Why pages without a text layer go unread, and how to have them read."""

    why: str
    hint: str


NOT_THIS_PARSER = NoOcr(
    "--parser pymupdf does not OCR",
    "to read such pages, use --parser auto (the default) with an OCR engine",
)
OCR_OFF = NoOcr("ingest.ocr is off", "to read such pages, set ingest.ocr to auto")
NO_ENGINE = NoOcr(
    "no OCR engine is here", f"to read such pages, {ENABLE_HINT} (`finrag doctor` shows OCR)"
)


class PyMuPDFParser:
    name = "pymupdf"

    reports_pages = True  # parse() takes on_page: prepare() reports pages as they are read

    def __init__(self, ocr: OcrEngine | None = None, no_ocr: NoOcr | None = None) -> None:
        self.ocr = ocr  # None: pages without a text layer are skipped, and reported
        self.no_ocr = no_ocr or NOT_THIS_PARSER

    def parse(self, path: Path, on_page: PageProgress | None = None) -> ParsedDocument:
        import pymupdf

        # MuPDF reports damage on stderr itself; we report it per file instead.
        pymupdf.TOOLS.mupdf_display_errors(False)
        pymupdf.TOOLS.mupdf_display_warnings(False)
        # pymupdf4llm's notes (one line per OCR'd page, its "parser messages") go through
        # pymupdf.message to the stdout of import time, where --json writes: debug logs.
        pymupdf.set_messages(pylogging=True, pylogging_name="pymupdf", pylogging_level=10)
        try:
            doc = pymupdf.open(path, filetype="pdf")
        except Exception as exc:  # pymupdf raises FileDataError, RuntimeError, ValueError
            raise DocumentParseError(f"not a readable PDF ({exc})") from None
        with doc:
            if doc.needs_pass and not doc.authenticate(""):
                raise DocumentParseError(
                    "password-protected PDF",
                    hint="remove the password (e.g. `qpdf --decrypt --password=… in out`)",
                )
            if doc.page_count == 0:
                raise DocumentParseError("the PDF has no pages")
            try:
                chars = [len(page.get_text("text").strip()) for page in doc]
                # A scanned page is an image with (next to) no text over it; a blank page
                # has neither and is no loss.
                scanned = [
                    n
                    for n, count in enumerate(chars, 1)
                    if count < _MIN_TEXT_CHARS and doc[n - 1].get_images()
                ]
            except Exception as exc:
                raise DocumentParseError(f"damaged PDF ({exc})") from None
            if sum(chars) < _MIN_TEXT_CHARS and doc.is_repaired:
                raise DocumentParseError(
                    "damaged or truncated PDF: no readable text could be recovered",
                    hint="get a complete copy of the file",
                )
            if sum(chars) < _MIN_TEXT_CHARS and self.ocr is None:
                raise NoTextLayer(
                    f"no text layer: the PDF holds scanned images only, and {self.no_ocr.why}",
                    hint=self.no_ocr.hint,
                )
            declared = {k: v for k, v in (doc.metadata or {}).items() if isinstance(v, str) and v}
            warnings = []
            if doc.is_repaired:
                warnings.append("damaged or truncated PDF: PyMuPDF repaired it; check the pages")
            to_ocr = set(scanned) if self.ocr is not None else set()
            pages, ocr_done = self._layout_pages(doc, on_page, to_ocr)
            plain = 0
            for page in pages:
                # Layout analysis can drop text it does not classify; never lose a page.
                if not page.markdown.strip():
                    text = doc[page.number - 1].get_text("text").strip()
                    if text:
                        page.markdown = text
                        plain += 1
                page.ocr = page.number in ocr_done and bool(page.markdown.strip())
            if plain:
                warnings.append(f"{plain} page(s) kept as plain text: layout analysis found none")
            read = [p.number for p in pages if p.ocr]
            skipped = [n for n in scanned if n not in read]
            if self.ocr is not None and not any(p.markdown.strip() for p in pages):
                raise DocumentParseError(
                    f"no text layer, and OCR ({self.ocr.label}) found no text on its "
                    f"{len(scanned)} scanned page(s)",
                    hint="check the scan's quality: finrag OCRs at "
                    f"{OCR_DPI} dpi in English ({OCR_LANGUAGE})",
                )
            if read:
                assert self.ocr is not None
                warnings.append(
                    f"{len(read)} page(s) without a text layer read by OCR "
                    f"({self.ocr.label}): {page_ranges(read)}"
                )
            if skipped and self.ocr is None:
                warnings.append(
                    f"{len(skipped)} page(s) without a text layer skipped "
                    f"({self.no_ocr.why}): {page_ranges(skipped)}; {self.no_ocr.hint}"
                )
            elif skipped:
                warnings.append(
                    f"{len(skipped)} page(s) without a text layer: OCR found no text on "
                    f"{page_ranges(skipped)}"
                )
        name = f"{self.name}+{self.ocr.name}" if read and self.ocr is not None else self.name
        return ParsedDocument(
            pages=pages, parser=name, declared=declared, warnings=warnings, skipped_pages=skipped
        )

    def _layout_pages(
        self, doc, on_page: PageProgress | None = None, to_ocr: set[int] = frozenset()
    ) -> tuple[list[Page], set[int]]:
        """The pages as Markdown, and the numbers of those OCR read. pymupdf4llm decides
        page by page whether OCR would help (a chart on a text page can tempt it); only the
        pages in ``to_ocr``, those without a text layer, are let through to the engine."""
        import pymupdf4llm

        ocr_done: set[int] = set()
        engine = self.ocr

        def ocr_scanned_only(page, **kwargs):
            if page.number + 1 in to_ocr and engine is not None:
                ocr_done.add(page.number + 1)
                engine.run(page, **kwargs)

        ocr_kwargs = {}
        if to_ocr:
            ocr_kwargs = {
                "force_ocr": True,
                "ocr_function": ocr_scanned_only,
                "ocr_language": OCR_LANGUAGE,
                "ocr_dpi": OCR_DPI,
            }
        try:
            with _pages_reported(doc.page_count, on_page) as show_progress, _quiet():
                chunks = pymupdf4llm.to_markdown(
                    doc,
                    page_chunks=True,
                    header=False,  # running headers and footers are noise, not content
                    footer=False,
                    use_ocr=bool(to_ocr),
                    show_progress=show_progress,
                    **ocr_kwargs,
                )
        except Exception as exc:
            raise DocumentParseError(
                f"layout analysis failed ({type(exc).__name__}: {exc})"
            ) from None
        pages = [
            Page(
                number=int(chunk["metadata"]["page_number"]), markdown=clean_markdown(chunk["text"])
            )
            for chunk in chunks
        ]
        return pages, ocr_done


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """pymupdf4llm prints a line per OCR'd page and a closing block of 'parser messages'
    on stdout, where `--json` writes."""
    with contextlib.redirect_stdout(io.StringIO()):
        yield


PageProgress = Callable[[int, int], None]  # (pages read, pages in the document)


@contextlib.contextmanager
def _pages_reported(total: int, on_page: PageProgress | None) -> Iterator[bool]:
    """pymupdf4llm reads a document's pages in one call, with no hook but its own progress
    bar: while ``on_page`` is given, that bar is swapped for one that calls ``on_page``
    after each page of its first pass (the layout analysis: the slow part), and the line
    it prints is swallowed. The pages and their text are exactly those of a call without
    it (show_progress changes only the iterator). Yields the show_progress to pass."""
    modules = []
    if on_page is not None:
        for name in ("document_layout", "pymupdf_rag"):
            module = sys.modules.get(f"pymupdf4llm.helpers.{name}")
            if module is not None and hasattr(module, "ProgressBar"):
                modules.append(module)
    if not modules:
        yield False
        return
    passes = [0]

    def reporting(items, *_args, **_kwargs):
        passes[0] += 1
        items = list(items)
        if passes[0] > 1:  # later passes (rendering) are quick
            return iter(items)
        return _each_page(items, total, on_page)

    saved = [(m, m.ProgressBar) for m in modules]
    try:
        for module in modules:
            module.ProgressBar = reporting
        with contextlib.redirect_stdout(io.StringIO()):
            yield True
    finally:
        for module, original in saved:
            module.ProgressBar = original


def _each_page(items: list, total: int, on_page: PageProgress) -> Iterator:
    for n, item in enumerate(items, 1):
        yield item
        on_page(n, total)  # the page just handed out has been read when the next is asked


def cover_text(path: Path, pages: int = 2) -> str:
    """The text layer of a PDF's first pages, as printed. The layout reader can drop a
    cover's lines it takes for a page header ("For the fiscal year ended December 31,
    2022" above American Express's registrant name), which is where a filing states its
    period; '' when the file cannot be read."""
    import pymupdf

    try:
        with pymupdf.open(path, filetype="pdf") as doc:
            return "\n".join(doc[i].get_text() for i in range(min(pages, doc.page_count)))
    except Exception:  # a damaged file: the parser has reported it already
        return ""
