"""Issue 27: the embedded model's process dies by a real signal (the real worker, its
generation replaced by a SIGSEGV to itself: tests/crashing_model_worker.py) and the CLI
lives: one error line naming the signal and the fix, exit 5, and the facts store's
answer still printed where it has one. Also: on a CPU with AMX the model loads without
llama.cpp's extra buffer types."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from finrag.config import LLMSettings
from finrag.errors import ExitCode
from finrag.llm import ModelCrashed, cpu
from finrag.llm.embedded import EmbeddedLLM
from finrag.llm.model_process import WORKER_ENV
from tests.conftest import REPO, run_finrag, smollm_gguf
from tests.test_answer_status import APPLE, GLOBEX
from tests.test_facts_store import _store_apple

CRASHING_WORKER = str(REPO / "tests" / "crashing_model_worker.py")
QUESTION = [{"role": "user", "content": "Name one colour."}]


def small_llm(**changes) -> EmbeddedLLM:
    settings = LLMSettings(embedded_model=str(smollm_gguf()), context=1024, **changes)
    return EmbeddedLLM(settings, Path("/nonexistent-models-dir"))


def test_a_model_process_killed_by_a_signal_is_an_error_naming_it(monkeypatch) -> None:
    monkeypatch.setenv(WORKER_ENV, CRASHING_WORKER)
    llm = small_llm(threads=1)
    with pytest.raises(ModelCrashed) as caught:
        llm.chat(QUESTION, max_tokens=4)
    crash = caught.value
    assert crash.exit_code == ExitCode.MODEL and crash.signal_name == "SIGSEGV"
    assert "crashed while generating: its process was killed by SIGSEGV" in crash.message
    assert 'CMAKE_ARGS="-DGGML_NATIVE=OFF"' in crash.hint
    assert "--no-cache-dir --force-reinstall llama-cpp-python" in crash.hint
    assert "FINRAG_LLM__CPU_EXTRA_BUFFERS=off" in crash.hint
    # The fault is in the build, not the call: the next call says so at once.
    with pytest.raises(ModelCrashed) as again:
        llm.chat(QUESTION, max_tokens=4)
    assert again.value is crash


def test_the_model_process_is_loaded_once_and_answers_every_call() -> None:
    llm = small_llm(threads=2)
    first = llm.chat(QUESTION, max_tokens=4)
    pid = llm.process().info["pid"]
    second = llm.chat(QUESTION, max_tokens=4)
    assert llm.process().info["pid"] == pid != os.getpid()
    assert first.text == second.text and first.completion_tokens > 0


def test_on_a_cpu_with_amx_the_model_loads_without_extra_buffer_types(monkeypatch) -> None:
    monkeypatch.setattr(cpu, "cpu_flags", lambda: frozenset({"avx512f", "amx_tile", "amx_int8"}))
    assert cpu.amx_flags() == ["amx_tile", "amx_int8"]
    assert cpu.use_extra_buffers("auto") is False and cpu.use_extra_buffers("on") is True
    llm = small_llm(threads=3)  # a key of its own: a process of its own
    assert llm.chat(QUESTION, max_tokens=2).text
    # What llama.cpp was given: llama_model_params.use_extra_bufts as passed to the load.
    assert llm.process().info["extra_buffers"] is False
    monkeypatch.setattr(cpu, "cpu_flags", lambda: frozenset({"avx512f"}))
    assert cpu.use_extra_buffers("auto") is True and cpu.use_extra_buffers("off") is False


@pytest.fixture
def ask_crashing(store_and_settings, database_url: str):
    """`finrag ask ARGS` on the embedded backend whose model process dies by SIGSEGV;
    the store holds ACME and Globex excerpts and Apple's statement of operations."""
    store, settings = store_and_settings
    with store.connect() as conn:
        _store_apple(conn, settings)

    def run(*args: str):
        env = dict(
            os.environ,
            FINRAG_DATABASE_URL=database_url,
            FINRAG_LLM__BACKEND="embedded",
            FINRAG_LLM__CONTEXT="2048",
            **{WORKER_ENV: CRASHING_WORKER},
        )
        return run_finrag("ask", *args, env=env)

    return run


