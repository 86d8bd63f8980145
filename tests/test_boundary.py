"""What crosses finrag's edges: telemetry out, bad input and settings in, files left behind."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from finrag.errors import ExitCode
from tests import pdfs
from tests.conftest import REPO, run_finrag

ONNXRUNTIME_EVENTS = "onnxruntime.db"  # where onnxruntime queues usage events for upload


def user_dirs(tmp_path: Path) -> dict[str, str]:
    """HOME and the XDG folders inside the test, so that what libraries write there shows."""
    return {
        "HOME": str(tmp_path / "user"),
        "XDG_CACHE_HOME": str(tmp_path / "user" / ".cache"),
        "XDG_DATA_HOME": str(tmp_path / "user" / ".local" / "share"),
        "XDG_CONFIG_HOME": str(tmp_path / "user" / ".config"),
    }


def test_an_ingest_queues_no_telemetry(tmp_path: Path, database_url: str) -> None:
    # pymupdf's layout analysis runs onnxruntime on every PDF, in the parser worker.
    target = pdfs.good_pdf(tmp_path / "ACME_2023_10K.pdf")
    env = dict(os.environ, **user_dirs(tmp_path), FINRAG_DATABASE_URL=database_url)
    env["FINRAG_HOME"] = str(tmp_path / "home")
    result = run_finrag("ingest", str(target), env=env)
    assert result.returncode == 0, result.stderr
    assert not list(tmp_path.rglob(ONNXRUNTIME_EVENTS))


def test_importing_finrag_turns_library_telemetry_off(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "ORT_"))}
    env.update(user_dirs(tmp_path), HF_HUB_DISABLE_TELEMETRY="0")  # forced off regardless
    probe = (
        "import json, finrag, onnxruntime, huggingface_hub.constants as hub;"
        "print(json.dumps({'hub_telemetry_off': hub.HF_HUB_DISABLE_TELEMETRY,"
        " 'hub_offline': hub.HF_HUB_OFFLINE}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], env=env, cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"hub_telemetry_off": True, "hub_offline": True}
    assert not list(tmp_path.rglob(ONNXRUNTIME_EVENTS))


# Replies for one answered question about Globex, in the order the graph asks for them.
GLOBEX_REPLIES = [
    {
        "answerable": True,
        "claims": [{"text": "Globex revenue fell 3% to $4.0 billion in 2023", "source": 1}],
    },
    {"supported": True, "unsupported": []},
]


def fake_llm_env(tmp_path: Path, database_url: str, replies: list) -> dict[str, str]:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies))
    return dict(
        os.environ,
        FINRAG_DATABASE_URL=database_url,
        FINRAG_LLM__BACKEND="fake",
        FINRAG_LLM__FAKE_SCRIPT=str(script),
        FINRAG_ANSWER__K="1",
    )


# A bell, an escape sequence and a byte that is not UTF-8 (it arrives as a lone surrogate).
NOISY_QUESTION = "What was Globex\x07 revenue in 2023?\x1b[0m\udcff"


def test_ask_takes_a_question_with_control_characters_and_bad_bytes(
    store_and_settings, tmp_path: Path, database_url: str
) -> None:
    env = fake_llm_env(tmp_path, database_url, GLOBEX_REPLIES)
    result = run_finrag("ask", NOISY_QUESTION, "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["answer"].startswith("Globex revenue fell 3%")


def test_search_takes_control_characters_in_filters(
    store_and_settings, tmp_path: Path, database_url: str
) -> None:
    env = dict(os.environ, FINRAG_DATABASE_URL=database_url)
    result = run_finrag("search", "revenue", "--company", "Glo\udcffbex\x01", "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert "\\u0001" not in result.stdout


def test_chat_input_lines_with_nul_and_bad_bytes_keep_their_turn(
    store_and_settings, tmp_path: Path, database_url: str
) -> None:
    env = fake_llm_env(tmp_path, database_url, GLOBEX_REPLIES)
    lines = tmp_path / "turns.txt"
    lines.write_bytes(b"What was Globex\x00 revenue in 2023?\x1b[2J\xff\n/quit\n")
    result = run_finrag("chat", "--input", str(lines), "--json", env=env)
    assert result.returncode == 0, result.stderr
    (turn,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert turn["answer"] == "Globex revenue fell 3% to $4.0 billion in 2023 [1]."


@pytest.mark.parametrize(
    "args",
    [
        ["search", "revenue", "--k", "99999999999999999999"],  # was a bigint error in SQL
        ["search", "revenue", "--k", "0"],
        ["search", "revenue", "--year", "0"],  # was silently ignored
        ["search", "revenue", "--year", "-1"],  # was searched for
        ["ask", "What was revenue?", "--year", "99999"],
        ["ask", "What was revenue?", "--quarter", "5"],
        ["search", ""],  # returned hits
        ["search", " \t "],
        ["ask", "   "],
        ["ask", "\x1b[0m\x07"],  # nothing left once the controls are gone
    ],
)
def test_out_of_range_options_and_empty_questions_are_usage_errors(
    home: Path, args: list[str]
) -> None:
    result = run_finrag(*args)
    assert result.returncode == ExitCode.USAGE, result.stderr
    assert result.stdout == ""
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr


def test_a_home_that_is_a_file_is_a_settings_error(tmp_path: Path) -> None:
    a_file = tmp_path / "home"
    a_file.write_text("not a folder")
    for home, said in [(a_file, "is a file"), (a_file / "finrag", f"is inside {a_file}")]:
        result = run_finrag("search", "revenue", env=dict(os.environ, FINRAG_HOME=str(home)))
        assert result.returncode == ExitCode.CONFIG, result.stderr
        assert said in result.stderr and "FINRAG_HOME" in result.stderr
        assert "internal error" not in result.stderr


def run_finrag_bound_by_file_modes(*args: str, env: dict[str, str]):
    """The CLI in a subprocess that file modes bind: root writes anywhere unless its
    override capabilities are dropped (from the bounding set, before exec), so they are."""

    def drop_override() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
            if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "cannot drop a capability")

    return subprocess.run(
        [sys.executable, "-m", "finrag", *args],
        env=env,
        preexec_fn=drop_override if os.geteuid() == 0 else None,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def test_a_read_only_home_is_a_settings_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o555)
    env = dict(os.environ, FINRAG_HOME=str(home))
    result = run_finrag_bound_by_file_modes("search", "revenue", env=env)
    assert result.returncode == ExitCode.CONFIG, result.stderr
    assert f"finrag's home {home} is not writable" in result.stderr
    assert "internal error" not in result.stderr


def test_an_os_error_is_reported_with_its_path_not_as_a_bug(
    tmp_path: Path, database_url: str
) -> None:
    dataset = tmp_path / "questions.jsonl"
    dataset.write_text(json.dumps({"id": "q1", "question": "What was revenue?", "answer": "1"}))
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    env = fake_llm_env(tmp_path, database_url, [])
    result = run_finrag("eval", "answers", str(dataset), "--out", str(a_file / "out"), env=env)
    assert result.returncode == ExitCode.FAILED
    assert f"error: Not a directory: {a_file / 'out'}" in result.stderr
    assert "internal error" not in result.stderr


def test_bytes_that_are_not_utf8_in_any_argument_are_a_usage_error(database_url: str) -> None:
    env = dict(os.environ, FINRAG_DATABASE_URL=database_url)
    result = run_finrag("sessions", "show", "caf\udce9", env=env)  # 'café' in Latin-1
    assert result.returncode == ExitCode.USAGE, result.stderr
    assert "not UTF-8" in result.stderr and "internal error" not in result.stderr


def test_an_ingest_is_reported_once_per_failed_file(tmp_path: Path, database_url: str) -> None:
    pdfs.corrupt_pdf(tmp_path / "broken.pdf")
    env = dict(os.environ, FINRAG_DATABASE_URL=database_url)
    result = run_finrag("ingest", str(tmp_path / "broken.pdf"), env=env)
    assert result.returncode == ExitCode.FAILED
    assert result.stderr.count("not a readable PDF") == 1, result.stderr


def modes_under(folder: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {"dirs": set(), "files": set()}
    for path in [folder, *folder.rglob("*")]:
        found["dirs" if path.is_dir() else "files"].add(oct(path.stat().st_mode & 0o777))
    return found


def test_the_cli_keeps_what_it_writes_private(home: Path, tmp_path: Path) -> None:
    target = pdfs.good_pdf(tmp_path / "ACME_2023_10K.pdf")
    result = run_finrag("ingest", str(target))
    assert result.returncode == 0, result.stderr
    assert modes_under(home / "cache") == {"dirs": {"0o700"}, "files": {"0o600"}}
    assert home.stat().st_mode & 0o077 == 0, "finrag made the home: others get nothing"


def test_the_library_keeps_its_cache_private_whatever_the_umask(
    tmp_path: Path, database_url: str
) -> None:
    from pydantic import SecretStr

    from finrag.config import load_settings
    from finrag.db import open_store
    from finrag.ingest.pipeline import ingest

    target = pdfs.good_pdf(tmp_path / "ACME_2023_10K.pdf")
    settings = load_settings(
        home=tmp_path / "home", database_url=SecretStr(database_url), ingest={"workers": 0}
    )
    previous = os.umask(0o022)  # a common default: new files 0644, folders 0755
    try:
        with open_store(settings) as store:
            report = ingest([target], settings, store)
    finally:
        os.umask(previous)
    assert report.failed == 0
    assert modes_under(settings.cache_dir) == {"dirs": {"0o700"}, "files": {"0o600"}}
