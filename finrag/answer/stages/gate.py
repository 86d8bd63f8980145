"""Stage 2, gate: refusals that need no model, each naming what the store holds. A
company the store lacks and years no filing of the named company covers are refused
before the route (finrag.answer.coverage); a best chunk below answer.min_relevance only
after it, since a stored fact answers whatever the excerpts' scores."""

from __future__ import annotations

from collections.abc import Sequence

from finrag.answer.coverage import held_filings, unheld_period, unheld_period_message
from finrag.answer.result import Answer
from finrag.answer.stages import since
from finrag.answer.stages.retrieve import searched
from finrag.config import Settings
from finrag.db import Store
from finrag.db.documents import CompanyCoverage, describe_coverage
from finrag.retrieve import SearchResult
from finrag.retrieve.context import ContextChunk

Refusal = tuple[str, str]  # (kind, the reply in words)


def before_route(store: Store, found: SearchResult, coverage) -> Refusal | None:
    """An unknown company, or years no filing of the named companies covers."""
    unknown = found.filters.unknown_companies
    if unknown and not found.filters.companies:
        return "unknown-company", (
            f"{' and '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not in your "
            f"filings, so I cannot answer that. {holdings(coverage)}"
        )
    if unheld := _unheld_period(store, found, coverage):
        return "unheld-period", unheld
    return None


def not_relevant(settings: Settings, found: SearchResult, coverage) -> Refusal | None:
    """Nothing found, or the best chunk is below answer.min_relevance."""
    best = max((h.dense_score or -1.0 for h in found.hits), default=None)
    if best is None or best < settings.answer.min_relevance:
        return "not-relevant", not_found_message(found, coverage)
    return None


def _unheld_period(store: Store, found: SearchResult, coverage) -> str | None:
    filters = found.filters
    if not (filters.companies and filters.years):
        return None
    with store.connect() as conn:
        filings = held_filings(conn, [c.id for c in filters.companies])
        conn.rollback()
    companies = unheld_period(filters, filings)
    return unheld_period_message(companies, filters, coverage) if companies else None


def refused(answer: Answer, refusal: Refusal, started: float) -> Answer:
    answer.refused, answer.refusal, answer.answer = True, refusal[0], refusal[1]
    answer.timings["total"] = since(started)
    return answer


def not_found_message(found: SearchResult, coverage) -> str:
    return f"I could not find that in your filings ({searched(found)}). {holdings(coverage)}"


def unverified_message(found: SearchResult, context: Sequence[ContextChunk]) -> str:
    closest = "; ".join(c.label for c in sorted(context, key=lambda c: -c.hit.score)[:3])
    return (
        f"I found excerpts that may hold the answer ({searched(found)}), but none of the facts "
        f"read from them matched their text, so I give no figure. Closest: {closest}."
    )


def holdings(coverage: Sequence[CompanyCoverage]) -> str:
    return f"The store holds: {describe_coverage(coverage)}."


def without_model(
    answer: Answer, found: SearchResult, mixed: Answer | None, started: float
) -> Answer:
    """With the model off (--no-llm): the facts the store holds for the question when it
    has them (the reasons it also asks for need the model), else the excerpts to read."""
    if mixed is not None:
        mixed.retrieval = answer.retrieval
        mixed.route = "mixed"
        mixed.flags.append("the question also asks for reasons or a judgement: run with the model")
        mixed.timings["total"] = since(started)
        return mixed
    best = sorted(found.hits, key=lambda h: -h.score)[:3]
    where = "; ".join(ContextChunk(n, h).label for n, h in enumerate(best, 1))
    answer.refused, answer.refusal = True, "no-llm"
    answer.answer = (
        "The facts store does not answer this question and the model is off (--no-llm), "
        f"so no answer is written ({answer.retrieval.get('route_reason')}). "
        f"Closest excerpts: {where or 'none'}."
    )
    answer.timings["total"] = since(started)
    return answer


def no_evidence(
    answer: Answer, found: SearchResult, closest, started: float, *, read: bool = False
) -> Answer:
    """No quote answers (``read``: the model, shown the best ones, found none that does):
    say what was searched and name the closest passages."""
    where = "; ".join(
        f"{' '.join(p for p in (e.chunk.document, e.chunk.pages) if p)} “{_short(e.text)}”"
        for e in closest
    )
    why = (
        "the model read the closest quotes and found no answer in them"
        if read
        else "no sentence of the passages found answers it"
    )
    answer.refused, answer.refusal = True, "no-evidence"
    answer.answer = (
        f"I could not find that in your filings ({searched(found)}; {why}). "
        f"Closest passages: {where or 'none'}."
    )
    answer.timings["total"] = since(started)
    return answer


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
