"""PDF -> Markdown pages with PyMuPDF's layout mode (tables come out as pipe tables)."""

from __future__ import annotations

import re
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

    def parse(self, path: Path) -> ParsedDocument:
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
            pages = self._layout_pages(doc)
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

    def _layout_pages(self, doc) -> list[Page]:
        import pymupdf4llm

        try:
            chunks = pymupdf4llm.to_markdown(
                doc,
                page_chunks=True,
                header=False,  # running headers and footers are noise, not content
                footer=False,
                use_ocr=False,
                show_progress=False,
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
