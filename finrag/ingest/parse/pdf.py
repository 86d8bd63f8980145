"""PDF -> Markdown pages with PyMuPDF's layout mode (tables come out as pipe tables)."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from finrag.errors import DocumentParseError
from finrag.ingest.parse import Page, ParsedDocument

_BOLD = re.compile(r"\*\*")
# _italic_ markers PyMuPDF adds around words; never an underscore inside a word.
_ITALIC = re.compile(r"(?<![\w_])_(?=\S)([^_\n]*?\S)_(?![\w_])")
_BR = re.compile(r"\s*<br\s*/?>\s*", re.IGNORECASE)
_INLINE_TAGS = re.compile(r"</?(u|b|i|em|strong|sup|sub|span|mark|s)\b[^>]*>", re.IGNORECASE)
_MIN_TEXT_CHARS = 20  # fewer over the whole file: no text layer to speak of


def clean_markdown(text: str) -> str:
    """Drop emphasis and stray HTML line breaks: noise for embeddings and full-text search."""
    text = _BR.sub(" ", text)
    text = _INLINE_TAGS.sub("", text)
    text = _BOLD.sub("", text)
    return _ITALIC.sub(r"\1", text)


class PyMuPDFParser:
    name = "pymupdf"

    reports_pages = True  # parse() takes on_page: prepare() reports pages as they are read

    def parse(self, path: Path, on_page: PageProgress | None = None) -> ParsedDocument:
        import pymupdf

        # MuPDF reports damage on stderr itself; we report it per file instead.
        pymupdf.TOOLS.mupdf_display_errors(False)
        pymupdf.TOOLS.mupdf_display_warnings(False)
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
                raw_chars = sum(len(page.get_text("text").strip()) for page in doc)
            except Exception as exc:
                raise DocumentParseError(f"damaged PDF ({exc})") from None
            if raw_chars < _MIN_TEXT_CHARS and doc.is_repaired:
                raise DocumentParseError(
                    "damaged or truncated PDF: no readable text could be recovered",
                    hint="get a complete copy of the file",
                )
            if raw_chars < _MIN_TEXT_CHARS:
                raise DocumentParseError(
                    "no text layer: the PDF holds scanned images only",
                    hint="OCR it first (e.g. `ocrmypdf in.pdf out.pdf`); finrag does not OCR",
                )
            declared = {k: v for k, v in (doc.metadata or {}).items() if isinstance(v, str) and v}
            warnings = []
            if doc.is_repaired:
                warnings.append("damaged or truncated PDF: PyMuPDF repaired it; check the pages")
            pages = self._layout_pages(doc, on_page)
            plain = 0
            for page in pages:
                # Layout analysis can drop text it does not classify; never lose a page.
                if not page.markdown.strip():
                    text = doc[page.number - 1].get_text("text").strip()
                    if text:
                        page.markdown = text
                        plain += 1
            if plain:
                warnings.append(f"{plain} page(s) kept as plain text: layout analysis found none")
        return ParsedDocument(pages=pages, parser=self.name, declared=declared, warnings=warnings)

    def _layout_pages(self, doc, on_page: PageProgress | None = None) -> list[Page]:
        import pymupdf4llm

        try:
            with _pages_reported(doc.page_count, on_page) as show_progress:
                chunks = pymupdf4llm.to_markdown(
                    doc,
                    page_chunks=True,
                    header=False,  # running headers and footers are noise, not content
                    footer=False,
                    use_ocr=False,
                    show_progress=show_progress,
                )
        except Exception as exc:
            raise DocumentParseError(
                f"layout analysis failed ({type(exc).__name__}: {exc})"
            ) from None
        return [
            Page(
                number=int(chunk["metadata"]["page_number"]), markdown=clean_markdown(chunk["text"])
            )
            for chunk in chunks
        ]


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
