"""`finrag ask` loads only what it runs: the one command's module, and none of the heavy
libraries a facts answer does not need (checked in a fresh interpreter's sys.modules)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from finrag.cli.app import COMMANDS, commands_needed
from tests.conftest import REPO

HEAVY = (
    "torch",
    "numpy",
    "scipy",
    "pandas",
    "nltk",
    "sentence_transformers",
    "transformers",
    "onnxruntime",
    "matplotlib",
    "yfinance",
    "llama_cpp",
)


def _loaded(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(list(sys.modules)))"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_the_entry_point_and_the_ask_path_import_no_heavy_library() -> None:
    modules = _loaded(
        "from finrag.cli import app\n"
        "app.register(['ask'])\n"
        "from finrag.answer.pipeline import Asker\n"
        "from finrag.ingest.sentences import split_sentences\n"
        "split_sentences('Revenue was $9,583 million [1].')"
    )
    assert not {m.split(".")[0] for m in modules} & set(HEAVY)
    assert "finrag.cli.ask_cmd" in modules
    # No other command's module came with it.
    assert not {f"finrag.cli.{m}" for m, _, _ in COMMANDS.values() if m != "ask_cmd"} & modules


@pytest.mark.parametrize(
    ("argv", "needed"),
    [
        (["ask", "--no-llm", "q"], ["ask"]),
        (["--config", "c.toml", "-q", "eval", "answers", "x"], ["eval"]),
        (["--config=c.toml", "docs", "list"], ["docs"]),
        (["--version"], []),
        (["--version", "--help"], None),
        (["--help"], None),
        ([], None),
        (["no-such-command"], None),
    ],
)
def test_the_command_line_names_the_one_command_to_load(argv, needed) -> None:
    assert commands_needed(argv) == needed
