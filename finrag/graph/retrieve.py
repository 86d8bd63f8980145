"""Graph retrieval (HybridRAG): the chunks that state the relations a question asks about,
fused with the hybrid ranking.

1. Link: entities of the allowed documents (the filters the hybrid search ended with)
   whose name, canonical key (sql/018: "Corie S. Barry" is "corie barry") or an alias
   appears in the question as whole words; the filer's company entity when the question
   names the company (the filters resolved one). A linked entity brings every entity of
   the allowed documents with its kind and canonical key: one person or firm across
   filings.
2. Neighbourhood: the relations one hop from a linked entity. A question about what
   companies have in common ("which other companies share Apple's auditor") also takes,
   from every document, the relations of the same predicate to the same canonical
   entity as a kept relation: the auditor's other clients, the supplier's other buyers.
3. Keep what the question asks about: a relation whose predicate a cue word names
   ("audit" → audited_by, "CEO" → has_executive, "segment" → has_segment, "sell" → sells,
   "subsidiar" → has_subsidiary, "incorporated"/"where" → incorporated_in/located_in;
   from a model's reading, "customer" → has_customer, "compete" → competes_with, "acquire"
   → acquired), or
   one that touches an entity named in the question other than the company. A question
   that only names the company adds nothing: its neighbourhood is the whole filing.
   An officer asked for by title ("CEO", "chief financial officer") ranks above the others.
4. Rank the chunks that state the kept relations (more kept relations and a linked
   non-company entity first), and fuse them into the hybrid ranking by reciprocal rank,
   weight retrieve.graph_weight (GRAPH_WEIGHT) against the hybrid list's 1.0 (the same
   fusion as the summaries').
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

import psycopg

from finrag.graph.extract import normalize_name
from finrag.retrieve.hybrid import Hit, SearchResult, matching_documents

GRAPH_POOL = 50  # hybrid depth fused with: a stated relation's chunk may rank past k there
GRAPH_CHUNKS = 10  # chunks the graph contributes at most
GRAPH_WEIGHT = 1.0  # the graph's ranking against the hybrid list's in reciprocal rank fusion

_CUES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (r"\baudit|accounting firm|\bcpa\b", ("audited_by",)),
    (
        r"\bceo\b|\bcfo\b|\bcoo\b|chief|officer|executive|president|chair|\bwho (?:runs|leads)",
        ("has_executive",),
    ),
    (r"\bdirector|\bboard\b", ("has_director",)),
    (r"\bsegment", ("has_segment",)),
    (r"\bsell|\bsold\b|\bproduct|categor", ("sells",)),
    # Not "its own shares" or "variable interest entities": no party is asked for there.
    (r"subsidiar|(?<!interest )\bentit(?:y|ies)\b|\bowns\b|\bowned\b", ("has_subsidiary",)),
    (
        r"incorporat|\bwhere\b|located|based in|jurisdiction|domicile|countr",
        ("incorporated_in", "located_in"),
    ),
    # Relations only a model's reading writes (ingest --graph llm).
    # "Revenue from contracts with customers" is a revenue line, not a party.
    (r"(?<!contracts with )(?<!contract with )\bcustomer|\bclient|\bbuyer", ("has_customer",)),
    (r"compet|\brival", ("competes_with",)),
    # Not "purchases of property": a purchase is an acquisition only when the words say so.
    (r"\bacqui|\bbought\b|\bmerg", ("acquired",)),
)


# Relations whose object is a party (a person, a firm), as against the filing's structure
# (its segments, products, places): the question kind graph retrieval is chosen for.
PARTY_PREDICATES = frozenset(
    {
        "audited_by",
        "has_executive",
        "has_director",
        "has_subsidiary",
        "has_customer",
        "competes_with",
        "acquired",
    }
)
QUESTION_KINDS = ("entity", "structure", "other")
# Kinds an object may share with another filer's: not places, segments or products,
# whose names ("International", "Services") are common words across companies.
_SHARED_KINDS = ("auditor", "person", "subsidiary", "customer", "competitor")
_SHARED = re.compile(
    # "share" and "shared" as a verb; "shares" and "per share" are stock.
    r"(?<!per )\bshared?\b(?!\s*(?:price|count|repurchase|based|capital))|\bsame\b|"
    r"\bin common\b|\bother (?:compan|filer|client)|"
    r"\bwhich (?:other )?(?:compan|filer|client)|\bboth\b",
    re.IGNORECASE,
)


def question_kind(question: str) -> str:
    """entity: it asks for a party (auditor, officer, director, subsidiary, customer,
    competitor, acquisition); structure: only for segments, products or places; other:
    for no relation the graph holds."""
    asked = asked_predicates(question)
    if asked & PARTY_PREDICATES:
        return "entity"
    return "structure" if asked else "other"


@dataclass
class GraphMatch:
    """What the graph found for a question: linked entities and the chunks it ranks."""

    linked: list[str] = field(default_factory=list)  # "kind:name"
    predicates: list[str] = field(default_factory=list)
    chunk_ids: list[int] = field(default_factory=list)
    relations: int = 0


def asked_predicates(question: str) -> set[str]:
    """The relations the question's words ask about."""
    found: set[str] = set()
    for pattern, predicates in _CUES:
        if re.search(pattern, question, re.IGNORECASE):
            found.update(predicates)
    return found


