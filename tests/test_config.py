"""Settings: precedence, provenance, and errors that name the bad key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finrag.config import explain_settings, load_settings
from finrag.errors import ConfigError
from tests.conftest import run_finrag


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "xdg-config" / "finrag" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def sources(settings, config_file=None) -> dict[str, str]:
    return {row.key: row.source for row in explain_settings(settings, config_file)}


def test_defaults_follow_xdg(tmp_path: Path) -> None:
    settings = load_settings()
    assert settings.home == tmp_path / "xdg-data" / "finrag"
    assert settings.pgdata == settings.home / "pgdata"
    assert settings.database_url is None
    assert sources(settings)["home"] == "default"


def test_env_beats_file_beats_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_config(tmp_path, '[embed]\nbatch_size = 8\nmodel = "from-file"\n')
    monkeypatch.setenv("FINRAG_EMBED__BATCH_SIZE", "16")
    settings = load_settings()
    assert settings.embed.batch_size == 16
    assert settings.embed.model == "from-file"
    where = sources(settings)
    assert where["embed.batch_size"] == "env FINRAG_EMBED__BATCH_SIZE"
    assert where["embed.model"] == f"file {path}"
    assert where["llm.timeout_s"] == "default"


def test_explicit_config_file_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "custom.toml"
    path.write_text('home = "/srv/finrag"\n[llm]\nollama_model = "llama3.1:8b"\n')
    settings = load_settings(path, llm={"timeout_s": 5})
    assert settings.home == Path("/srv/finrag")
    assert settings.llm.ollama_model == "llama3.1:8b"
    assert settings.llm.timeout_s == 5
    assert sources(settings, path)["llm.ollama_model"] == f"file {path}"


def test_ollama_host_comes_from_ollamas_own_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "http://gpu-box:11434")
    settings = load_settings()
    assert settings.llm.ollama_host == "http://gpu-box:11434"
    assert sources(settings)["llm.ollama_host"] == "env OLLAMA_HOST"


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[embed]\nbatchsize = 8\n", "embed.batchsize"),  # typo: extra keys are forbidden
        ("[embed]\nbatch_size = 0\n", "embed.batch_size"),
        ('[llm]\nbackend = "gpt"\n', "llm.backend"),
        ("[embed\n", "cannot read"),
    ],
)
def test_bad_files_name_the_problem(tmp_path: Path, text: str, expected: str) -> None:
    write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert expected in caught.value.message


def test_unknown_nested_env_var_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FINRAG_EMBED__MODLE", "x")
    with pytest.raises(ConfigError, match=r"embed\.modle"):
        load_settings()


def test_config_show_json_redacts_the_password(tmp_path: Path) -> None:
    import os

    env = dict(os.environ, FINRAG_DATABASE_URL="postgresql://me:hunter2@db:5432/x")
    result = run_finrag("config", "show", "--json", env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["settings"]["database_url"] == {
        "value": "postgresql://me:***@db:5432/x",
        "source": "env FINRAG_DATABASE_URL",
    }
    assert data["settings"]["embed.backend"]["source"] == "env FINRAG_EMBED__BACKEND"
    assert "hunter2" not in result.stdout


def test_a_misspelled_variable_is_named_once_with_the_closest_setting(tmp_path: Path) -> None:
    import os

    env = dict(os.environ, FINRAG_DATABSE_URL="postgresql://me@db/x", FINRAG_EMBED_MODEL="m")
    result = run_finrag("config", "show", "--json", env=env)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: FINRAG_DATABSE_URL is not a finrag setting and is ignored; "
        "did you mean FINRAG_DATABASE_URL?",
        "warning: FINRAG_EMBED_MODEL is not a finrag setting and is ignored; "
        "did you mean FINRAG_EMBED__MODEL?",
    ]
    assert json.loads(result.stdout)["settings"]["database_url"]["value"] is None


def test_variables_finrag_reads_besides_its_settings_are_not_warned_about(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    config = write_config(tmp_path, "")
    for name, value in [
        ("FINRAG_CONFIG", str(config)),
        ("FINRAG_DEBUG", "1"),
        ("FINRAG_HOME", str(tmp_path)),
        ("FINRAG_LLM__TIMEOUT_S", "5"),
        ("FINRAG_RETRIEVE", '{"k": 3}'),
    ]:
        monkeypatch.setenv(name, value)
    settings = load_settings()
    assert settings.retrieve.k == 3 and settings.llm.timeout_s == 5
    assert not [r for r in caplog.records if r.name == "finrag.config"]


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://me:hunter2@[db/x",  # psycopg quoted the whole URI in its error
        "me:hunter2@db:5432/x",  # no scheme: redact() saw no password to hide
    ],
)
def test_an_unparseable_database_url_keeps_its_password(url: str) -> None:
    import os

    env = dict(os.environ, FINRAG_DATABASE_URL=url)
    for args in (["search", "revenue"], ["config", "show", "--json"]):
        result = run_finrag(*args, env=env)
        assert "hunter2" not in result.stdout + result.stderr, args
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["settings"]["database_url"]["value"].count("***") == 1


def test_a_bad_section_variable_is_not_blamed_on_the_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FINRAG_EMBED", "not json")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "FINRAG_EMBED" in caught.value.message
    assert "TOML" not in (caught.value.hint or "")
