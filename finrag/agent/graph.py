"""A small explicit graph: named nodes, each a function of the turn's state that returns
the name of the next node (or ``END``), run in a loop that records a trace.

No framework: the whole control flow is the ``edges`` each node returns, readable in
one file (``finrag.agent.nodes``), and every step's time and tokens are measured here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from finrag.llm.fallback import recording_fallbacks

END = "end"
MAX_STEPS = 40  # a bound on any path: a cycle in the edges is a bug, not a hang


@dataclass
class TraceStep:
    node: str
    ms: float
    tokens: dict[str, int]  # prompt, completion: this node's model calls
    out: str  # what the node decided or produced, in a line
    # Calls Ollama failed in this step and the embedded model answered (finrag.llm.fallback).
    fallbacks: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Trace:
    steps: list[TraceStep] = field(default_factory=list)

    @property
    def path(self) -> list[str]:
        return [s.node for s in self.steps]

    @property
    def total_ms(self) -> float:
        return round(sum(s.ms for s in self.steps), 1)

    def tokens(self) -> dict[str, int]:
        return {
            key: sum(s.tokens.get(key, 0) for s in self.steps) for key in ("prompt", "completion")
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "total_ms": self.total_ms,
            "tokens": self.tokens(),
            "steps": [s.as_dict() for s in self.steps],
            "fallbacks": [f | {"node": s.node} for s in self.steps for f in s.fallbacks],
        }


class TokenMeter:
    """Counts the tokens of every model call made through ``wrap``-ped LLMs."""

    def __init__(self) -> None:
        self.prompt = 0
        self.completion = 0

    def wrap(self, llm):
        return _MeteredLLM(llm, self)

    def snapshot(self) -> tuple[int, int]:
        return self.prompt, self.completion


class _MeteredLLM:
    def __init__(self, llm, meter: TokenMeter) -> None:
        self._llm = llm
        self._meter = meter
        self.backend = llm.backend
        self.model = llm.model

    def chat(self, messages, **kwargs):
        result = self._llm.chat(messages, **kwargs)
        self._meter.prompt += result.prompt_tokens
        self._meter.completion += result.completion_tokens
        return result


Node = Callable[[Any], "tuple[str, str]"]  # state -> (next node, one-line summary)


def run_graph(
    nodes: Mapping[str, Node],
    start: str,
    state: Any,
    meter: TokenMeter,
    *,
    on_step: Callable[[TraceStep], None] | None = None,
) -> Trace:
    """Run from ``start`` until a node returns ``END``; every step goes in the trace."""
    trace = Trace()
    current = start
    for _ in range(MAX_STEPS):
        if current == END:
            return trace
        before = meter.snapshot()
        t0 = time.perf_counter()
        with recording_fallbacks() as fallbacks:
            following, summary = nodes[current](state)
        after = meter.snapshot()
        step = TraceStep(
            node=current,
            ms=round((time.perf_counter() - t0) * 1000, 1),
            tokens={"prompt": after[0] - before[0], "completion": after[1] - before[1]},
            out=summary,
            fallbacks=fallbacks.as_dicts(),
        )
        trace.steps.append(step)
        if on_step:
            on_step(step)
        current = following
    raise RuntimeError(f"the chat graph ran {MAX_STEPS} steps without ending: {trace.path}")
