"""Retrieval metrics at k, from a ranked list of result units and a question's gold evidence.

A unit is what the retriever ranks: a chunk, or with +pages a page (its pages are that one
page, its text its chunks' text joined; a chunk spanning pages counts for the page it starts
on only). A unit is *relevant* when it comes from a gold document and its pages include a
gold page of that document. Per k (k units: k chunks, or k pages):

- ``hit``: some relevant unit in the top k (the evidence page reached the model);
- ``recall``: share of the gold (document, page) pairs covered by the top k;
- ``precision``: relevant units in the top k, divided by k (also when fewer than k came
  back); with pages each gold page counts once, so it is at most (gold pages) / k;
- ``f1``: their harmonic mean;
- ``mrr``: 1 / rank of the first relevant unit within the top k, else 0;
- ``text_hit``: some top-k unit from a gold document whose text (for a page: one of its
  chunks) fuzzily matches a gold evidence text (rapidfuzz partial ratio >= 0.8): a second
  view that does not depend on page numbering.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from finrag.answer.numbers import normalize
from finrag.evaluate.dataset import EvalQuestion, Evidence

METRICS = ("hit", "recall", "precision", "f1", "mrr", "text_hit")
TEXT_MATCH_THRESHOLD = 0.8
_MIN_MATCH_CHARS = 50  # a shorter text matches some page by chance


@dataclass(frozen=True)
class Retrieved:
    document: str  # document_key
    page_start: int | None
    page_end: int | None
    content: str
    # A page's chunks, matched one by one: their text joined has gaps where a chunk was no
    # candidate, and overlaps, so an evidence passage no longer reads whole in it.
    parts: tuple[str, ...] = ()

    def pages(self) -> range:
        if self.page_start is None:
            return range(0)
        return range(self.page_start, (self.page_end or self.page_start) + 1)


def text_matches(content: str, evidence_texts: Iterable[str]) -> bool:
    """The chunk's text lies within an evidence text, or the evidence within the chunk."""
    chunk = normalize(content)
    for text in evidence_texts:
        gold = normalize(text)
        if min(len(chunk), len(gold)) < _MIN_MATCH_CHARS:
            continue
        if fuzz.partial_ratio(chunk, gold) >= TEXT_MATCH_THRESHOLD * 100:
            return True
    return False


def relevance(
    ranked: Sequence[Retrieved], evidence: Sequence[Evidence]
) -> tuple[list[set[tuple[str, int]]], list[bool]]:
    """Per ranked chunk: the gold pages it covers, and whether its text matches."""
    gold = {(e.document, e.page) for e in evidence if e.page is not None}
    texts: dict[str, list[str]] = {}
    for e in evidence:
        if e.text:
            texts.setdefault(e.document, []).append(e.text)
    covered = [{(c.document, p) for p in c.pages()} & gold for c in ranked]
    matched = [
        any(text_matches(part, texts.get(c.document, [])) for part in c.parts or (c.content,))
        for c in ranked
    ]
    return covered, matched


def score_ranking(
    ranked: Sequence[Retrieved], question: EvalQuestion, ks: Sequence[int]
) -> dict[int, dict[str, float | None]]:
    """Every metric at every k for one question; page metrics are None without gold pages,
    text_hit is None without gold texts."""
    covered, matched = relevance(ranked, question.evidence)
    gold = question.gold_pages
    has_text = any(e.text for e in question.evidence)
    scores: dict[int, dict[str, float | None]] = {}
    for k in ks:
        top = covered[:k]
        row: dict[str, float | None] = dict.fromkeys(METRICS)
        if gold:
            relevant = [bool(c) for c in top]
            pages = set().union(*top) if top else set()
            recall = len(pages) / len(gold)
            precision = sum(relevant) / k
            first = next((i for i, r in enumerate(relevant, 1) if r), None)
            row.update(
                hit=float(any(relevant)),
                recall=recall,
                precision=precision,
                f1=0.0
                if recall + precision == 0
                else 2 * recall * precision / (recall + precision),
                mrr=1.0 / first if first else 0.0,
            )
        if has_text:
            row["text_hit"] = float(any(matched[:k]))
        scores[k] = row
    return scores


def first_relevant_rank(ranked: Sequence[Retrieved], question: EvalQuestion) -> int | None:
    gold = question.gold_pages
    for rank, chunk in enumerate(ranked, 1):
        if any((chunk.document, p) in gold for p in chunk.pages()):
            return rank
    return None


def mean_scores(
    rows: Sequence[dict[int, dict[str, float | None]]], ks: Sequence[int]
) -> dict[int, dict[str, float | None]]:
    """Metric means over questions, each metric over the questions that define it."""
    means: dict[int, dict[str, float | None]] = {}
    for k in ks:
        means[k] = {}
        for metric in METRICS:
            values = [r[k][metric] for r in rows if r[k][metric] is not None]
            means[k][metric] = sum(values) / len(values) if values else None
    return means
