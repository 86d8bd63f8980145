"""llama.cpp (llama-cpp-python) without a server: the backend that needs no setup.

The model runs in a child process (finrag.llm.model_process) that loads it once and
answers every call of this process, so a fault in native code is an error message,
not a dead CLI. Generation always streams, so tokens reach the screen as they come
and can be counted; llm.timeout_s bounds each call, loading included. Ctrl-C, SIGTERM
and stop_model_call() abort a call within a graph node (finrag.llm.interrupt).
Structured output uses llama.cpp's JSON-schema grammar; tool calls use its chatml
function-calling handler.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from finrag.config import LLMSettings
from finrag.llm.base import (
    ChatResult,
    Deadline,
    Message,
    OnToken,
    Tool,
    ToolCall,
    json_schema,
    parse_output,
    tool_arguments,
)
from finrag.llm.cpu import use_extra_buffers
from finrag.llm.interrupt import model_call
from finrag.llm.model_files import ModelFile, resolve_gguf
from finrag.llm.model_process import ModelProcess, ProcessKey, model_process


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class EmbeddedLLM:
    backend = "embedded"

    def __init__(self, settings: LLMSettings, models_dir: Path) -> None:
        self.settings = settings
        self.models_dir = models_dir
        self._file: ModelFile | None = None
        self.model = (
            Path(settings.embedded_model).stem
            if settings.embedded_model.endswith(".gguf")
            else settings.embedded_model
        )

    @property
    def model_file(self) -> ModelFile:
        if self._file is None:
            self._file = resolve_gguf(self.settings.embedded_model, self.models_dir)
        return self._file

    def process(self) -> ModelProcess:
        """The model's process for these settings (started on the first call)."""
        threads = self.settings.threads or cores()
        key = ProcessKey(
            model_path=str(self.model_file.path),
            context=self.settings.context,
            threads=threads,
            extra_buffers=use_extra_buffers(self.settings.cpu_extra_buffers),
        )
        debug = logging.getLogger("finrag").isEnabledFor(logging.DEBUG)
        return model_process(key, name=f"the embedded model ({self.model})", debug=debug)

    def load(self) -> ModelProcess:
        """Start the model's process now and wait until the model is loaded."""
        proc = self.process()
        with model_call():
            proc.start(Deadline(self.settings.timeout_s, f"loading {proc.name}"))
        return proc

    def chat(
        self,
        messages: Sequence[Message],
        *,
        output: type[BaseModel] | None = None,
        tools: Sequence[Tool] | None = None,
        max_tokens: int | None = None,
        on_token: OnToken | None = None,
    ) -> ChatResult:
        deadline = Deadline(self.settings.timeout_s, f"the embedded model ({self.model})")
        kwargs: dict[str, Any] = {
            "messages": list(messages),
            "max_tokens": max_tokens or self.settings.max_tokens,
            "temperature": self.settings.temperature,
        }
        if output is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": json_schema(output)}
        request = {"kwargs": kwargs, "tools": [t.as_openai() for t in tools or ()]}
        proc = self.process()
        started = time.perf_counter()
        # Ctrl-C, SIGTERM or stop_model_call() abort it within a graph node, prompt included.
        with model_call():
            reply = proc.chat(request, deadline, on_token)
        seconds = time.perf_counter() - started
        if tools:
            return self._tool_result(reply["reply"], seconds)
        pieces = reply["text"]
        result = ChatResult(
            text=pieces,
            backend=self.backend,
            model=self.model,
            completion_tokens=reply["completion_tokens"],
            prompt_tokens=reply["prompt_tokens"],
            seconds=seconds,
        )
        return parse_output(result, output)

    def _tool_result(self, reply: dict[str, Any], seconds: float) -> ChatResult:
        message = reply["choices"][0]["message"]
        usage = reply.get("usage") or {}
        return ChatResult(
            text=message.get("content") or "",
            backend=self.backend,
            model=self.model,
            prompt_tokens=usage.get("prompt_tokens", 0),
            completion_tokens=usage.get("completion_tokens", 0),
            seconds=seconds,
            tool_calls=[
                ToolCall(c["function"]["name"], tool_arguments(c["function"].get("arguments")))
                for c in message.get("tool_calls") or []
            ],
        )
