"""llama.cpp in process (llama-cpp-python): the backend that needs no server.

The model is loaded once per process and kept; generation always streams, so a timeout
can stop it between tokens and the tokens can be counted. stop_model_call(), and in the
CLI Ctrl-C and SIGTERM, abort it sooner: within a graph node (finrag.llm.interrupt).
Structured output uses llama.cpp's JSON-schema grammar; tool calls use its chatml
function-calling handler.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from finrag.config import LLMSettings
from finrag.errors import ModelNotAvailable
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
from finrag.llm.interrupt import attach_stop_flag, model_call, signals_deferred
from finrag.llm.model_files import ModelFile, resolve_gguf

_LOADED: dict[tuple[str, int, int], Any] = {}
_LOAD_LOCK = threading.Lock()


@atexit.register
def _close_models() -> None:
    # Freed here, while the interpreter is whole: llama.cpp's own finalizer fails noisily
    # when it runs during interpreter shutdown.
    while _LOADED:
        _LOADED.popitem()[1].close()


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

    def _llama(self):
        threads = self.settings.threads or cores()
        key = (str(self.model_file.path), self.settings.context, threads)
        with _LOAD_LOCK:
            if key not in _LOADED:
                try:
                    from llama_cpp import Llama
                except ImportError as exc:
                    raise ModelNotAvailable(
                        f"llama-cpp-python is not installed ({exc})",
                        hint="pip install llama-cpp-python==0.3.36, or use Ollama "
                        "(llm.backend = 'ollama')",
                    ) from None
                # Ctrl-C while the model loads takes effect as soon as it has loaded.
                with signals_deferred():
                    try:
                        _LOADED[key] = Llama(
                            model_path=key[0],
                            n_ctx=self.settings.context,
                            n_threads=threads,
                            n_threads_batch=threads,
                            n_batch=512,
                            verbose=False,
                        )
                        attach_stop_flag(_LOADED[key])
                    except (ValueError, RuntimeError) as exc:
                        raise ModelNotAvailable(
                            f"llama.cpp could not load {key[0]}: {exc}",
                            hint="run `finrag doctor`; a damaged bundled model is re-assembled "
                            "after you delete it",
                        ) from None
            return _LOADED[key]

    def chat(
        self,
        messages: Sequence[Message],
        *,
        output: type[BaseModel] | None = None,
        tools: Sequence[Tool] | None = None,
        max_tokens: int | None = None,
        on_token: OnToken | None = None,
    ) -> ChatResult:
        llama = self._llama()
        deadline = Deadline(self.settings.timeout_s, f"the embedded model ({self.model})")
        kwargs: dict[str, Any] = {
            "messages": list(messages),
            "max_tokens": max_tokens or self.settings.max_tokens,
            "temperature": self.settings.temperature,
            "stream": True,
        }
        if output is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": json_schema(output)}
        started = time.perf_counter()
        # Ctrl-C, SIGTERM or stop_model_call() abort it within a graph node, prompt included.
        with model_call(llama):
            if tools:
                return self._tool_chat(llama, kwargs, tools, deadline, started)
            pieces: list[str] = []
            for chunk in llama.create_chat_completion(**kwargs):
                delta = chunk["choices"][0]["delta"].get("content") or ""
                if delta:
                    pieces.append(delta)
                    if on_token:
                        on_token(delta)
                deadline.check()
        text = "".join(pieces)
        result = ChatResult(
            text=text,
            backend=self.backend,
            model=self.model,
            completion_tokens=len(pieces),
            # The context now holds prompt + reply; the reply was len(pieces) tokens.
            prompt_tokens=max(0, llama.n_tokens - len(pieces)),
            seconds=time.perf_counter() - started,
        )
        return parse_output(result, output)

    def _tool_chat(self, llama, kwargs, tools, deadline, started) -> ChatResult:
        from llama_cpp.llama_chat_format import chatml_function_calling

        kwargs = dict(kwargs, stream=False, response_format=None)
        reply = chatml_function_calling(
            llama=llama,
            tools=[t.as_openai() for t in tools],
            tool_choice="auto",
            **kwargs,
        )
        deadline.check()
        message = reply["choices"][0]["message"]
        usage = reply.get("usage") or {}
        return ChatResult(
            text=message.get("content") or "",
            backend=self.backend,
            model=self.model,
            prompt_tokens=usage.get("prompt_tokens", 0),
            completion_tokens=usage.get("completion_tokens", 0),
            seconds=time.perf_counter() - started,
            tool_calls=[
                ToolCall(c["function"]["name"], tool_arguments(c["function"].get("arguments")))
                for c in message.get("tool_calls") or []
            ],
        )
