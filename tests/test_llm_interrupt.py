"""Ctrl-C, SIGTERM and stop_model_call() stop an embedded model mid-prompt (llama.cpp's abort
callback), and the model answers the next call as if nothing had happened."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from finrag.config import LLMSettings
from finrag.llm.embedded import EmbeddedLLM
from finrag.llm.interrupt import ModelCallStopped, stop_model_call
from tests.conftest import REPO, smollm_gguf

# ~450 tokens with the chat template: one llama_decode call (n_batch 512), which without an
# abort callback holds off every signal handler until the whole prompt is evaluated.
LONG_PROMPT = "Summarise: " + "Revenue rose 7% to $9,583 million in the quarter. " * 36

# The real CLI entry point (its signal handling and error boundary) running one more
# command: a model call on one thread, announced on stdout just before it starts.
CHILD = """
import atexit
import sys
from pathlib import Path

from finrag.cli import app as cli
from finrag.config import LLMSettings
from finrag.llm.embedded import EmbeddedLLM

prompt, mode = sys.argv[1], sys.argv[2]
llm = EmbeddedLLM(
    LLMSettings(embedded_model=sys.argv[3], context=2048, threads=1), Path("/nonexistent")
)


def ask(text):
    return llm.chat([{"role": "user", "content": text}], max_tokens=4).text


@cli.app.command("slow-call")
def slow_call():
    llm.load()  # loaded before the marker: the signal lands in the prompt's evaluation
    print("calling", flush=True)
    if mode == "repl":
        try:  # as `finrag chat` does around a turn
            ask(prompt)
        except KeyboardInterrupt:
            print("cancelled", flush=True)
    else:
        ask(prompt)
    print("answer:", ask("Name one colour."), flush=True)


atexit.register(lambda: print("atexit ran", file=sys.stderr, flush=True))
cli.main(["slow-call"])
"""


def _run_child(mode: str, signum: int | None = None, delay: float = 0.0):
    """(seconds from the marker to the child's exit, returncode, stdout, stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, LONG_PROMPT, mode, str(smollm_gguf())],
        cwd=REPO,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        marker = proc.stdout.readline()
        started = time.perf_counter()
        assert marker == "calling\n", marker + proc.stderr.read()
        if signum is not None:
            time.sleep(delay)
            proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=300)
        return time.perf_counter() - started, proc.returncode, marker + stdout, stderr
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def uninterrupted_s() -> float:
    """How long the child's model calls take when nothing stops them, on this machine now."""
    seconds, code, stdout, stderr = _run_child("plain")
    assert code == 0 and "answer:" in stdout, stderr
    return seconds


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_prompt_evaluation_and_exits_as_before(
    uninterrupted_s: float, signum: int, code: int
) -> None:
    # A tenth of the way into the prompt: without the abort callback, the signal would
    # wait for the one llama_decode call evaluating all of it.
    seconds, returncode, stdout, stderr = _run_child("plain", signum, uninterrupted_s / 10)
    assert returncode == code, stderr
    assert "answer:" not in stdout
    assert seconds < uninterrupted_s / 2, (seconds, uninterrupted_s)
    # Exits through SystemExit, so atexit hooks run (the embedded server's client count),
    # with nothing else on stderr: no traceback, no "Exception ignored in ctypes callback",
    # no llama.cpp complaint about the aborted decode.
    assert stderr == "atexit ran\n"


def test_ctrl_c_cancels_the_answer_and_the_model_answers_the_next(uninterrupted_s: float) -> None:
    seconds, returncode, stdout, stderr = _run_child("repl", signal.SIGINT, uninterrupted_s / 10)
    assert returncode == 0, stderr
    assert "cancelled\nanswer: " in stdout
    assert seconds < uninterrupted_s / 2, (seconds, uninterrupted_s)
    assert stderr == "atexit ran\n"


def test_a_stopped_call_leaves_the_model_ready_for_the_next() -> None:
    llm = EmbeddedLLM(
        LLMSettings(embedded_model=str(smollm_gguf()), context=2048, threads=1),
        Path("/nonexistent-models-dir"),
    )
    question = [{"role": "user", "content": "Name one colour."}]
    before = llm.chat(question, max_tokens=8)
    returned = threading.Event()

    def stop_once_running() -> None:
        while not returned.is_set() and not stop_model_call():
            time.sleep(0.005)

    stopper = threading.Thread(target=stop_once_running)
    stopper.start()
    try:
        with pytest.raises(ModelCallStopped):
            llm.chat([{"role": "user", "content": LONG_PROMPT}], max_tokens=200)
    finally:
        returned.set()
        stopper.join()
    after = llm.chat(question, max_tokens=8)
    assert after.text == before.text  # temperature 0: the same answer from a clean state
    assert after.prompt_tokens == before.prompt_tokens


def test_stop_model_call_without_a_call_in_progress_stops_nothing() -> None:
    assert stop_model_call() is False
    llm = EmbeddedLLM(
        LLMSettings(embedded_model=str(smollm_gguf()), context=2048),
        Path("/nonexistent-models-dir"),
    )
    assert llm.chat([{"role": "user", "content": "Name one colour."}], max_tokens=4).text
