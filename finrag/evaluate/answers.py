"""`finrag eval answers`: every question through `ask`, scored; resumable.

Each finished question is appended to ``answers.jsonl`` in the output folder at once,
so an interrupted run continues where it stopped (questions already there are not
asked again) and a long run can be watched. The summary is computed from that file.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from finrag.answer.citations import cited
from finrag.answer.pipeline import Answer, Asker
from finrag.config import Settings
from finrag.db import Store
from finrag.evaluate.correctness import Correctness, judge, score_correctness
from finrag.evaluate.dataset import EvalQuestion, document_key
from finrag.evaluate.evidence import (
    best_recall,
    cited_passages,
    covered,
    from_gold,
    printed_quotes,
)
from finrag.evaluate.faithfulness import (
    answer_relevance,
    context_scores,
    faithfulness,
    statements,
)
from finrag.evaluate.runs import finish_run, percentile, start_run
from finrag.evaluate.traceable import untraceable_numbers
from finrag.llm import LLMError
from finrag.llm.prompts import prompt_digests
from finrag.retrieve import Retriever
from finrag.retrieve.filters import QueryFilters

RESULTS_FILE = "answers.jsonl"
FACT_ROUTES = ("facts", "mixed")


@dataclass
class AnswerResult:
    id: str
    question: str
    gold: str
    answer: str
    company: str | None
    question_type: str | None
    refused: bool
    refusal: str | None
    numeric_correct: bool | None
    polarity_correct: bool | None
    auto_correct: bool | None
    gold_numbers_found: float | None
    judge_correct: bool | None
    judge_reason: str | None
    citations: int
    citation_valid: bool | None  # None when refused
    valid_citation_share: float | None  # citations whose excerpt holds its sentence's numbers
    evidence_cited: bool | None  # a citation falls on a gold page
    unverified_numbers: list[dict[str, str]]
    flags: list[str]
    latency_s: float
    tokens: dict[str, int]
    backend: str | None
    model: str | None
    cited: list[dict[str, Any]] = field(default_factory=list)  # document, pages
    error: str | None = None  # the model failed (timeout, output off its schema)
    # Which way the pipeline answered ("facts", "mixed", "text") and why; lines written
    # before routes existed load as "text", the only route there was.
    route: str = "text"
    route_reason: str | None = None
    # Numbers of an answer built on facts (facts or mixed route) that no fact value and
    # no calculation gave, as written (finrag.evaluate.traceable). None for the text route.
    numbers_untraceable: list[str] | None = None
    # False: the dataset expects a refusal (finrag.evaluate.dataset); such a question is
    # right when refused. Lines written before the flag existed load as answerable.
    answerable: bool = True
    # Token recall of the gold evidence text by the answer's printed quotes, and by the
    # full text of the passages it cites (finrag.evaluate.evidence); None: no gold text.
    evidence_quote_recall: float | None = None
    evidence_passage_recall: float | None = None
    # Whether one printed quote is drawn from the gold passage (finrag.evaluate.evidence).
    evidence_quote_from_gold: bool | None = None
    quotes_from: str | None = None  # "evidence" (the answer's quotes) or "citations"
    # By rule, no model (finrag.evaluate.faithfulness): the share of the answer's statements
    # its cited passages or facts support, and the statements they do not; the share of
    # the company, period and measure asked that the answer names; the share of passages
    # given to the answer step on a gold page, and of gold pages among them.
    faithfulness: float | None = None
    statements: int | None = None
    unsupported_statements: list[str] = field(default_factory=list)
    answer_relevance: float | None = None
    relevance_missing: list[str] | None = None
    context_precision: float | None = None
    context_recall: float | None = None
    # With answer.graders: passages dropped, the answer check, retried, hedged.
    graders: dict[str, Any] | None = None


@dataclass
class AnswerReport:
    dataset: str
    questions: int
    summary: dict[str, Any]
    results: list[AnswerResult]
    settings: dict[str, Any]
    run_id: int | None
    git_commit: str | None
    elapsed_s: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def score_answer(
    q: EvalQuestion,
    a: Answer,
    *,
    tolerance: float,
    verdict=None,
    latency_s: float,
    filters: QueryFilters | None = None,
) -> AnswerResult:
    # A refusal is never right by a figure it computed and did not give.
    computed = [] if a.refused else [c.result for c in a.calculations if c.result is not None]
    correct = (
        score_correctness(q.answer, "" if a.refused else a.answer, computed, tolerance=tolerance)
        if q.answerable
        # Its gold is a note, not an answer: only the refusal counts.
        else Correctness(numeric=None, polarity=None, gold_numbers_found=None)
    )
    gold_pages = q.gold_pages
    cited = [{"document": c.document, "pages": c.pages} for c in a.citations]
    answered = not a.refused
    on_facts = answered and a.route in FACT_ROUTES
    golds = [e.text for e in q.evidence if e.text] if q.answerable else []
    quotes, quotes_from = printed_quotes(a) if answered else ([], None)
    claims = statements(a)
    relevant = answer_relevance(q.question, filters, a) if filters is not None else None
    precision, recall = context_scores(a.chunks, gold_pages)
    return AnswerResult(
        id=q.id,
        question=q.question,
        gold=q.answer,
        answer=a.answer,
        company=q.company,
        question_type=q.question_type,
        refused=a.refused,
        refusal=a.refusal,
        numeric_correct=correct.numeric,
        polarity_correct=correct.polarity,
        auto_correct=correct.auto if q.answerable else a.refused,
        gold_numbers_found=correct.gold_numbers_found,
        judge_correct=verdict.correct if verdict else None,
        judge_reason=verdict.reason if verdict else None,
        citations=len(a.citations),
        citation_valid=(
            bool(a.citations) and not a.invalid_citations and not a.unverified_numbers
            if answered
            else None
        ),
        valid_citation_share=_valid_citation_share(a) if answered and a.citations else None,
        evidence_cited=(
            any(
                (document_key(c.document), p) in gold_pages
                for c in a.citations
                for p in _page_range(c.pages)
            )
            if answered and gold_pages
            else None
        ),
        unverified_numbers=a.unverified_numbers,
        flags=a.flags,
        latency_s=round(latency_s, 2),
        tokens=dict(a.tokens),
        backend=a.backend,
        model=a.model,
        cited=cited,
        route=a.route,
        route_reason=a.retrieval.get("route_reason"),
        numbers_untraceable=untraceable_numbers(a) if on_facts else None,
        answerable=q.answerable,
        evidence_quote_recall=best_recall(golds, quotes) if golds else None,
        evidence_quote_from_gold=from_gold(golds, quotes) if golds else None,
        evidence_passage_recall=(
            best_recall(golds, cited_passages(a) if answered else []) if golds else None
        ),
        quotes_from=quotes_from,
        faithfulness=faithfulness(claims),
        statements=len(claims) if answered else None,
        unsupported_statements=[c.sentence for c in claims if not c.supported],
        answer_relevance=relevant["value"] if relevant else None,
        relevance_missing=relevant["missing"] if relevant else None,
        context_precision=precision,
        context_recall=recall,
        graders=a.retrieval.get("graders"),
    )


def _page_range(pages: list[int | None]) -> range:
    start, end = pages[0], pages[-1]
    if start is None:
        return range(0)
    return range(start, (end or start) + 1)


def _valid_citation_share(a: Answer) -> float:
    """Share of the answer's citations that back every number of the sentences citing
    them (the pipeline's number check found nothing unsupported there)."""
    unsupported = {n for problem in a.unverified_numbers for n in cited(problem["sentence"])}
    return sum(c.n not in unsupported for c in a.citations) / len(a.citations)


def evaluate_answers(
    store: Store,
    settings: Settings,
    questions: Sequence[EvalQuestion],
    *,
    dataset: Path,
    out_dir: Path | None,
    use_judge: bool = False,
    tolerance: float = 0.01,
    asker: Asker | None = None,
    on_question: Callable[[AnswerResult, bool], None] | None = None,
) -> AnswerReport:
    """Ask every question not yet in ``out_dir``'s results; score; summarise all of them."""
    started = time.perf_counter()
    asker = asker or Asker(store, settings)
    done = _load_done(out_dir) if out_dir else {}
    results_path = out_dir / RESULTS_FILE if out_dir else None
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
    with store.connect() as conn:
        run_id, commit = start_run(conn, "answers", dataset, settings, ["ask"])
        conn.commit()
    results: list[AnswerResult] = []
    for q in questions:
        if q.id in done:
            results.append(done[q.id])
            if on_question:
                on_question(done[q.id], True)
            continue
        t0 = time.perf_counter()
        try:
            answer = asker.ask(q.question)
            error = None
        except LLMError as exc:  # one bad generation fails its question, not the run
            answer, error = Answer(question=q.question, answer=""), exc.message
        latency = time.perf_counter() - t0
        verdict = None
        # An unanswerable question has no gold answer to judge against.
        if use_judge and q.answerable and not answer.refused and error is None:
            verdict = judge(asker.llm, q.question, q.answer, answer.answer)
        with store.connect() as conn:  # the parts asked, as the pipeline parses them
            filters = Retriever.filters_for(conn, q.question, None)
            conn.rollback()
        result = score_answer(
            q, answer, tolerance=tolerance, verdict=verdict, latency_s=latency, filters=filters
        )
        result.error = error
        results.append(result)
        if results_path is not None:
            with results_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(asdict(result), ensure_ascii=False) + "\n")
        if on_question:
            on_question(result, False)
    summary = summarise(results)
    with store.connect() as conn:
        finish_run(conn, run_id, summary)
    return AnswerReport(
        dataset=str(dataset),
        questions=len(results),
        summary=summary,
        results=results,
        settings={
            "answer": settings.answer.model_dump(mode="json"),
            "retrieve": settings.retrieve.model_dump(mode="json"),
            "llm": settings.llm.model_dump(mode="json", exclude={"fake_script"}),
            "prompts": prompt_digests(),
            "tolerance": tolerance,
            "judge": use_judge,
        },
        run_id=run_id,
        git_commit=commit,
        elapsed_s=round(time.perf_counter() - started, 2),
    )


