"""Removing documents: every trace of them, in the store and beside it.

The document's rows go by ON DELETE CASCADE (chunks and vectors, facts, summaries, graph
entities, relations and runs). What is not a row of the document goes too: a company left
without filings, the cached answers written before the removal (they quote the filings
they came from, and a store version that no longer exists), and the parsed-Markdown cache
of the file, unless another stored document was read from the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from finrag.db.answer_cache import drop_stale
from finrag.db.companies import remove_companies_without_documents
from finrag.db.documents import holds_sha256, remove_document
from finrag.ingest.prepare import parsed_cache_files


@dataclass
class Removal:
    documents: list[int] = field(default_factory=list)
    companies: list[str] = field(default_factory=list)  # left without a document: removed
    cached_answers: int = 0
    parsed_files: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "documents": self.documents,
            "companies": self.companies,
            "cached_answers": self.cached_answers,
            "parsed_files": self.parsed_files,
        }


def remove_documents(conn: psycopg.Connection, doc_ids: Iterable[int], cache_dir: Path) -> Removal:
    """Remove these documents and commit (with whatever the connection's transaction
    holds), then their files' parsed-Markdown cache: a failed commit leaves it all."""
    removal = Removal()
    shas: set[str] = set()
    for doc_id in doc_ids:
        sha = remove_document(conn, doc_id)
        if sha is not None:
            removal.documents.append(doc_id)
            shas.add(sha)
    removal.companies = remove_companies_without_documents(conn)
    removal.cached_answers = drop_stale(conn)
    unread = sorted(sha for sha in shas if not holds_sha256(conn, sha))
    conn.commit()
    for sha in unread:
        for path in parsed_cache_files(cache_dir, sha):
            path.unlink(missing_ok=True)
            removal.parsed_files.append(str(path))
    return removal
