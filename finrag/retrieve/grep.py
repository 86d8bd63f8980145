"""Phrase screening: every occurrence of a phrase, a regular expression or two words near
each other in the stored filings, exact and unranked (`finrag grep`).

The stored text of a filing is its chunks in order, each counted once:

- a text chunk's body, less the sentences it repeats from the chunk before it (chunking
  carries up to ``ingest.overlap_tokens`` of whole sentences into the next chunk of the same
  section): a match lying wholly inside that repeated opening was already counted in the
  chunk before; one that runs past it is new and is counted here;
- a table chunk's Markdown rows, less the lines above them (the heading path, the title
  read from the paragraph above and the units note, all stored elsewhere too) and, in the
  second and later parts of a table cut into parts, less the repeated column header;
- each heading once: the elements of a chunk's heading path that the chunk before it did
  not open with (headings are not in the chunks' bodies).

Postgres finds the matches (its case-insensitive regular expressions, ``regexp_like`` /
``regexp_count`` / ``regexp_instr``: a sequential scan, since a regular expression cannot
use the full-text index); Python only drops the repeats above, pairs ``near`` terms and
cuts the sentence around each hit.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal

import psycopg

from finrag.errors import UsageError

Mode = Literal["phrase", "regex", "near"]
_CONTEXT_CHARS = 400  # a sentence longer than this is cut around the hit
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class GrepQuery:
    """What to find. ``phrase``: words in order, whole words, any run of spaces or hyphens
    between them, a trailing ``*`` on a word for any ending (``covenant*``); ``regex``: a
    Postgres regular expression (ARE: ``\\m``/``\\M`` for word boundaries, not ``\\b``);
    ``near``: two phrases with at most ``within`` words between them, either order, or in
    the same sentence (``within=None``)."""

    mode: Mode
    terms: tuple[str, ...]
    within: int | None = 10
    case_sensitive: bool = False

    def __post_init__(self) -> None:
        wanted = 2 if self.mode == "near" else 1
        if len(self.terms) != wanted or not all(t.strip() for t in self.terms):
            raise UsageError(
                f"{self.mode} takes {wanted} non-empty term{'s' if wanted > 1 else ''}",
                hint='e.g. finrag grep "going concern", --regex PATTERN, --near WORD WORD',
            )
        if self.within is not None and self.within < 0:
            raise UsageError("--within takes a number of words (0 or more) or 'sentence'")

    @property
    def patterns(self) -> list[str]:
        """The Postgres regular expression of each term."""
        if self.mode == "regex":
            return [self.terms[0]]
        return [phrase_pattern(t) for t in self.terms]

    @property
    def flags(self) -> str:
        return "c" if self.case_sensitive else "i"

    def describe(self) -> str:
        if self.mode == "near":
            how = "in one sentence" if self.within is None else f"within {self.within} words"
            return f'"{self.terms[0]}" near "{self.terms[1]}" ({how})'
        return f"/{self.terms[0]}/" if self.mode == "regex" else f'"{self.terms[0]}"'


@dataclass(frozen=True)
class GrepScope:
    """Which filings: the metadata filters `search` and `facts` take."""

    company_id: int | None = None
    fiscal_year: int | None = None
    fiscal_quarter: int | None = None
    form_type: str | None = None


@dataclass(frozen=True)
class GrepHit:
    document_id: int
    path: str
    company: str | None
    ticker: str | None
    form_type: str | None
    fiscal_year: int | None
    fiscal_quarter: int | None
    chunk_id: int
    page_start: int | None
    page_end: int | None
    where: Literal["text", "table", "heading"]
    section_path: list[str]
    match: str
    sentence: str  # the sentence (table row, heading) around the hit


@dataclass(frozen=True)
class GrepCount:
    """Hits of one company in one period and form."""

    company: str | None
    fiscal_year: int | None
    fiscal_quarter: int | None
    form_type: str | None
    filings: int
    pages: int
    hits: int


@dataclass
class GrepResult:
    query: GrepQuery
    hits: list[GrepHit]
    documents_scanned: int
    chunks_scanned: int
    elapsed_ms: float
    counts: list[GrepCount] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "query": self.query.describe(),
            "mode": self.query.mode,
            "terms": list(self.query.terms),
            "within": self.query.within,
            "case_sensitive": self.query.case_sensitive,
            "documents_scanned": self.documents_scanned,
            "chunks_scanned": self.chunks_scanned,
            "elapsed_ms": round(self.elapsed_ms, 1),
            "total": len(self.hits),
            "counts": [asdict(c) for c in self.counts],
            "hits": [asdict(h) for h in self.hits],
        }


def phrase_pattern(phrase: str) -> str:
    """A phrase as a Postgres regular expression: its words literally, in order, as whole
    words; spaces and hyphens between them match any run of either ("going-concern")."""
    words = [w for w in re.split(r"[\s\-\u00ad\u2010\u2011]+", phrase.strip()) if w]
    if not words:
        raise UsageError("the phrase has no words", hint='e.g. finrag grep "going concern"')
    parts = []
    for word in words:
        prefix = word.endswith("*") and len(word) > 1
        core = word.rstrip("*") if prefix else word
        body = "".join(_literal(ch) for ch in core)
        parts.append(body + ("[[:alnum:]_]*" if prefix else ""))
    # Between words: spaces, hyphens, and the soft and non-breaking hyphens filings print.
    pattern = "[[:space:]\u00ad\u2010\u2011-]+".join(parts)
    if words[0][0].isalnum() or words[0][0] == "_":
        pattern = "(?<![[:alnum:]_])" + pattern
    last = words[-1]
    if last[-1].isalnum() or last[-1] == "_" or last.endswith("*"):
        pattern += "(?![[:alnum:]_])"
    return pattern


# An apostrophe in the phrase matches the typographic ones EDGAR HTML prints
# ("Management\u2019s Discussion" as printed).
_APOSTROPHES = "'\u2018\u2019\u02bc"


def _literal(ch: str) -> str:
    if ch in _APOSTROPHES:
        return "[" + _APOSTROPHES + "]"
    return ch if ch.isalnum() else "\\" + ch


_SQL = """
WITH docs AS (
    SELECT d.id, d.path, d.form_type, d.fiscal_year, d.fiscal_quarter, c.name, c.ticker
    FROM documents d LEFT JOIN companies c ON c.id = d.company_id
    WHERE (%(company)s::bigint IS NULL OR d.company_id = %(company)s)
      AND (%(year)s::int IS NULL OR d.fiscal_year = %(year)s)
      AND (%(quarter)s::int IS NULL OR d.fiscal_quarter = %(quarter)s)
      AND (%(form)s::text IS NULL OR upper(d.form_type) = upper(%(form)s))
), found AS (
    SELECT m.id, m.document_id, m.ordinal, m.kind, m.page_start, m.page_end,
           m.section_path, m.content
    FROM chunks m JOIN docs ON docs.id = m.document_id
    WHERE (SELECT bool_and(regexp_like(m.content, p, %(flags)s)) FROM unnest(%(pats)s::text[]) p)
       OR EXISTS (
            SELECT 1 FROM unnest(m.section_path) h
            WHERE (SELECT bool_and(regexp_like(h, p, %(flags)s)) FROM unnest(%(pats)s::text[]) p))
), spans AS (
    -- segment 0: the chunk's body; i > 0: the i-th element of its heading path
    SELECT f.id, 0 AS segment, t.term, s.start, s.stop
    FROM found f, unnest(%(pats)s::text[]) WITH ORDINALITY t(p, term),
    LATERAL (
        SELECT regexp_instr(f.content, t.p, 1, n, 0, %(flags)s) AS start,
               regexp_instr(f.content, t.p, 1, n, 1, %(flags)s) AS stop
        FROM generate_series(1, regexp_count(f.content, t.p, 1, %(flags)s)) n) s
    UNION ALL
    SELECT f.id, h.i, t.term, s.start, s.stop
    FROM found f, unnest(f.section_path) WITH ORDINALITY h(text, i),
         unnest(%(pats)s::text[]) WITH ORDINALITY t(p, term),
    LATERAL (
        SELECT regexp_instr(h.text, t.p, 1, n, 0, %(flags)s) AS start,
               regexp_instr(h.text, t.p, 1, n, 1, %(flags)s) AS stop
        FROM generate_series(1, regexp_count(h.text, t.p, 1, %(flags)s)) n) s
)
SELECT f.id, f.document_id, docs.path, docs.name, docs.ticker, docs.form_type,
       docs.fiscal_year, docs.fiscal_quarter, f.ordinal, f.kind, f.page_start, f.page_end,
       f.section_path, f.content, p.kind, p.section_path, p.content,
       coalesce((SELECT array_agg(ARRAY[s.segment, s.term, s.start - 1, s.stop - 1]
                                  ORDER BY s.segment, s.start, s.term)
                 FROM spans s WHERE s.id = f.id), '{}')
