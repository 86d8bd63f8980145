"""`finrag facts`: a company's reported numbers, as statements or one line item by period."""

from __future__ import annotations

import csv
import sys
from decimal import Decimal
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from finrag.cli.render import err, out, print_json
from finrag.cli.state import app_state
from finrag.db import open_store
from finrag.db.companies import lookup_company
from finrag.errors import UsageError
from finrag.facts.statements import STATEMENT_NAMES, StatementView, statement_view


def facts_command(
    ctx: typer.Context,
    company: Annotated[str, typer.Argument(help="Company name, alias or ticker in the store.")],
    statement: Annotated[
        str,
        typer.Option(
            "--statement", help=f"Which statement: {', '.join(STATEMENT_NAMES)}.", show_default=True
        ),
    ] = "income",
    year: Annotated[
        int | None, typer.Option("--year", min=1900, max=2200, help="Fiscal year.")
    ] = None,
    quarter: Annotated[
        int | None, typer.Option("--quarter", min=1, max=4, help="Fiscal quarter.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON with provenance.")] = False,
    as_csv: Annotated[
        bool, typer.Option("--csv", help="Print CSV: one fact a row, with provenance.")
    ] = False,
) -> None:
    """A company's statement as line items by period, each value traceable to its page."""
    if statement not in STATEMENT_NAMES:
        raise UsageError(
            f"unknown statement {statement!r}", hint=f"one of: {', '.join(STATEMENT_NAMES)}"
        )
    with open_store(app_state(ctx).settings) as store, store.connect() as conn:
        found = lookup_company(conn, company)
        if found is None:
            held = [r[0] for r in conn.execute("SELECT name FROM companies ORDER BY name")]
            raise UsageError(
                f"no company {company!r} in the store",
                hint=f"the store holds: {', '.join(held) or 'nothing yet'}",
            )
        company_id, name, _ = found
        view = statement_view(
            conn,
            company_id,
            name,
            STATEMENT_NAMES[statement],
            fiscal_year=year,
            fiscal_quarter=quarter,
        )
    if as_json:
        print_json(view.as_dict())
    elif as_csv:
        _write_csv(view)
    elif not view.rows:
        err.print(f"no {statement} statement facts for {name}" + (f" in FY{year}" if year else ""))
    else:
        out.print(_table(view))


def _table(view: StatementView) -> Table:
    table = Table(
        title=f"{view.company}: {view.statement.replace('_', ' ')}",
        caption="USD and shares in millions; per-share amounts and percentages as printed",
    )
    table.add_column("line item", overflow="fold", min_width=24)
    for period in view.periods:
        table.add_column(period, justify="right", no_wrap=True)
    for row in view.rows:
        if any(p in row.cells for p in view.periods):
            table.add_row(row.name, *(_show(row.cells.get(p)) for p in view.periods))
    return table


def _show(fact) -> str:
    if fact is None or fact.value is None:
        return ""
    value: Decimal = fact.value
    if fact.unit in ("%", "pure") or (fact.unit or "").endswith("/shares"):
        return f"{value:,}{'%' if fact.unit == '%' else ''}"
    return f"{value / Decimal(1_000_000):,.2f}".rstrip("0").rstrip(".")


def _write_csv(view: StatementView) -> None:
    writer = csv.writer(sys.stdout)
    writer.writerow(
        [
            "company",
            "statement",
            "line_item",
            "parents",
            "period",
            "value",
            "unit",
            "printed",
            "document",
            "page",
        ]
    )
    for row in view.rows:
        for period, fact in row.cells.items():
            writer.writerow(
                [
                    view.company,
                    view.statement,
                    row.label,
                    " > ".join(row.parents),
                    period,
                    fact.value,
                    fact.unit,
                    fact.printed,
                    Path(fact.document).name,
                    fact.page,
                ]
            )
