"""Ollama through its official client: streaming, JSON-schema ``format``, tools.

Every request sets ``num_predict`` and ``num_ctx`` (Ollama's defaults would truncate a
long filing context silently) and runs under the client's timeout.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from pydantic import BaseModel

from finrag.config import LLMSettings
from finrag.errors import ModelNotAvailable
from finrag.llm.base import (
    BackendFailed,
    BackendUnreachable,
    ChatResult,
    Deadline,
    LLMTimeout,
    Message,
    OnToken,
    Tool,
    ToolCall,
    json_schema,
    parse_output,
    tool_arguments,
)


class OllamaLLM:
    backend = "ollama"

    def __init__(self, settings: LLMSettings) -> None:
        import ollama

        self.settings = settings
        self.model = settings.ollama_model
        self.host = settings.ollama_host
        self._client = ollama.Client(host=self.host, timeout=settings.timeout_s)

    def chat(
        self,
        messages: Sequence[Message],
        *,
        output: type[BaseModel] | None = None,
        tools: Sequence[Tool] | None = None,
        max_tokens: int | None = None,
        on_token: OnToken | None = None,
    ) -> ChatResult:
        import httpx
        import ollama

        deadline = Deadline(self.settings.timeout_s, f"Ollama ({self.model} at {self.host})")
        started = time.perf_counter()
        pieces: list[str] = []
        calls: list[ToolCall] = []
        prompt_tokens = completion_tokens = 0
        try:
            stream = self._client.chat(
                model=self.model,
                messages=list(messages),
                stream=True,
                format=json_schema(output) if output is not None else None,
                tools=[t.as_openai() for t in tools] if tools else None,
                options={
                    "num_predict": max_tokens or self.settings.max_tokens,
                    "num_ctx": self.settings.context,
                    "temperature": self.settings.temperature,
                },
            )
            for chunk in stream:
                message = chunk.message
                if message.content:
                    pieces.append(message.content)
                    if on_token:
                        on_token(message.content)
                for call in message.tool_calls or []:
                    calls.append(
                        ToolCall(call.function.name, tool_arguments(call.function.arguments))
                    )
                if chunk.done:
                    prompt_tokens = chunk.prompt_eval_count or 0
                    completion_tokens = chunk.eval_count or 0
                deadline.check()
        except ollama.ResponseError as exc:
            if exc.status_code == 404:
                raise ModelNotAvailable(
                    f"Ollama at {self.host} has no model {self.model!r}",
                    hint=f"ollama pull {self.model}",
                ) from None
            status = f"error {exc.status_code}" if exc.status_code > 0 else "error mid-reply"
            raise BackendFailed(
                f"Ollama at {self.host} failed: {exc.error}",
                reason=f"{status}: {str(exc.error)[:80]}",
                hint="Ollama's log says why (where `ollama serve` runs, or `journalctl -u "
                "ollama`)"
                + (
                    ""
                    if self.settings.fallback
                    else "; llm.fallback = true lets the embedded model answer such calls"
                ),
            ) from None
        except httpx.TimeoutException:
            raise LLMTimeout(
                f"Ollama ({self.model} at {self.host}) gave no answer within "
                f"{self.settings.timeout_s:.0f} s",
                reason=f"timed out after {self.settings.timeout_s:.0f} s",
            ) from None
        except (httpx.HTTPError, ConnectionError) as exc:
            # A refused connection, or one that dropped after the reply had begun.
            how = "unreachable" if pieces == [] and not calls else "connection lost"
            raise BackendUnreachable(
                f"cannot reach Ollama at {self.host} ({type(exc).__name__})",
                reason=f"{how}: {type(exc).__name__}",
                hint="start it with `ollama serve`, or set OLLAMA_HOST / llm.backend = 'embedded'",
            ) from None
        result = ChatResult(
            text="".join(pieces),
            backend=self.backend,
            model=self.model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens or len(pieces),
            seconds=time.perf_counter() - started,
            tool_calls=calls,
        )
        return parse_output(result, output)


def ollama_ready(settings: LLMSettings, timeout_s: float = 2.0) -> tuple[bool, str]:
    """Whether Ollama answers at the host and has the model, with the reason if not."""
    try:
        import ollama

        listed = ollama.Client(host=settings.ollama_host, timeout=timeout_s).list()
    except Exception as exc:  # httpx, ConnectionError and ollama errors alike
        return False, f"no Ollama server at {settings.ollama_host} ({type(exc).__name__})"
    names = {m.model for m in listed.models if m.model}
    if settings.ollama_model in names or f"{settings.ollama_model}:latest" in names:
        return True, f"{settings.ollama_model} at {settings.ollama_host}"
    return False, f"Ollama at {settings.ollama_host} has no model {settings.ollama_model!r}"
