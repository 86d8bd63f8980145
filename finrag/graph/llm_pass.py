"""The graph as a model reads it (`ingest --graph llm`): relations the rules cannot see.

The rules (finrag.graph.extract) read a filing's structure: signatures, segment notes,
Exhibit 21. What a filing says only in prose ("we compete with Amazon, Walmart and
Target", "our largest customer, Walmart, accounted for 17 %") needs a reader. This pass
gives a model the few passages most likely to state such relations, one at a time: the
model proposes, the passage's words decide. A relation is kept only when its name is
printed in that passage in a sentence whose words state it (a model that invents a
competitor, or calls every name it sees a customer, adds nothing). It is bounded: at most
``ingest.graph_max_chunks`` passages per filing, the most promising first, and no new
call once ``ingest.graph_budget_s`` has passed, so a slow model costs a known time and
leaves a partial reading marked as such (graph_runs.complete).

A document's reading is written with its rules' graph in one transaction; a re-run with
the same model and prompt is skipped, another model or prompt reads the filing again.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal

import psycopg
from pydantic import BaseModel, Field, field_validator

from finrag.errors import ModelNotAvailable
from finrag.graph.extract import (
    ACQUIRED,
    COMPETES_WITH,
    HAS_CUSTOMER,
    HAS_SUBSIDIARY,
    LOCATED_IN,
    SELLS,
    ChunkText,
    Triple,
    is_officer_heading,
    normalize_name,
)
from finrag.graph.store import filer_entity, read_chunk_texts, write_graph
from finrag.llm.base import LLM, LLMError
from finrag.llm.prompts import load_prompt

PROMPT = "graph"
MAX_REPLY_TOKENS = 400  # a passage states a handful of relations; a longer reply is rambling
MAX_FAILURES_IN_A_ROW = 3  # a model that cannot keep to the schema stops the reading early
MAX_NAME_WORDS = 8
MAX_RELATIONS_READ = 8  # in one passage's reply: more is a model running on

# What each relation's object is. Segments, officers and the auditor are left to the
# rules, which read them from the filing's structure without error; a small model named
# an acquired company a segment and a country a customer when offered them.
OBJECT_KIND = {
    SELLS: "product",
    HAS_CUSTOMER: "customer",
    COMPETES_WITH: "competitor",
    HAS_SUBSIDIARY: "subsidiary",
    LOCATED_IN: "place",
    ACQUIRED: "company",
}
# Words one of which the sentence holding the name must print for the relation to be
# stated there ("we acquired all of the outstanding shares of Current Health Ltd.").
STATED_BY = {
    SELLS: re.compile(r"brand|sell|sold|product|offer|includ|compris|consist", re.IGNORECASE),
    HAS_CUSTOMER: re.compile(r"customer|client|sales to|revenue from|contract", re.IGNORECASE),
    COMPETES_WITH: re.compile(r"compet|rival", re.IGNORECASE),
    HAS_SUBSIDIARY: re.compile(r"subsidiar|acqui|wholly|owned|purchase", re.IGNORECASE),
    LOCATED_IN: re.compile(r"organized|incorporated|located|based|laws of|headquarter", re.I),
    ACQUIRED: re.compile(r"acqui|purchase|merge|bought", re.IGNORECASE),
}
_BETWEEN_COMPANIES = (HAS_CUSTOMER, COMPETES_WITH, ACQUIRED, HAS_SUBSIDIARY)
SUBJECT_KIND = {
    SELLS: "segment",
    HAS_CUSTOMER: "segment",
    COMPETES_WITH: "segment",
    LOCATED_IN: "subsidiary",
}

_FILER_WORDS = {"", "we", "us", "our", "the company", "company", "registrant", "the registrant"}
_GENERIC = {
    "customers", "customer", "competitors", "competitor", "subsidiaries", "subsidiary",
    "segments", "segment", "products", "product", "services", "others", "other", "company",
    "the company", "we", "us", "retailers", "suppliers", "vendors",
}  # fmt: skip
_LEGAL_TAIL = re.compile(r"(?: (?:inc|incorporated|co|corp|corporation|company|ltd|plc|llc))+$")


class ReadRelation(BaseModel):
    subject: str = Field(max_length=120)
    relation: Literal[
        "sells",
        "has_customer",
        "competes_with",
        "has_subsidiary",
        "located_in",
        "acquired",
    ]
    object: str = Field(max_length=120)


class PassageReading(BaseModel):
    # maxItems reaches the grammar of a constrained backend: without it a small model lists
    # relations until max_tokens cuts its JSON off (half the calls failed so).
    relations: list[ReadRelation] = Field(
        default_factory=list, json_schema_extra={"maxItems": MAX_RELATIONS_READ}
    )

    @field_validator("relations", mode="before")
    @classmethod
    def _first_ones(cls, value: object) -> object:
        """An unconstrained backend's longer list: its first MAX_RELATIONS_READ, not an error."""
        return value[:MAX_RELATIONS_READ] if isinstance(value, list) else value


