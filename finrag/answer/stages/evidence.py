"""Stage 4, evidence: the retrieved chunks split into numbered sentences and table rows,
scored against the question, and the few that answer selected, by id.

The scorer is cheap and needs no model: the question's content words weighted by how
rare they are among the candidates (stems, so "increased" meets "increase"), the cue
words of the kind of question (a driver is said with "due to", "driven by"; guidance
with "expect", "outlook"; a lawsuit with "court", "plaintiff"), the sentence's similarity
to the question under the store's own embedder, and its chunk's retrieval score. A
sentence that shares no content word with the question and carries no cue of its kind
does not answer it; when none does, the route refuses and names the closest passages.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from finrag.ingest.sentences import split_clauses, split_sentences
from finrag.retrieve.context import FLAG_NOTE, ContextChunk
from finrag.tables import table_in_words

MAX_UNIT_CHARS = 600  # a longer "sentence" (a run-on list) is cut at its clauses
MIN_WORDS = 5  # shorter units are headings, captions, page furniture
CANDIDATES = 40  # units embedded for the semantic score (the best by the cheap scores)
SEMANTIC_WEIGHT = 0.5
CUE_WEIGHT = 0.35
PRIOR_WEIGHT = 0.15
FROM_TOP_CHUNKS = 3  # the best retrieved chunks each give a unit when there is room
KEEP_SHARE = 0.55  # a selected unit scores at least this share of the best one
NUMBER_WEIGHT = 0.2  # a figure asked for: a unit that prints one

_WORD = re.compile(r"[a-z][a-z'&-]*[a-z]|[a-z]")
_STOP_WORDS = """
    a about above after again all also am an and any are as at be been before being
    below between both but by can could did do does doing down during each few for from
    further had has have having how i if in into is it its itself just me more most my
    no nor not of off on once only or other our out over own same she should so some
    such than that the their them then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would
    you your company company's companies fiscal year years quarter quarters period
    periods report reported reports filing filings million millions billion billions
    thousand total annual quarterly inc corp corporation ltd plc co llc per based amount
    amounts according describe discuss explain tell give list say said mention mentioned
    state stated
    """
_STOP = frozenset(_STOP_WORDS.split())
# The words a filing uses to say what each kind of question asks (general finance
# knowledge, not any question set's wording).
_INTENTS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "drivers": (
        re.compile(
            r"\b(drove|drive[sn]?|driver|why|reason|caus|attribut|explain|factor|"
            r"contribut|led to|behind|impact|affect)",
            re.I,
        ),
        re.compile(
            r"\b(due to|driven by|primarily|as a result of|attributable to|reflect|"
            r"because|offset|contributed|led by|resulting from|result of|increase in|decrease in|"
            r"higher|lower|favorable|unfavorable)",
            re.I,
        ),
    ),
    "guidance": (
        re.compile(
            r"\b(guidance|outlook|expect|forecast|anticipat|project|plan|next year|"
            r"going forward|target)",
            re.I,
        ),
        re.compile(
            r"\b(expect|anticipat|outlook|guidance|forecast|project|plan to|intend|"
            r"target|will be|we believe|estimate)",
            re.I,
        ),
    ),
    "litigation": (
        re.compile(
            r"\b(litigation|lawsuit|legal|suit|court|settle|proceeding|claim|"
            r"investigation|regulator)",
            re.I,
        ),
        re.compile(
            r"\b(litigation|lawsuit|plaintiff|defendant|court|settle|class action|"
            r"complaint|alleg|proceeding|jury|verdict|investigation|subpoena)",
            re.I,
        ),
    ),
    "customers": (
        re.compile(r"\b(customer|client|concentrat|largest buyer)", re.I),
        re.compile(
            r"\b(customer|client|accounted for|% of (?:our |total |net )?"
            r"(?:sales|revenue)|percent of (?:our |total |net )?(?:sales|revenue)|concentrat)",
            re.I,
        ),
    ),
    "segments": (
        re.compile(
            r"\b(segment|division|business unit|geograph|region|product line|"
            r"categor)",
            re.I,
        ),
        re.compile(
            r"\b(segment|reportable|division|geograph|region|categor|domestic|"
            r"international)",
            re.I,
        ),
    ),
}


@dataclass(frozen=True)
class Evidence:
    """One sentence or table row of a retrieved chunk, verbatim, with its id."""

    n: int  # the id the model and the answer cite: [n]
    text: str  # the quote, as the filing prints it (a table row in words)
    chunk: ContextChunk  # where it is: document, pages, section
    score: float = 0.0
    lexical: float = 0.0  # share of the question's content words it holds (idf-weighted)

    @property
    def label(self) -> str:
        where = " ".join(p for p in (self.chunk.document, self.chunk.pages) if p)
        return f"[{self.n}] {where}"

    def render(self) -> str:
        # A quote from a chunk flagged as instruction-like (only with answer.include_flagged)
        # is marked as such for the model, as whole excerpts are.
        note = f"{FLAG_NOTE} " if self.chunk.hit.flagged else ""
        return f"{self.label}: {note}{self.text}"

    def as_dict(self) -> dict:
        """{n, document, page, quote}: the shape of an answer's ``evidence``."""
        hit = self.chunk.hit
        return {
            "n": self.n,
            "document": Path(hit.document).name,
            "page": hit.page_start,
            "quote": self.text,
        }

    def as_chunk(self) -> ContextChunk:
        """The quote as an excerpt of its own: what citations and number checks read."""
        return ContextChunk(self.n, replace(self.chunk.hit, content=self.text, kind="text"))


