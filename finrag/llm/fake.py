"""A scripted LLM for tests: replies come from a list, calls are recorded.

A reply is a string (returned as text), a dict or a pydantic model (returned as JSON),
a ``ToolCall`` list, or a callable that receives the messages and returns one of those.
A dict ``{"__error__": "timeout"}`` (or any other message) raises, as a model that timed
out (``LLMTimeout``) or failed (``LLMError``) would.
The same validation as the real backends applies, so a wrong script fails like a
wrong model would.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from finrag.llm.base import (
    ChatResult,
    LLMError,
    LLMTimeout,
    Message,
    OnToken,
    Tool,
    ToolCall,
    parse_output,
)

Reply = str | dict | BaseModel | list[ToolCall] | Callable[[Sequence[Message]], Any]


class FakeLLM:
    backend = "fake"

    def __init__(
        self, replies: Sequence[Reply] = (), *, model: str = "scripted", timeout_s: float = 300.0
    ) -> None:
        self.replies = list(replies)
        self.model = model
        self.timeout_s = timeout_s  # named by a scripted timeout, as a real backend's is
        self.calls: list[dict[str, Any]] = []

    @classmethod
    def from_file(cls, path: Path, *, timeout_s: float = 300.0) -> FakeLLM:
        """Replies from a JSON list (for scripted runs of the CLI)."""
        try:
            replies = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise LLMError(f"cannot read the fake LLM script {path}: {exc}") from None
        return cls(replies, model=path.name, timeout_s=timeout_s)

    def chat(
        self,
        messages: Sequence[Message],
        *,
        output: type[BaseModel] | None = None,
        tools: Sequence[Tool] | None = None,
        max_tokens: int | None = None,
        on_token: OnToken | None = None,
    ) -> ChatResult:
        self.calls.append(
            {
                "messages": [dict(m) for m in messages],
                "output": output.__name__ if output else None,
                "tools": [t.name for t in tools or ()],
            }
        )
        if not self.replies:
            raise LLMError(f"the fake LLM has no reply left for call {len(self.calls)}")
        reply = self.replies.pop(0)
        if callable(reply) and not isinstance(reply, BaseModel):
            reply = reply(messages)
        if isinstance(reply, dict) and "__error__" in reply:
            what = str(reply["__error__"])
            if what == "timeout":
                raise LLMTimeout(
                    f"the fake model ({self.model}) took longer than {self.timeout_s:.0f} s"
                )
            raise LLMError(f"the fake model ({self.model}) failed: {what}")
        result = ChatResult(text="", backend=self.backend, model=self.model)
        if isinstance(reply, list) and all(isinstance(r, ToolCall) for r in reply):
            result.tool_calls = list(reply)
        elif isinstance(reply, BaseModel):
            result.text = reply.model_dump_json()
        elif isinstance(reply, dict | list):
            result.text = json.dumps(reply)
        else:
            result.text = str(reply)
        if on_token:
            for piece in re.findall(r"\S+\s*|\s+", result.text):
                on_token(piece)
        result.prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
        result.completion_tokens = len(result.text.split())
        return parse_output(result, output)
