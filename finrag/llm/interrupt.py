"""Stopping an in-process model call at once: on SIGINT or SIGTERM, or when asked.

Python runs signal handlers only when the main thread is back in the interpreter, and
llama.cpp evaluates a prompt in C calls (llama_decode) that take minutes for a long
prompt on a slow machine. llama.cpp checks an abort callback between graph nodes (~600
per generated token for SmolLM2 and Qwen 1.5B). Ours is libc's ``strlen`` over a two-byte
buffer whose first byte is the stop flag, so the check never enters Python. A Python
callback costs little alone (within 2 %: eval/bench/llm_abort.py), but it takes the GIL
per node, so a busy Python thread halves generation speed, and in a process whose
handlers are not deferred (a library user's) Ctrl-C raised inside it is printed as
"Exception ignored" and turns into llama.cpp's "llama_decode returned 2".

Who sets the flag while the main thread is inside llama.cpp: ``stop_model_call()`` from
any thread, or, after ``stop_model_calls_on_signals()``, a thread that Python's C-level
signal handler wakes through ``signal.set_wakeup_fd``. The Python-level handler of a
signal that arrives during a model call is deferred until the call has ended: raised in
a ctypes callback (llama.cpp's logger is one) it would be printed and dropped.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

from finrag.errors import ExitCode, FinragError

_FLAG = (ctypes.c_ubyte * 2)()  # as a C string for strlen: "" = go on, "\x01" = abort
_LOCK = threading.RLock()  # re-entrant: a signal handler may run while the main thread holds it
_active = False
_deferring = 0  # blocks inside signals_deferred(): a model loading
_deferred: list[tuple[Callable[..., Any], int]] = []
_callback: Any = None  # the ctypes function pointer: module-level, llama.cpp keeps calling it
_wakeup: socket.socket | None = None
_watched: set[int] = set()
_LLAMA_LOG = logging.getLogger("llama-cpp-python")
_log_level: int | None = None  # the llama.cpp log level while a stop is under way


class ModelCallStopped(FinragError):
    """A model call was stopped on request (stop_model_call) before it finished."""

    exit_code = ExitCode.INTERRUPTED


def attach_stop_flag(llama: Any) -> None:
    """Let stop_model_call() abort this llama_cpp.Llama's evaluation between graph nodes."""
    global _callback
    import llama_cpp

    if _callback is None:
        libc = ctypes.CDLL(None) if os.name == "posix" else ctypes.cdll.msvcrt
        address = ctypes.cast(libc.strlen, ctypes.c_void_p).value
        _callback = llama_cpp.ggml_abort_callback(address)
    llama_cpp.llama_set_abort_callback(llama.ctx, _callback, ctypes.cast(_FLAG, ctypes.c_void_p))


def stop_model_call() -> bool:
    """Abort the model call in progress, if any (from any thread); True if there was one."""
    with _LOCK:
        if _active:
            _set_flag()
        return _active


@contextlib.contextmanager
def model_call(llama: Any) -> Iterator[None]:
    """Scope of one call into llama.cpp: a stop aborts it, the model is left ready for the
    next call, and signals deferred meanwhile take effect on the way out."""
    global _active
    with _LOCK:
        _active = True
    try:
        yield
    except Exception as exc:
        if _end(llama):
            _deliver_deferred()
            raise ModelCallStopped(
                "the model call was stopped before it finished",
                hint="ask again; nothing from the stopped call was kept",
            ) from exc
        _deliver_deferred()
        raise
    except BaseException:
        _end(llama)
        _deliver_deferred()
        raise
    _end(llama)
    _deliver_deferred()


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Signals that arrive in the block take effect when it ends. Loading a model calls
    llama.cpp's logger back into Python many times a second; a KeyboardInterrupt raised
    in that callback is printed and dropped, so Ctrl-C while the model loaded was lost
    and the answer ran to its end (minutes)."""
    global _deferring
    with _LOCK:
        _deferring += 1
    try:
        yield
    finally:
        with _LOCK:
            _deferring -= 1
            last = _deferring == 0 and not _active
        if last:
            _deliver_deferred()


def _end(llama: Any) -> bool:
    global _active
    with _LOCK:
        stopped = _FLAG[0] != 0
        _active = False
        _FLAG[0] = 0
    if stopped:
        # An aborted llama_decode leaves part of its batch in the KV cache, which
        # llama-cpp-python's token count does not know of: start the next call afresh.
        llama.reset()
    _restore_log_level()
    return stopped


def _set_flag() -> None:
    global _log_level
    _FLAG[0] = 1
    # llama.cpp logs an aborted decode as an error; here the abort is what was asked for.
    if _log_level is None:
        _log_level = _LLAMA_LOG.level
        _LLAMA_LOG.setLevel(logging.CRITICAL)


def _restore_log_level() -> None:
    global _log_level
    with _LOCK:
        if _log_level is not None:
            _LLAMA_LOG.setLevel(_log_level)
            _log_level = None


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
            if _deferring:
                _deferred.append((self.handler, signum))
                return
        self.handler(signum, frame)


def stop_model_calls_on_signals(*signums: int) -> None:
    """Make these signals stop a model call within moments (main thread only).

    Wraps each signal's current Python handler, and starts the thread that sets the stop
    flag when a signal arrives while the main thread is inside llama.cpp. When another
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


def _watch(reader: socket.socket) -> None:
    while data := reader.recv(64):  # one byte per signal: its number
        if _watched.intersection(data):
            stop_model_call()
