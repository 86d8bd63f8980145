"""Write a stored document's graph (sql/011, sql/012) from its chunks, in the caller's
transaction: what the rules find, and what a model read (finrag.graph.llm_pass) when given."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from finrag.graph.extract import MAX_CHUNKS, ChunkText, Triple, extract_graph, normalize_name


@dataclass
class _Entity:
    kind: str
    name: str
    aliases: set[str] = field(default_factory=set)
    id: int | None = None


def read_chunk_texts(conn: psycopg.Connection, document_id: int) -> list[ChunkText]:
    """The document's first MAX_CHUNKS chunks in reading order."""
    rows = conn.execute(
        "SELECT id, kind, page_start, section_path, section_kind, content FROM chunks "
        "WHERE document_id = %s ORDER BY ordinal LIMIT %s",
        (document_id, MAX_CHUNKS),
    ).fetchall()
    return [ChunkText(r[0], r[1], r[2], tuple(r[3] or ()), r[4], r[5]) for r in rows]


def filer_entity(conn: psycopg.Connection, document_id: int, company_id: int | None) -> _Entity:
    """The company entity: its canonical name and aliases, or the file's name unresolved."""
    if company_id is not None:
        row = conn.execute(
            "SELECT name, ticker, aliases FROM companies WHERE id = %s", (company_id,)
        ).fetchone()
        if row:
            aliases = {normalize_name(a) for a in row[2] or ()}
            if row[1]:
                aliases.add(normalize_name(row[1]))
            return _Entity("company", row[0], aliases)
    path = conn.execute("SELECT path FROM documents WHERE id = %s", (document_id,)).fetchone()
    return _Entity("company", Path(path[0]).stem if path else f"document {document_id}")


def write_graph(
    conn: psycopg.Connection,
    document_id: int,
    company_id: int | None,
    llm_triples: Sequence[Triple] = (),
) -> int:
    """Replace the document's entities and relations with what the rules find and the
    given model-read triples (a relation both state is the rules'); how many relations
    were written. The document's record of a model reading goes: the caller that passes
    ``llm_triples`` writes it anew."""
    graph = extract_graph(read_chunk_texts(conn, document_id))
    graph.triples.extend(llm_triples)
    conn.execute("DELETE FROM entities WHERE document_id = %s", (document_id,))
    conn.execute("DELETE FROM graph_runs WHERE document_id = %s", (document_id,))
    filer = filer_entity(conn, document_id, company_id)
    entities: dict[tuple[str, str], _Entity] = {("company", normalize_name(filer.name)): filer}

    def entity(kind: str, name: str, aliases: tuple[str, ...] = ()) -> _Entity:
        key = (kind, normalize_name(name))
        found = entities.setdefault(key, _Entity(kind, name))
        found.aliases.update(normalize_name(a) for a in aliases)
        return found

    edges: list[tuple[_Entity, Triple, _Entity]] = []
    for t in graph.triples:
        if not normalize_name(t.object_name):
            continue
        subject = entity(*t.subject) if t.subject else filer
        edges.append((subject, t, entity(t.object_kind, t.object_name, t.object_aliases)))
        if t.subject and subject.kind == "subsidiary":
            edges.append((filer, _implied_subsidiary(t, subject.name), subject))
    with conn.cursor() as cur:
        for e in entities.values():
            cur.execute(
                "INSERT INTO entities (document_id, company_id, kind, name, name_norm, aliases) "
                "VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                (
                    document_id,
                    company_id,
                    e.kind,
                    e.name,
                    normalize_name(e.name),
                    sorted(e.aliases - {normalize_name(e.name)}),
                ),
            )
            e.id = cur.fetchone()[0]
        rows: dict[tuple, tuple] = {}
        for s, t, o in edges:
            if s is not o:
                rows.setdefault(
                    (s.id, t.predicate, o.id, t.chunk_id), (t.page, t.evidence[:300], t.extractor)
                )
        cur.executemany(
            "INSERT INTO relations (document_id, subject_id, predicate, object_id, chunk_id, "
            "page, evidence, extractor) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            [(document_id, *key, *value) for key, value in rows.items()],
        )
    return len(rows)


def _implied_subsidiary(t: Triple, name: str) -> Triple:
    return Triple(
        "has_subsidiary", "subsidiary", name, t.chunk_id, t.page, t.evidence, extractor=t.extractor
    )


def rebuild_company_graph(conn: psycopg.Connection, company_id: int) -> int:
    """Write the graph of each of the company's documents again, each in its own
    transaction; how many documents."""
    docs = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM documents WHERE company_id = %s ORDER BY id", (company_id,)
        ).fetchall()
    ]
    for document_id in docs:
        with conn.transaction():
            write_graph(conn, document_id, company_id)
    return len(docs)
