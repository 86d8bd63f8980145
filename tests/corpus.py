"""Hand-written documents stored through the real write path (no PDF needed)."""

from __future__ import annotations

import psycopg

from finrag.db.companies import resolve_company
from finrag.db.documents import write_document
from finrag.embed import Embedder
from finrag.ingest.chunk import Chunk


def add_document(
    conn: psycopg.Connection,
    embedder: Embedder,
    name: str,
    texts: list[str],
    *,
    company: str,
    year: int,
    form: str = "10-K",
    quarter: int | None = None,
    kinds: list[str] | None = None,
) -> int:
    """Store one document whose chunk i is ``texts[i]`` on page i + 1; return its id."""
    chunks = [
        Chunk(
            ordinal=i,
            kind=(kinds[i] if kinds else "text"),
            page_start=i + 1,
            page_end=i + 1,
            section_path=["Item 7. MD&A"],
            content=text,
            embed_text=text,
            tokens=len(text.split()),
        )
        for i, text in enumerate(texts)
    ]
    with conn.transaction():
        company_id, _ = resolve_company(conn, [company], None)
        return write_document(
            conn,
            fields={
                "path": f"/filings/{name}",
                "sha256": name,
                "pipeline_hash": "test",
                "parser": "text",
                "company_id": company_id,
                "pages": len(texts),
                "form_type": form,
                "fiscal_year": year,
                "fiscal_quarter": quarter,
                "period_end": None,
                "metadata_source": {},
            },
            chunks=chunks,
            vectors=embedder.embed(texts),
        )