FROM found f
JOIN docs ON docs.id = f.document_id
LEFT JOIN chunks p ON p.document_id = f.document_id AND p.ordinal = f.ordinal - 1
ORDER BY docs.name NULLS LAST, docs.fiscal_year, docs.fiscal_quarter, docs.path, f.ordinal
"""

_SCOPE_SQL = """
SELECT count(DISTINCT d.id), count(ch.id)
FROM documents d JOIN chunks ch ON ch.document_id = d.id
WHERE (%(company)s::bigint IS NULL OR d.company_id = %(company)s)
  AND (%(year)s::int IS NULL OR d.fiscal_year = %(year)s)
  AND (%(quarter)s::int IS NULL OR d.fiscal_quarter = %(quarter)s)
  AND (%(form)s::text IS NULL OR upper(d.form_type) = upper(%(form)s))
"""


def grep(conn: psycopg.Connection, query: GrepQuery, scope: GrepScope | None = None) -> GrepResult:
    """Every occurrence of ``query`` in the stored text of the filings in ``scope``, in
    company, period, document and page order; raises ``UsageError`` for a pattern Postgres
    cannot compile or one that matches empty text."""
    scope = scope or GrepScope()
    patterns = query.patterns
    _check_patterns(conn, patterns, query.flags)
    params = {
        "company": scope.company_id,
        "year": scope.fiscal_year,
        "quarter": scope.fiscal_quarter,
        "form": scope.form_type,
        "pats": patterns,
        "flags": query.flags,
    }
    started = time.perf_counter()
    rows = conn.execute(_SQL, params).fetchall()
    documents, chunks = conn.execute(_SCOPE_SQL, params).fetchone()
    elapsed = (time.perf_counter() - started) * 1000
    hits = [hit for row in rows for hit in _row_hits(row, query)]
    return GrepResult(query, hits, documents, chunks, elapsed, count_hits(hits))


def _check_patterns(conn: psycopg.Connection, patterns: Sequence[str], flags: str) -> None:
    for pattern in patterns:
        try:
            with conn.transaction():
                # Empty text, or an empty span of some text: a lookahead or a word
                # boundary alone would report every word as a hit.
                empty = conn.execute(
                    "SELECT regexp_like('', %(p)s, %(f)s) "
                    "OR regexp_substr('x x', %(p)s, 1, 1, %(f)s) = ''",
                    {"p": pattern, "f": flags},
                )
                matches_empty = empty.fetchone()[0]
        except psycopg.errors.InvalidRegularExpression as exc:
            raise UsageError(
                f"{pattern!r}: {exc.diag.message_primary}",
                hint="grep --regex takes a Postgres regular expression (ARE): \\m and \\M "
                "mark word boundaries, (?i) is implied",
            ) from None
        if matches_empty:
            raise UsageError(
                f"the pattern {pattern!r} matches empty text, so it would match everywhere",
                hint="make at least one character required",
            )


def _row_hits(row: tuple, query: GrepQuery) -> list[GrepHit]:
    (chunk_id, doc_id, path, company, ticker, form, year, quarter, _ordinal, kind, page_start,
     page_end, section_path, content, prev_kind, prev_path, prev_content, spans) = row  # fmt: skip
    by_segment: dict[int, list[list[tuple[int, int]]]] = defaultdict(
        lambda: [[] for _ in query.terms]
    )
    for segment, term, start, stop in spans:
        by_segment[segment][term - 1].append((start, stop))
    out: list[GrepHit] = []
    for segment, term_spans in sorted(by_segment.items()):
        if segment == 0:
            text, where = content, kind
            own = own_start(kind, section_path, content, prev_kind, prev_path, prev_content)
        else:
            if prev_path is not None and list(prev_path[:segment]) == section_path[:segment]:
                continue  # the chunk before opened with this heading: counted there
            text, where, own = section_path[segment - 1], "heading", 0
        sentences = sentence_spans(text, where)
        for start, stop in _hit_spans(query, text, term_spans, sentences):
            if stop <= own:
                continue
            out.append(
                GrepHit(
                    doc_id,
                    path,
                    company,
                    ticker,
                    form,
                    year,
                    quarter,
                    chunk_id,
                    page_start,
                    page_end,
                    where,
                    list(section_path),
                    text[start:stop],
                    _context(text, start, stop, sentences),
                )
            )
    return out


def own_start(
    kind: str,
    section_path: list[str],
    content: str,
    prev_kind: str | None,
    prev_path: list[str] | None,
    prev_content: str | None,
) -> int:
    """Where the text this chunk adds begins: after the sentences it repeats from the chunk
    before (text), after the lines above its rows and a repeated column header (table)."""
    if kind == "table":
        rows = _table_start(content)
        if prev_kind != "table" or prev_content is None:
            return rows
        before = _table_start(prev_content)
        header = content[rows:].split("\n")[:2]  # the column header and its |---| line
        if (
            content[:rows] == prev_content[:before]
            and header == (prev_content[before:].split("\n")[:2])
        ):
            return rows + sum(len(line) + 1 for line in header)
        return rows
    if prev_kind != "text" or prev_content is None or list(prev_path or []) != section_path:
        return 0
    return overlap(prev_content, content)


def _table_start(content: str) -> int:
    """Where a table chunk's Markdown begins (its first line that opens with '|')."""
    if content.startswith("|"):
        return 0
    found = content.find("\n|")
    return found + 1 if found >= 0 else 0


