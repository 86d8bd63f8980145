"""Health checks behind `finrag doctor`: each says what it found and, if it failed, the fix."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from finrag.config import Settings
from finrag.errors import FinragError

Status = Literal["ok", "warn", "fail", "skip"]

_MIN_FREE_BYTES = 2 * 1024**3  # the embedded LLM alone is 1.1 GB
_OLLAMA_TIMEOUT_S = 3.0


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
    from finrag.embed import get_embedder

    started = time.perf_counter()
    embedder = get_embedder(settings.embed, settings.models_dir)
    vectors = embedder.embed(["Total net revenue was $9.6 billion."])
    elapsed = time.perf_counter() - started
    return Check(
        "embedder",
        "ok",
        True,
        f"{embedder.spec.model_id} loads offline ({vectors.shape[1]}-d, {elapsed:.1f} s)",
        data={"model_id": embedder.spec.model_id, "load_s": round(elapsed, 2)},
    )


def _check_ollama(settings: Settings) -> Check:
    required = settings.llm.backend == "ollama"
    host, model = settings.llm.ollama_host, settings.llm.ollama_model
    try:
        import ollama

        listed = ollama.Client(host=host, timeout=_OLLAMA_TIMEOUT_S).list()
    except Exception as exc:  # the client raises httpx, ConnectionError and ollama errors alike
        return Check(
            "ollama",
            "fail" if required else "warn",
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
    return Check("ollama", "ok", required, f"{model} at {host}", data={"host": host})


def _check_embedded_llm(settings: Settings, *, required: bool) -> Check:
    """llama.cpp importable, the GGUF assembled (now, if needed) and intact, its
    vocabulary readable: what the embedded backend needs before its first answer."""
    from finrag.llm.model_files import resolve_gguf, verify

    try:
        import llama_cpp
    except ImportError as exc:
        return Check(
            "embedded llm",
            "fail" if required else "warn",
            required,
            f"llama-cpp-python is not installed ({exc})",
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
    llama_cpp.Llama(model_path=str(model.path), vocab_only=True, verbose=False)
    elapsed = time.perf_counter() - started
    how = "assembled now, " if model.assembled_now else ""
    return Check(
        "embedded llm",
        "ok",
        required,
        f"{model.path.name} ({model.size / 2**30:.2f} GiB, {how}sha256 "
        f"{model.sha256[:12] or 'not recorded'}) on llama.cpp {llama_cpp.__version__}, "
        f"checked in {elapsed:.1f} s",
        data={"path": str(model.path), "size": model.size, "sha256": model.sha256},
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
