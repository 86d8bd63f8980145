"""Documents and their chunks in the store: written whole, replaced whole, removed whole."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

import psycopg

from finrag.refs import document_fields

if TYPE_CHECKING:
    import numpy as np

    from finrag.ingest.chunk import Chunk


@dataclass
class StoredDocument:
    id: int
    path: str
    sha256: str
    pipeline_hash: str
    parser: str
    company: str | None
    ticker: str | None
    form_type: str | None
    fiscal_year: int | None
    fiscal_quarter: int | None
    period_end: date | None
    pages: int | None
    chunks: int
    tables: int
    metadata_source: dict[str, str]
    ingested_at: datetime
    ocr_pages: list[int]  # read by OCR (no text layer)
    skipped_pages: list[int]  # no text layer, and nothing read them

    def as_dict(self) -> dict[str, Any]:
        """Its fields, with ``document`` and ``document_id`` as every --json names a
        document (finrag.refs)."""
        fields = {
            k: (v.isoformat() if isinstance(v, date | datetime) else v)
            for k, v in self.__dict__.items()
        }
        return {**fields, **document_fields(self.path, self.id)}


_SELECT = """
SELECT d.id, d.path, d.sha256, d.pipeline_hash, d.parser, c.name, c.ticker, d.form_type,
       d.fiscal_year, d.fiscal_quarter, d.period_end, d.pages,
       (SELECT count(*) FROM chunks k WHERE k.document_id = d.id),
       (SELECT count(*) FROM chunks k WHERE k.document_id = d.id AND k.kind = 'table'),
       d.metadata_source, d.ingested_at, d.ocr_pages, d.skipped_pages
