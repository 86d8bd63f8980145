"""`finrag eval retrieval`: every question through each retrieval variant, scored at each k."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from finrag.config import Settings
from finrag.db import Store
from finrag.db.documents import list_documents
from finrag.evaluate.dataset import EvalQuestion, document_key
from finrag.evaluate.metrics import Retrieved, first_relevant_rank, mean_scores, relevance
from finrag.evaluate.metrics import score_ranking as score
from finrag.evaluate.runs import finish_run, percentile, start_run
from finrag.graph.retrieve import question_kind
from finrag.retrieve import Retriever, Variant
from finrag.retrieve.pages import PageHit

# kind: the question kind graph retrieval is chosen by (finrag.graph.retrieve.question_kind)
BREAKDOWNS = ("company", "question_type", "doc_type", "kind")
Scores = dict[int, dict[str, float | None]]


@dataclass
class QuestionResult:
    id: str
    variant: str
    question: str
    company: str | None
    question_type: str | None
    doc_type: str | None
    kind: str  # entity, structure or other: whether +graph:KIND fuses the graph in
    gold: list[dict[str, Any]]  # {document, page}
    missing_documents: list[str]  # gold documents the store does not hold
    first_relevant_rank: int | None
    scores: Scores
    top: list[dict[str, Any]]  # the ranked units (chunks or pages): document, pages, chunk_ids...
    filters: dict[str, list[str]]
    applied: dict[str, Any]
    widened: list[str]
    latency_ms: float
    reranker: str | None = None  # which reranked, or why it failed and the fused order stood


@dataclass
class VariantSummary:
    variant: str
    questions: int
    scores: Scores
    latency_ms: dict[str, float]
    breakdowns: dict[str, dict[str, dict[str, Any]]]  # by -> group -> {n, scores}


@dataclass
class RetrievalReport:
    dataset: str
    ks: list[int]
    variants: list[VariantSummary]
    results: list[QuestionResult]
    settings: dict[str, Any]
    run_id: int | None
    git_commit: str | None
    elapsed_s: float
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def evaluate_retrieval(
    store: Store,
    settings: Settings,
    questions: Sequence[EvalQuestion],
    *,
    dataset: Path,
    ks: Sequence[int] = (1, 3, 5, 10),
    variants: Sequence[Variant] | None = None,
    retriever: Retriever | None = None,
    on_question: Callable[[QuestionResult], None] | None = None,
) -> RetrievalReport:
    """Run retrieval only, for each variant over the same store; score and summarise."""
    started = time.perf_counter()
    ks = sorted(set(ks))
    retriever = retriever or Retriever(store, settings)
    variants = list(variants or [retriever.default_variant()])
    results: list[QuestionResult] = []
    with store.connect() as conn:
        stored = {document_key(d.path): d for d in list_documents(conn)}
        run_id, commit = start_run(conn, "retrieval", dataset, settings, variants)
        for variant in variants:
            for q in questions:
                result = _one(retriever, conn, q, variant, ks, stored)
                results.append(result)
                if on_question:
                    on_question(result)
        summaries = [
            _summarise(v.name, [r for r in results if r.variant == v.name], ks) for v in variants
        ]
        notes = _notes(questions, stored)
        finish_run(conn, run_id, {s.variant: s.scores for s in summaries})
    return RetrievalReport(
        dataset=str(dataset),
        ks=ks,
        variants=summaries,
        results=results,
        settings=settings.retrieve.model_dump(),
        run_id=run_id,
        git_commit=commit,
        elapsed_s=round(time.perf_counter() - started, 2),
        notes=notes,
    )


def _one(retriever, conn, q: EvalQuestion, variant: Variant, ks, stored) -> QuestionResult:
    t0 = time.perf_counter()
    found = retriever.retrieve(q.question, k=max(ks), variant=variant, conn=conn)
    latency = (time.perf_counter() - t0) * 1000
    ranked = [
        Retrieved(
            document_key(h.document),
            h.page_start,
            h.page_end,
            h.content,
            tuple(c.content for c in h.chunks) if isinstance(h, PageHit) else (),
        )
        for h in found.hits
    ]
    covered, matched = relevance(ranked, q.evidence)
    gold_doc = stored.get(q.documents[0]) if q.documents else None
    return QuestionResult(
        id=q.id,
        variant=variant.name,
        question=q.question,
        company=q.company or (gold_doc.company if gold_doc else None),
        question_type=q.question_type,
        doc_type=gold_doc.form_type if gold_doc else None,
        kind=question_kind(q.question),
        gold=[{"document": d, "page": p} for d, p in sorted(q.gold_pages)],
        missing_documents=[d for d in q.documents if d not in stored],
        first_relevant_rank=first_relevant_rank(ranked, q),
        scores=score(ranked, q, ks),
        top=[
            {
                "document": r.document,
                "pages": [r.page_start, r.page_end],
                "kind": h.kind,
                "chunk_ids": h.chunk_ids if isinstance(h, PageHit) else [h.chunk_id],
                "relevant": bool(c),
                "text_match": m,
            }
            for r, h, c, m in zip(ranked, found.hits, covered, matched, strict=True)
        ],
        filters=found.filters.matched,
        applied=found.applied,
        widened=found.widened,
        latency_ms=round(latency, 2),
        reranker=found.reranker,
    )


def _summarise(variant: str, rows: list[QuestionResult], ks: list[int]) -> VariantSummary:
    latencies = sorted(r.latency_ms for r in rows)
    breakdowns: dict[str, dict[str, dict[str, Any]]] = {}
    for by in BREAKDOWNS:
        groups: dict[str, list[QuestionResult]] = {}
        for r in rows:
            groups.setdefault(getattr(r, by) or "unknown", []).append(r)
        breakdowns[by] = {
            name: {
                "n": len(members),
                "scores": mean_scores([m.scores for m in members], ks),
                "latency_ms": {"p50": percentile(sorted(m.latency_ms for m in members), 50)},
            }
            for name, members in sorted(groups.items())
        }
    return VariantSummary(
        variant=variant,
        questions=len(rows),
        scores=mean_scores([r.scores for r in rows], ks),
        latency_ms={"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
        breakdowns=breakdowns,
    )


def _notes(questions: Sequence[EvalQuestion], stored: dict) -> list[str]:
    missing = sorted({d for q in questions for d in q.documents if d not in stored})
    if not missing:
        return []
    return [
        f"{len(missing)} gold document(s) are not in the store, so their questions cannot "
        f"hit: {', '.join(missing)}"
    ]
