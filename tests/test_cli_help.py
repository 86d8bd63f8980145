"""Help and polish (issue 16, points 8 and 9): every command's --help shows examples and
words for placeholders, root flags work after a subcommand, short flags, shell completion
of the store's names."""

from __future__ import annotations

import json
import os
import re

import pytest

from finrag.cli.app import build_command, main
from finrag.cli.conventions import EXAMPLES, first_paragraph, hoist_global_flags, walk
from tests.conftest import run_finrag

ROOT = build_command()
COMMANDS = [path for path, _ in walk(ROOT)]
LEAVES = [path for path, command in walk(ROOT) if not hasattr(command, "commands")]


def help_of(path: str, capsys: pytest.CaptureFixture[str]) -> str:
    """``finrag PATH --help`` as main() prints it."""
    with pytest.raises(SystemExit) as exit_info:
        main([*path.split(), "--help"])
    assert exit_info.value.code == 0
    return capsys.readouterr().out


def test_every_leaf_command_is_known() -> None:
    # A command added later must bring its examples (conventions.EXAMPLES) or its own.
    assert {"ingest", "ask", "docs list", "sessions export", "open", "db reset"} <= set(LEAVES)


@pytest.mark.parametrize("path", COMMANDS)
def test_help_shows_examples_and_words(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(path, capsys)
    examples = text.partition("Examples:")[2]
    assert examples, f"`finrag {path} --help` has no Examples section"
    assert f"finrag {path}".strip() in examples  # an example of this very command
    # Placeholders are words, never Python types or {names}.
    assert not re.search(r"<[a-z][^>]*>", text), text
    assert not re.search(r"\{[a-z_]+\}", text), text
    assert "x<=" not in text and "x>=" not in text
    usage = text.splitlines()[0]
    assert re.fullmatch(r"Usage: finrag[ a-z]*( \[OPTIONS\])?( [A-Z|.\[\] ]+)*", usage), usage


def test_every_option_value_has_a_word() -> None:
    for path, command in walk(ROOT):
        for param in command.params:
            if param.param_type_name == "option" and not param.is_flag:
                assert param.metavar and re.fullmatch(r"[A-Z|]+", param.metavar), (path, param.opts)


def test_command_lists_show_whole_descriptions(capsys: pytest.CaptureFixture[str]) -> None:
    for path, command in walk(ROOT):
        if not hasattr(command, "commands"):
            continue
        listed = " ".join(help_of(path, capsys).partition("Commands:")[2].split())
        for sub in command.commands.values():
            assert first_paragraph(sub.help) in listed, (path, sub.name)
        assert "..." not in listed.partition("Examples:")[0]


def test_examples_table_names_only_real_commands() -> None:
    assert set(EXAMPLES) <= set(COMMANDS)


def test_short_flags_mean_one_thing_everywhere() -> None:
    meaning: dict[str, set[str]] = {}
    for _, command in walk(ROOT):
        for param in command.params:
            longs = [o for o in param.opts if o.startswith("--")]
            for short in (o for o in param.opts if re.fullmatch(r"-[a-zA-Z]", o)):
                meaning.setdefault(short, set()).update(longs)
    assert meaning["-k"] == {"--k"}
    assert meaning["-j"] == {"--json"}
    assert meaning["-c"] == {"--company"}
    assert meaning["-y"] == {"--yes"}  # a confirmation; --year keeps no short flag
    assert meaning["-q"] == {"--quiet"}
    assert all(len(longs) == 1 for longs in meaning.values()), meaning


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["docs", "list", "--debug"], ["--debug", "docs", "list"]),
        (["search", "x", "--config", "f.toml", "-q"], ["--config", "f.toml", "-q", "search", "x"]),
        (["search", "x", "--config=f.toml"], ["--config=f.toml", "search", "x"]),
        (["--debug", "docs", "list"], ["--debug", "docs", "list"]),
        # an option's value, and anything after `--`, stay where they are
        (["search", "x", "--company", "-q"], ["search", "x", "--company", "-q"]),
        (["search", "--", "--debug"], ["search", "--", "--debug"]),
        (["db", "psql", "-q", "--debug"], ["db", "psql", "-q", "--debug"]),  # psql's own
    ],
)
def test_root_flags_move_to_the_front(argv: list[str], expected: list[str]) -> None:
    assert hoist_global_flags(ROOT, argv) == expected


