"""Summary nodes of a stored document: one short extractive summary per section, one for
the whole document (the RAPTOR idea, without an LLM), written to ``summaries`` (sql/008).

A section is an Item of the filing (the heading path up to "Item 7. ..."; documents without
Items, such as earnings releases, use their top heading): Items are what qualitative
questions ask for ("legal proceedings", "risk factors"), and the one level every parser
yields alike. An Item too large for 120 words to say anything about (Item 8 holds every
note) is summarized by runs of its consecutive sub-sections instead.

A summary is the section's heading(s) plus the sentences closest to the section's centre:
candidates from the chunks nearest the centroid of its stored chunk embeddings, ranked by
the cosine of their words to the section's (tf-idf, idf over the document's sections), so
they say what this section says and the others do not.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import psycopg

from finrag.ingest.sentences import split_sentences

if TYPE_CHECKING:
    from finrag.embed import Embedder

SUMMARY_WORDS = 120  # short enough for the embedder's 256 word pieces, with room to spare
HEADING_WORDS = 40  # a run's list of sub-headings is cut here
SPLIT_ABOVE = 40  # chunks: an Item larger than this is summarized by runs of sub-sections
RUN_MIN, RUN_MAX = 6, 30  # chunks per run: a new sub-heading starts a run past RUN_MIN
CENTRAL_CHUNKS = 3  # the chunks nearest the section's centroid give the candidate sentences
SENTENCE_WORDS = (6, 60)  # shorter is a label, longer a run-on list or a table read as text

_ITEM = re.compile(r"^\s*item\s*\d{1,2}[a-z]?\b", re.IGNORECASE)
_TERM = re.compile(r"[a-z][a-z\-]{2,}")
_TABLE_MARKUP = re.compile(r"\|[\s:|-]*")  # Markdown table pipes and rules
_STOP_WORDS = (
    "the and for that with this from are was were have has had been its which such our "
    "their any all not other may will these those into also than under over each more most "
    "per would could should including include includes included upon within"
)
_STOP = frozenset(_STOP_WORDS.split())


@dataclass
class StoredChunk:
    id: int
    kind: str
    page_start: int | None
    page_end: int | None
    section_path: list[str]
    content: str
    embedding: np.ndarray


@dataclass
class Section:
    path: list[str]  # the Item's heading path, plus a run's first sub-heading
    headings: list[str]  # what the summary opens with
    chunks: list[StoredChunk] = field(default_factory=list)


@dataclass
class SummaryNode:
    level: str  # "section" | "document"
    section_path: list[str]
    chunk_ids: list[int] | None  # None: the whole document
    page_start: int | None
    page_end: int | None
    text: str


def section_key(path: Sequence[str]) -> tuple[str, ...]:
    """The heading path through the Item heading; without an Item, the top heading."""
    for i, part in enumerate(path):
        if _ITEM.match(part):
            return tuple(path[: i + 1])
    return tuple(path[:1])


def group_sections(chunks: Sequence[StoredChunk]) -> list[Section]:
    """Chunks (in document order) grouped into sections, large Items split into runs."""
    by_key: dict[tuple[str, ...], list[StoredChunk]] = {}
    for chunk in chunks:
        by_key.setdefault(section_key(chunk.section_path), []).append(chunk)
    sections: list[Section] = []
    for key, members in by_key.items():
        title = _clean(key[-1]) if key else "Front matter"
        if len(members) <= SPLIT_ABOVE:
            sections.append(Section(list(key), [title], members))
        else:
            sections.extend(_runs(key, title, members))
    return sections


def _runs(key: tuple[str, ...], title: str, members: list[StoredChunk]) -> Iterator[Section]:
    """Consecutive sub-sections of one Item, gathered into runs of RUN_MIN..RUN_MAX chunks."""
    run: list[StoredChunk] = []
    subs: list[str] = []
    last: str | None = None

    def close() -> Section:
        path = list(key) + subs[:1]
        return Section(path, [title, *subs], list(run))

    for chunk in members:
        sub = _clean(chunk.section_path[len(key)]) if len(chunk.section_path) > len(key) else None
        if run and (len(run) >= RUN_MAX or (sub != last and len(run) >= RUN_MIN)):
            yield close()
            run, subs = [], []
        run.append(chunk)
        if sub and sub not in subs:
            subs.append(sub)
        last = sub
    if run:
        yield close()


def _clean(heading: str) -> str:
    """'_Human Capital Resources__1_' -> 'Human Capital Resources 1'; 'Acquisitions:' ->
    'Acquisitions'."""
    return " ".join(heading.replace("_", " ").split()).rstrip(":")


def _terms(text: str) -> list[str]:
    return [t for t in _TERM.findall(text.lower()) if t not in _STOP]


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def _candidates(chunks: Sequence[StoredChunk]) -> list[tuple[int, str]]:
    """(order, sentence) from the text chunks nearest the chunks' centroid."""
    text_chunks = [c for c in chunks if c.kind == "text"]
    if not text_chunks:
        return []
    centroid = _unit(np.mean([c.embedding for c in chunks], axis=0))
    nearest = sorted(
        range(len(text_chunks)), key=lambda i: -float(text_chunks[i].embedding @ centroid)
    )[:CENTRAL_CHUNKS]
    low, high = SENTENCE_WORDS
    found: list[tuple[int, str]] = []
    for i in sorted(nearest):  # document order, so a summary reads in the filing's order
        for sentence in split_sentences(text_chunks[i].content):
            sentence = " ".join(sentence.split())
            words = sentence.split()
            if "|" in sentence or not low <= len(words) <= high:
                continue
            if sum(w[:1].isalpha() for w in words) < len(words) / 2:  # mostly figures
                continue
            found.append((len(found), sentence))
    return found