# --- which passages -------------------------------------------------------------------------

_CUE = re.compile(
    r"\b(customers?|clients?|compet\w*|rivals?|subsidiar\w*|acqui\w*|brands?|franchise\w*|"
    r"segments?|officers?)\b",
    re.IGNORECASE,
)
_WEAK_CUES = {"segmen", "office"}  # the rules read segments and officers already
_SECTION_WEIGHT = {
    "customers_concentration": 3,
    "acquisitions": 3,
    "business": 2,
    "segment_note": 1,
}
MIN_SCORE = 3
# A company's name as filings print it: the strongest sign a passage names a relation.
_ORGANIZATION = re.compile(
    r"\b[A-Z][\w&'.-]*(?:\s+[A-Z][\w&'.-]*){0,4},?\s+(?:Inc|Ltd|LLC|AG|Co|Corporation|"
    r"Company|plc|N\.V|GmbH|S\.p\.A|S\.A|B\.V|Limited|LLP)\b\.?"
)


def passage_score(chunk: ChunkText, filer_names: frozenset[str] = frozenset()) -> int:
    """How likely the passage states relations the rules miss: cue words (customer,
    competitor, subsidiary, acquisition, brand: 2 each; segment, officer: 1), its section
    (customers or acquisitions 3, Item 1 Business 2, segments 1), and a company named in
    it other than the filer (3)."""
    if chunk.kind != "text":
        return 0  # tables: the rules read the ones that name things (products, Exhibit 21)
    if any(is_officer_heading(h) for h in chunk.section_path):
        return 0  # biographies: former employers and titles ("EVP, Customer"), no relations
    cues = {m.group(1).lower()[:6] for m in _CUE.finditer(chunk.content)}
    if not cues:
        return 0
    score = sum(1 if c in _WEAK_CUES else 2 for c in cues)
    score += _SECTION_WEIGHT.get(chunk.section_kind or "", 0)
    others = {normalize_name(m.group(0)) for m in _ORGANIZATION.finditer(chunk.content)}
    if any(not _is_filer(o, filer_names) for o in others):
        score += 3
    return score


def choose_passages(
    chunks: Sequence[ChunkText], limit: int, filer_names: frozenset[str] = frozenset()
) -> list[ChunkText]:
    """The ``limit`` most promising passages, best first (reading order breaks ties)."""
    scored = [(passage_score(c, filer_names), i, c) for i, c in enumerate(chunks)]
    scored = [s for s in scored if s[0] >= MIN_SCORE]
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [c for _, _, c in scored[:limit]]


# --- what is kept --------------------------------------------------------------------------


def _printed(name_norm: str, text_norm: str) -> bool:
    return bool(re.search(rf"(?<![a-z0-9]){re.escape(name_norm)}(?![a-z0-9])", text_norm))


_STOP = re.compile(r"[.!?;]\s+(?=[A-Z“\"(])")
_ABBREVIATED = re.compile(
    r"(?:\b(?:Inc|Co|Ltd|Corp|Jr|Sr|No|Nos|St|Mr|Ms|Dr|vs|approx)|\b[A-Z]|\.[A-Za-z])$"
)


def _sentence(flat: str, start: int, end: int) -> str:
    """The sentence holding flat[start:end]: "Inc." and "S.p.A." end no sentence (so one
    that ends in them runs on into the next: a cue may reach one sentence too far)."""
    first, last = 0, len(flat)
    for m in _STOP.finditer(flat):
        if flat[m.start()] == "." and _ABBREVIATED.search(flat[: m.start()]):
            continue
        if m.end() <= start:
            first = m.end()
        elif m.start() >= end:
            last = m.start() + 1
            break
    return flat[first:last]


def _stated(name: str, relation: str, text: str) -> bool:
    """The name is printed as given (its case too: a proper name, not "our vendors") in a
    sentence with a word that states the relation."""
    flat = re.sub(r"\s+", " ", text)
    name = re.sub(r"\s+", " ", name)
    return any(
        STATED_BY[relation].search(_sentence(flat, m.start(), m.end()))
        for m in re.finditer(re.escape(name), flat)
    )


