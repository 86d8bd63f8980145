"""`finrag kpi`: KPIs by period for one or more companies, from the facts store, as a table,
JSON, CSV, a terminal chart or a PNG; every value traceable to its inputs."""

from __future__ import annotations

import contextlib
import csv
import re
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Annotated, Any

import click
import typer
from rich.text import Text

from finrag.cli.render import Column, err, out, print_json, print_notes, print_table
from finrag.cli.state import app_state
from finrag.config import Settings
from finrag.db import Store, open_store
from finrag.errors import NothingFound, UsageError
from finrag.facts.charts import build_series, format_value, png_chart, terminal_chart
from finrag.facts.kpi import KpiGap, KpiValue
from finrag.facts.kpi_insights import Insight, report_insights
from finrag.facts.kpi_report import (
    DEFAULT_KPIS,
    KpiReport,
    choose_kpis,
    gap_note,
    kpi_report,
    why_none,
)

_YEARS = re.compile(r"(?:FY)?(\d{4})(?:\s*(?:-|–|to|\.\.)\s*(?:FY)?(\d{4}))?", re.I)
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def kpi_command(
    ctx: typer.Context,
    companies: Annotated[
        list[str],
        typer.Argument(help="Company names, aliases or tickers in the store.", metavar="COMPANY"),
    ],
    years: Annotated[
        str | None,
        typer.Option(
            "--years",
            metavar="YEARS",
            help="Fiscal years: 2019-2023 or 2023 (default: all the store holds).",
        ),
    ] = None,
    quarterly: Annotated[
        bool, typer.Option("--quarterly", help="Fiscal quarters instead of years.")
    ] = False,
    kpi_names: Annotated[
        list[str] | None,
        typer.Option(
            "--kpi",
            metavar="NAME",
            help="KPI names or aliases, repeated or comma-separated; 'all' for every KPI "
            f"(default: {', '.join(DEFAULT_KPIS)}).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON: every value with its inputs.")
    ] = False,
    as_csv: Annotated[
        bool, typer.Option("--csv", help="Print CSV: one company × KPI × period a row.")
    ] = False,
    chart: Annotated[
        bool, typer.Option("--chart", help="Print a line chart after the table.")
    ] = False,
    png: Annotated[
        Path | None,
        typer.Option("--png", metavar="PATH", help="Write a PNG chart to PATH.", dir_okay=False),
    ] = None,
    insights: Annotated[
        bool,
        typer.Option(
            "--insights/--no-insights",
            help="State what each series shows (direction, largest change, breaks, peers), "
            "from the values alone; --json gives each statement with its inputs.",
        ),
    ] = True,
) -> None:
    """KPIs by period (margins, returns, liquidity, leverage, growth), computed from the
    facts store, each value traceable to the printed cells it comes from."""
    if as_json and as_csv:
        raise UsageError("--json and --csv are two formats: choose one")
    if chart and (as_json or as_csv):
        raise UsageError("--chart prints text beside the table", hint="use --png with --json/--csv")
    with _spinner("computing KPIs"):
        report = kpi_outcome(
            app_state(ctx).settings,
            companies,
            opened=open_store,
            years=years,
            quarterly=quarterly,
            kpi_names=kpi_names,
        )
    if as_json:
        print_json(kpi_json(report, insights=insights))
    elif as_csv:
        _write_csv(report)
    else:
        _print_tables(report)
        if insights:
            print_insights(report, report_insights(report))
    _finish(report, chart=chart, png=png)


def kpi_json(report: KpiReport, *, insights: bool = True) -> dict[str, Any]:
    data = report.as_dict()
    if insights:
        data["insights"] = [i.as_dict() for i in report_insights(report)]
    return data


def print_insights(report: KpiReport, found: list[Insight]) -> None:
    """The statements under the table: a paragraph per KPI on a terminal; piped,
    "# insights" and one "- " line per statement (for grep and scripts)."""
    if not found:
        return
    if not out.is_terminal:
        sys.stdout.write("# insights\n" + "".join(f"- {i.text}\n" for i in found))
        sys.stdout.flush()
        return
    out.print(Text("What the series show", style="bold"))
    for chosen in report.kpis:
        # A paragraph per company, then one comparing them.
        paragraphs: dict[str, list[str]] = {}
        for i in found:
            if i.metric == chosen.name:
                who = "peers" if i.kind.startswith("peers") else i.inputs[0].company
                paragraphs.setdefault(who, []).append(i.text)
        if paragraphs:
            out.print(Text(chosen.display, style="bold"))
            for said in paragraphs.values():
                out.print(Text("  " + " ".join(said)))