def _weights(text: str, idf: dict[str, float]) -> dict[str, float]:
    counts = Counter(_terms(text))
    return {t: (1 + math.log(n)) * idf.get(t, 1.0) for t, n in counts.items()}


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    dot = sum(w * b.get(t, 0.0) for t, w in a.items())
    norm = math.sqrt(sum(w * w for w in a.values())) * math.sqrt(sum(w * w for w in b.values()))
    return dot / norm if norm else 0.0


def extract_summary(
    headings: Sequence[str], chunks: Sequence[StoredChunk], idf: dict[str, float]
) -> str:
    """The headings, then the most central sentences that fit in SUMMARY_WORDS."""
    head = " — ".join(headings)
    head_words = head.split()
    if len(head_words) > HEADING_WORDS:
        head = " ".join(head_words[:HEADING_WORDS]) + "…"
    budget = SUMMARY_WORDS - min(len(head_words), HEADING_WORDS)
    centre = _weights(" ".join(c.content for c in chunks), idf)
    ranked = sorted(_candidates(chunks), key=lambda item: -_cosine(_weights(item[1], idf), centre))
    chosen: list[tuple[int, str]] = []
    seen: list[set[str]] = []
    for order, sentence in ranked:
        words = set(_terms(sentence))
        if any(len(words & other) > 0.5 * len(words | other) for other in seen):
            continue  # a near-repeat (boilerplate recurs) adds nothing
        if len(sentence.split()) <= budget:
            chosen.append((order, sentence))
            seen.append(words)
            budget -= len(sentence.split())
    if not chosen:  # tables only, or no sentence of a usable length: its first words
        prose = [c for c in chunks if c.kind == "text"] or list(chunks)
        body = _TABLE_MARKUP.sub(" ", " ".join(c.content for c in prose[:2])).split()
        return f"{head}: {' '.join(body[: max(budget, 0)])}".strip()
    return f"{head}: {' '.join(s for _, s in sorted(chosen))}"


def _section_idf(sections: Sequence[Section]) -> dict[str, float]:
    """Rare across the document's sections is what sets a section apart."""
    df: Counter[str] = Counter()
    for section in sections:
        df.update(set(_terms(" ".join(c.content for c in section.chunks))))
    n = len(sections)
    return {t: math.log(1 + n / d) for t, d in df.items()}