def _load_done(out_dir: Path) -> dict[str, AnswerResult]:
    path = out_dir / RESULTS_FILE
    if not path.is_file():
        return {}
    done = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            raw = json.loads(line)
            done[raw["id"]] = AnswerResult(**raw)
    return done


def _share(values: Sequence[bool | float | None]) -> dict[str, Any]:
    defined = [float(v) for v in values if v is not None]
    return {
        "value": round(sum(defined) / len(defined), 4) if defined else None,
        "n": len(defined),
    }


def _latency(results: Sequence[AnswerResult]) -> dict[str, float]:
    latencies = sorted(r.latency_s for r in results)
    return {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)}


def _untraceable(results: Sequence[AnswerResult]) -> dict[str, Any]:
    """Answers built on facts whose text states a number that is no fact value and no
    calculation result: their share, and how many such numbers in all."""
    checked = [r.numbers_untraceable for r in results if r.numbers_untraceable is not None]
    return {**_share([bool(n) for n in checked]), "numbers": sum(len(n) for n in checked)}


def _breakdown(group: Sequence[AnswerResult]) -> dict[str, Any]:
    """One group's figures (a question type, a route): the same keys for every breakdown."""
    return {
        "n": len(group),
        "auto_correct": _share([r.auto_correct for r in group]),
        "numeric_correct": _share([r.numeric_correct for r in group]),
        "judge_correct": _share([r.judge_correct for r in group]),
        "refusal_rate": _share([r.refused for r in group]),
        **refusal_scores(group),
        "latency_s": _latency(group),
        "numbers_untraceable": _untraceable(group),
        **evidence_recall(group),
        **answer_metrics(group),
    }