_TITLES = (
    (r"\bceo\b|chief executive", "ceo"),
    (r"\bcfo\b|chief financial", "cfo"),
    (r"\bcoo\b|chief operating", "coo"),
    (r"\bcao\b|chief accounting", "cao"),
)


def asked_titles(question: str) -> set[str]:
    """The officers the question names by title ("CEO", "chief financial officer")."""
    return {short for pattern, short in _TITLES if re.search(pattern, question, re.IGNORECASE)}


def _mentions(question_norm: str, names: list[str]) -> bool:
    return any(n and re.search(rf"\b{re.escape(n)}\b", question_norm) for n in names)


def graph_chunks(
    conn: psycopg.Connection, question: str, docs: list[int] | None, *, company_named: bool
) -> GraphMatch:
    """Link, expand one hop, keep what is asked, rank the stating chunks (steps 1-4 above)."""
    match = GraphMatch()
    if docs == []:
        return match
    q = normalize_name(question)
    asked = asked_predicates(question)
    match.predicates = sorted(asked)
    rows = conn.execute(
        "SELECT id, kind, name, name_norm, canonical, aliases FROM entities "
        "WHERE %(docs)s::bigint[] IS NULL OR document_id = ANY(%(docs)s::bigint[])",
        {"docs": docs},
    ).fetchall()
    titles = asked_titles(question)
    titled = {eid for eid, kind, *_, aliases in rows if kind == "person" and titles & set(aliases)}
    linked: dict[int, bool] = {}  # entity id -> named in the question (not just the filer)
    named_keys: set[tuple[str, str]] = set()
    # "Corning GmbH" and "Corning B.V." share the key "corning", the filer's: a key that is
    # a company's names its subsidiaries apart from nothing, so it neither links nor merges.
    company_keys = {canonical for _, kind, _, _, canonical, _ in rows if kind == "company"}
    for eid, kind, name, name_norm, canonical, aliases in rows:
        names = [name_norm] if canonical in company_keys else [name_norm, canonical]
        named = _mentions(q, [n for n in names if len(n) > 2] + list(aliases))
        if kind == "company" and (named or company_named):
            linked[eid] = False
        elif named and kind != "company":
            linked[eid] = True
            named_keys.add((kind, canonical))
            match.linked.append(f"{kind}:{name}")
    for eid, kind, _name, _norm, canonical, _aliases in rows:  # the same one in other filings
        if (kind, canonical) in named_keys and canonical not in company_keys:
            linked[eid] = True
    if not linked or (not asked and not any(linked.values())):
        return match
    edges = conn.execute(
        "SELECT subject_id, predicate, object_id, chunk_id, page FROM relations "
        "WHERE subject_id = ANY(%(ids)s) OR object_id = ANY(%(ids)s)",
        {"ids": list(linked)},
    ).fetchall()
    score: dict[int, float] = defaultdict(float)
    page: dict[int, int] = {}
    kept: list[tuple[str, int]] = []  # (predicate, object) of each kept relation
    for subject, predicate, obj, chunk_id, pg in edges:
        touches_named = linked.get(subject, False) or linked.get(obj, False)
        if predicate not in asked and not touches_named:
            continue
        match.relations += 1
        kept.append((predicate, obj))
        score[chunk_id] += (
            1.0
            + (2.0 if touches_named else 0.0)
            + (1.0 if predicate in asked else 0.0)
            + (2.0 if obj in titled else 0.0)  # the officer the question names by title
        )
        page[chunk_id] = pg or 0
    if kept and _SHARED.search(question):
        for chunk_id, pg in _shared_relations(conn, kept):
            if chunk_id not in score:
                match.relations += 1
                score[chunk_id] = 1.5  # a kept relation scores 2 at least: the own first
                page[chunk_id] = pg or 0
    ranked = sorted(score, key=lambda c: (-score[c], page[c], c))
    match.chunk_ids = ranked[:GRAPH_CHUNKS]
    return match


