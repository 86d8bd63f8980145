"""The LLM protocol every backend implements, and what a chat returns.

A chat takes OpenAI-style messages and optionally a pydantic model (structured output:
the backend constrains generation to its JSON schema and the reply is validated into an
instance) or tools (the reply may be tool calls instead of text). ``on_token`` receives
the text as it streams. Every result carries token counts and timing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from finrag.errors import FinragError, ModelNotAvailable

Message = dict[str, Any]  # {"role": "system" | "user" | "assistant" | "tool", "content": str}
OnToken = Callable[[str], None]


class LLMError(FinragError):
    """A model ran but failed: a timeout, or output that does not fit the schema."""

    exit_code = ModelNotAvailable.exit_code


TIMEOUT_HINT = (
    "raise the limit: `--timeout SECONDS` on ask, FINRAG_LLM__TIMEOUT_S=SECONDS, or "
    "llm.timeout_s in the config file; or ask for less (--k), or use a faster backend"
)


class LLMTimeout(LLMError):
    """A model call ran past llm.timeout_s. ``reason``: the failure in a few words."""

    def __init__(
        self, message: str, *, hint: str | None = TIMEOUT_HINT, reason: str = "timed out"
    ) -> None:
        super().__init__(message, hint=hint)
        self.reason = reason


class BackendFailed(LLMError):
    """The model's server answered with an error instead of a reply (not the model's
    output being wrong): another backend may answer instead (finrag.llm.fallback)."""

    def __init__(self, message: str, *, reason: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.reason = reason


class BackendUnreachable(ModelNotAvailable):
    """No server answers at the backend's address, or the connection dropped mid-reply."""

    def __init__(self, message: str, *, reason: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.reason = reason


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments

    def as_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass
class ChatResult:
    text: str
    backend: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    data: Any = None  # the validated pydantic instance when an output model was given
    tool_calls: list[ToolCall] = field(default_factory=list)

    def usage(self) -> dict[str, int]:
        return {"prompt": self.prompt_tokens, "completion": self.completion_tokens}


class LLM(Protocol):
    backend: str  # "ollama", "embedded", "fake"
    model: str

    def chat(
        self,
        messages: Sequence[Message],
        *,
        output: type[BaseModel] | None = None,
        tools: Sequence[Tool] | None = None,
        max_tokens: int | None = None,
        on_token: OnToken | None = None,
    ) -> ChatResult:
        """One reply; ``output`` constrains it to that model's JSON schema."""
        ...


def json_schema(output: type[BaseModel]) -> dict[str, Any]:
    """The schema a backend constrains generation with (references inlined: grammar
    converters handle plain nested objects best)."""
    schema = output.model_json_schema()
    defs = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(defs[node["$ref"].split("/")[-1]])
            return {k: inline(v) for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return inline(schema)


def parse_output(result: ChatResult, output: type[BaseModel] | None) -> ChatResult:
    """Validate a structured reply into ``output``; raise ``LLMError`` saying what was wrong."""
    if output is None:
        return result
    try:
        result.data = output.model_validate_json(_json_part(result.text))
    except (ValidationError, ValueError) as exc:
        raise LLMError(
            f"{result.backend} model {result.model} returned output that does not fit "
            f"{output.__name__}: {str(exc).splitlines()[0][:200]}",
            hint="retry; a larger model (Ollama) follows schemas more reliably",
        ) from None
    return result


def _json_part(text: str) -> str:
    """The JSON object in a reply, without a Markdown fence some models add."""
    text = text.strip()
    if text.startswith("```"):
        text = text.strip("`")
        text = text[text.find("{") :]
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if start != -1 and end > start else text


class Deadline:
    """Raises ``LLMError`` once ``seconds`` have passed: checked between streamed tokens."""

    def __init__(self, seconds: float, what: str) -> None:
        self.started = time.perf_counter()
        self.seconds = seconds
        self.what = what

    def check(self) -> None:
        if self.elapsed() > self.seconds:
            raise LLMTimeout(
                f"{self.what} took longer than {self.seconds:.0f} s",
                reason=f"timed out after {self.seconds:.0f} s",
            )

    def elapsed(self) -> float:
        return time.perf_counter() - self.started


def tool_arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments arrive as a dict (Ollama) or a JSON string (OpenAI style)."""
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw or "{}")
    except ValueError:
        return {"_raw": raw}
    return parsed if isinstance(parsed, dict) else {"_value": parsed}
