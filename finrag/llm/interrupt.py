"""Stopping a model call at once: on SIGINT or SIGTERM, or when asked.

The embedded model runs in its own process (finrag.llm.model_process), and llama.cpp
evaluates a prompt in C calls (llama_decode) that take minutes for a long prompt on a
slow machine. llama.cpp checks an abort callback between graph nodes (~600 per
generated token for SmolLM2 and Qwen 1.5B). The model process's is libc's ``strlen``
over a two-byte buffer whose first byte is the stop flag, so the check never enters
Python (a Python callback takes the GIL per node: eval/bench/llm_abort.py). The buffer
is a shared mapping created here: this process sets the flag, the model process reads
it (finrag.llm.worker).

Who sets the flag while the main thread waits on a model call: ``stop_model_call()``
from any thread, or, after ``stop_model_calls_on_signals()``, the Python handler of a
signal, which runs as soon as the wait is interrupted, and a thread that Python's
C-level signal handler wakes through ``signal.set_wakeup_fd``. The Python-level handler
of a signal that arrives during a model call is deferred until the call has ended, so
the call ends cleanly (the model process ready for the next) before SystemExit or
KeyboardInterrupt unwinds the command.
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import os
import signal
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from typing import Any

from finrag.errors import ExitCode, FinragError


def _shared_flag() -> tuple[int, mmap.mmap]:
    """Two shared bytes, as a file descriptor a model process maps too."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("finrag-stop-flag")
    else:  # not Linux: an unlinked temporary file
        with tempfile.TemporaryFile() as fh:
            fd = os.dup(fh.fileno())
    os.ftruncate(fd, 2)
    return fd, mmap.mmap(fd, 2)


_FLAG_FD, _FLAG_MAP = _shared_flag()
_FLAG = (ctypes.c_ubyte * 2).from_buffer(_FLAG_MAP)  # as a C string: "" go on, "\x01" abort
_LOCK = threading.RLock()  # re-entrant: a signal handler may run while the main thread holds it
_active = False
_deferred: list[tuple[Callable[..., Any], int]] = []
_wakeup: socket.socket | None = None
_watched: set[int] = set()


class ModelCallStopped(FinragError):
    """A model call was stopped on request (stop_model_call) before it finished."""

    exit_code = ExitCode.INTERRUPTED


def flag_fd() -> int:
    """The stop flag's file descriptor, for a model process to map (pass_fds)."""
    return _FLAG_FD


def stop_requested() -> bool:
    return _FLAG[0] != 0


def stop_model_call() -> bool:
    """Abort the model call in progress, if any (from any thread); True if there was one."""
    with _LOCK:
        if _active:
            _set_flag()
        return _active


@contextlib.contextmanager
def model_call() -> Iterator[None]:
    """Scope of one model call: a stop ends it as ModelCallStopped, and signals
    deferred meanwhile take effect on the way out."""
    global _active
    with _LOCK:
        _active = True
    try:
        yield
    except Exception as exc:
        if _end():
            _deliver_deferred()
            raise ModelCallStopped(
                "the model call was stopped before it finished",
                hint="ask again; nothing from the stopped call was kept",
            ) from exc
        _deliver_deferred()
        raise
    except BaseException:
        _end()
        _deliver_deferred()
        raise
    _end()
    _deliver_deferred()


def _end() -> bool:
    global _active
    with _LOCK:
        stopped = _FLAG[0] != 0
        _active = False
        _FLAG[0] = 0
    return stopped


def _set_flag() -> None:
    _FLAG[0] = 1


def clear_flag() -> None:
    """After a stop this process asked for itself (a timeout), not a user's."""
    _FLAG[0] = 0


def _deliver_deferred() -> None:
    with _LOCK:
        pending = list(_deferred)
        _deferred.clear()
    for handler, signum in pending:
        handler(signum, None)  # raises SystemExit or KeyboardInterrupt, as it would have


class _DeferredDuringModelCall:
    """A signal handler that stops a model call in progress and runs once it has ended."""

    def __init__(self, handler: Callable[..., Any]) -> None:
        self.handler = handler

    def __call__(self, signum: int, frame: Any) -> None:
        with _LOCK:
            if _active:
                _set_flag()
                _deferred.append((self.handler, signum))
                return
        self.handler(signum, frame)


def stop_model_calls_on_signals(*signums: int) -> None:
    """Make these signals stop a model call within moments (main thread only).

    Wraps each signal's current Python handler, and starts the thread that sets the stop
    flag when a signal arrives while the main thread is blocked in a C call. When another
    owner already holds the wakeup fd (an asyncio loop), signals wait for the C call.
    """
    global _wakeup
    _watched.update(signums)
    for signum in signums:
        handler = signal.getsignal(signum)
        if callable(handler) and not isinstance(handler, _DeferredDuringModelCall):
            signal.signal(signum, _DeferredDuringModelCall(handler))
    if _wakeup is not None:
        return
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    if previous != -1:
        signal.set_wakeup_fd(previous)  # not ours to take
        reader.close()
        writer.close()
        return
    _wakeup = writer
    threading.Thread(target=_watch, args=(reader,), daemon=True, name="finrag-signals").start()


def finish_model_calls_on_signals(*signums: int) -> None:
    """Undo :func:`stop_model_calls_on_signals` for these signals: a server stopping
    gracefully lets the model call of a request in flight finish."""
    _watched.difference_update(signums)


def _watch(reader: socket.socket) -> None:
    while data := reader.recv(64):  # one byte per signal: its number
        if _watched.intersection(data):
            stop_model_call()
