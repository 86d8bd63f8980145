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


@dataclass
class Page:
    number: int  # 1-based, as a PDF viewer shows it
    markdown: str


@dataclass
class ParsedDocument:
    pages: list[Page]
    parser: str
    # Metadata the file itself declares (EDGAR's dei: facts, PDF info), before any guessing.
    declared: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # recovered damage, degraded pages

    @property
    def text(self) -> str:
        return "\n\n".join(p.markdown for p in self.pages)


class Parser(Protocol):
    name: str

    def parse(self, path: Path) -> ParsedDocument: ...


def parser_for(path: Path, kind: str, preferred: str = "auto") -> Parser:
    """The parser for a file of ``kind`` ('pdf', 'html', 'markdown', 'text')."""
    if kind == "html":
        from finrag.ingest.parse.html import EdgarHtmlParser

        return EdgarHtmlParser()
    if kind in ("markdown", "text"):
        from finrag.ingest.parse.text import TextParser

        return TextParser()
    if kind != "pdf":
        raise DocumentParseError(f"no parser for {kind} files: {path}")
    if preferred in ("auto", "pymupdf"):
        from finrag.ingest.parse.pdf import PyMuPDFParser

        return PyMuPDFParser()
    if preferred == "marker":
        from finrag.ingest.parse.optional import MarkerParser

        return MarkerParser()
    if preferred == "llamaparse":
        from finrag.ingest.parse.optional import LlamaParseParser

        return LlamaParseParser()
    raise UsageError(f"unknown parser {preferred!r}", hint="use pymupdf, marker or llamaparse")