@dataclass
class Selection:
    chosen: list[Evidence]  # numbered 1..m, best first
    candidates: int  # units scored
    closest: list[Evidence]  # the best units, answering or not (for a refusal's reply)
    terms: list[str]  # the question's content words, as searched
    pool: list[tuple[ContextChunk, str]] = field(default_factory=list)  # every unit scored


def units(chunk: ContextChunk) -> list[str]:
    """A chunk's sentences, or a table's rows in words with the lines above it."""
    body = chunk.hit.content
    if chunk.hit.kind == "table":
        lines = [ln.strip() for ln in table_in_words(body).splitlines() if ln.strip()]
        return [
            ln for ln in lines if len(_WORD.findall(ln.lower())) >= 2 and not _POINTER.search(ln)
        ]
    out: list[str] = []
    for sentence in split_sentences(body):
        sentence = " ".join(sentence.split())
        pieces = split_clauses(sentence) if len(sentence) > MAX_UNIT_CHARS else [sentence]
        out += [p for p in pieces if _says_something(p)]
    return out


def table_title(chunk: ContextChunk) -> str:
    """The words above a table's grid that say what its rows are ("SUPPLEMENTAL DATA -
    NET REVENUES", "Revenue by geographic area"): the last heading and the title lines.
    A row alone ("MGM China: ... 673,593") does not say it is revenue; its table does."""
    if chunk.hit.kind != "table":
        return ""
    lines = []
    for line in chunk.hit.content.splitlines():
        if line.lstrip().startswith("|"):
            break
        lines.append(line.split(" > ")[-1].strip())
    return " ".join(ln for ln in lines if ln)


# A table's lead-in ("... were as follows ($ in millions):") and a cross-reference ("For
# additional information, see Note 9") point at an answer; they are none.
_POINTER = re.compile(
    r"(:\s*$)|^(for (additional|more|further) information|see note|refer to|part [ivx]+\b.* > )"
    r"|forward-looking statements.{0,120}\b(identified|safe harbor|reform act)",
    re.I,
)


def _says_something(unit: str) -> bool:
    return (
        len(unit.split()) >= MIN_WORDS
        and bool(re.search("[a-z]", unit))
        and not (_POINTER.search(unit))
    )


def stem(word: str) -> str:
    """A crude stem that meets a word's inflections: the first five letters."""
    word = word.strip("'-&")
    return word[:5] if len(word) > 5 else word


def content_terms(text: str, *, ignore: Sequence[str] = ()) -> list[str]:
    skip = {stem(w.removesuffix("'s")) for phrase in ignore for w in _WORD.findall(phrase.lower())}
    terms = []
    for word in _WORD.findall(text.lower()):
        word = word.removesuffix("'s")
        if word in _STOP or len(word) < 3:
            continue
        s = stem(word)
        if s not in skip and s not in terms:
            terms.append(s)
    return terms


# Arithmetic over numbers the filing prints (a change, a ratio): the extraction path with
# the calculator answers it, not quotes alone.
_ARITHMETIC = re.compile(
    r"\b(percent(?:age)? change|% change|growth rate|how much did .{1,60}\b(?:increase|"
    r"decrease|change|grow|rise|fall|decline)|how did .{1,60}\bchange|difference between|"
    r"ratio|cagr|compound annual|year[- ]over[- ]year change|average of)\b",
    re.I,
)


def needs_arithmetic(question: str) -> bool:
    """A change, ratio or average to compute, and no reasons asked for."""
    return bool(_ARITHMETIC.search(question)) and "drivers" not in intents(question)


def intents(question: str) -> list[str]:
    return [name for name, (asks, _) in _INTENTS.items() if asks.search(question)]


