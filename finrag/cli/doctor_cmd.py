"""`finrag doctor`: is everything finrag needs in place, and if not, how to fix it."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from finrag.cli.render import STATUS_STYLE, out, print_json
from finrag.cli.state import app_state
from finrag.doctor import run_checks
from finrag.errors import ExitCode


def doctor(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Check the database, pgvector, migrations, embedder, LLM backends and disk."""
    report = run_checks(app_state(ctx).settings)
    if as_json:
        print_json(report.as_dict())
    else:
        table = Table(show_header=True, header_style="bold")
        table.add_column("check")
        table.add_column("status")
        table.add_column("detail")
        for check in report.checks:
            label = check.status if check.required or check.status == "ok" else f"{check.status}*"
            detail = check.detail + (f"\nfix: {check.fix}" if check.fix else "")
            table.add_row(check.name, Text(label, style=STATUS_STYLE[check.status]), Text(detail))
        out.print(table)
        out.print(
            "* optional with the current settings"
            if any(not c.required and c.status != "ok" for c in report.checks)
            else ""
        )
        out.print(
            "[green]all required checks passed[/]"
            if report.ok
            else "[bold red]some required checks failed[/]"
        )
    if not report.ok:
        raise typer.Exit(ExitCode.FAILED)