def summarise(results: Sequence[AnswerResult]) -> dict[str, Any]:
    answered = [r for r in results if not r.refused]
    return {
        "questions": len(results),
        "numeric_correct": _share([r.numeric_correct for r in results]),
        "polarity_correct": _share([r.polarity_correct for r in results]),
        "auto_correct": _share([r.auto_correct for r in results]),
        "judge_correct": _share([r.judge_correct for r in results]),
        "refusal_rate": _share([r.refused for r in results]),
        **refusal_scores(results),
        "error_rate": _share([r.error is not None for r in results]),
        "citation_valid": _share([r.citation_valid for r in answered]),
        "valid_citation_share": _share([r.valid_citation_share for r in answered]),
        "evidence_cited": _share([r.evidence_cited for r in answered]),
        "latency_s": _latency(results),
        "numbers_untraceable": _untraceable(results),
        **evidence_recall(results),
        **answer_metrics(results),
        "tokens": {
            "prompt": sum(r.tokens.get("prompt", 0) for r in results),
            "completion": sum(r.tokens.get("completion", 0) for r in results),
            "prompt_per_question": round(
                sum(r.tokens.get("prompt", 0) for r in results) / max(len(results), 1)
            ),
            "completion_per_question": round(
                sum(r.tokens.get("completion", 0) for r in results) / max(len(results), 1)
            ),
        },
        "by_question_type": {
            name: _breakdown(group) for name, group in _group(results, "question_type").items()
        },
        "by_route": {name: _breakdown(group) for name, group in _group(results, "route").items()},
    }


