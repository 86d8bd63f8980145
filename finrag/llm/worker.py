"""The embedded model's own process: loads the GGUF once and answers chat requests.

Run by finrag.llm.model_process as ``python worker.py CONFIG_JSON`` (a script, not
``-m``: it imports only the standard library and llama_cpp, so it starts in the time
Python and llama.cpp take, not finrag's). A fault inside llama.cpp (a native build's
AMX kernels on Intel CPUs segfault in decode: issue 27) kills this process only; the
CLI sees the pipe close and the signal, and says so.

Protocol (multiprocessing.connection framing on two inherited pipes): the parent sends
``{"op": "chat", ...}`` or ``{"op": "quit"}``; the worker answers ``("ready", info)``
once loaded, then per request ``("token", text)``* and one of ``("done", result)``,
``("stopped", None)`` or ``("error", (kind, message))``.

Stopping: the parent's stop flag (finrag.llm.interrupt) is a shared two-byte mapping
whose first byte llama.cpp's abort callback reads between graph nodes (libc's strlen:
the check never enters Python). The worker never clears it; a call that ends with it
set was stopped, and the model's state is reset for the next request.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import mmap
import os
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import Any


def main(argv: list[str]) -> int:
    config = json.loads(argv[1])
    # Ctrl-C in a terminal reaches the whole process group: the CLI decides what it
    # stops (through the flag), and this process answers the next request.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(config["lifeline_fd"])
    requests = Connection(config["requests_fd"], writable=False)
    replies = Connection(config["replies_fd"], readable=False)
    flag = _shared_flag(config["flag_fd"])
    try:
        started = time.perf_counter()
        llama, info = load(config)
        _attach_abort(llama, flag)
        info["load_s"] = round(time.perf_counter() - started, 3)
    except Exception as exc:  # llama.cpp's load errors are ValueError/RuntimeError
        replies.send(("error", ("load", f"{type(exc).__name__}: {exc}")))
        return 1
    replies.send(("ready", info))
    while True:
        try:
            request = requests.recv()
        except (EOFError, OSError):  # the parent is gone
            return 0
        if request.get("op") != "chat":
            return 0
        serve(llama, request, replies, flag)


def load(config: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The model, loaded as configured; ``info`` says how (for doctor and the errors)."""
    import llama_cpp
    from llama_cpp import Llama

    _logs(llama_cpp, debug=config.get("debug", False))
    extra = config.get("extra_buffers", True)
    with _model_params(llama_cpp, use_extra_bufts=extra):
        llama = Llama(
            model_path=config["model_path"],
            n_ctx=config["context"],
            n_threads=config["threads"],
            n_threads_batch=config["threads"],
            n_batch=512,
            verbose=False,
        )
    used = getattr(llama.model_params, "use_extra_bufts", None)
    return llama, {
        "llama_cpp": llama_cpp.__version__,
        "system_info": llama_cpp.llama_print_system_info().decode("utf-8", "replace").strip(),
        "extra_buffers": used,
        "pid": os.getpid(),
    }


def serve(llama: Any, request: dict[str, Any], replies: Connection, flag: Any) -> None:
    """One chat request: tokens as they come, then how it ended."""
    try:
        result = generate(llama, request, lambda piece: replies.send(("token", piece)))
    except Exception as exc:  # an aborted decode surfaces as an exception of llama_cpp's
        if flag[0]:
            llama.reset()
            replies.send(("stopped", None))
        else:
            replies.send(("error", (type(exc).__name__, str(exc))))
        return
    if flag[0]:
        # Stopped after the last token: what was generated is sent, and the next
        # request starts from a clean context (the abort may have cut a decode short).
        llama.reset()
    replies.send(("done", result))


def generate(llama: Any, request: dict[str, Any], send) -> dict[str, Any]:
    """Run one chat completion; stream text pieces through ``send``."""
    kwargs = request["kwargs"]
    if request.get("tools"):
        from llama_cpp.llama_chat_format import chatml_function_calling

        reply = chatml_function_calling(
            llama=llama,
            tools=request["tools"],
            tool_choice="auto",
            **dict(kwargs, stream=False, response_format=None),
        )
        return {"reply": reply}
    pieces = 0
    for chunk in llama.create_chat_completion(**dict(kwargs, stream=True)):
        delta = chunk["choices"][0]["delta"].get("content") or ""
        if delta:
            pieces += 1
            send(delta)
    # The context now holds prompt + reply; the reply was ``pieces`` tokens.
    return {"completion_tokens": pieces, "prompt_tokens": max(0, llama.n_tokens - pieces)}


@contextlib.contextmanager
def _model_params(llama_cpp: Any, **fields: Any):
    """llama-cpp-python's Llama() builds llama_model_params itself and takes no
    use_extra_bufts; it asks llama_model_default_params() for the struct, so that
    function answers with ``fields`` set while the model loads (this process loads one
    model, from one thread)."""
    known = {name for name, _type in llama_cpp.llama_model_params._fields_}
    fields = {k: v for k, v in fields.items() if k in known}
    module = sys.modules["llama_cpp.llama"].llama_cpp
    original = module.llama_model_default_params

    def with_fields():
        params = original()
        for name, value in fields.items():
            setattr(params, name, value)
        return params

    module.llama_model_default_params = with_fields
    try:
        yield
    finally:
        module.llama_model_default_params = original


def _shared_flag(fd: int) -> Any:
    mapping = mmap.mmap(fd, 2)
    return (ctypes.c_ubyte * 2).from_buffer(mapping)


_CALLBACK: Any = None  # llama.cpp keeps calling it: kept alive here


def _attach_abort(llama: Any, flag: Any) -> None:
    global _CALLBACK
    import llama_cpp

    libc = ctypes.CDLL(None)
    _CALLBACK = llama_cpp.ggml_abort_callback(ctypes.cast(libc.strlen, ctypes.c_void_p).value)
    llama_cpp.llama_set_abort_callback(llama.ctx, _CALLBACK, ctypes.cast(flag, ctypes.c_void_p))


_LOG_CALLBACK: Any = None


def _logs(llama_cpp: Any, *, debug: bool) -> None:
    """llama.cpp's log to stderr (a file the parent reads when this process dies) only
    under --debug: an aborted decode is logged as an error, and it is not one."""
    global _LOG_CALLBACK

    @llama_cpp.llama_log_callback
    def forward(_level: int, text: bytes, _user: ctypes.c_void_p) -> None:
        if debug:
            sys.stderr.write(text.decode("utf-8", "replace"))

    _LOG_CALLBACK = forward
    llama_cpp.llama_log_set(forward, ctypes.c_void_p(0))


def _die_with_parent(lifeline_fd: int) -> None:
    """Exit when the CLI is gone, however it went: the parent holds the write end of
    ``lifeline_fd`` and never writes, so a read returns only when it has exited, even
    in the middle of a long prompt evaluation. (PR_SET_PDEATHSIG would fire when the
    thread that started this process exits, and a model may be started on any thread.)"""

    def watch() -> None:
        with contextlib.suppress(OSError):
            os.read(lifeline_fd, 1)
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="finrag-lifeline").start()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
