"""The command line as a script sees it: exit codes, streams, JSON, help."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from finrag.config import EmbedSettings
from finrag.db.migrate import discover
from finrag.embed import get_embedder
from finrag.errors import ExitCode
from tests.conftest import clean_env, run_finrag


def test_version() -> None:
    from finrag import __version__

    result = run_finrag("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"finrag {__version__}"


def test_help_lists_only_working_commands() -> None:
    result = run_finrag("--help")
    assert result.returncode == 0
    commands = re.findall(r"^\s{2}(\w+)\s{2,}", result.stdout.split("Commands:")[1], re.M)
    assert sorted(commands) == [
        "analyze",
        "ask",
        "cache",
        "chat",
        "config",
        "db",
        "docs",
        "doctor",
        "eval",
        "facts",
        "fetch",
        "graph",
        "grep",
        "ingest",
        "kpi",
        "market",
        "mcp",
        "open",
        "research",
        "search",
        "serve",
        "sessions",
    ]


def test_unknown_command_is_a_usage_error() -> None:
    result = run_finrag("frobnicate")
    assert result.returncode == ExitCode.USAGE
    assert "No such command" in result.stderr


def test_config_error_message_hint_and_exit_code(tmp_path: Path) -> None:
    result = run_finrag("--config", str(tmp_path / "missing.toml"), "config", "show")
    assert result.returncode == ExitCode.CONFIG
    assert result.stdout == ""
    assert "error: config file" in result.stderr
    assert "hint:" in result.stderr
    assert "Traceback" not in result.stderr


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    result = run_finrag("--debug", "--config", str(tmp_path / "missing.toml"), "config", "show")
    assert result.returncode == ExitCode.CONFIG
    assert "Traceback" in result.stderr


def test_reset_without_yes_refuses_in_scripts(home: Path) -> None:
    result = run_finrag("db", "reset")
    assert result.returncode == ExitCode.USAGE
    assert "--yes" in result.stderr
    assert not (home / "pgdata").exists(), "refused before touching anything"


def test_doctor_json_on_a_fresh_home(home: Path) -> None:
    result = run_finrag("doctor", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert report["ok"] is True
    for name in ("database", "pgvector", "migrations", "embedding store", "embedder", "disk"):
        assert checks[name]["status"] == "ok", checks[name]
        assert checks[name]["required"] is True
    assert checks["database"]["data"]["kind"] == "embedded"
    assert checks["pgvector"]["data"]["version"].startswith("0.8")
    assert checks["embedding store"]["data"] == {"model_id": "hash:64", "dimension": 64}
    # Nothing listens on the test Ollama host: skipped, not a failure, under 'auto'.
    assert checks["ollama"]["status"] == "skip"
    assert checks["ollama"]["required"] is False
    assert checks["ollama"]["fix"]
    # The doctor's own server use ended with it.
    status = json.loads(run_finrag("db", "status", "--json").stdout)
    assert status["running"] is False
    assert status["initialized"] is True


def test_doctor_fails_when_the_chosen_backend_is_missing(home: Path) -> None:
    env = dict(os.environ, FINRAG_LLM__BACKEND="ollama")
    result = run_finrag("doctor", "--json", env=env)
    assert result.returncode == ExitCode.FAILED
    ollama = next(c for c in json.loads(result.stdout)["checks"] if c["name"] == "ollama")
    assert ollama["status"] == "fail"
    assert "ollama serve" in ollama["fix"]


def test_db_commands_round_trip(home: Path) -> None:
    assert run_finrag("db", "start").returncode == 0
    url = run_finrag("db", "url")
    assert url.returncode == 0
    assert url.stdout.startswith("postgresql://")
    psql = run_finrag("db", "psql", "-tA", "-c", "SELECT count(*) FROM schema_migrations")
    assert psql.returncode == 0, psql.stderr
    assert psql.stdout.strip() == str(len(discover()))
    failing = run_finrag("db", "psql", "-c", "SELECT * FROM no_such_table")
    assert failing.returncode != 0, "psql's exit code passes through"
    assert run_finrag("db", "stop").returncode == 0
    assert run_finrag("db", "url").returncode == ExitCode.DATABASE


def test_no_color_output_has_no_escape_codes(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.toml")
    colour = re.compile(r"\x1b\[[0-9;]*3\dm")
    forced = run_finrag(
        "--config", missing, "config", "show", env=dict(os.environ, FORCE_COLOR="1")
    )
    assert colour.search(forced.stderr), "control: the error is red when colour is forced"
    plain = run_finrag(
        "--config", missing, "config", "show", env=dict(os.environ, FORCE_COLOR="1", NO_COLOR="1")
    )
    assert plain.returncode == ExitCode.CONFIG
    assert "config file" in plain.stderr
    assert not colour.search(plain.stderr), "NO_COLOR wins"


def test_core_imports_without_typer_or_rich() -> None:
    code = (
        "import sys\n"
        "import finrag, finrag.config, finrag.db, finrag.doctor, finrag.embed, finrag.errors\n"
        "import finrag.db.migrate, finrag.db.embedded\n"
        "bad = [m for m in ('typer', 'rich', 'click') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=clean_env(), check=False
    )
    assert result.returncode == 0, result.stderr


def test_real_embedder_loads_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default model comes from a pip package: no network, no hub cache."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", "/nonexistent-hf-home")
    embedder = get_embedder(EmbedSettings())
    assert embedder.spec.dimension == 384
    vectors = embedder.embed(
        [
            "Capital expenditures were $1.6 billion in fiscal 2018.",
            "Purchases of property, plant and equipment totalled 1,577 million dollars.",
            "The board declared a quarterly dividend.",
        ]
    )
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    capex, ppe, dividend = vectors
    assert capex @ ppe > capex @ dividend, "related sentences are closer"


def test_ci_runs_exactly_the_readme_test_command() -> None:
    from tests.conftest import REPO

    readme = (REPO / "README.md").read_text()
    commands = re.findall(r"```sh\n(python3 -m venv .+?)\n```", readme)
    assert len(commands) == 2, "the README has exactly two fresh-machine commands"
    ci_lines = [
        line
        for line in (REPO / ".ci" / "run").read_text().splitlines()
        if line and not line.startswith(("#", "set ", "cd "))
    ]
    assert ci_lines == [commands[1]]
