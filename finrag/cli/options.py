"""Options several commands share, spelt once so their help reads the same everywhere."""

from __future__ import annotations

from typing import Annotated

import typer

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]

# The metadata filters of `search` and `ask`; `--strict-filters` makes an unmatched one fail.
CompanyOption = Annotated[str | None, typer.Option(help="Only this company.")]
YearOption = Annotated[int | None, typer.Option(help="Only this fiscal year.", min=1900, max=2200)]
QuarterOption = Annotated[int | None, typer.Option(help="Only this quarter.", min=1, max=4)]
FormOption = Annotated[str | None, typer.Option(help="Only this form (10-K, 10-Q...).")]
ModeOption = Annotated[
    str | None,
    typer.Option(
        "--mode",
        metavar="MODE",
        help="fast, balanced or precise: a preset of settings (default: answer.mode; "
        "`finrag config show --mode MODE` lists them); a setting given explicitly wins.",
    ),
]
BackendOption = Annotated[
    str | None,
    typer.Option(
        metavar="NAME", help="LLM backend: auto, ollama, embedded (default: llm.backend)."
    ),
]