def test_flags_after_the_subcommand_and_short_flags(
    store_and_settings, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, settings = store_and_settings
    monkeypatch.setenv("FINRAG_DATABASE_URL", settings.database_url.get_secret_value())
    config = tmp_path / "finrag.toml"
    config.write_text("[retrieve]\nk = 3\n")

    listed = run_finrag("docs", "list", "--debug")
    assert listed.returncode == 0, listed.stderr
    assert "ACME_2023_10K.pdf" in listed.stdout

    found = run_finrag("search", "revenue", "-k", "1", "-j", "-q", "--config", str(config))
    assert found.returncode == 0, found.stderr
    assert len(json.loads(found.stdout)["hits"]) == 1
    assert found.stderr == ""  # --quiet after the command silences the filters note

    noted = run_finrag("search", "revenue", "-k", "1")
    assert noted.returncode == 0 and noted.stderr  # the note --quiet silenced
    docs = run_finrag("docs", "list", "-j", "-c", "x")  # -c is not an option of docs list
    assert docs.returncode == 2


def test_completion_reads_names_from_a_store_that_is_up(
    store_and_settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from finrag.agent.memory import open_conversation

    store, settings = store_and_settings
    with store.connect() as conn:
        open_conversation(conn, "acme-margins")
        conn.commit()
    monkeypatch.setenv("FINRAG_DATABASE_URL", settings.database_url.get_secret_value())

    def complete(path: str, name: str, incomplete: str) -> list[str]:
        command = ROOT
        for part in path.split():
            command = command.commands[part]
        param = next(p for p in command.params if p.name == name)
        return [getattr(c, "value", c) for c in param.shell_complete(_context(), incomplete)]

    assert complete("facts", "company", "AC") == ["ACME"]
    assert "Globex" in complete("kpi", "companies", "")
    assert complete("search", "company", "glo") == ["Globex"]
    assert complete("docs show", "ref", "ACME") == ["ACME_2023_10K.pdf"]
    assert "GLOBEX_2023_10K.pdf" in complete("open", "target", "")
    assert complete("sessions show", "name", "acme") == ["acme-margins"]
    assert complete("chat", "session", "") == ["acme-margins"]

    # The real protocol a shell speaks: one completion a line on stdout, nothing on stderr.
    shell = run_finrag(
        env={
            **os.environ,
            "_FINRAG_COMPLETE": "complete_bash",
            "COMP_WORDS": "finrag facts G",
            "COMP_CWORD": "2",
        }
    )
    assert shell.returncode == 0
    assert shell.stdout.split() == ["Globex"] and shell.stderr == ""


def test_completion_leaves_no_server_running(store, capsys: pytest.CaptureFixture[str]) -> None:
    from finrag.db.companies import resolve_company
    from finrag.db.embedded import EmbeddedServer

    settings, opened = store
    with opened.connect() as conn:
        resolve_company(conn, ["Initech"], "INTC")
        conn.commit()
    opened.close()  # the last client: the embedded server stops
    server = EmbeddedServer(settings.home)
    assert not server.status().running

    param = next(p for p in ROOT.commands["facts"].params if p.name == "company")
    assert [c.value for c in param.shell_complete(_context(), "ini")] == ["Initech"]
    assert not server.status().running  # started for the query, stopped after it
    assert capsys.readouterr() == ("", "")


def test_completion_makes_no_cluster(home, capsys: pytest.CaptureFixture[str]) -> None:
    param = next(p for p in ROOT.commands["facts"].params if p.name == "company")
    assert param.shell_complete(_context(), "") == []
    assert not (home / "pgdata").exists()  # no initdb for a completion
    assert capsys.readouterr() == ("", "")


def _context():
    from typer import _click as click

    return click.Context(ROOT, info_name="finrag")