def overlap(previous: str, content: str) -> int:
    """The length of the longest opening of ``content`` that ``previous`` ends with, cut at
    unit boundaries in both (chunking carries whole sentences and paragraphs, joined by a
    space or a blank line), or 0."""
    limit = min(len(previous), len(content))
    for end in range(limit, 0, -1):
        if end < len(content) and content[end] not in " \n":
            continue
        start = len(previous) - end
        if start > 0 and previous[start - 1] not in " \n":
            continue
        if previous.endswith(content[:end]):
            return end
    return 0


def _hit_spans(
    query: GrepQuery,
    text: str,
    term_spans: list[list[tuple[int, int]]],
    sentences: list[tuple[int, int]],
) -> list[tuple[int, int]]:
    if query.mode != "near":
        return term_spans[0]
    firsts, seconds = term_spans
    out = []
    for a_start, a_stop in firsts:
        best: tuple[int, int, int] | None = None  # (words apart, start, stop)
        for b_start, b_stop in seconds:
            if b_start < a_stop and a_start < b_stop:
                continue  # the same words: "waiver*" inside a match of "waiver"
            gap = text[a_stop:b_start] if a_stop <= b_start else text[b_stop:a_start]
            words = len(_WORD.findall(gap))
            if query.within is None:
                if _sentence_of(sentences, a_start) != _sentence_of(sentences, b_start):
                    continue
            elif words > query.within:
                continue
            candidate = (words, min(a_start, b_start), max(a_stop, b_stop))
            if best is None or candidate < best:
                best = candidate
        if best is not None:
            out.append((best[1], best[2]))
    return out


