"""RAGAS-style answer metrics by rule, no model: statement faithfulness, answer
relevance, and context precision and recall by passages.

**Faithfulness.** The answer is split into sentences (their citation markers kept). A
sentence is a *statement* when it states a number or has at least ``MIN_WORDS`` content
words; a note in parentheses ("(A statement ... was removed.)") or a caveat ("Not
supported by the cited excerpts: ...", the chat graph's) is the pipeline speaking, not a
claim. A statement's evidence is what it cites (each marked passage's full text,
label and quote); a statement citing nothing is read against everything the answer
cites. It is **supported** when either

- *by a passage*: every number it states (dates and years aside) is in its evidence, up
  to rounding and scale (finrag.answer.numbers), and at least ``MIN_OVERLAP`` of its
  content words are among its evidence's words (numbers, years and fiscal labels
  aside: the numbers are checked above, and a year is no claim of its own; words of
  direction, "rose", "decreased", aside: a change the evidence prints as two figures
  says neither; function words out; the filing's company counts as a word of every
  passage of it); or
- *by a fact*: it states at least one number and every one is a stored fact's value or a
  calculation's result or input.

An answer's faithfulness is its share of supported statements; refused answers and
answers without statements have none.

**Answer relevance** (finrag.answer.graders): the share of the parts a question asks
about (company, period, measure) the answer names.

**Context precision and recall by passages**: of the passages the answer step was given
(``answer.chunks``: the quotes or excerpts the model read, the stored facts' rows on the
facts route), the share that fall on a gold evidence page; and of the gold pages, the
share some such passage falls on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from finrag.answer.citations import answer_sentences, cited
from finrag.answer.graders import asked, missing, named, relevance
from finrag.answer.numbers import found_in, material, parse_amounts, without_dates
from finrag.answer.result import Answer
from finrag.evaluate.dataset import document_key
from finrag.evaluate.evidence import tokens
from finrag.evaluate.traceable import known_amounts

MIN_OVERLAP = 0.5
MIN_WORDS = 3
_MARK = re.compile(r"\[\d+(?:\s*[,;]\s*\d+)*\]")
_NOTE = re.compile(r"^(?:\(.*\)\.?|(?:Not supported by the cited excerpts|Note):.*)$", re.S)
_NUMERIC = re.compile(r"^(?:fy|q[1-4]|h[12])?[0-9][0-9.]*$")  # 2,104; 2021; fy2022; q3
_DIRECTION = frozenset(
    re.findall(
        r"\w+",
        "increase increased increases increasing decrease decreased decreases decreasing "
        "rise rose risen rising fall fell fallen falling grow grew grown growing decline "
        "declined declines declining change changed changes higher lower up down compared "
        "versus vs than",
    )
)


@dataclass
class Statement:
    sentence: str
    supported: bool
    by: str | None  # "passage", "fact", or None
    overlap: float | None  # share of its content words in its evidence
    numbers_not_found: list[str]  # in its evidence (a fact may still hold them)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def statements(answer: Answer) -> list[Statement]:
    """Each statement of the answer, judged by the rule above."""
    if answer.refused or not answer.answer.strip():
        return []
    texts = _evidence_texts(answer)
    # An uncited sentence is read against what the answer cites, not every passage it was
    # given: citing nothing supports nothing.
    everything = " ".join(
        texts[n] for n in dict.fromkeys(c.n for c in answer.citations) if n in texts
    )
    known = known_amounts(answer)
    out = []
    for sentence in answer_sentences(answer.answer):
        body = _MARK.sub(" ", sentence).strip()
        if _NOTE.match(body):
            continue
        numbers = material(parse_amounts(without_dates(body)))
        words = [
            t
            for t in tokens(body)
            if len(t) > 1 and not _NUMERIC.match(t) and t not in _DIRECTION  # "'s" aside
        ]
        if not numbers and len(words) < MIN_WORDS:
            continue
        marks = [n for n in cited(sentence) if n in texts]
        evidence = " ".join(texts[n] for n in marks) if marks else everything
        held = parse_amounts(evidence)
        not_found = [a.text for a in numbers if not found_in(a, held)]
        have = set(tokens(evidence))
        overlap = round(sum(w in have for w in words) / len(words), 4) if words else None
        by = None
        if not not_found and (overlap is None or overlap >= MIN_OVERLAP) and evidence:
            by = "passage"
        elif numbers and all(found_in(a, known) for a in numbers):
            by = "fact"
        out.append(Statement(sentence, by is not None, by, overlap, not_found))
    return out


def faithfulness(found: Sequence[Statement]) -> float | None:
    return round(sum(s.supported for s in found) / len(found), 4) if found else None


def _evidence_texts(answer: Answer) -> dict[int, str]:
    """Each citable number's evidence: the passage's text and label, the citation's
    document, section and quote."""
    texts: dict[int, list[str]] = {}
    for c in answer.chunks:
        texts.setdefault(c.n, []).extend([c.hit.company or "", c.label, c.hit.content])
    for c in answer.citations:
        texts.setdefault(c.n, []).extend([c.document, c.section, c.quote])
    return {n: " ".join(t for t in parts if t) for n, parts in texts.items()}


def answer_relevance(question: str, filters, answer: Answer) -> dict[str, Any] | None:
    """{value, parts, missing} for an answered question; None when refused."""
    if answer.refused or not answer.answer.strip():
        return None
    parts = named(asked(question, filters), answer.answer)
    return {"value": relevance(parts), "parts": parts, "missing": missing(parts)}


def context_scores(
    chunks: Iterable[Any], gold_pages: set[tuple[str, int]]
) -> tuple[float | None, float | None]:
    """(precision, recall) of the passages given against the gold pages; None where the
    question has no gold page or (precision) no passage was given."""
    if not gold_pages:
        return None, None
    spans = {}
    for c in chunks:
        hit = c.hit
        if hit.page_start is None:
            spans.setdefault(hit.chunk_id, set())
            continue
        doc = document_key(hit.document)
        end = hit.page_end or hit.page_start
        spans[hit.chunk_id] = {(doc, p) for p in range(hit.page_start, end + 1)}
    precision = (
        round(sum(bool(pages & gold_pages) for pages in spans.values()) / len(spans), 4)
        if spans
        else None
    )
    shown = set().union(*spans.values()) if spans else set()
    recall = round(len(gold_pages & shown) / len(gold_pages), 4)
    return precision, recall
