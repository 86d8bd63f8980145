"""Stage 3, route: which route answers (finrag.answer.routing), and the facts route's
answer, worded by the model when one is on (its numbers held to the template's,
finrag.answer.phrasing)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from finrag.answer.facts_route import FIXED_WORDING
from finrag.answer.phrasing import phrase
from finrag.answer.result import Answer
from finrag.answer.routing import Route, choose_route
from finrag.answer.stages import since
from finrag.config import Settings
from finrag.db import Store
from finrag.errors import ModelNotAvailable
from finrag.llm import LLM, LLMError, LLMTimeout, ModelCrashed
from finrag.llm.base import TIMEOUT_HINT
from finrag.personas import active_persona
from finrag.retrieve import SearchResult

OnEvent = Callable[[str], None]


def route(
    store: Store, settings: Settings, question: str, found: SearchResult, trace: dict[str, Any]
) -> Route:
    """The route for the question; ``trace`` records which and why."""
    if not settings.answer.facts_route:
        chosen = Route("text", "the facts route is off (answer.facts_route)")
    else:
        with store.connect() as conn:
            chosen = choose_route(conn, question, found.filters)
            conn.rollback()
        trace["facts_lookup_s"] = chosen.seconds
    trace["route"], trace["route_reason"] = chosen.name, chosen.reason
    return chosen


def facts_answer(
    chosen: Route,
    settings: Settings,
    get_llm: Callable[[], LLM],
    trace: dict[str, Any],
    started: float,
    notify: OnEvent,
) -> Answer:
    """The facts route's answer: the template, or the model's wording of it."""
    answer = chosen.outcome.answer
    answer.retrieval = trace
    answer.timings["facts"] = chosen.seconds
    if settings.answer.use_llm and not any(f in answer.flags for f in FIXED_WORDING):
        t0 = time.perf_counter()
        try:
            llm = get_llm()
        except (LLMError, ModelNotAvailable) as exc:  # the numbers need no model
            answer.flags.append(f"no model to word the answer ({exc.message}): template")
            answer.timings["total"] = since(started)
            return answer
        notify("phrasing")
        text, problem, tokens = phrase(llm, answer, active_persona(settings))
        answer.timings["phrase"] = since(t0)
        answer.backend, answer.model = llm.backend, llm.model
        for key, n in tokens.items():
            answer.tokens[key] += n
        if text is not None:
            answer.answer = text
        else:
            answer.flags.append(problem)
    answer.timings["total"] = since(started)
    return answer


def facts_after_timeout(
    answer: Answer, mixed: Answer, exc: LLMTimeout | ModelCrashed, started: float
) -> Answer:
    """The model timed out, or its process died, on a question the facts store partly
    answers: the stored figures, said to be all there is, rather than nothing."""
    mixed.retrieval = answer.retrieval
    mixed.route = "mixed"
    if isinstance(exc, ModelCrashed):  # the fix is the command's error line
        what, hint = exc.message, ""
    else:
        what, hint = f"the model timed out ({exc.message})", f" ({TIMEOUT_HINT})"
    mixed.flags.append(
        f"{what}: answered from the facts store only; the rest of the question needs "
        f"the model{hint}"
    )
    mixed.timings["total"] = since(started)
    return mixed


def figures_only(answer: Answer, mixed: Answer, why: str, started: float) -> Answer:
    """The mixed route's stored figures when no quote gives the reasons: said, not guessed."""
    answer.answer = mixed.answer
    answer.citations = mixed.citations
    answer.chunks = list(mixed.chunks)
    answer.flags.append(f"{why}: answered with the stored figures only")
    answer.timings["total"] = since(started)
    return answer