FROM documents d LEFT JOIN companies c ON c.id = d.company_id
"""


def list_documents(conn: psycopg.Connection) -> list[StoredDocument]:
    rows = conn.execute(_SELECT + " ORDER BY c.name NULLS LAST, d.fiscal_year, d.path").fetchall()
    return [StoredDocument(*row) for row in rows]


def _like_escaped(text: str) -> str:
    """``text`` matched literally by LIKE: its escape character first, then % and _."""
    return text.replace("\\", "\\\\").replace("%", r"\%").replace("_", r"\_")


def get_document(conn: psycopg.Connection, ref: str) -> StoredDocument | None:
    """By id, by exact path, or by a unique path suffix ('3M_2018_10K.pdf')."""
    if ref.isascii() and ref.isdigit():  # not "²", which int() refuses
        row = conn.execute(_SELECT + " WHERE d.id = %s", (int(ref),)).fetchone()
        return StoredDocument(*row) if row else None
    rows = conn.execute(
        _SELECT + " WHERE d.path = %s OR d.path LIKE %s ORDER BY (d.path = %s) DESC LIMIT 2",
        (ref, "%/" + _like_escaped(ref.lstrip("/")), ref),
    ).fetchall()
    if not rows:
        return None
    if len(rows) > 1 and rows[0][1] != ref:
        from finrag.errors import UsageError

        raise UsageError(
            f"{ref!r} matches more than one document",
            hint="give the id or the full path (see `finrag docs list`)",
        )
    return StoredDocument(*rows[0])


def find_state(conn: psycopg.Connection, path: str) -> tuple[int, str, str, int] | None:
    """(id, sha256, pipeline_hash, pages skipped without a text layer) of the document
    ingested from ``path``."""
    return conn.execute(
        "SELECT id, sha256, pipeline_hash, cardinality(skipped_pages) FROM documents "
        "WHERE path = %s",
        (path,),
    ).fetchone()


def find_duplicate(conn: psycopg.Connection, sha256: str, path: str) -> str | None:
    row = conn.execute(
        "SELECT path FROM documents WHERE sha256 = %s AND path <> %s LIMIT 1", (sha256, path)
    ).fetchone()
    return row[0] if row else None


def write_document(
    conn: psycopg.Connection,
    *,
    fields: dict[str, Any],
    chunks: Sequence[Chunk],
    vectors: np.ndarray,
) -> int:
    """Insert a document and its chunks, replacing any earlier version at the same path.

    Runs inside the caller's transaction: either all of it lands or none.
    """
    conn.execute("DELETE FROM documents WHERE path = %s", (fields["path"],))
    doc_id = conn.execute(
        """
        INSERT INTO documents (path, sha256, pipeline_hash, parser, company_id, form_type,
                               fiscal_year, fiscal_quarter, period_end, metadata_source, pages,
                               ocr_pages, skipped_pages)
        VALUES (%(path)s, %(sha256)s, %(pipeline_hash)s, %(parser)s, %(company_id)s,
                %(form_type)s, %(fiscal_year)s, %(fiscal_quarter)s, %(period_end)s,
                %(metadata_source)s, %(pages)s, %(ocr_pages)s, %(skipped_pages)s)
        RETURNING id
        """,
        {
            "ocr_pages": [],
            "skipped_pages": [],
            **fields,
            "metadata_source": json.dumps(fields["metadata_source"]),
        },
    ).fetchone()[0]
    with (
        conn.cursor() as cur,
        cur.copy(
            "COPY chunks (document_id, ordinal, kind, page_start, page_end, section_path, content, "
            "embed_text, tokens, flagged, section_kind, ocr, embedding) "
            "FROM STDIN WITH (FORMAT BINARY)"
        ) as copy,
    ):
        copy.set_types(
            [
                "int8",
                "int4",
                "text",
                "int4",
                "int4",
                "text[]",
                "text",
                "text",
                "int4",
                "text",
                "text",
                "bool",
                "vector",
            ]
        )
        for chunk, vector in zip(chunks, vectors, strict=True):
            copy.write_row(
                [
                    doc_id,
                    chunk.ordinal,
                    chunk.kind,
                    chunk.page_start,
                    chunk.page_end,
                    chunk.section_path,
                    chunk.content,
                    chunk.embed_text,
                    chunk.tokens,
                    chunk.flagged,
                    chunk.section_kind,
                    chunk.ocr,
                    vector,
                ]
            )
    return doc_id


def remove_document(conn: psycopg.Connection, doc_id: int) -> str | None:
    """Delete a document; its chunks, vectors, facts, summaries and graph go with it (ON
    DELETE CASCADE). The sha256 of the file it was read from, None if there was none.
    ``finrag.ingest.remove`` also removes what is not a row of the document."""
    row = conn.execute("DELETE FROM documents WHERE id = %s RETURNING sha256", (doc_id,)).fetchone()
    return row[0] if row else None


def holds_sha256(conn: psycopg.Connection, sha256: str) -> bool:
    """Whether a stored document was read from a file with these bytes."""
    row = conn.execute("SELECT 1 FROM documents WHERE sha256 = %s", (sha256,)).fetchone()
    return row is not None


@dataclass(frozen=True)
class CompanyCoverage:
    company: str
    ticker: str | None
    periods: list[str]  # "FY2022 10-K", "FY2024 Q2 10-Q", ...

    def describe(self) -> str:
        name = self.company + (f" ({self.ticker})" if self.ticker else "")
        return f"{name}: {', '.join(self.periods)}"


def store_coverage(conn: psycopg.Connection) -> list[CompanyCoverage]:
    """Which companies, periods and forms the store holds: what a refusal can offer."""
    rows = conn.execute(
        """
        SELECT coalesce(c.name, 'unknown company'), c.ticker, d.fiscal_year, d.fiscal_quarter,
               d.form_type
        FROM documents d LEFT JOIN companies c ON c.id = d.company_id
        ORDER BY 1, d.fiscal_year NULLS LAST, d.fiscal_quarter NULLS FIRST
        """
    ).fetchall()
    coverage: dict[str, CompanyCoverage] = {}
    for name, ticker, year, quarter, form in rows:
        entry = coverage.setdefault(name, CompanyCoverage(name, ticker, []))
        period = " ".join(
            p for p in (f"FY{year}" if year else "", f"Q{quarter}" if quarter else "", form) if p
        )
        if period and period not in entry.periods:
            entry.periods.append(period)
    return list(coverage.values())


def describe_coverage(coverage: list[CompanyCoverage]) -> str:
    """'3M Company: FY2018 10-K, FY2022 10-K; Adobe Inc.: FY2022 10-K' (what replies offer)."""
    if not coverage:
        return "no filings yet (`finrag ingest PATH` adds some)"
    return "; ".join(c.describe() for c in coverage)
