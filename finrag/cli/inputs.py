"""Text typed or piped in, made fit to store and to echo, before any command uses it."""

from __future__ import annotations

import re

from finrag.errors import UsageError

# Postgres text refuses NUL; the other C0/C1 controls would reach the terminal when a
# question is echoed (an escape sequence can rewrite the screen). Tab and line breaks
# are kept as spaces.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# A terminal escape sequence goes whole (CSI "ESC [ ... m", OSC "ESC ] ... BEL"): its
# printable tail ("[2J") would otherwise read as words of the question.
_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_BREAKS = re.compile(r"[\t\n\r]")
# Bytes that are not UTF-8 reach Python as lone surrogates (argv, stdin), which no
# UTF-8 encoder accepts: they become the replacement character.
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` without control characters or undecodable bytes, trimmed."""
    text = _SURROGATE.sub("\ufffd", text)
    return _CONTROL.sub("", _BREAKS.sub(" ", _ESCAPE.sub("", text))).strip()


def clean_option(value: str | None) -> str | None:
    """A text option cleaned like a question; one left empty counts as not given."""
    if value is None:
        return None
    return clean_text(value) or None


def question_text(text: str) -> str:
    """The question to search or answer; an empty one is a usage error, not a search."""
    question = clean_text(text)
    if not question:
        raise UsageError(
            "the question is empty",
            hint='ask in words, e.g. finrag ask "What was ACME\'s revenue in 2023?"',
        )
    return question
