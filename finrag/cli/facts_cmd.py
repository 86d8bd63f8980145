"""`finrag facts`: a company's reported numbers, as statements or one line item by period."""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import typer

from finrag.cli.derived_view import derived_dict, show_derived
from finrag.cli.render import Column, err, print_json, print_table
from finrag.cli.report import Report
from finrag.cli.state import app_state
from finrag.config import Settings
from finrag.db import Store, open_store
from finrag.db.companies import require_company
from finrag.errors import NothingFound, UsageError
from finrag.facts.derived import Derived, DerivedGap, PeriodArithmetic
from finrag.facts.dictionary import Metric, metric
from finrag.facts.lookup import metric_values
from finrag.facts.statements import STATEMENT_NAMES, StatementView, statement_view
from finrag.facts.store import company_calendars

_NONE_HINT = (
    "`finrag docs list` shows the filings stored; another --statement, --metric or --year "
    "may have some"
)
_MILLIONS_CAPTION = "USD and shares in millions; per-share amounts and percentages as printed"


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
    metric_name: Annotated[
        str | None,
        typer.Option(
            "--metric",
            help="One line item by period (capex, revenue, net_income, eps_diluted, ...), "
            "through the metric dictionary.",
        ),
    ] = None,
    ttm: Annotated[
        bool,
        typer.Option(
            "--ttm",
            help="With --metric: trailing twelve months at each quarter end, "
            "a 10-K plus a later 10-Q's year to date, each input cited.",
        ),
    ] = False,
    quarterly: Annotated[
        bool,
        typer.Option(
            "--quarterly",
            help="With --metric: each quarter, reported or de-cumulated from "
            "year-to-date figures (Q3 = 9M - 6M), each input cited.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON with provenance.")] = False,
    as_csv: Annotated[
        bool, typer.Option("--csv", help="Print CSV: one fact a row, with provenance.")
    ] = False,
) -> None:
    """A company's statement as line items by period, or one line item (--metric), each
    value traceable to its document and page."""
    settings = app_state(ctx).settings
    outcome = facts_outcome(
        settings,
        company,
        opened=open_store,
        statement=statement,
        year=year,
        quarter=quarter,
        metric_name=metric_name,
        ttm=ttm,
        quarterly=quarterly,
    )
    if not as_json:
        for line in outcome.calendar.lines():  # on stderr: the table and CSV stay as they are
            err.print(line, style="dim", highlight=False)
    if as_json:
        print_json(outcome.report.data)
    elif outcome.derived is not None:
        show_derived(
            outcome.company, outcome.metric, outcome.derived, ttm=ttm, as_json=False, as_csv=as_csv
        )
    elif outcome.values is not None:
        _show_metric(outcome.company, outcome.metric, outcome.values, as_csv=as_csv)
    elif outcome.view is not None and as_csv:
        _write_csv(outcome.view)
    elif outcome.view is not None and outcome.view.rows:
        _print_statement(outcome.view)
    outcome.report.finish()


@dataclass
class FactsOutcome:
    """What `facts` found: one of a derived series, a metric's values or a statement."""

    company: str
    calendar: Any  # the company's fiscal calendar (facts.store.company_calendars)
    report: Report  # the JSON of --json, and how the command ends
    metric: Metric | None = None
    derived: list[Derived | DerivedGap] | None = None
    values: list | None = None
    view: StatementView | None = None