def answer_metrics(results: Sequence[AnswerResult]) -> dict[str, Any]:
    """The rule-based RAGAS-style figures (finrag.evaluate.faithfulness): faithfulness, the
    mean over answers with statements, and the share of them with every statement
    supported; answer relevance, the mean over answers to questions asking a company,
    period or measure; context precision and recall, means over questions with gold pages."""
    scored = [r.faithfulness for r in results]
    return {
        "faithfulness": _share(scored),
        "faithful_answers": _share([None if f is None else f == 1.0 for f in scored]),
        "answer_relevance": _share([r.answer_relevance for r in results]),
        "context_precision": _share([r.context_precision for r in results]),
        "context_recall": _share([r.context_recall for r in results]),
    }


def evidence_recall(results: Sequence[AnswerResult]) -> dict[str, Any]:
    """Share of the questions with gold evidence text whose gold the answer's printed
    quotes cover (token recall >= 0.5), and whose gold its cited passages cover; a refused
    or quote-less answer covers nothing."""
    return {
        "evidence_recall_quotes": _share([covered(r.evidence_quote_recall) for r in results]),
        "evidence_recall_passages": _share([covered(r.evidence_passage_recall) for r in results]),
        "evidence_quotes_from_gold": _share([r.evidence_quote_from_gold for r in results]),
    }


def newly_refused(results: Sequence[AnswerResult], baseline: Sequence[AnswerResult]) -> list[str]:
    """Answerable questions refused here that ``baseline`` (another run over the same
    questions) answered: what a stricter refusal cost."""
    answered = {r.id for r in baseline if not r.refused}
    return [r.id for r in results if r.answerable and r.refused and r.id in answered]


def refusal_scores(results: Sequence[AnswerResult]) -> dict[str, Any]:
    """Refusals against expectations: precision, the share of refused questions that were
    unanswerable; recall, the share of unanswerable questions refused. An answerable
    question refused also counts, as before, against correctness."""
    return {
        "refusal_precision": _share([not r.answerable for r in results if r.refused]),
        "refusal_recall": _share([r.refused for r in results if not r.answerable]),
    }


def _group(results: Sequence[AnswerResult], by: str) -> dict[str, list[AnswerResult]]:
    groups: dict[str, list[AnswerResult]] = {}
    for r in results:
        groups.setdefault(getattr(r, by) or "unknown", []).append(r)
    return dict(sorted(groups.items()))
