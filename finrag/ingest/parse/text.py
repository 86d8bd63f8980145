"""Markdown and plain text: already text, one page (form feeds split pages when present)."""

from __future__ import annotations

from pathlib import Path

from finrag.errors import DocumentParseError
from finrag.ingest.parse import Page, ParsedDocument


class TextParser:
    name = "text"

    def parse(self, path: Path) -> ParsedDocument:
        raw = path.read_bytes()
        if raw.startswith(b"%PDF-"):
            raise DocumentParseError(
                f"this is a PDF with a {path.suffix} extension", hint="rename it to .pdf"
            )
        if b"\x00" in raw[:4096]:
            raise DocumentParseError("binary content in a text file (wrong extension?)")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")
        parts = text.split("\f")
        pages = [Page(i + 1, part.strip()) for i, part in enumerate(parts)]
        if not any(p.markdown for p in pages):
            raise DocumentParseError("the file is empty")
        return ParsedDocument(pages=pages, parser=self.name)
