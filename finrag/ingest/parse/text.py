"""Markdown and plain text: already text, one page (form feeds split pages when present)."""

from __future__ import annotations

from pathlib import Path

from finrag.errors import DocumentParseError
from finrag.ingest.parse import Page, ParsedDocument, decode_text


class TextParser:
    name = "text"

    def parse(self, path: Path) -> ParsedDocument:
        text = decode_text(path.read_bytes(), path.suffix)
        # Old Mac and Windows line ends: paragraphs are found at blank lines of "\n".
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        parts = text.split("\f")
        pages = [Page(i + 1, part.strip()) for i, part in enumerate(parts)]
        if not any(p.markdown for p in pages):
            raise DocumentParseError("the file is empty")
        return ParsedDocument(pages=pages, parser=self.name)
