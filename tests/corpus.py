"""Hand-written documents stored through the real write path (no PDF needed)."""

from __future__ import annotations

import psycopg

from finrag.db.companies import resolve_company
from finrag.db.documents import write_document
from finrag.embed import Embedder
from finrag.ingest.chunk import Chunk
from finrag.retrieve.hybrid import Hit


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


ACME_PAGES = [
    "ACME overview: we make anvils and rockets for wholesale customers.",
    "ACME revenue grew 12% to $9.6 billion in 2023 from $8.6 billion in 2022.",
    "ACME capital expenditures were $310 million in 2023, mostly for rocket plants.",
    "Purchases of property, plant and equipment were $275 million in 2022.",
]
GLOBEX_PAGES = [
    "Globex overview: we sell widgets.",
    "Globex revenue fell 3% to $4.0 billion in 2023.",
    "Globex capital expenditures were $95 million in 2023.",
]


def add_small_filings(conn: psycopg.Connection, embedder: Embedder) -> None:
    """Two companies' 2023 10-Ks, one fact a page: enough for answers with known truths."""
    add_document(conn, embedder, "ACME_2023_10K.pdf", ACME_PAGES, company="ACME", year=2023)
    add_document(conn, embedder, "GLOBEX_2023_10K.pdf", GLOBEX_PAGES, company="Globex", year=2023)


def excerpt_number(messages: list[dict], needle: str) -> int:
    """The [n] label the model was shown for the excerpt containing ``needle``."""
    import re

    text = "\n".join(str(m["content"]) for m in messages)
    for block in re.split(r"\n(?=\[\d+\] )", text):
        m = re.match(r"\[(\d+)\] ", block)
        if m and needle in block:
            return int(m.group(1))
    raise AssertionError(f"no excerpt holds {needle!r}")


# The text route's reply to "What was Globex revenue in 2023?" with one quote (k=1).
GLOBEX_QUOTED = {
    "answerable": True,
    "claims": [{"text": "Globex revenue fell 3% to $4.0 billion in 2023", "source": 1}],
}


def quoted(needle: str, text: str, seen: list[str] | None = None):
    """A scripted text-route reply: ``text`` as the one claim, resting on the quote that
    holds ``needle`` (its [n] as the model was shown it); ``seen`` collects the prompts."""

    def reply(messages: list[dict]) -> dict:
        if seen is not None:
            seen.extend(str(m["content"]) for m in messages)
        claim = {"text": text, "source": excerpt_number(messages, needle)}
        return {"answerable": True, "claims": [claim]}

    return reply


def make_hit(**fields) -> Hit:
    """A search hit for tests without a database: defaults for every field, ``fields``
    override them."""
    defaults = dict(
        chunk_id=1,
        document_id=1,
        document="/f/A.pdf",
        company="A",
        fiscal_year=2023,
        fiscal_quarter=None,
        form_type="10-K",
        kind="text",
        page_start=1,
        page_end=1,
        section_path=[],
        content="",
        score=0.5,
        dense_rank=1,
        dense_score=0.5,
        text_rank=None,
        text_score=None,
    )
    return Hit(**(defaults | fields))