def _one_error_line(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr
    assert "Traceback" not in stderr and "Segmentation" not in stderr, stderr
    return errors[0]


def test_ask_when_the_model_process_dies(ask_crashing) -> None:
    # The text route needs the model: one error line, the hint, exit 5.
    text = ask_crashing(GLOBEX, "--k", "1")
    assert text.returncode == ExitCode.MODEL, text.stderr
    assert "killed by SIGSEGV" in _one_error_line(text.stderr)
    assert "-DGGML_NATIVE=OFF" in text.stderr.split("hint:", 1)[1]
    assert text.stdout == ""

    # The facts route answers from the store (the model only words it): the answer,
    # then the crash, exit 5.
    facts = ask_crashing(APPLE)
    assert facts.returncode == ExitCode.MODEL, facts.stderr
    assert "391,035" in facts.stdout
    assert "killed by SIGSEGV" in _one_error_line(facts.stderr)

    # A question the facts answer only in part: the stored figures, said to be all.
    mixed = ask_crashing("How did Apple's total net sales change in fiscal 2024 and why?", "--json")
    assert mixed.returncode == ExitCode.MODEL, mixed.stderr
    data = json.loads(mixed.stdout)
    assert data["route"] == "mixed" and "391,035" in data["answer"]
    (flag,) = [f for f in data["flags"] if "crashed" in f]
    assert "answered from the facts store only" in flag and "SIGSEGV" in flag
    assert "killed by SIGSEGV" in _one_error_line(mixed.stderr)


def test_doctor_generates_a_token_and_reports_a_crash(home: Path) -> None:
    """The embedded-LLM check loads the model in its own process and generates: ok on
    the small model; on a build that dies in decode, crashed with the signal and the
    fix, and doctor exits non-zero (the check is required: no Ollama here)."""
    working = run_finrag("doctor", "--json")
    assert working.returncode == 0, working.stdout + working.stderr
    checks = {c["name"]: c for c in json.loads(working.stdout)["checks"]}
    llm = checks["embedded llm"]
    assert llm["status"] == "ok" and llm["data"]["outcome"] == "ok", llm
    assert "generates" in llm["detail"] and llm["data"]["first_token_s"] > 0
    assert llm["required"] is True, "no Ollama here: auto means embedded"
    assert "SmolLM2" in llm["detail"] and "llama.cpp 0.3.36" in llm["detail"]
    assert checks["llm backend"]["data"]["backend"] == "embedded"
    assert checks["embedder"]["data"]["outcome"] == "ok"
    assert checks["ollama"]["status"] == "skip"  # not running, not required

    env = dict(os.environ, **{WORKER_ENV: CRASHING_WORKER})
    crashing = run_finrag("doctor", "--json", env=env)
    assert crashing.returncode == ExitCode.FAILED, crashing.stderr
    report = json.loads(crashing.stdout)
    llm = {c["name"]: c for c in report["checks"]}["embedded llm"]
    assert report["ok"] is False and llm["status"] == "fail" and llm["required"] is True
    assert llm["data"]["outcome"] == "crashed" and llm["data"]["signal"] == "SIGSEGV"
    assert "killed by SIGSEGV" in llm["detail"] and "-DGGML_NATIVE=OFF" in llm["fix"]

    text = run_finrag("doctor", env=env)
    assert text.returncode == ExitCode.FAILED
    assert "SIGSEGV" in text.stdout and "fix:" in text.stdout
    assert "some required checks failed" in text.stderr

    slow = run_finrag("doctor", "--json", env=dict(os.environ, FINRAG_LLM__TIMEOUT_S="0.001"))
    assert slow.returncode == ExitCode.FAILED
    llm = {c["name"]: c for c in json.loads(slow.stdout)["checks"]}["embedded llm"]
    assert llm["data"]["outcome"] == "too slow" and "no token within" in llm["detail"]


def test_the_model_process_ends_with_the_cli_however_the_cli_ends() -> None:
    """SIGKILL to the CLI in the middle of a call leaves no model process behind (the
    bundled model holds 1.1 GB): the worker's lifeline pipe closes. Its decode here
    never returns (FAULT=hang), so nothing else could end it."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from finrag.config import LLMSettings\n"
        "from finrag.llm.embedded import EmbeddedLLM\n"
        "llm = EmbeddedLLM(LLMSettings(embedded_model=sys.argv[1], context=512), Path('/x'))\n"
        "print(llm.load().info['pid'], flush=True)\n"
        "llm.chat([{'role': 'user', 'content': 'Hi.'}], max_tokens=4)\n"
    )
    env = dict(os.environ, FAULT="hang", **{WORKER_ENV: CRASHING_WORKER})
    cli = subprocess.Popen(
        [sys.executable, "-c", code, str(smollm_gguf())], cwd=REPO, stdout=subprocess.PIPE, env=env
    )
    worker = 0
    try:
        worker = int(cli.stdout.readline())
        assert _alive(worker)
        cli.kill()
        cli.wait()
        for _ in range(200):
            if not _alive(worker):
                break
            time.sleep(0.05)
        assert not _alive(worker), "the model process outlived the CLI"
    finally:
        if cli.poll() is None:
            cli.kill()
        if worker and _alive(worker):
            os.kill(worker, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; its parent (init, now) reaps it
