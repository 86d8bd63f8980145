"""Pages, not fragments: fused chunk candidates grouped by the page they start on.

An answer in a filing usually sits on one page (a statement, a note, an Item) cut into
several chunks. Ranking chunks lets one page's fragments fill several of the k places,
and a page whose evidence is spread over two middling chunks loses to one lucky fragment
elsewhere. Here a page is scored from its best chunks, and k distinct pages come back,
each carrying the candidate chunks that lie on it.

A chunk spanning pages belongs to the page it starts on, not to each: counted on both, one
chunk made two units of the same score that pushed a distinct page out of the top k (EDGAR
hold-out, 55 questions: hit@10 0.891 counted on each page, 0.945 on the first page only).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from finrag.retrieve.hybrid import Hit

# A page's score is its best chunk's plus half its second best's. Measured on the fused
# candidates (hit@5 / MRR@10; FinanceBench dev 49 questions, EDGAR hold-out 55): the best
# chunk alone 0.653 / 0.509 and 0.836 / 0.700; the sum of the best three, which lets long
# pages of middling chunks win, 0.551 / 0.458 and 0.855 / 0.622; best + 0.5 x second
# 0.673 / 0.522 and 0.836 / 0.716 (chunks, no grouping: 0.633 / 0.500 and 0.836 / 0.705).
SCORED_CHUNKS = 2
DAMPING = 0.5


@dataclass
class PageHit(Hit):
    """A page as a search result: its best chunk's fields, the page it stands for
    (``page_start == page_end == page``), the page's score, its chunks' text joined, and the
    candidate chunks on it in document order. Anything that takes a Hit takes a PageHit."""

    page: int | None = None
    chunks: list[Hit] = field(default_factory=list)

    @property
    def chunk_ids(self) -> list[int]:
        return [c.chunk_id for c in self.chunks]

    def best_chunks(self) -> list[Hit]:
        """The page's chunks, strongest first (those a reranker scored before the rest)."""
        return sorted(
            self.chunks, key=lambda c: (c.rerank_score is None, -(c.rerank_score or c.score))
        )


def page_score(scores: list[float]) -> float:
    """The best ``SCORED_CHUNKS`` scores, each damped by its place: s1 + 0.5 s2."""
    best = sorted(scores, reverse=True)[:SCORED_CHUNKS]
    return sum(score * DAMPING**i for i, score in enumerate(best))


def group_by_page(hits: list[Hit], k: int, *, by_rank: bool = False) -> list[PageHit]:
    """The ``k`` best pages among ranked chunk ``hits``. A chunk's strength is its fused
    score, or with ``by_rank`` its place in the list (1 / (60 + rank): after a reranker,
    whose scores do not compare with the fused ones of the chunks it did not see). A chunk
    with no page number is a unit of its own: its document's other chunks are not its page."""
    groups: dict[tuple, list[Hit]] = {}
    strength: dict[int, float] = {}
    for rank, hit in enumerate(hits, 1):
        strength[hit.chunk_id] = 1 / (60 + rank) if by_rank else hit.score
        key = (
            (hit.document_id, hit.page_start)
            if hit.page_start is not None
            else (hit.document_id, None, hit.chunk_id)
        )
        groups.setdefault(key, []).append(hit)
    pages = [_page(members, strength) for members in groups.values()]
    pages.sort(key=lambda p: (-p.score, p.chunk_id))
    return pages[:k]


def _page(members: list[Hit], strength: dict[int, float]) -> PageHit:
    best = max(members, key=lambda h: strength[h.chunk_id])
    in_order = sorted(members, key=lambda h: (h.page_start or 0, h.chunk_id))
    values = {f.name: getattr(best, f.name) for f in fields(Hit)}
    values.update(
        page_end=best.page_start,
        content="\n\n".join(h.content.strip() for h in in_order),
        score=page_score([strength[h.chunk_id] for h in members]),
        dense_rank=min((h.dense_rank for h in members if h.dense_rank), default=None),
        dense_score=max(
            (h.dense_score for h in members if h.dense_score is not None), default=None
        ),
        text_rank=min((h.text_rank for h in members if h.text_rank), default=None),
        text_score=max((h.text_score for h in members if h.text_score is not None), default=None),
        flagged=next((h.flagged for h in in_order if h.flagged), None),
    )
    return PageHit(**values, page=best.page_start, chunks=in_order)
