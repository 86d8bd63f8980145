"""What a data command found, apart from how it is shown: the JSON its --json prints and
how it ends (exit 7 "nothing found", exit 8 an unchecked number). The CLI prints the data
and then ends; the local API (finrag.serve) sends the same data and says the exit code in
a header, so both answer with the same JSON by construction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import typer

from finrag.errors import ExitCode, FinragError


@dataclass
class Report:
    data: Any  # what --json prints
    # Said after the data: a NothingFound (exit 7) or a crashed model (exit 5).
    problem: FinragError | None = None
    exit_code: int = ExitCode.OK  # without a problem: 8 for an unchecked number

    @property
    def code(self) -> int:
        return int(self.problem.exit_code) if self.problem is not None else int(self.exit_code)

    def finish(self) -> None:
        """End the command as its exit code says (after the data was printed)."""
        if self.problem is not None:
            raise self.problem
        if self.exit_code:
            raise typer.Exit(self.exit_code)
