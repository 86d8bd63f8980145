"""Parsers: a filing on disk -> Markdown, page by page.

Every parser returns the same shape, so chunking never cares where text came from.
Tables are GitHub pipe tables; headings are ``#`` lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from finrag.errors import DocumentParseError, UsageError

PARSER_VERSION = 1  # bump when any parser's output changes: invalidates the Markdown cache

# Past this many characters a line or paragraph is cut into paragraphs (at a sentence end
# where there is one): every pattern and the sentence splitter downstream then sees
# bounded input. The longest paragraph in six EDGAR 10-K/10-Qs runs 3,515 characters.
MAX_PARAGRAPH_CHARS = 8_000


@dataclass
class Page:
    number: int  # 1-based, as a PDF viewer shows it
    markdown: str
    ocr: bool = False  # read by OCR: the page has no text layer


@dataclass
class ParsedDocument:
    pages: list[Page]
    parser: str
    # Metadata the file itself declares (EDGAR's dei: facts, PDF info), before any guessing.
    declared: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # recovered damage, degraded pages
    # Pages without a text layer that nothing read (no OCR engine, or OCR found no text).
    skipped_pages: list[int] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n\n".join(p.markdown for p in self.pages)

    @property
    def ocr_pages(self) -> list[int]:
        return [p.number for p in self.pages if p.ocr]


def page_ranges(numbers: list[int]) -> str:
    """'1-4, 7' for [1, 2, 3, 4, 7]."""
    spans: list[list[int]] = []
    for n in sorted(set(numbers)):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in spans)


class Parser(Protocol):
    name: str

    def parse(self, path: Path) -> ParsedDocument: ...


PDF_PARSERS = ("auto", "pymupdf", "marker", "llamaparse")
FALLBACK_PARSERS = ("none", "marker", "llamaparse")


def parser_for(
    path: Path, kind: str, preferred: str = "auto", *, ocr: str = "auto", fallback: str = "none"
) -> Parser:
    """The parser for a file of ``kind`` ('pdf', 'html', 'markdown', 'text').

    For PDFs, ``preferred`` 'auto' reads text pages with PyMuPDF, pages without a text
    layer with the ``ocr`` engine ('auto', 'tesseract', 'rapidocr', 'off'), and hands a
    document whose pages stay unread to the ``fallback`` parser when one is configured;
    'pymupdf' never OCRs; 'marker' and 'llamaparse' parse every PDF themselves.
    """
    if kind == "html":
        from finrag.ingest.parse.html import EdgarHtmlParser

        return EdgarHtmlParser()
    if kind in ("markdown", "text"):
        from finrag.ingest.parse.text import TextParser

        return TextParser()
    if kind != "pdf":
        raise DocumentParseError(f"no parser for {kind} files: {path}")
    if preferred == "auto":
        from finrag.ingest.parse.auto import AutoPdfParser

        return AutoPdfParser(ocr=ocr, fallback=fallback)
    if preferred == "pymupdf":
        from finrag.ingest.parse.pdf import PyMuPDFParser

        return PyMuPDFParser()
    if preferred in ("marker", "llamaparse"):
        return optional_parser(preferred)
    raise UsageError(f"unknown parser {preferred!r}", hint=f"use one of: {', '.join(PDF_PARSERS)}")


def optional_parser(name: str) -> Parser:
    """Marker or LlamaParse; ParserUnavailable, within seconds, when it cannot run here."""
    from finrag.ingest.parse.optional import LlamaParseParser, MarkerParser

    if name == "marker":
        return MarkerParser()
    if name == "llamaparse":
        return LlamaParseParser()
    raise UsageError(f"unknown parser {name!r}", hint="use marker or llamaparse")


# C0 controls other than tab, newline, carriage return and form feed, and DEL: text has
# almost none, random or compressed bytes about one in nine.
_CONTROL_BYTES = bytes(b for b in range(32) if b not in b"\t\n\r\f") + b"\x7f"
_MAX_CONTROL_SHARE = 0.01
# English filings in Latin-1 or cp1252 have a few accented letters that are not UTF-8;
# binary data has about half its bytes undecodable.
_MAX_UNDECODABLE_SHARE = 0.2
_WRONG_TYPE_HINT = "finrag reads PDF, HTML, Markdown and plain text: is the extension right?"


def decode_text(raw: bytes, suffix: str) -> str:
    """The text of a file that claims to be HTML, Markdown or text; DocumentParseError
    when its bytes say it is something else."""
    if raw.startswith(b"%PDF-"):
        raise DocumentParseError(
            f"this is a PDF with a {suffix} extension", hint="rename it to .pdf"
        )
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with its byte order mark
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise DocumentParseError(
                f"binary content: not valid UTF-16 at byte {exc.start}", hint=_WRONG_TYPE_HINT
            ) from None
    if (nul := raw.find(b"\x00")) >= 0:
        raise DocumentParseError(
            f"binary content: a NUL byte at offset {nul}", hint=_WRONG_TYPE_HINT
        )
    controls = len(raw) - len(raw.translate(None, _CONTROL_BYTES))
    if controls > _MAX_CONTROL_SHARE * len(raw):
        raise DocumentParseError(
            f"binary content: {controls / len(raw):.0%} of its bytes are control characters",
            hint=_WRONG_TYPE_HINT,
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    undecodable = raw.decode("utf-8", errors="replace").count("\ufffd")
    if undecodable > _MAX_UNDECODABLE_SHARE * len(raw):
        raise DocumentParseError(
            f"binary content: {undecodable / len(raw):.0%} of its bytes are not text",
            hint=_WRONG_TYPE_HINT,
        )
    return raw.decode("cp1252", errors="replace")


def bound_paragraphs(markdown: str, limit: int = MAX_PARAGRAPH_CHARS) -> str:
    """``markdown`` with every line and paragraph longer than ``limit`` characters cut into
    paragraphs of at most ``limit``; the rows of a table are never parted."""
    if len(markdown) <= limit:
        return markdown
    out: list[str] = []
    run = 0  # characters in the paragraph being written
    previous_row = False
    for line in markdown.split("\n"):
        row = line.lstrip().startswith("|")
        if not line.strip():
            run = 0
        elif len(line) > limit:
            if run:
                out.append("")
            out.append("\n\n".join(_cut_line(line, limit)))
            run, previous_row = limit + 1, False  # what follows starts a paragraph
            continue
        elif run and run + len(line) > limit and not (row and previous_row):
            out.append("")
            run = 0
        run += len(line) + 1 if line.strip() else 0
        out.append(line)
        previous_row = row
    return "\n".join(out)


_SENTENCE_ENDS = (". ", "? ", "! ", '." ', ".) ")


def _cut_line(line: str, limit: int) -> list[str]:
    """Pieces of at most ``limit`` characters, each ending where a sentence does if one
    ends in its second half, else at a space, else anywhere."""
    pieces: list[str] = []
    start = 0
    while len(line) - start > limit:
        end = start + limit
        cut = -1
        for mark in _SENTENCE_ENDS:
            if (at := line.rfind(mark, start, end)) >= 0:
                cut = max(cut, at + len(mark) - 1)  # the space stays with the next piece
        if cut - start < limit // 2:
            cut = max(line.rfind(" ", start, end), line.rfind("\t", start, end))
        if cut - start < limit // 2:
            cut = end
        pieces.append(line[start:cut])
        start = cut
    pieces.append(line[start:])
    return [p for p in (piece.strip() for piece in pieces) if p]