def _pages(chunks: Sequence[StoredChunk]) -> tuple[int | None, int | None]:
    starts = [c.page_start for c in chunks if c.page_start is not None]
    ends = [c.page_end for c in chunks if c.page_end is not None]
    return (min(starts) if starts else None, max(ends) if ends else None)


def summarize_chunks(title: str, chunks: Sequence[StoredChunk]) -> list[SummaryNode]:
    """A document's summary nodes: its sections', then its own (titled ``title``, with the
    list of its Items and its most central sentences)."""
    if not chunks:
        return []
    sections = group_sections(chunks)
    idf = _section_idf(sections)
    nodes = [
        SummaryNode(
            "section",
            s.path,
            [c.id for c in s.chunks],
            *_pages(s.chunks),
            extract_summary(s.headings, s.chunks, idf),
        )
        for s in sections
    ]
    items = list(dict.fromkeys(s.headings[0] for s in sections if s.path))
    contents = "; ".join(items)
    nodes.append(
        SummaryNode(
            "document",
            [],
            None,
            *_pages(chunks),
            extract_summary([title, contents] if contents else [title], chunks, idf),
        )
    )
    return nodes


def read_chunks(conn: psycopg.Connection, document_id: int) -> list[StoredChunk]:
    rows = conn.execute(
        "SELECT id, kind, page_start, page_end, section_path, content, embedding "
        "FROM chunks WHERE document_id = %s AND embedding IS NOT NULL ORDER BY ordinal",
        (document_id,),
    ).fetchall()
    return [StoredChunk(*row[:6], row[6].to_numpy()) for row in rows]  # pgvector's Vector


def document_title(conn: psycopg.Connection, document_id: int) -> str:
    """'3M Company 10-K FY2018' (what is known of it)."""
    row = conn.execute(
        "SELECT co.name, d.form_type, d.fiscal_year, d.fiscal_quarter FROM documents d "
        "LEFT JOIN companies co ON co.id = d.company_id WHERE d.id = %s",
        (document_id,),
    ).fetchone()
    if row is None:
        return ""
    name, form, year, quarter = row
    period = (f"FY{year}" if year else "") + (f" Q{quarter}" if quarter else "")
    return " ".join(p for p in (name, form, period) if p) or "Document"


def build_summaries(conn: psycopg.Connection, document_id: int, embedder: Embedder) -> int:
    """Replace a stored document's summaries, in the caller's transaction; how many."""
    nodes = summarize_chunks(document_title(conn, document_id), read_chunks(conn, document_id))
    conn.execute("DELETE FROM summaries WHERE document_id = %s", (document_id,))
    if not nodes:
        return 0
    vectors = embedder.embed([n.text for n in nodes])
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO summaries (document_id, level, section_path, chunk_ids, page_start, "
            "page_end, text, embedding) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            [
                (
                    document_id,
                    n.level,
                    n.section_path,
                    n.chunk_ids,
                    n.page_start,
                    n.page_end,
                    n.text,
                    vector,
                )
                for n, vector in zip(nodes, vectors, strict=True)
            ],
        )
    return len(nodes)


def summarize_store(
    conn: psycopg.Connection, embedder: Embedder, *, missing_only: bool = False
) -> dict[int, int]:
    """Build the summaries of every stored document (each in its own transaction), or only
    of those that have none; summaries written per document id."""
    query = "SELECT id FROM documents d"
    if missing_only:
        query += " WHERE NOT EXISTS (SELECT 1 FROM summaries s WHERE s.document_id = d.id)"
    ids = [row[0] for row in conn.execute(query + " ORDER BY id").fetchall()]
    conn.rollback()
    written: dict[int, int] = {}
    for document_id in ids:
        with conn.transaction():
            written[document_id] = build_summaries(conn, document_id, embedder)
    return written
