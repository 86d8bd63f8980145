"""Citations in an answer: [n] markers mapped to documents and pages, and the check that
every number an answer states comes from what it cites or from a calculation."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import PurePath

from finrag.answer.extraction import CalculationOutcome, CheckedFact
from finrag.answer.numbers import Amount, found_in, material, parse_amounts
from finrag.ingest.sentences import split_sentences
from finrag.refs import document_fields, page_ref
from finrag.retrieve.context import ContextChunk, page_label
from finrag.retrieve.hybrid import Hit
from finrag.tables import table_in_words
from finrag.text import clip

MARK = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_QUOTE_CHARS = 240


@dataclass
class Citation:
    n: int
    document: str  # the short name the Sources list prints (the file's stem)
    pages: list[int | None]
    section: str
    chunk_id: int
    quote: str
    flagged: str | None = None  # the excerpt's instruction-like words, found at ingest
    path: str = ""  # the file as ingested
    document_id: int | None = None
    ocr: bool = False  # the cited page was read by OCR: its figures may be misread

    @property
    def where(self) -> str:
        """'BESTBUY_2024Q2_10Q p.4 (OCR)': the document and pages, as Sources lists print."""
        pages = page_label(self.pages[0], self.pages[-1]) if self.pages else ""
        return " ".join(p for p in (self.document, pages, "(OCR)" if self.ocr else "") if p)

    def __post_init__(self) -> None:
        # Read back from JSON (a stored chat turn), ``document`` is the file name: the
        # object keeps the short name the Sources list prints.
        if self.path and self.document == PurePath(self.path).name:
            self.document = PurePath(self.path).stem

    @property
    def page(self) -> int | None:
        return next((p for p in self.pages if p is not None), None)

    @property
    def ref(self) -> str:
        """'BESTBUY_2024Q2_10Q.pdf#page=16': what `finrag open` takes back."""
        return page_ref(self.path or self.document, self.page)

    def as_dict(self) -> dict:
        """The JSON shape (finrag.refs): ``document`` is the file name, beside it ``path``,
        ``document_id``, the first ``page`` and the ``ref``; ``pages`` is [start, end]."""
        data = asdict(self)
        if self.path:
            data.update(document_fields(self.path, self.document_id))
        return {**data, "page": self.page, "ref": self.ref}

    @classmethod
    def from_dict(cls, data: dict) -> Citation:
        """A citation as stored with a chat turn (old turns have the stem and no path)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class NumberProblem:
    sentence: str
    number: str
    reason: str

    def describe(self) -> str:
        return f"{self.number} ({self.reason})"


def cited(sentence: str) -> list[int]:
    return [int(n) for m in MARK.finditer(sentence) for n in re.split(r"[,;]\s*", m.group(1))]


_LEAD_MARKERS = re.compile(r"^((?:\s*\[\d+(?:\s*[,;]\s*\d+)*\])+)\s*")


def answer_sentences(answer: str) -> list[str]:
    """Sentences with their citation markers; a marker that opens a sentence ('... 5%. [2]')
    belongs to the one before."""
    out: list[str] = []
    for sentence in split_sentences(answer.strip()):
        lead = _LEAD_MARKERS.match(sentence)
        if lead and out:
            out[-1] += " " + lead.group(1).strip()
            sentence = sentence[lead.end() :]
        if sentence.strip():
            out.append(sentence.strip())
    return out


def attach_citations(answer: str, facts: Sequence[CheckedFact]) -> tuple[str, list[int]]:
    """Sentences that state a number one of the checked facts holds, but cite nothing,
    get that fact's excerpt as their citation. Small models drop citations; here the
    attribution is computed from the facts, never guessed, and returned to be reported.
    Numbers no fact holds stay uncited (and the number check flags them)."""
    sources = [(f.source, material(parse_amounts(f.value or f.quote))) for f in facts if f.ok]
    added: list[int] = []
    lines = []
    for line in answer.split("\n"):
        pieces = re.split(r"(?<=[.!?])(\s+)", line)
        for i in range(0, len(pieces), 2):
            sentence = pieces[i]
            numbers = material(parse_amounts(sentence))
            after = pieces[i + 2] if i + 2 < len(pieces) else ""
            if not numbers or cited(sentence) or _LEAD_MARKERS.match(after):
                continue  # '... FY2023. [1]': the marker after the stop is its citation
            found = sorted({n for n, held in sources for a in numbers if found_in(a, held)})
            if found:
                body, end = re.match(r"(.*?)([.!?]*)$", sentence, re.S).groups()
                pieces[i] = f"{body.rstrip()} [{', '.join(map(str, found))}]{end}"
                added += [n for n in found if n not in added]
        lines.append("".join(pieces))
    return "\n".join(lines), added


