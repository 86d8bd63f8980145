"""`finrag doctor`: is everything finrag needs in place, and if not, how to fix it."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from finrag.cli.progress import Activity
from finrag.cli.render import STATUS_STYLE, err, print_json, print_table, problems
from finrag.cli.state import app_state
from finrag.doctor import run_checks
from finrag.errors import ExitCode


def doctor(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Check the database, pgvector, migrations, embedder, LLM backends and disk."""
    settings = app_state(ctx).settings
    with Activity("checking") as activity:
        report = run_checks(settings, on_check=activity.stage)
    if as_json:
        print_json(report.as_dict())
    else:
        rows = []
        for check in report.checks:
            label = check.status if check.required or check.status == "ok" else f"{check.status}*"
            detail = check.detail + (f"\nfix: {check.fix}" if check.fix else "")
            rows.append([check.name, Text(label, style=STATUS_STYLE[check.status]), detail])
        print_table(["check", "status", "detail"], rows)
        if any(not c.required and c.status != "ok" for c in report.checks):
            err.print("* optional with the current settings")
        if report.ok:
            err.print(Text("all required checks passed", style="green"))
        else:
            problems.print(Text("some required checks failed", style="bold red"))
    if not report.ok:
        raise typer.Exit(ExitCode.FAILED)
