"""A stored page read back: the document a citation names, and that page's chunks in order."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

import psycopg

from finrag.db.documents import StoredDocument, get_document, list_documents
from finrag.errors import UsageError

_HINT = "see `finrag docs list` for the documents in the store"


@dataclass(frozen=True)
class PageChunk:
    chunk_id: int
    kind: str
    page_start: int | None
    page_end: int | None
    section_path: list[str]
    content: str

    @property
    def body(self) -> str:
        """The chunk without the section heading line chunking put on top of it."""
        heading = " > ".join(self.section_path)
        first, _, rest = self.content.partition("\n")
        return rest.lstrip("\n") if heading and first.strip() == heading else self.content


def find_document(conn: psycopg.Connection, ref: str) -> StoredDocument:
    """By id, path, file name, or file name without its extension (as Sources prints it)."""
    doc = get_document(conn, ref)
    if doc is not None:
        return doc
    wanted = PurePath(ref).name.lower()
    matches = [d for d in list_documents(conn) if PurePath(d.path).stem.lower() == wanted]
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(f"{d.id} ({d.path})" for d in matches)
        raise UsageError(f"{ref!r} names more than one document: {names}", hint="give the id")
    raise UsageError(f"no document {ref!r} in the store", hint=_HINT)


def page_chunks(conn: psycopg.Connection, doc: StoredDocument, page: int) -> list[PageChunk]:
    """The chunks on ``page`` (1-based) in document order; a page outside the document is
    an error that gives its range."""
    if page < 1 or (doc.pages is not None and page > doc.pages):
        last = f"1-{doc.pages}" if doc.pages else "none stored"
        raise UsageError(
            f"page {page} is not in {PurePath(doc.path).name} (pages {last})",
            hint="give a page in that range with --page N",
        )
    rows = conn.execute(
        "SELECT id, kind, page_start, page_end, section_path, content FROM chunks "
        "WHERE document_id = %s AND page_start <= %s AND coalesce(page_end, page_start) >= %s "
        "ORDER BY ordinal",
        (doc.id, page, page),
    ).fetchall()
    return [PageChunk(*row) for row in rows]


def page_markdown(chunks: list[PageChunk]) -> str:
    """The page as stored: each section's heading once, then its chunks' text."""
    parts: list[str] = []
    heading = None
    for chunk in chunks:
        if chunk.section_path and chunk.section_path != heading:
            heading = chunk.section_path
            parts.append("## " + " > ".join(heading))
        parts.append(chunk.body.strip())
    return "\n\n".join(p for p in parts if p) + ("\n" if parts else "")
