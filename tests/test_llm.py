"""The LLM backends against their protocol: the scripted fake, Ollama through its real
client against a stand-in server on loopback, and backend choice."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from pydantic import BaseModel

from finrag.answer.extraction import Extraction
from finrag.config import LLMSettings, load_settings
from finrag.errors import ModelNotAvailable
from finrag.llm import LLMError, Tool, ToolCall, get_llm
from finrag.llm.base import Deadline, json_schema
from finrag.llm.embedded import EmbeddedLLM
from finrag.llm.fake import FakeLLM
from finrag.llm.ollama_backend import OllamaLLM, ollama_ready
from tests.conftest import send_json

MODEL = "qwen2.5:7b-instruct"


class Verdict(BaseModel):
    correct: bool
    reason: str


def test_fake_replays_text_json_and_tool_calls() -> None:
    llm = FakeLLM(
        [
            "Revenue was $9.6 billion [1].",
            {"correct": True, "reason": "same figure"},
            [ToolCall("calculate", {"expression": "1577 - 1373"})],
            lambda messages: f"you said {messages[-1]['content']}",
        ]
    )
    pieces: list[str] = []
    text = llm.chat([{"role": "user", "content": "q"}], on_token=pieces.append)
    assert text.text == "Revenue was $9.6 billion [1]." and "".join(pieces) == text.text
    assert text.completion_tokens == 5 and text.prompt_tokens == 1
    verdict = llm.chat([{"role": "user", "content": "grade"}], output=Verdict)
    assert verdict.data == Verdict(correct=True, reason="same figure")
    calc = Tool("calculate", "Arithmetic.", {"type": "object", "properties": {}})
    tools = llm.chat([{"role": "user", "content": "compute"}], tools=[calc])
    assert tools.tool_calls == [ToolCall("calculate", {"expression": "1577 - 1373"})]
    assert llm.chat([{"role": "user", "content": "hi"}]).text == "you said hi"
    assert [c["output"] for c in llm.calls] == [None, "Verdict", None, None]
    assert llm.calls[2]["tools"] == ["calculate"]
    with pytest.raises(LLMError, match="no reply left"):
        llm.chat([{"role": "user", "content": "more"}])


def test_output_that_misses_the_schema_is_an_error() -> None:
    llm = FakeLLM(['{"correct": "perhaps"}', '```json\n{"correct": false, "reason": "x"}\n```'])
    with pytest.raises(LLMError, match="does not fit Verdict"):
        llm.chat([{"role": "user", "content": "grade"}], output=Verdict)
    fenced = llm.chat([{"role": "user", "content": "grade"}], output=Verdict)
    assert fenced.data.correct is False, "a Markdown fence around the JSON is tolerated"


def test_json_schema_inlines_nested_models() -> None:
    schema = json_schema(Extraction)
    assert "$defs" not in json.dumps(schema)
    fact = schema["properties"]["facts"]["items"]
    assert fact["properties"]["source"]["type"] == "integer"
    assert set(fact["required"]) == {"source", "quote", "value"}


def test_deadline() -> None:
    deadline = Deadline(0.0, "the test model")
    with pytest.raises(LLMError, match="the test model took longer than 0 s"):
        deadline.check()


class _StandInOllama(BaseHTTPRequestHandler):
    """Enough of Ollama's HTTP API for its client: /api/tags and streaming /api/chat."""

    requests: ClassVar[list[dict]] = []
    models: ClassVar[list[str]] = [MODEL]

    def do_GET(self) -> None:
        if self.path == "/api/tags":
            self._json(200, {"models": [{"model": m, "name": m} for m in self.models]})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        if body["model"] not in self.models:
            self._json(404, {"error": f"model '{body['model']}' not found"})
            return
        reply = '{"correct": true, "reason": "ok"}' if body.get("format") else "It was $9.6 bn."
        lines = [
            {
                "model": body["model"],
                "message": {"role": "assistant", "content": part},
                "done": False,
            }
            for part in (reply[:5], reply[5:])
        ]
        lines.append(
            {
                "model": body["model"],
                "message": {"role": "assistant", "content": ""},
                "done": True,
                "prompt_eval_count": 42,
                "eval_count": 7,
            }
        )
        raw = "".join(json.dumps(line) + "\n" for line in lines).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _json(self, status: int, data: dict) -> None:
        send_json(self, status, data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def ollama_host() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StandInOllama)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _StandInOllama.requests.clear()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_ollama_streams_counts_tokens_and_bounds_generation(ollama_host: str) -> None:
    llm = OllamaLLM(LLMSettings(ollama_host=ollama_host, max_tokens=300, context=4096))
    pieces: list[str] = []
    result = llm.chat([{"role": "user", "content": "revenue?"}], on_token=pieces.append)
    assert result.text == "It was $9.6 bn." and pieces == ["It wa", "s $9.6 bn."]
    assert (result.prompt_tokens, result.completion_tokens) == (42, 7)
    assert result.backend == "ollama" and result.model == MODEL
    sent = _StandInOllama.requests[-1]
    assert sent["options"]["num_predict"] == 300 and sent["options"]["num_ctx"] == 4096
    assert sent["stream"] is True and not sent.get("format")

    verdict = llm.chat([{"role": "user", "content": "grade"}], output=Verdict, max_tokens=50)
    assert verdict.data == Verdict(correct=True, reason="ok")
    sent = _StandInOllama.requests[-1]
    assert sent["format"]["properties"]["correct"]["type"] == "boolean"
    assert sent["options"]["num_predict"] == 50


def test_ollama_missing_model_and_missing_server(ollama_host: str) -> None:
    llm = OllamaLLM(LLMSettings(ollama_host=ollama_host, ollama_model="llama9:70b"))
    with pytest.raises(ModelNotAvailable, match="no model 'llama9:70b'") as missing:
        llm.chat([{"role": "user", "content": "q"}])
    assert missing.value.hint == "ollama pull llama9:70b"
    assert ollama_ready(LLMSettings(ollama_host=ollama_host))[0] is True
    ready, why = ollama_ready(LLMSettings(ollama_host=ollama_host, ollama_model="llama9:70b"))
    assert not ready and "no model 'llama9:70b'" in why

    dead = OllamaLLM(LLMSettings(ollama_host="http://127.0.0.1:9", timeout_s=3))
    with pytest.raises(ModelNotAvailable, match="cannot reach Ollama") as unreachable:
        dead.chat([{"role": "user", "content": "q"}])
    assert "ollama serve" in unreachable.value.hint


def test_auto_takes_ollama_when_it_is_up_else_embedded(
    ollama_host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", ollama_host)
    assert isinstance(get_llm(load_settings()).primary, OllamaLLM)  # with its fallback
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    assert isinstance(get_llm(load_settings()), EmbeddedLLM)
    monkeypatch.setenv("FINRAG_LLM__BACKEND", "fake")
    with pytest.raises(ModelNotAvailable, match="fake_script is not set"):
        get_llm(load_settings())
