"""The embedded model's process, seen from the CLI: started once, kept, and watched.

llama.cpp runs in a child (finrag.llm.worker) that loads the GGUF once and answers
every chat of this process. A fault in native code (issue 27: a llama-cpp-python built
natively on an Intel CPU with AMX segfaults in decode) kills the child, not the CLI:
the pipe closes, and the call raises ``ModelCrashed`` naming the signal and the fix.
Later calls raise the same error at once (the fault is in the build, not the call).

A call streams its tokens through the pipe; ``llm.timeout_s`` is checked while waiting,
so it also bounds prompt evaluation and loading. A stop (Ctrl-C, SIGTERM,
stop_model_call) sets the shared flag the child's llama.cpp polls between graph nodes
(finrag.llm.interrupt); a child still loading is terminated instead.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from finrag.errors import ModelNotAvailable
from finrag.llm.base import Deadline, LLMError
from finrag.llm.cpu import crash_fix
from finrag.llm.interrupt import clear_flag, flag_fd, stop_requested

WORKER = Path(__file__).with_name("worker.py")
# Tests run the real worker with one function replaced (a generate that dies by a real
# signal); nothing else reads this.
WORKER_ENV = "_FINRAG_TEST_MODEL_WORKER"
_DRAIN_S = 30.0  # how long a stopped call may take to unwind before the child is killed


class ModelCrashed(ModelNotAvailable):
    """The model's process died (a signal, or an exit) while loading or generating."""

    def __init__(self, message: str, *, hint: str | None, signal_name: str | None) -> None:
        super().__init__(message, hint=hint)
        self.signal_name = signal_name


class _Stopped(Exception):
    """The child ended a call because the stop flag was set."""


@dataclass(frozen=True)
class ProcessKey:
    model_path: str
    context: int
    threads: int
    extra_buffers: bool