def _evidence(text: str, name: str) -> str:
    """The words around the name's first mention (the passage's start if not found)."""
    flat = re.sub(r"\s+", " ", text)
    at = flat.find(re.sub(r"\s+", " ", name))
    start = max(0, at - 100) if at >= 0 else 0
    return flat[start : start + 260].strip()


def _is_filer(name_norm: str, filer_names: set[str] | frozenset[str]) -> bool:
    bare = _LEGAL_TAIL.sub("", name_norm)
    return name_norm in _FILER_WORDS or name_norm in filer_names or bare in filer_names


@cache
def known_places() -> frozenset[str]:
    """Countries, regions and states (places.txt), normalized."""
    lines = (Path(__file__).with_name("places.txt")).read_text(encoding="utf-8").splitlines()
    return frozenset(normalize_name(ln) for ln in lines if ln.strip() and not ln.startswith("#"))


def _relation(obj: str, proposed: str, text: str) -> str | None:
    """The relation the passage states for the name: the one proposed when words beside
    the name state it; else, among the relations between companies, the only one they
    state (a small model calls a listed competitor a customer: the words say which);
    else none."""
    if _stated(obj, proposed, text):
        return proposed
    if proposed not in _BETWEEN_COMPANIES:
        return None
    stated = [rel for rel in _BETWEEN_COMPANIES if _stated(obj, rel, text)]
    return stated[0] if len(stated) == 1 else None


def ground(
    reading: PassageReading,
    chunk: ChunkText,
    filer_names: set[str],
    segments: frozenset[str] = frozenset(),
    places: frozenset[str] = frozenset(),
) -> tuple[list[Triple], int]:
    """The relations the passage states, as triples; how many proposed were not. A relation
    is kept when its object is a proper name, not the filer's, printed in the passage
    beside a word that states the relation (see _relation); its subject is the filer, one
    of ``segments`` (the rules' reading of the filing, normalized), or a subsidiary
    printed in the passage or its headings. A place (places.txt, or ``places`` the rules
    read from Exhibit 21) is no customer, competitor or acquisition. A relation proposed
    twice is kept once."""
    text = chunk.content
    heads_norm = normalize_name(" ".join((*chunk.section_path, text)))
    places = places | known_places()
    kept: dict[tuple, Triple] = {}
    dropped = 0
    for r in reading.relations:
        obj, subj = r.object.strip(" ,;:"), r.subject.strip()
        obj_norm, subj_norm = normalize_name(obj), normalize_name(subj)
        relation = _relation(obj, r.relation, text)
        plausible = (
            relation is not None
            and len(obj_norm) > 2
            and (obj[:1].isupper() or obj[:1].isdigit())
            and len(obj.split()) <= MAX_NAME_WORDS
            and obj_norm not in _GENERIC
            and not _is_filer(obj_norm, filer_names)
            and not (relation in _BETWEEN_COMPANIES and obj_norm in places)
        )
        subject: tuple[str, str] | None = None
        if relation and not _is_filer(subj_norm, filer_names):
            kind = SUBJECT_KIND.get(relation)
            if kind == "segment":
                known = re.sub(r" segments?$", "", subj_norm) in segments
            else:
                known = kind is not None and subj_norm not in _GENERIC
            if not known or not _printed(subj_norm, heads_norm):
                plausible = False
            subject = (kind or "company", subj)
        if not plausible or relation is None:
            dropped += 1
            continue
        kept.setdefault(
            (subject, relation, obj_norm),
            Triple(
                relation,
                OBJECT_KIND[relation],
                obj,
                chunk.id,
                chunk.page,
                _evidence(text, obj),
                subject=subject,
                extractor="llm",
            ),
        )
    return list(kept.values()), dropped


# --- one document --------------------------------------------------------------------------


@dataclass
class Reading:
    """One document's reading: what `ingest --json` reports under "graph"."""

    model: str
    prompt: str
    candidates: int = 0
    chunks_read: int = 0
    relations: int = 0
    dropped: int = 0
    failed: int = 0
    seconds: float = 0.0
    complete: bool = False
    skipped: str | None = None  # why nothing was read ("read before by the same model")
    errors: list[str] = field(default_factory=list)
    triples: list[Triple] = field(default_factory=list, repr=False)

    def as_dict(self) -> dict:
        out = asdict(self)
        out.pop("triples")
        return out


def model_label(llm: LLM) -> str:
    return f"{llm.backend}:{llm.model}"