def facts_outcome(
    settings: Settings,
    company: str,
    *,
    opened: Callable[[Settings], AbstractContextManager[Store]],
    statement: str = "income",
    year: int | None = None,
    quarter: int | None = None,
    metric_name: str | None = None,
    ttm: bool = False,
    quarterly: bool = False,
) -> FactsOutcome:
    """`facts` apart from its printing, for the CLI and the local API alike: the options
    are the command's, by name."""
    chosen = metric(metric_name) if metric_name else None  # unknown names: close matches
    if (ttm or quarterly) and (chosen is None or chosen.period != "duration" or ttm == quarterly):
        raise UsageError(
            "--ttm and --quarterly take one --metric that is a flow (revenue, capex, ...)",
            hint="a balance (total assets) is at a date: it has no twelve months to add",
        )
    if statement not in STATEMENT_NAMES:
        raise UsageError(
            f"unknown statement {statement!r}", hint=f"one of: {', '.join(STATEMENT_NAMES)}"
        )
    with opened(settings) as store, store.connect() as conn:
        company_id, name, _ = require_company(conn, company)
        calendar = company_calendars(conn, company_id)
        if chosen is not None and (ttm or quarterly):
            arithmetic = PeriodArithmetic(conn, company_id)
            found = arithmetic.ttms(chosen) if ttm else arithmetic.quarters(chosen)
            wanted = [d for d in found if year is None or f"FY{year} " in f"{d.period} "]
            report = Report(derived_dict(name, chosen, wanted, ttm=ttm))
            if not wanted:
                what = "trailing twelve months" if ttm else "quarters"
                report.problem = NothingFound(
                    f"no {chosen.display.lower()} for {name} to derive {what} from", hint=_NONE_HINT
                )
            return FactsOutcome(name, calendar, report, metric=chosen, derived=wanted)
        if chosen is not None:
            values = metric_values(
                conn, company_id, chosen, fiscal_year=year, fiscal_quarter=quarter
            )
            report = Report(
                {
                    "company": name,
                    "metric": chosen.name,
                    "display": chosen.display,
                    "values": [v.as_dict() for v in values],
                    "calendar": calendar.as_dict() if calendar else None,
                }
            )
            if not values:
                report.problem = NothingFound(
                    f"no {chosen.display.lower()} for {name} in the store's facts", hint=_NONE_HINT
                )
            return FactsOutcome(name, calendar, report, metric=chosen, values=values)
        view = statement_view(
            conn,
            company_id,
            name,
            STATEMENT_NAMES[statement],
            fiscal_year=year,
            fiscal_quarter=quarter,
        )
    report = Report({**view.as_dict(), "calendar": calendar.as_dict()})
    if not view.rows:
        report.problem = NothingFound(
            f"no {statement} statement facts for {name}" + (f" in FY{year}" if year else ""),
            hint=_NONE_HINT,
        )
    return FactsOutcome(name, calendar, report, view=view)


def _show_metric(company: str, chosen: Metric, values: list, *, as_csv: bool) -> None:
    if as_csv:
        rows = [v.as_dict() for v in values]
        writer = csv.DictWriter(
            sys.stdout, fieldnames=["company", *(rows[0] if rows else ["metric", "period"])]
        )
        writer.writeheader()
        for row in rows:
            writer.writerow({"company": company, **row})
        return
    if not values:
        return  # the command says "nothing found" (exit 7)
    rows = []
    for v in values:
        fact = v.fact
        where = f"{Path(fact.document).name} p.{fact.page} ({fact.statement.replace('_', ' ')})"
        rows.append(
            [
                v.period,
                _amount(v.value, fact.unit),
                fact.unit or "",
                where,
                f"{fact.label or fact.concept}: {fact.printed}",
            ]
        )
    print_table(
        [
            Column("period", no_wrap=True),
            Column("value", justify="right", no_wrap=True),
            "unit",
            "from",
            "printed as",
        ],
        rows,
        title=f"{company}: {chosen.display}",
        caption=_MILLIONS_CAPTION,
    )


def _print_statement(view: StatementView) -> None:
    print_table(
        [
            Column("line item", min_width=24),
            *(Column(period, justify="right", no_wrap=True) for period in view.periods),
        ],
        (
            [row.name, *(_show(row.cells.get(p)) for p in view.periods)]
            for row in view.rows
            if any(p in row.cells for p in view.periods)
        ),
        title=f"{view.company}: {view.statement.replace('_', ' ')}",
        caption=_MILLIONS_CAPTION,
    )


def _show(fact) -> str:
    return "" if fact is None or fact.value is None else _amount(fact.value, fact.unit)


def _amount(value: Decimal, unit: str | None) -> str:
    """Money and share counts in millions, as statements print them; the rest as is."""
    if unit in ("%", "pure") or (unit or "").endswith("/shares"):
        return f"{value:,}{'%' if unit == '%' else ''}"
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