class ModelProcess:
    """One running worker; ``chat`` is one call at a time (the lock)."""

    def __init__(self, key: ProcessKey, *, name: str, debug: bool = False) -> None:
        self.key = key
        self.name = name  # "the embedded model (qwen…)": for messages
        self.debug = debug
        self.info: dict[str, Any] = {}  # the worker's "ready" report
        self.crashed: ModelCrashed | None = None
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._requests: Connection | None = None
        self._replies: Connection | None = None
        self._lifeline: int | None = None
        self._stderr: Any = None

    # -- lifecycle ---------------------------------------------------------------

    def start(self, deadline: Deadline) -> None:
        """Spawn the worker and wait until it has loaded the model (or failed to)."""
        if self.crashed is not None:
            raise self.crashed
        if self._proc is not None:
            return
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        life_r, life_w = os.pipe()
        config = {
            "model_path": self.key.model_path,
            "context": self.key.context,
            "threads": self.key.threads,
            "extra_buffers": self.key.extra_buffers,
            "debug": self.debug,
            "requests_fd": req_r,
            "replies_fd": rep_w,
            "lifeline_fd": life_r,
            "flag_fd": flag_fd(),
        }
        script = os.environ.get(WORKER_ENV) or str(WORKER)
        # The child's stderr (llama.cpp's last words, a fault message) goes to a file
        # read when it dies; never to the terminal mid-answer.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, script, json.dumps(config)],
                pass_fds=(req_r, rep_w, life_r, flag_fd()),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                close_fds=True,
            )
        finally:
            for fd in (req_r, rep_w, life_r):
                os.close(fd)
        self._requests = Connection(req_w, readable=False)
        self._replies = Connection(rep_r, writable=False)
        self._lifeline = life_w
        try:
            kind, payload = self._next(deadline, loading=True)
        except BaseException:
            self.close()  # a stop or a timeout while loading: loaded afresh next time
            raise
        if kind == "error":
            self.close()
            raise ModelNotAvailable(
                f"llama.cpp could not load {self.key.model_path}: {payload[1]}",
                hint="run `finrag doctor`; a damaged bundled model is re-assembled after "
                "you delete it",
            )
        self.info = payload

    def close(self) -> None:
        """Ask the worker to quit, and make sure it has."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if self._requests is not None:
                self._requests.send({"op": "quit"})
        except OSError:
            pass
        for conn in (self._requests, self._replies):
            if conn is not None:
                conn.close()
        self._requests = self._replies = None
        if self._lifeline is not None:
            os.close(self._lifeline)
            self._lifeline = None
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -- one call ----------------------------------------------------------------

    def chat(
        self,
        request: dict[str, Any],
        deadline: Deadline,
        on_token: Callable[[str], None] | None,
    ) -> dict[str, Any]:
        """The worker's result for ``request``; tokens go to ``on_token`` as they come.
        Raises ModelCrashed, LLMTimeout (via ``deadline``), LLMError, or _Stopped."""
        with self._lock:
            self.start(deadline)
            assert self._requests is not None
            try:
                self._requests.send(dict(request, op="chat"))
            except OSError:
                raise self._crash("before the call") from None
            finished = False
            pieces: list[str] = []
            try:
                while True:
                    kind, payload = self._next(deadline)
                    if kind == "token":
                        pieces.append(payload)
                        if on_token is not None:
                            on_token(payload)
                        continue
                    finished = True
                    if kind == "done":
                        return dict(payload, text="".join(pieces))
                    if kind == "stopped":
                        raise _Stopped()
                    raise LLMError(
                        f"{self.name} failed: {payload[0]}: {payload[1]}",
                        hint="retry; run `finrag doctor` if it fails again",
                    )
            finally:
                if not finished and self._proc is not None:
                    self._abandon()

    def _next(self, deadline: Deadline, *, loading: bool = False) -> tuple[str, Any]:
        """The worker's next message; raises on its death, a stop while it loads, or
        the deadline."""
        assert self._replies is not None
        while True:
            if loading and stop_requested():
                self.close()  # nothing to abort mid-load: it is started again next time
                raise _Stopped()
            remaining = deadline.seconds - deadline.elapsed()
            if remaining <= 0:
                deadline.check()
            # Short waits: a stop flag set by a signal handler is seen within 0.2 s.
            if not self._replies.poll(min(remaining, 0.2) if loading else max(remaining, 0)):
                continue
            try:
                return self._replies.recv()
            except (EOFError, OSError):
                raise self._crash("while loading" if loading else "while generating") from None

    def _abandon(self) -> None:
        """A call left early (timeout, an error in on_token, an interrupt): stop the
        worker's generation and read to its end, so the next call starts clean."""
        ours = not stop_requested()
        if ours:
            from finrag.llm.interrupt import _set_flag

            _set_flag()
        assert self._replies is not None
        until = time.monotonic() + _DRAIN_S
        try:
            while time.monotonic() < until:
                if self._replies.poll(max(0.0, until - time.monotonic())):
                    kind, _payload = self._replies.recv()
                    if kind != "token":
                        break
            else:
                self.close()  # it did not stop: started afresh next time
        except (EOFError, OSError):
            self._crash("while stopping")
        finally:
            if ours:
                clear_flag()

    def _crash(self, when: str) -> ModelCrashed:
        """The worker is gone: what killed it, in one line, and what to do."""
        proc = self._proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
        last_words = self._last_words()
        self.close()
        signal_name = None
        if code is not None and code < 0:
            signal_name = _signal_name(-code)
            how = f"was killed by {signal_name}"
        else:
            how = f"exited with status {code}"
        said = f" (its last words: {last_words})" if last_words else ""
        self.crashed = ModelCrashed(
            f"{self.name} crashed {when}: its process {how}{said}",
            hint=crash_fix(self.info.get("system_info", ""), self.key.extra_buffers),
            signal_name=signal_name,
        )
        return self.crashed

    def _last_words(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            lines = self._stderr.read()[-4000:].decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        lines = [line.strip() for line in lines if line.strip()]
        return lines[-1][:200] if lines else ""


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


_PROCESSES: dict[ProcessKey, ModelProcess] = {}
_REGISTRY_LOCK = threading.Lock()


def model_process(key: ProcessKey, *, name: str, debug: bool = False) -> ModelProcess:
    """The process serving ``key`` in this CLI process: one per model and settings."""
    with _REGISTRY_LOCK:
        if key not in _PROCESSES:
            _PROCESSES[key] = ModelProcess(key, name=name, debug=debug)
        return _PROCESSES[key]


def crashed_model() -> ModelCrashed | None:
    """The crash of a model process of this CLI process, if one died: a command that
    still printed an answer (from the facts) says so and exits 5."""
    with _REGISTRY_LOCK:
        return next((p.crashed for p in _PROCESSES.values() if p.crashed), None)


@atexit.register
def _close_all() -> None:
    while _PROCESSES:
        _PROCESSES.popitem()[1].close()