def _shared_relations(conn: psycopg.Connection, kept: list[tuple[str, int]]) -> list[tuple]:
    """(chunk, page) of every relation, in any document, with a kept relation's predicate
    and an object of the same kind and canonical key: the same auditor's other clients."""
    return conn.execute(
        "SELECT DISTINCT r.chunk_id, r.page FROM relations r "
        "JOIN entities o ON o.id = r.object_id "
        "JOIN entities k ON k.kind = o.kind AND k.canonical = o.canonical "
        "JOIN unnest(%(predicates)s::text[], %(objects)s::bigint[]) AS kp(predicate, object_id) "
        "  ON kp.object_id = k.id AND kp.predicate = r.predicate "
        "WHERE o.kind = ANY(%(kinds)s) AND o.id <> k.id",
        {
            "predicates": [p for p, _ in kept],
            "objects": [o for _, o in kept],
            "kinds": list(_SHARED_KINDS),
        },
    ).fetchall()


_HIT_SQL = """
SELECT c.id, c.document_id, d.path, co.name, d.fiscal_year, d.fiscal_quarter, d.form_type,
       c.kind, c.page_start, c.page_end, c.section_path, c.content,
       0.0::float8, NULL::int, NULL::float8, NULL::int, NULL::float8, c.flagged, c.ocr
FROM chunks c
JOIN documents d ON d.id = c.document_id
LEFT JOIN companies co ON co.id = d.company_id
WHERE c.id = ANY(%(ids)s) AND (%(with_flagged)s OR c.flagged IS NULL)
"""


def fuse_graph_chunks(
    conn: psycopg.Connection,
    result: SearchResult,
    question: str,
    *,
    rrf_k: float,
    weight: float = GRAPH_WEIGHT,
    with_flagged: bool = True,
) -> tuple[list[Hit], GraphMatch]:
    """The hybrid ranking with the graph's chunks fused in by reciprocal rank, under the
    filters the hybrid search ended with."""
    docs = matching_documents(conn, result.applied)
    company_named = bool(result.filters.companies)
    match = graph_chunks(conn, question, docs, company_named=company_named)
    if not match.chunk_ids:
        return result.hits, match
    known = {h.chunk_id: h for h in result.hits}
    missing = [c for c in match.chunk_ids if c not in known]
    if missing:
        for row in conn.execute(_HIT_SQL, {"ids": missing, "with_flagged": with_flagged}):
            known[row[0]] = Hit(*row)
    extra = [known[c] for c in match.chunk_ids if c in known]
    scores: dict[int, float] = {}
    for w, ranking in ((1.0, result.hits), (weight, extra)):
        for rank, hit in enumerate(ranking, 1):
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + w / (rrf_k + rank)
    fused = sorted(scores, key=lambda cid: (-scores[cid], cid))
    for cid in fused:
        known[cid].score = scores[cid]
    return [known[cid] for cid in fused], match
