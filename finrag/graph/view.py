"""What the graph holds for one company: its entities by kind and its relations, each with
the document and page that state it (for `finrag graph`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import psycopg


@dataclass(frozen=True)
class RelationRow:
    subject: str
    subject_kind: str
    predicate: str
    object: str
    object_kind: str
    document: str
    page: int | None
    evidence: str
    extractor: str  # rules | llm


@dataclass
class CompanyGraph:
    company: str
    entities: dict[str, list[dict[str, Any]]]  # kind -> [{name, aliases, documents}]
    relations: list[RelationRow]

    def as_dict(self) -> dict[str, Any]:
        return {
            "company": self.company,
            "entities": self.entities,
            "relations": [asdict(r) for r in self.relations],
        }


def company_graph(conn: psycopg.Connection, company_id: int, name: str) -> CompanyGraph:
    """Entities of the company's documents merged by kind and name, and every relation
    (one row per document and page that states it)."""
    entities: dict[str, list[dict[str, Any]]] = {}
    rows = conn.execute(
        "SELECT e.kind, min(e.name), array_agg(DISTINCT a) FILTER (WHERE a IS NOT NULL), "
        "array_agg(DISTINCT d.path) "
        "FROM entities e JOIN documents d ON d.id = e.document_id "
        "LEFT JOIN LATERAL unnest(e.aliases) a ON true "
        "WHERE d.company_id = %s GROUP BY e.kind, e.name_norm ORDER BY e.kind, min(e.name)",
        (company_id,),
    ).fetchall()
    for kind, ename, aliases, paths in rows:
        entities.setdefault(kind, []).append(
            {
                "name": ename,
                "aliases": sorted(aliases or []),
                "documents": sorted(Path(p).name for p in paths),
            }
        )
    relations = [
        RelationRow(r[0], r[1], r[2], r[3], r[4], Path(r[5]).name, r[6], r[7], r[8])
        for r in conn.execute(
            "SELECT DISTINCT ON (s.name_norm, r.predicate, o.name_norm, d.path, r.page) "
            "s.name, s.kind, r.predicate, o.name, o.kind, d.path, r.page, r.evidence, "
            "r.extractor "
            "FROM relations r JOIN documents d ON d.id = r.document_id "
            "JOIN entities s ON s.id = r.subject_id JOIN entities o ON o.id = r.object_id "
            "WHERE d.company_id = %s "
            "ORDER BY s.name_norm, r.predicate, o.name_norm, d.path, r.page, r.id",
            (company_id,),
        )
    ]
    relations.sort(key=lambda r: (r.predicate, r.subject, r.object, r.document, r.page or 0))
    return CompanyGraph(name, entities, relations)
