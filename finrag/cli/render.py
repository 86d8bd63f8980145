"""Output helpers: data on stdout, everything else on stderr; colour only where it helps."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

from rich.console import Console
from rich.text import Text

# rich honours NO_COLOR and drops styling when the stream is not a terminal.
out = Console(highlight=False, soft_wrap=True)
# Progress, timings and notes: what --quiet silences.
err = Console(stderr=True, highlight=False, soft_wrap=True)
# Errors and warnings: never silenced, a script's user must still learn what went wrong.
problems = Console(stderr=True, highlight=False, soft_wrap=True)


def set_quiet(quiet: bool) -> None:
    """--quiet: no progress, timings or notes on stderr; errors and warnings still show."""
    err.quiet = quiet


def warn(message: str | Text) -> None:
    """A warning on stderr that --quiet keeps (a widened filter, an unverified number)."""
    text = message if isinstance(message, Text) else Text(message)
    if not text.style and not text.spans:
        text.stylize("yellow")
    problems.print(text)


def print_json(data: Any) -> None:
    """JSON on stdout, never styled, one document per call."""
    sys.stdout.write(json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n")
    sys.stdout.flush()


STATUS_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red", "skip": "dim"}


class _Labelled(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


def log_warnings() -> None:
    """finrag's logged warnings on stderr as 'warning: ...' lines (--debug logs all)."""
    logger = logging.getLogger("finrag")
    if any(isinstance(h.formatter, _Labelled) for h in logger.handlers):
        return  # main() run again in one process
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Labelled())
    handler.setLevel(logging.WARNING)
    logger.addHandler(handler)


def print_error(message: str, hint: str | None = None, *, label: str = "error") -> None:
    """An error on stderr; the message is plain text, never parsed as markup."""
    problems.print(Text.assemble((f"{label}: ", "bold red"), message))
    if hint:
        problems.print(Text.assemble(("hint: ", "dim"), hint))