def select(
    question: str,
    context: Sequence[ContextChunk],
    *,
    ignore: Sequence[str] = (),
    embed=None,
    keep: int = 5,
) -> Selection:
    """The units of ``context`` that answer ``question``, best first, at most ``keep``.
    ``ignore``: words every candidate shares by construction (the company's name);
    ``embed``: texts -> vectors (the store's embedder), for the semantic score."""
    pool: list[tuple[ContextChunk, str, int]] = []  # (chunk, unit, position in the chunk)
    seen: set[str] = set()
    for chunk in context:
        for i, unit in enumerate(units(chunk)):
            key = unit.lower()
            if key not in seen:
                seen.add(key)
                pool.append((chunk, unit, i))
    terms = content_terms(question, ignore=ignore)
    if not pool:
        return Selection([], 0, [], terms)
    titles = {id(c): set(content_terms(table_title(c))) for c in context}
    unit_terms = [set(content_terms(u)) | titles[id(c)] for c, u, _ in pool]
    df = {t: sum(t in ts for ts in unit_terms) for t in terms}
    idf = {t: math.log(1 + len(pool) / (1 + df[t])) for t in terms}
    weight = sum(idf.values()) or 1.0
    cues = [_INTENTS[name][1] for name in intents(question)]
    figure = asks_for_figure(question)
    best_hit = max((c.hit.score for c in context), default=0.0) or 1.0
    scored = []
    for (chunk, unit, i), ts in zip(pool, unit_terms, strict=True):
        lexical = sum(idf[t] for t in terms if t in ts) / weight
        cue = CUE_WEIGHT if any(c.search(unit) for c in cues) else 0.0
        prior = PRIOR_WEIGHT * max(chunk.hit.score, 0.0) / best_hit
        number = NUMBER_WEIGHT if figure and _FIGURE.search(unit) else 0.0
        scored.append([lexical + cue + prior + number, lexical, cue, chunk, unit, i])
    scored.sort(key=lambda s: -s[0])
    head = scored[:CANDIDATES]
    if embed is not None and head:
        vectors = embed([question, *(s[4] for s in head)])
        q = vectors[0]
        for s, v in zip(head, vectors[1:], strict=True):
            s[0] += SEMANTIC_WEIGHT * max(0.0, _cosine(q, v))
        head.sort(key=lambda s: -s[0])
    closest = [Evidence(0, s[4], s[3], s[0], s[1]) for s in head[:3]]
    # A unit answers when it shares a content word with the question, or carries the cue
    # of the kind asked ("due to" for a driver) in a chunk retrieval found for it.
    answering = [s for s in head if s[1] > 0 or s[2] > 0]
    if not answering:
        return Selection([], len(pool), closest, terms, [(c, u) for c, u, _ in pool])
    floor = KEEP_SHARE * answering[0][0]
    chosen = [s for s in answering if s[0] >= floor][:keep]
    # Each of the best retrieved chunks gives its best unit while there is room: a filing
    # says "purchases of property, plant and equipment" where the question says "capital
    # expenditures", and retrieval, not the word overlap, found that chunk.
    for chunk in sorted(context, key=lambda c: -c.hit.score)[:FROM_TOP_CHUNKS]:
        if len(chosen) >= keep or any(s[3] is chunk for s in chosen):
            continue
        if own := [s for s in scored if s[3] is chunk]:
            chosen.append(max(own, key=lambda s: s[0]))
    by_chunk: dict[int, list[tuple[int, str]]] = {}
    for chunk, unit, i in pool:
        by_chunk.setdefault(id(chunk), []).append((i, unit))
    evidence = []
    for n, (score, lexical, _cue, chunk, unit, i) in enumerate(chosen, 1):
        text = _with_antecedent(unit, by_chunk.get(id(chunk), []), i)
        evidence.append(Evidence(n, text, chunk, round(score, 4), round(lexical, 4)))
    return Selection(evidence, len(pool), closest, terms, [(c, u) for c, u, _ in pool])


# A question after one figure: "how much", "what was the amount/total/value", "in USD".
_ASKS_FIGURE = re.compile(
    r"\b(how much|how many|what (?:is|was|were|are) (?:the )?(?:total |net )?(?:amount|value|"
    r"number|figure|cost|size)|in usd|in (?:\$|dollars)|usd (?:millions|billions|thousands)|"
    r"percentage points?|by how much)\b",
    re.I,
)
_FIGURE = re.compile(r"[$€£]\s?\d|\d[\d,]*(?:\.\d+)?\s?(?:%|percent|million|billion)|\d{1,3},\d{3}")


def asks_for_figure(question: str) -> bool:
    return bool(_ASKS_FIGURE.search(question))


_ANAPHOR = re.compile(
    r"^(this|these|that|those|it|its|they|such|the (increase|decrease|change|decline|growth|"
    r"improvement|reduction))\b",
    re.I,
)


def _with_antecedent(unit: str, siblings: list[tuple[int, str]], i: int) -> str:
    """A sentence that opens with 'This increase...' quoted with the sentence before it
    (the two read together, as printed): alone it does not say what increased."""
    if not _ANAPHOR.match(unit):
        return unit
    before = [u for j, u in siblings if j == i - 1]
    return f"{before[0]} {unit}" if before else unit


def _cosine(a, b) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a)) or 1.0
    nb = math.sqrt(sum(y * y for y in b)) or 1.0
    return dot / (na * nb)