def sentence_spans(text: str, where: str) -> list[tuple[int, int]]:
    """The sentences of a body (a table's rows, a heading whole) as (start, stop)."""
    if where == "heading":
        return [(0, len(text))]
    if where == "table":
        spans, start = [], 0
        for line in text.split("\n"):
            spans.append((start, start + len(line)))
            start += len(line) + 1
        return spans
    from finrag.ingest.sentences import split_sentences

    spans, cursor = [], 0
    for sentence in split_sentences(text):
        at = text.find(sentence, cursor)
        if at < 0:
            continue
        spans.append((at, at + len(sentence)))
        cursor = at + len(sentence)
    return spans


def _sentence_of(sentences: list[tuple[int, int]], offset: int) -> int:
    for i, (start, stop) in enumerate(sentences):
        if start <= offset < stop:
            return i
    return -1 - offset  # between sentences: a sentence of its own


def _context(text: str, start: int, stop: int, sentences: list[tuple[int, int]]) -> str:
    first = _sentence_of(sentences, start)
    last = _sentence_of(sentences, max(start, stop - 1))
    left = sentences[first][0] if first >= 0 else max(0, start - _CONTEXT_CHARS // 2)
    right = sentences[last][1] if last >= 0 else min(len(text), stop + _CONTEXT_CHARS // 2)
    if right - left > _CONTEXT_CHARS:  # a long sentence: the words around the hit
        room = max(0, _CONTEXT_CHARS - (stop - start)) // 2
        new_left, new_right = max(left, start - room), min(right, stop + room)
        snippet = text[new_left:new_right]
        snippet = ("…" if new_left > left else "") + snippet + ("…" if new_right < right else "")
        return " ".join(snippet.split())
    return " ".join(text[left:right].split())


def count_hits(hits: Sequence[GrepHit]) -> list[GrepCount]:
    """Hits by company, fiscal year, quarter and form, with the filings and pages they are
    on (a hit on a chunk spanning two pages counts its first)."""
    groups: dict[tuple, list[GrepHit]] = defaultdict(list)
    for hit in hits:
        groups[(hit.company, hit.fiscal_year, hit.fiscal_quarter, hit.form_type)].append(hit)
    return [
        GrepCount(
            company,
            year,
            quarter,
            form,
            len({h.document_id for h in group}),
            len({(h.document_id, h.page_start) for h in group}),
            len(group),
        )
        for (company, year, quarter, form), group in sorted(
            groups.items(), key=lambda kv: tuple((v is None, v or 0) for v in kv[0])
        )
    ]