def kpi_outcome(
    settings: Settings,
    companies: list[str],
    *,
    opened: Callable[[Settings], AbstractContextManager[Store]],
    years: str | None = None,
    quarterly: bool = False,
    kpi_names: list[str] | None = None,
) -> KpiReport:
    """`kpi` apart from its printing, for the CLI and the local API alike: the options
    are the command's, by name. Its ``as_dict()`` is what --json prints."""
    chosen = choose_kpis(kpi_names)
    span = parse_years(years)
    with opened(settings) as store, store.connect() as conn:
        return kpi_report(conn, companies, chosen, span, quarterly=quarterly)


def kpi_problem(report: KpiReport) -> NothingFound | None:
    """How `kpi` ends when nothing was computed: exit 7, saying why."""
    if report.computed:
        return None
    return NothingFound(
        f"no KPI computed: {why_none(report)}",
        hint="`finrag facts COMPANY` shows the statement figures stored",
    )


def chat_kpi(store: Store, line: str, *, as_json: bool) -> dict[str, Any] | None:
    """`/kpi COMPANY... [--kpi NAME] [--years A-B] [--quarterly] [--chart] [--png PATH]`
    in chat: the tables (and charts) printed, or with ``as_json`` the report returned."""
    try:
        args = shlex.split(line)[1:]
    except ValueError as exc:
        raise UsageError(f"/kpi: {exc}") from None
    if not args:
        raise UsageError("/kpi needs a company", hint="e.g. /kpi AAPL --kpi gross_margin")
    params = _chat_options(args)
    if params is None:  # --help: click printed it
        return None
    chosen = choose_kpis(params["kpi_names"])
    span = parse_years(params["years"])
    with store.connect() as conn, _spinner("computing KPIs"):
        report = kpi_report(conn, params["companies"], chosen, span, quarterly=params["quarterly"])
    if as_json:
        return kpi_json(report, insights=params["insights"])
    _print_tables(report)
    if params["insights"]:
        print_insights(report, report_insights(report))
    _finish(report, chart=params["chart"], png=params["png"])
    return None


def _chat_options(args: list[str]) -> dict[str, Any] | None:
    """``args`` parsed as the command line of `finrag kpi` is: the same options, the same
    errors."""
    single = typer.Typer()
    single.command()(kpi_command)
    try:
        with typer.main.get_command(single).make_context("/kpi", args) as ctx:
            return dict(ctx.params)
    except click.exceptions.Exit:
        return None
    except click.ClickException as exc:
        raise UsageError(exc.format_message(), hint="/kpi --help lists the options") from None


def _print_tables(report: KpiReport) -> None:
    if not report.periods:  # no column to show: the message below says why
        return
    columns, rows, options, notes = kpi_table(report)
    print_table(columns, rows, **options)
    print_notes(notes)
    for company in report.companies:
        for line in company.calendar.lines() if company.calendar else ():
            err.print(Text(line, style="dim"))


def _finish(report: KpiReport, *, chart: bool, png: Path | None) -> None:
    """The charts asked for; exit 7 saying why when nothing was computed."""
    if chart:
        _print_chart(report)
    if png is not None:
        _write_png(report, png)
    if (problem := kpi_problem(report)) is not None:
        raise problem


def parse_years(text: str | None) -> tuple[int, int] | None:
    """'2019-2023', 'FY2019-FY2023' or '2023' as (first, last) fiscal years."""
    if text is None:
        return None
    found = _YEARS.fullmatch(text.strip())
    if not found:
        raise UsageError(
            f"--years {text!r} is not a year or a range", hint="e.g. 2023 or 2019-2023"
        )
    first, last = int(found[1]), int(found[2] or found[1])
    if first > last:
        raise UsageError(f"--years {text!r} runs backwards", hint=f"write {last}-{first}")
    return first, last


