"""The design card's layout: sql/ and prompts/ at the repository root, found by one
resolver from a clone and from a wheel (which carries them inside the package).

Building and installing a wheel is too heavy for the suite; issue 16's report shows it
done by hand (unzip -l, a throwaway venv loading both from the installed wheel)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from finrag import datadir
from finrag.datadir import DATA_DIRS, candidates, data_dir
from finrag.db.migrate import discover
from finrag.errors import FinragError
from finrag.llm.prompts import load_prompt, prompt_digests

REPO = Path(__file__).resolve().parent.parent


def test_clone_finds_the_top_level_directories() -> None:
    assert data_dir("sql") == REPO / "sql"
    assert data_dir("prompts") == REPO / "prompts"
    assert not (REPO / "finrag" / "sql").exists() and not (REPO / "finrag" / "prompts").exists()


def test_migrations_and_prompts_load_from_the_resolved_directories() -> None:
    shipped = sorted(p.name for p in (REPO / "sql").glob("*.sql"))
    assert [f"{m.version:03d}_{m.name}.sql" for m in discover()] == shipped
    assert set(prompt_digests()) == {p.stem for p in (REPO / "prompts").glob("*.md")}
    assert load_prompt("answer").system


def test_the_package_copy_wins_and_a_missing_one_is_a_clear_error(tmp_path, monkeypatch) -> None:
    package = tmp_path / "site-packages" / "finrag"
    (package / "sql").mkdir(parents=True)
    monkeypatch.setattr(datadir, "_PACKAGE", package)
    data_dir.cache_clear()
    try:
        assert data_dir("sql") == package / "sql", "a wheel's own copy comes first"
        (tmp_path / "site-packages" / "prompts").mkdir()
        assert data_dir("prompts") == tmp_path / "site-packages" / "prompts"
        (tmp_path / "site-packages" / "prompts").rmdir()
        data_dir.cache_clear()
        with pytest.raises(FinragError) as raised:
            data_dir("prompts")
        message = str(raised.value)
        for place in candidates("prompts"):
            assert str(place) in message, "the error says where it looked"
        assert "reinstall" in raised.value.hint
    finally:
        data_dir.cache_clear()
    with pytest.raises(ValueError):
        data_dir("models")


def test_the_wheel_carries_every_data_directory_where_the_resolver_looks() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = config["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["force-include"] == {name: f"finrag/{name}" for name in DATA_DIRS}
    assert set(DATA_DIRS) <= set(config["tool"]["hatch"]["build"]["targets"]["sdist"]["include"])
