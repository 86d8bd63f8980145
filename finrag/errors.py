"""Domain errors and the exit codes the CLI maps them to.

The core raises these; ``finrag.cli`` is the one boundary that turns them into a
message on stderr and an exit code. Every error carries a ``hint``: what to do next.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes; stable, so scripts can branch on them."""

    OK = 0
    FAILED = 1  # a check or an operation failed (e.g. doctor found a problem)
    USAGE = 2  # bad command line or bad input (typer/click also use 2)
    CONFIG = 3  # settings file or environment is invalid
    DATABASE = 4  # database unreachable, misconfigured or inconsistent
    MODEL = 5  # a model or backend is missing or cannot load
    PARTIAL = 6  # some items succeeded, some failed
    NO_ANSWER = 7  # the filings in the store do not answer the question (a plain refusal)
    # An answer states a number that is in no cited excerpt and no calculation (``ask``;
    # with --strict also a number only "found in source", not traced to a stored fact).
    UNVERIFIED = 8
    NETWORK = 9  # a remote service (SEC EDGAR for `fetch`) unreachable, refusing or failing
    INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT


class FinragError(Exception):
    """Base of every error finrag reports to a user."""

    exit_code: ExitCode = ExitCode.FAILED
    label = "error"  # how the CLI's error boundary introduces the message

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def as_dict(self) -> dict[str, object]:
        """The error as data, where a program reads it (the local API's error JSON)."""
        return {
            "error": self.label,
            "message": self.message,
            "hint": self.hint,
            "exit_code": int(self.exit_code),
        }


class ConfigError(FinragError):
    exit_code = ExitCode.CONFIG


class UsageError(FinragError):
    exit_code = ExitCode.USAGE


class DatabaseError(FinragError):
    exit_code = ExitCode.DATABASE


class DatabaseUnavailable(DatabaseError):
    """No server answers at the configured address."""


class VectorExtensionMissing(DatabaseError):
    """The server has no pgvector, or one that is too old."""


class MigrationError(DatabaseError):
    """A migration failed or an applied one was edited."""


class EmbeddingMismatch(DatabaseError):
    """The store holds vectors from another embedding model than the configured one."""


class NothingFound(FinragError):
    """A data command (facts, kpi, search, graph, market, ask) found nothing to show: not a
    failure, an answer a script can branch on (exit 7, "nothing found: ...")."""

    exit_code = ExitCode.NO_ANSWER
    label = "nothing found"


class FilterUnmatched(NothingFound):
    """--strict-filters: no filing matches a filter the question or a flag set."""


class ServiceUnavailable(FinragError):
    """A remote service finrag was asked to use (SEC EDGAR for `fetch`) cannot be reached,
    refuses, or keeps failing after retries."""

    exit_code = ExitCode.NETWORK


class ModelNotAvailable(FinragError):
    exit_code = ExitCode.MODEL


class DocumentParseError(FinragError):
    """A file could not be turned into text: corrupt, encrypted, image-only, empty."""


class NoTextLayer(DocumentParseError):
    """A PDF of scanned pages only, and no OCR engine to read them."""


class ParserUnavailable(FinragError):
    """An optional parser is not installed, not configured, or cannot reach its service."""

    exit_code = ExitCode.MODEL
