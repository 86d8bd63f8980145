"""Ollama with the embedded model behind it: a call Ollama fails is answered in process.

``FallbackBackend(primary, fallback_factory)`` is what ``get_llm`` returns for Ollama
while ``llm.fallback`` is on. A call that fails on the primary for a reason another
backend can get round (``FALLBACK_ERRORS``: unreachable or dropped connection, a server
error, a timeout) is made again, whole, on the fallback, which is built on first need
and kept. A reply that does not fit its schema, a model Ollama does not have (a setup
problem with a one-line fix: ``ollama pull``), Ctrl-C and a stopped call are not
failures of that kind and propagate as before.

After a fast failure (refused connection, server error) the next call tries Ollama
again: that costs milliseconds, and a restarted server is used at once. After a timeout
the next calls go straight to the fallback for ``RETRY_AFTER_TIMEOUT_S``: each further
try would cost a whole ``llm.timeout_s`` again, per call (an answer makes two or three).

Streaming: text the primary streamed before it failed is discarded; the call starts
over on the fallback, whose tokens follow on the same ``on_token``. The record counts the
discarded pieces (finrag's own callers only count tokens for a status line).

Every call answered by the fallback is a ``Fallback`` record: on the backend's
``fallbacks`` and on each ``recording_fallbacks()`` block open in this context (an
answer, a chat graph step), so the answer, ``ask --json`` and chat's trace say so.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel

from finrag.errors import FinragError
from finrag.llm.base import (
    LLM,
    BackendFailed,
    BackendUnreachable,
    ChatResult,
    LLMTimeout,
    Message,
    OnToken,
    Tool,
)
from finrag.llm.interrupt import ModelCallStopped

log = logging.getLogger(__name__)

FALLBACK_ERRORS = (LLMTimeout, BackendFailed, BackendUnreachable)
RETRY_AFTER_TIMEOUT_S = 300.0
_NAMES = {"ollama": "Ollama", "embedded": "the embedded model", "fake": "the fake model"}


@dataclass(frozen=True)
class Fallback:
    """One call the primary did not answer and the fallback did."""

    stage: str  # the prompt the call was made with ("extract", "answer", ...) or "chat"
    primary: str  # "ollama qwen2.5:7b-instruct"
    reason: str  # the primary's failure in a few words: "timed out after 30 s"
    error: str  # the primary's error message in full ("" when it was skipped)
    backend: str  # what answered instead
    model: str
    primary_s: float = 0.0  # seconds spent on the primary before it failed
    discarded: int = 0  # pieces the primary had streamed before it failed, discarded

    def words(self) -> str:
        """'Ollama failed (timed out after 30 s) on 'answer': the embedded model (m) answered'."""
        who = _NAMES.get(self.primary.split()[0], self.primary.split()[0])
        what = f"was skipped ({self.reason})" if not self.error else f"failed ({self.reason})"
        lost = f"; the {self.discarded} tokens it had streamed were discarded" * bool(
            self.discarded
        )
        answered = _NAMES.get(self.backend, self.backend)
        return (
            f"{who[:1].upper()}{who[1:]} {what} on '{self.stage}': {answered} "
            f"({self.model}) answered{lost}"
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"words": self.words()}


@dataclass
class FallbackRecorder:
    """The fallbacks of the calls made inside one ``recording_fallbacks()`` block."""

    fallbacks: list[Fallback] = field(default_factory=list)
    # (backend, model) of the latest call made through a FallbackBackend in the block.
    answered_by: tuple[str, str] | None = None

    def as_dicts(self) -> list[dict[str, Any]]:
        return [f.as_dict() for f in self.fallbacks]


_RECORDERS: ContextVar[tuple[FallbackRecorder, ...]] = ContextVar(
    "finrag_fallback_recorders", default=()
)


@contextlib.contextmanager
def recording_fallbacks() -> Iterator[FallbackRecorder]:
    """Collect the fallbacks of the model calls made in the block (blocks nest: an
    answer's inside a chat graph step's; each hears its own calls)."""
    recorder = FallbackRecorder()
    token = _RECORDERS.set((*_RECORDERS.get(), recorder))
    try:
        yield recorder
    finally:
        _RECORDERS.reset(token)


class FallbackBackend:
    """The primary backend, and the fallback for the calls it fails (see the module)."""

    def __init__(self, primary: LLM, fallback_factory: Callable[[], LLM]) -> None:
        self.primary = primary
        self.backend = primary.backend  # what is configured; each result says what answered
        self.model = primary.model
        self.fallbacks: list[Fallback] = []
        self._factory = fallback_factory
        self._fallback: LLM | None = None
        self._lock = threading.Lock()
        self._skip_until = 0.0  # monotonic time: after a timeout, the primary rests
        self._skip_reason = ""

    def __getattr__(self, name: str) -> Any:
        if name == "primary":  # not set yet (copy, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.primary, name)  # host, settings...: the primary's

    @property
    def fallback(self) -> LLM:
        """The fallback backend, built on first need and kept."""
        with self._lock:
            if self._fallback is None:
                self._fallback = self._factory()
            return self._fallback

    def chat(
        self,
        messages: Sequence[Message],
        *,
        output: type[BaseModel] | None = None,
        tools: Sequence[Tool] | None = None,
        max_tokens: int | None = None,
        on_token: OnToken | None = None,
    ) -> ChatResult:
        kwargs: dict[str, Any] = {"output": output, "tools": tools, "max_tokens": max_tokens}
        stage = stage_of(messages)
        now = time.monotonic()
        if now < self._skip_until:
            ago = now - (self._skip_until - RETRY_AFTER_TIMEOUT_S)
            reason = f"{self._skip_reason}, {ago:.0f} s before"
            return self._fall_back(messages, kwargs, on_token, stage, None, reason)
        streamed = 0

        def relay(piece: str) -> None:
            nonlocal streamed
            streamed += 1
            on_token(piece)  # type: ignore[misc]

        started = time.perf_counter()
        try:
            result = self.primary.chat(
                messages, **kwargs, on_token=relay if on_token is not None else None
            )
        except FALLBACK_ERRORS as exc:
            spent = time.perf_counter() - started
            if isinstance(exc, LLMTimeout):
                self._skip_until = time.monotonic() + RETRY_AFTER_TIMEOUT_S
                self._skip_reason = f"it {exc.reason} on '{stage}'"
            return self._fall_back(
                messages, kwargs, on_token, stage, exc, exc.reason, spent=spent, streamed=streamed
            )
        _answered(result)
        return result

    def _fall_back(
        self,
        messages: Sequence[Message],
        kwargs: dict[str, Any],
        on_token: OnToken | None,
        stage: str,
        error: FinragError | None,
        reason: str,
        *,
        spent: float = 0.0,
        streamed: int = 0,
    ) -> ChatResult:
        primary = f"{self.primary.backend} {self.primary.model}"
        log.info(
            "%s %s on %r: the call goes to the fallback",
            primary,
            f"failed ({reason})" if error else f"skipped ({reason})",
            stage,
        )
        try:
            fallback = self.fallback
            result = fallback.chat(messages, **kwargs, on_token=on_token)
        except ModelCallStopped:
            raise  # stopped on request: not a failure to report as one
        except FinragError as second:
            if error is None:  # the primary was resting after a timeout
                second.message = f"{second.message} ({self.primary.backend} {reason})"
                second.args = (second.message,)
                raise
            raise _both_failed(error, second, self._fallback) from second
        record = Fallback(
            stage=stage,
            primary=primary,
            reason=reason,
            error=error.message if error else "",
            backend=result.backend,
            model=result.model,
            primary_s=round(spent, 3),
            discarded=streamed,
        )
        self.fallbacks.append(record)
        for recorder in _RECORDERS.get():
            recorder.fallbacks.append(record)
        _answered(result)
        return result


def _answered(result: ChatResult) -> None:
    for recorder in _RECORDERS.get():
        recorder.answered_by = (result.backend, result.model)


def _both_failed(first: FinragError, second: FinragError, fallback: LLM | None) -> FinragError:
    """The primary's error, saying the fallback failed too and why."""
    name = f"the {fallback.backend} model ({fallback.model})" if fallback else "the fallback"
    first.message = f"{first.message}; {name} failed too: {second.message}"
    first.args = (first.message,)
    if second.hint:
        first.hint = f"{first.hint}; for {name}: {second.hint}" if first.hint else second.hint
    return first


