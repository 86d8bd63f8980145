"""Ollama failing mid-run: the call goes to the fallback (the embedded model in a real
run), the answer and chat's trace say so, and with llm.fallback off the error stands.

Ollama is reached through its real client: a dead port, and a stand-in server on
loopback that answers some calls and fails others (an HTTP 500, an error mid-stream, no
reply in time). The fallback is the scripted fake in process and SmolLM2 through the CLI.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from finrag.agent.session import ChatSession
from finrag.config import LLMSettings, load_settings
from finrag.errors import ExitCode, ModelNotAvailable
from finrag.llm import LLMError, get_llm
from finrag.llm.base import BackendFailed, BackendUnreachable
from finrag.llm.fake import FakeLLM
from finrag.llm.fallback import FallbackBackend, recording_fallbacks, stage_of
from finrag.llm.ollama_backend import OllamaLLM
from finrag.llm.prompts import load_prompt
from tests.conftest import DEAD_OLLAMA, run_finrag, send_json, smollm_gguf
from tests.corpus import quoted

MODEL = "qwen2.5:7b-instruct"
ANSWER = load_prompt("answer").messages(question="q?", facts="[1] x", calculations="none")
EXTRACT = load_prompt("extract").messages(question="q?", context="[1] x")


class _FlakyOllama(BaseHTTPRequestHandler):
    """Ollama's /api/tags, and /api/chat following ``script``, one entry per request:
    a reply (streamed in two pieces), 500, "hang" (no reply for 3 s) or "break" (a piece,
    then an error line, as Ollama reports a runner that died mid-reply)."""

    script: ClassVar[list] = []
    chats: ClassVar[int] = 0

    def do_GET(self) -> None:
        send_json(self, 200, {"models": [{"model": MODEL, "name": MODEL}]})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        cls = type(self)
        step = cls.script[cls.chats] if cls.chats < len(cls.script) else 500
        cls.chats += 1
        if step == 500:
            send_json(self, 500, {"error": "llama runner process has terminated"})
            return
        if step == "hang":
            time.sleep(3)
            return
        pieces = ["It was ", "$9.6 bn."] if step == "break" else [step[:5], step[5:]]
        lines = [{"model": MODEL, "message": {"role": "assistant", "content": p}} for p in pieces]
        if step == "break":
            lines[1] = {"error": "llama runner process has terminated"}
        else:
            lines.append(
                {"model": MODEL, "message": {"role": "assistant", "content": ""}, "done": True}
            )
        for line in lines:
            line.setdefault("done", False)
        raw = "".join(json.dumps(line) + "\n" for line in lines).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def flaky() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FlakyOllama)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _FlakyOllama.script, _FlakyOllama.chats = [], 0
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _with_fake(primary, replies) -> tuple[FallbackBackend, list[FakeLLM]]:
    built: list[FakeLLM] = []

    def factory() -> FakeLLM:
        built.append(FakeLLM(replies, model="stand-in"))
        return built[-1]

    return FallbackBackend(primary, factory), built


def test_dead_ollama_each_call_answered_by_the_fallback_built_once() -> None:
    dead = OllamaLLM(LLMSettings(ollama_host=DEAD_OLLAMA, timeout_s=3))
    llm, built = _with_fake(dead, ["Revenue was $9.6 billion [1].", "again"])
    pieces: list[str] = []
    with recording_fallbacks() as recorded:
        first = llm.chat(ANSWER, on_token=pieces.append)
        second = llm.chat(EXTRACT)
    assert first.text == "Revenue was $9.6 billion [1]." and "".join(pieces) == first.text
    assert (first.backend, first.model) == ("fake", "stand-in") and second.text == "again"
    assert len(built) == 1, "the fallback is built once and kept"
    assert [f.stage for f in recorded.fallbacks] == ["answer", "extract"]
    assert recorded.fallbacks == llm.fallbacks and recorded.answered_by == ("fake", "stand-in")
    fallback = recorded.fallbacks[0]
    assert fallback.reason == "unreachable: ConnectError", "a refused connection: Ollama is retried"
    assert fallback.primary == f"ollama {MODEL}" and "cannot reach Ollama" in fallback.error
    assert fallback.words() == (
        "Ollama failed (unreachable: ConnectError) on 'answer': the fake model (stand-in) answered"
    )
    assert llm.backend == "ollama" and llm.host == DEAD_OLLAMA, "the primary's, as configured"


def test_server_error_mid_run_and_mid_stream(flaky: str) -> None:
    _FlakyOllama.script = ["first reply", 500, "break", "fourth reply"]
    llm, _ = _with_fake(OllamaLLM(LLMSettings(ollama_host=flaky)), ["second", "third"])
    assert llm.chat(EXTRACT).backend == "ollama"
    assert llm.chat(ANSWER).text == "second", "HTTP 500: the fallback answers"
    pieces: list[str] = []
    third = llm.chat(ANSWER, on_token=pieces.append)
    # The piece Ollama streamed before it broke is discarded; the fallback starts over.
    assert third.text == "third" and pieces == ["It was ", "third"]
    assert llm.chat(EXTRACT).text == "fourth reply", "a fast failure: Ollama is tried again"
    assert _FlakyOllama.chats == 4
    server_error, broken = llm.fallbacks
    assert server_error.reason == "error 500: llama runner process has terminated"
    assert broken.reason.startswith("error mid-reply") and broken.discarded == 1
    assert broken.words().endswith("; the 1 tokens it had streamed were discarded")


def test_a_timeout_rests_ollama_for_the_next_calls(flaky: str) -> None:
    _FlakyOllama.script = ["hang"]
    llm, _ = _with_fake(OllamaLLM(LLMSettings(ollama_host=flaky, timeout_s=1)), ["one", "two"])
    assert llm.chat(EXTRACT).text == "one"
    assert llm.chat(ANSWER).text == "two"
    assert _FlakyOllama.chats == 1, "after a timeout the next call does not wait on Ollama again"
    timed_out, skipped = llm.fallbacks
    assert timed_out.reason == "timed out after 1 s"
    assert skipped.error == "" and skipped.reason.startswith("it timed out after 1 s on 'extract'")
    assert skipped.words().startswith("Ollama was skipped (it timed out after 1 s on 'extract'")


def raising(exc: BaseException):
    """A scripted reply that raises ``exc``, as the real backend would."""

    def reply(_messages):
        raise exc

    return reply


def test_what_is_not_a_backend_failure_propagates() -> None:
    schema = LLMError("ollama model x returned output that does not fit Extraction: ...")
    primary = FakeLLM([raising(KeyboardInterrupt()), raising(schema)])
    llm, built = _with_fake(primary, ["never"])
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C stops the call: no fallback
        llm.chat(ANSWER)
    with pytest.raises(LLMError, match="does not fit"):  # Ollama answered, off its schema
        llm.chat(EXTRACT)
    assert built == [] and llm.fallbacks == []


def test_when_the_fallback_fails_too_the_first_error_says_both() -> None:
    down = BackendUnreachable("cannot reach Ollama at h (ConnectError)", reason="unreachable")
    primary = FakeLLM([raising(down)])
    llm, _ = _with_fake(primary, [{"__error__": "out of memory"}])
    with pytest.raises(BackendUnreachable) as both:
        llm.chat(ANSWER)
    assert both.value.message == (
        "cannot reach Ollama at h (ConnectError); the fake model (stand-in) failed too: "
        "the fake model (stand-in) failed: out of memory"
    )
    assert both.value.exit_code == ExitCode.MODEL and isinstance(both.value, ModelNotAvailable)


def test_the_setting_and_stage_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FINRAG_LLM__BACKEND", "ollama")
    llm = get_llm(load_settings())
    assert isinstance(llm, FallbackBackend) and isinstance(llm.primary, OllamaLLM)
    monkeypatch.setenv("FINRAG_LLM__FALLBACK", "false")
    assert isinstance(get_llm(load_settings()), OllamaLLM)
    retry = [*ANSWER, {"role": "assistant", "content": "x"}]
    retry += load_prompt("answer_retry").messages(problems="9.9")
    assert [stage_of(m) for m in (EXTRACT, ANSWER, retry)] == ["extract", "answer", "answer_retry"]
    assert stage_of([{"role": "user", "content": "hi"}]) == "chat"


def _scripted_ollama(replies) -> FakeLLM:
    """A primary that answers or fails (real error types) as scripted, named as Ollama."""
    primary = FakeLLM(replies, model=MODEL)
    primary.backend = "ollama"
    return primary


def test_chat_trace_and_flags_name_the_fallback(store_and_settings) -> None:
    store, settings = store_and_settings
    server_error = BackendFailed("Ollama at h failed: boom", reason="error 500: boom")
    primary = _scripted_ollama(
        [
            raising(server_error),  # the answer: the fallback writes it
            {"supported": True, "unsupported": []},  # the check: Ollama again
        ]
    )
    llm, _ = _with_fake(
        primary, [quoted("$310 million", "ACME's capital expenditures were $310 million")]
    )
    chat = ChatSession(store, settings, name="fallback", llm=llm)
    turn = chat.turn("What were ACME's capital expenditures in 2023?")
    assert turn.reply.startswith("ACME's capital expenditures were $310 million [")
    assert turn.trace["path"] == ["contextualize", "safety", "intent", "answer", "verify"]
    (fallback,) = turn.trace["fallbacks"]
    assert (fallback["node"], fallback["stage"], fallback["backend"]) == (
        "answer",
        "evidence_answer",
        "fake",
    )
    answer_step = next(s for s in turn.trace["steps"] if s["node"] == "answer")
    assert answer_step["fallbacks"] == [{k: v for k, v in fallback.items() if k != "node"}]
    said = [f for f in turn.flags if "Ollama failed (error 500: boom)" in f]
    assert said == [f"answer: {fallback['words']}"], "said once, as the answer's flag"


def test_ask_cli_smollm_answers_for_a_failing_ollama(
    flaky: str, store_and_settings, database_url
) -> None:
    """`auto` finds Ollama up; it fails on the answer: SmolLM2 writes it, held to the
    answer's schema by llama.cpp's grammar, so even a 135M model's reply parses."""
    env = dict(
        os.environ,
        FINRAG_DATABASE_URL=database_url,
        OLLAMA_HOST=flaky,
        FINRAG_LLM__MAX_TOKENS="48",
        FINRAG_LLM__EMBEDDED_MODEL=str(smollm_gguf()),
    )

    def ask(question: str, *options: str, **extra: str):
        _FlakyOllama.script, _FlakyOllama.chats = [], 0  # 500 on every call
        return run_finrag("ask", question, "--k", "1", *options, env=dict(env, **extra))

    off = ask("What was Globex revenue in 2023?", FINRAG_LLM__FALLBACK="false")
    assert off.returncode == ExitCode.MODEL, off.stderr
    assert "error: Ollama at http://127.0.0.1" in off.stderr and "runner process" in off.stderr
    assert "llm.fallback = true lets the embedded model answer" in off.stderr

    # Two wordings: an answer cache, if one holds the first, does not answer the second.
    result = ask("What was Globex revenue in 2023?", "--json")
    assert result.returncode in (ExitCode.OK, ExitCode.UNVERIFIED), result.stderr
    data = json.loads(result.stdout)
    assert data["answer"] and (data["backend"], data["model"]) == ("embedded", smollm_gguf().stem)
    first = data["fallbacks"][0]
    assert (first["stage"], first["backend"]) == ("evidence_answer", "embedded")
    assert first["reason"] == "error 500: llama runner process has terminated"
    assert first["words"] in data["warnings"]

    plain = ask("How much revenue did Globex report for fiscal 2023?", "--quiet")
    assert plain.returncode in (ExitCode.OK, ExitCode.UNVERIFIED), plain.stderr
    assert (
        "warning: Ollama failed (error 500: llama runner process has terminated) on "
        "'evidence_answer': "
        f"the embedded model ({smollm_gguf().stem}) answered" in plain.stderr
    ), "a warning --quiet keeps"