def check_numbers(
    answer: str,
    context: Sequence[ContextChunk],
    facts: Sequence[CheckedFact],
    calculations: Sequence[CalculationOutcome],
) -> list[NumberProblem]:
    """Each number must be in a chunk its sentence cites (or in that source's fact
    quote), or be a calculation result."""
    by_n = {c.n: c for c in context}
    computed: list[Amount] = []
    for outcome in calculations:
        if outcome.result is not None and not outcome.unsourced_inputs:
            computed += parse_amounts(outcome.formatted or "")
            computed.append(Amount.plain(outcome.result))
    problems = []
    for sentence in answer_sentences(answer):
        sources = [n for n in cited(sentence) if n in by_n]
        allowed = list(computed)
        for n in sources:
            allowed += parse_amounts(by_n[n].hit.content)
            allowed += [a for f in facts if f.source == n and f.ok for a in parse_amounts(f.quote)]
        for amount in material(parse_amounts(sentence)):
            if found_in(amount, allowed):
                continue
            reason = "not in the cited sources" if sources else "no citation"
            problems.append(NumberProblem(sentence, amount.text, reason))
    return problems


def hit_citation(n: int, hit: Hit, quote: str, section: str) -> Citation:
    """Citation [n] of a quote printed in a retrieved passage."""
    return Citation(
        n=n,
        document=PurePath(hit.document).stem,
        pages=[hit.page_start, hit.page_end],
        section=section,
        chunk_id=hit.chunk_id,
        quote=quote,
        flagged=hit.flagged,
        path=hit.document,
        document_id=hit.document_id,
        ocr=hit.ocr,
    )


def map_citations(
    answer: str, context: Sequence[ContextChunk], facts: Sequence[CheckedFact]
) -> tuple[list[Citation], list[int]]:
    """The citations an answer uses, in order of first use, and markers that name no chunk."""
    by_n = {c.n: c for c in context}
    citations: dict[int, Citation] = {}
    invalid: list[int] = []
    for sentence in answer_sentences(answer):
        for n in cited(sentence):
            chunk = by_n.get(n)
            if chunk is None:
                if n not in invalid:
                    invalid.append(n)
                continue
            if n not in citations:
                hit = chunk.hit
                citations[n] = Citation(
                    n=n,
                    document=chunk.document,
                    pages=[hit.page_start, hit.page_end],
                    section=chunk.section,
                    chunk_id=hit.chunk_id,
                    quote=_quote(sentence, chunk, facts),
                    flagged=hit.flagged,
                    path=hit.document,
                    document_id=hit.document_id,
                    ocr=hit.ocr,
                )
    return list(citations.values()), invalid


def _quote(sentence: str, chunk: ContextChunk, facts: Sequence[CheckedFact]) -> str:
    """What in the chunk backs the sentence: the chunk's own line holding the sentence's
    numbers (a table row reads as words), else the model's checked quote, else the
    chunk's opening."""
    numbers = material(parse_amounts(sentence))
    body = chunk.hit.content
    if chunk.hit.kind == "table":
        body = table_in_words(body)
    lines = [ln.strip() for ln in body.splitlines() if ln.strip()]
    for line in lines:
        if numbers and any(found_in(a, parse_amounts(line)) for a in numbers):
            return clip(line, _QUOTE_CHARS)
    for fact in facts:
        if fact.ok and fact.source == chunk.n and fact.quote.strip():
            return clip(fact.quote, _QUOTE_CHARS)
    return clip(" ".join(lines[1:]) if len(lines) > 1 else " ".join(lines), _QUOTE_CHARS)