def kpi_table(report: KpiReport) -> tuple[list[Column], list[list[str]], dict, list[str]]:
    """The table (KPIs as rows, periods as columns, a row per company under each KPI when
    there are several): its columns, rows and title, then its notes: why each '—' is one,
    each said once for all the cells it explains (--json has every gap's full detail)."""
    periods = report.periods
    several = len(report.companies) > 1
    notes: dict[str, int] = {}
    rows: list[list[str]] = []
    for chosen in report.kpis:
        for j, company in enumerate(report.companies):
            found = {r.period: r for r in company.results if r.name == chosen.name}
            who = f"{company.short}: " if several else ""
            cells = [_cell(found.get(p), chosen.unit, who, notes) for p in periods]
            label = chosen.display if j == 0 else ""
            rows.append([label, *([company.short] if several else []), *cells])
    columns = [Column("KPI", min_width=16)]
    if several:
        columns.append(Column("company"))
    columns += [Column(period, justify="right", no_wrap=True) for period in periods]
    options = {
        "title": ", ".join(c.name for c in report.companies) + ": KPIs",
        "caption": _caption(report, gaps=bool(notes)),
        "section_every": len(report.companies) if several else 0,
    }
    return columns, rows, options, [f"{number}. {note}" for note, number in notes.items()]


def _caption(report: KpiReport, *, gaps: bool) -> str | None:
    parts = ["money in USD millions"] if any(k.unit == "money" for k in report.kpis) else []
    if gaps:
        parts.append("— not computed: the notes below say why")
    return "; ".join(parts) or None


def _cell(result: KpiValue | KpiGap | None, unit: str, who: str, notes: dict[str, int]) -> str:
    if result is None:  # a period this company's filings do not cover
        return ""
    if isinstance(result, KpiValue):
        return format_value(result.value, unit)
    number = notes.setdefault(who + gap_note(result), len(notes) + 1)
    return "—" + str(number).translate(_SUPERSCRIPT)


def _write_csv(report: KpiReport) -> None:
    writer = csv.writer(sys.stdout)
    writer.writerow(
        ["company", "kpi", "period", "value", "unit", "formula", "expression", "inputs", "gap"]
    )
    for company in report.companies:
        for result in company.results:
            row = report.row(company, result)
            inputs = "; ".join(
                f"{i['term']}={i['value']} ({Path(i['document']).name} p.{i['page']})"
                for i in row["inputs"]
            )
            gap = row["gap"]
            writer.writerow(
                [
                    row["company"],
                    row["kpi"],
                    row["period"],
                    "" if row["value"] is None else row["value"],
                    row["unit"],
                    row["formula"] or "",
                    row["expression"] or "",
                    inputs,
                    f"{gap['reason']}: {gap['detail']}" if gap else "",
                ]
            )


def _series(report: KpiReport):
    series, skipped = [], 0
    for company in report.companies:
        found, gaps = build_series(company.short, company.results)
        series += found
        skipped += gaps
    return series, skipped


def _chart_title(report: KpiReport) -> str:
    return (
        ", ".join(c.name for c in report.companies)
        + ": "
        + ", ".join(k.display.lower() for k in report.kpis[:4])
        + (", …" if len(report.kpis) > 4 else "")
    )


def _print_chart(report: KpiReport) -> None:
    series, skipped = _series(report)
    if not series:
        err.print("nothing to chart: no KPI value was computed")
        return
    color = out.is_terminal and out.color_system is not None and not out.no_color
    text = terminal_chart(
        series, report.periods, title=_chart_title(report), width=out.width, color=color
    )
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    if skipped:
        err.print(Text(f"{skipped} value(s) not computed are not charted", style="dim"))


def _write_png(report: KpiReport, path: Path) -> None:
    series, skipped = _series(report)
    if not series:
        err.print("no PNG written: no KPI value was computed")
        return
    sources = sorted(
        {
            Path(i.value.fact.document).name
            for c in report.companies
            for r in c.results
            if isinstance(r, KpiValue)
            for i in r.inputs
        }
    )
    note = f"{skipped} value(s) not computed are not drawn" if skipped else ""
    size = png_chart(
        series, report.periods, path, title=_chart_title(report), sources=sources, note=note
    )
    err.print(f"wrote {path} ({size / 1024:.0f} KB)")


@contextlib.contextmanager
def _spinner(message: str) -> Iterator[None]:
    """A spinner on stderr while it is a terminal; nothing in pipes and logs."""
    if not err.is_terminal:
        yield
        return
    with err.status(message, spinner="dots"):
        yield