def read_passages(
    chunks: Sequence[ChunkText],
    llm: LLM,
    *,
    company: str,
    filer_names: set[str],
    segments: frozenset[str] = frozenset(),
    places: frozenset[str] = frozenset(),
    budget_s: float,
    max_chunks: int,
    on_step: Callable[[int, int], None] | None = None,
) -> Reading:
    """Ask the model about each chosen passage until they are read or the budget is spent.
    A call that fails is counted and passed over; MAX_FAILURES_IN_A_ROW stop the reading.
    A model that is not there at all (ModelNotAvailable) is raised: nothing will work."""
    prompt = load_prompt(PROMPT)
    reading = Reading(model_label(llm), prompt.digest)
    passages = choose_passages(chunks, max_chunks, frozenset(filer_names))
    reading.candidates = len(passages)
    started = time.perf_counter()
    in_a_row = 0
    for n, chunk in enumerate(passages):
        if on_step:
            on_step(n, len(passages))
        if time.perf_counter() - started >= budget_s or in_a_row >= MAX_FAILURES_IN_A_ROW:
            break
        messages = prompt.messages(
            company=company,
            page=chunk.page if chunk.page is not None else "?",
            section=" > ".join(chunk.section_path) or "-",
            passage=chunk.content,
        )
        reading.chunks_read += 1
        try:
            result = llm.chat(messages, output=PassageReading, max_tokens=MAX_REPLY_TOKENS)
        except ModelNotAvailable:
            raise
        except LLMError as exc:
            reading.failed += 1
            in_a_row += 1
            reading.errors.append(f"page {chunk.page}: {exc.message}"[:200])
            continue
        in_a_row = 0
        triples, dropped = ground(result.data, chunk, filer_names, segments, places)
        reading.triples.extend(triples)
        reading.dropped += dropped
    reading.relations = len(reading.triples)
    reading.complete = reading.chunks_read == len(passages) and in_a_row < MAX_FAILURES_IN_A_ROW
    reading.seconds = round(time.perf_counter() - started, 3)
    if on_step:
        on_step(len(passages), len(passages))
    return reading


def previous_reading(conn: psycopg.Connection, document_id: int) -> tuple[str, str] | None:
    row = conn.execute(
        "SELECT model, prompt FROM graph_runs WHERE document_id = %s", (document_id,)
    ).fetchone()
    return (row[0], row[1]) if row else None


def read_document(
    conn: psycopg.Connection,
    document_id: int,
    llm: LLM,
    *,
    budget_s: float,
    max_chunks: int,
    force: bool = False,
    on_step: Callable[[int, int], None] | None = None,
) -> Reading:
    """Read one stored document with the model and write its graph again (rules + what
    the model read) with a graph_runs record, in one transaction. Skipped when the same
    model and prompt read it before, unless ``force``."""
    label, digest = model_label(llm), load_prompt(PROMPT).digest
    if not force and previous_reading(conn, document_id) == (label, digest):
        return Reading(label, digest, complete=True, skipped="read before by the same model")
    company_id = conn.execute(
        "SELECT company_id FROM documents WHERE id = %s", (document_id,)
    ).fetchone()[0]
    filer = filer_entity(conn, document_id, company_id)
    chunks = read_chunk_texts(conn, document_id)
    # The rules' reading, written at ingest: a segment the model names must be one of
    # them; a place they know is no customer.
    known: dict[str, set[str]] = {"segment": set(), "place": set()}
    for kind, name_norm in conn.execute(
        "SELECT kind, name_norm FROM entities WHERE document_id = %s "
        "AND kind IN ('segment', 'place')",
        (document_id,),
    ):
        known[kind].add(name_norm)
    conn.rollback()  # no transaction held open while the model reads
    reading = read_passages(
        chunks,
        llm,
        company=filer.name,
        filer_names={normalize_name(filer.name), *filer.aliases},
        segments=frozenset(known["segment"]),
        places=frozenset(known["place"]),
        budget_s=budget_s,
        max_chunks=max_chunks,
        on_step=on_step,
    )
    with conn.transaction():
        if conn.execute("SELECT 1 FROM documents WHERE id = %s", (document_id,)).fetchone():
            write_graph(conn, document_id, company_id, reading.triples)
            conn.execute(
                "INSERT INTO graph_runs (document_id, model, prompt, candidates, chunks_read, "
                "relations, dropped, failed, seconds, complete) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    document_id,
                    reading.model,
                    reading.prompt,
                    reading.candidates,
                    reading.chunks_read,
                    reading.relations,
                    reading.dropped,
                    reading.failed,
                    reading.seconds,
                    reading.complete,
                ),
            )
    return reading