def stage_of(messages: Sequence[Message]) -> str:
    """The prompt (prompts/NAME.md) a call's messages were made from, else 'chat'."""
    if not messages:
        return "chat"
    first, last = str(messages[0].get("content", "")), str(messages[-1].get("content", ""))
    for name, opening, user_only in _prompt_openings():
        if user_only and messages[-1].get("role") == "user" and last.startswith(opening):
            return name  # a prompt appended to a conversation (answer_retry)
    for name, opening, user_only in _prompt_openings():
        if not user_only and first.startswith(opening):
            return name
    return "chat"


@cache
def _prompt_openings() -> tuple[tuple[str, str, bool], ...]:
    """(name, the literal text its first section opens with, whether it has no system)."""
    from finrag.datadir import data_dir
    from finrag.llm.prompts import load_prompt

    found = []
    for path in sorted(data_dir("prompts").glob("*.md")):
        prompt = load_prompt(path.stem)
        opening = (prompt.system or prompt.user or "").split("$", 1)[0].strip()[:120]
        if len(opening) >= 12:  # "Question: " alone would name the wrong prompt
            found.append((prompt.name, opening, prompt.system is None))
    return tuple(found)


__all__ = [
    "FALLBACK_ERRORS",
    "Fallback",
    "FallbackBackend",
    "FallbackRecorder",
    "recording_fallbacks",
    "stage_of",
]
