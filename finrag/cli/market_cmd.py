"""`finrag market`: a ticker's price change, volatility and volume over a fiscal quarter,
from the on-disk cache or Yahoo Finance (bounded in time); `--questions` writes yes/no
"did it perform well" questions for `finrag eval answers`."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from finrag.cli.render import err, out, print_json, warn
from finrag.cli.state import app_state
from finrag.config import Settings
from finrag.db import open_store
from finrag.db.embedded import EmbeddedServer
from finrag.errors import DatabaseError, ExitCode, FinragError, UsageError
from finrag.market import (
    MarketSummary,
    PriceCache,
    market_summary,
    performance_question,
    resolve_period,
)
from finrag.market.fetch import DEFAULT_TIMEOUT_S, set_yfinance_cache
from finrag.market.periods import MarketPeriod
from finrag.market.questions import RULE


def market_command(
    ctx: typer.Context,
    tickers: Annotated[
        list[str], typer.Argument(help="Ticker symbols (BBY, AAPL).", metavar="TICKER")
    ],
    period: Annotated[
        str | None,
        typer.Option(
            "--period",
            "--periods",
            metavar="PERIOD",
            help="Quarter or fiscal year: 2024Q2, Q2 FY2024, FY2024; several comma-separated. "
            "Fiscal when the store holds the company's filings, calendar otherwise "
            "(default: the quarter of its latest filing, or the last calendar quarter).",
        ),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print JSON (an object; a list for several results)."),
    ] = False,
    questions: Annotated[
        Path | None,
        typer.Option(
            "--questions",
            metavar="FILE",
            dir_okay=False,
            help='Write yes/no "did COMPANY perform well in PERIOD" questions (JSONL for '
            "finrag eval answers): Yes when the close rose over the period.",
        ),
    ] = None,
    offline: Annotated[
        bool, typer.Option("--offline", help="Answer from the cache only; never download.")
    ] = False,
    calendar_quarters: Annotated[
        bool,
        typer.Option("--calendar", help="Calendar quarters even for a company the store holds."),
    ] = False,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            metavar="SECONDS",
            min=0.1,
            max=300,
            help="Give up on Yahoo Finance after this long.",
        ),
    ] = DEFAULT_TIMEOUT_S,
) -> None:
    """A ticker's price change, volatility and volume over a fiscal quarter.

    From the cache in FINRAG_HOME/cache/market or Yahoo Finance through yfinance: price
    change (first close to last close), volatility, average volume and range; without
    network it answers from the cache or fails within --timeout seconds (exit 7)."""
    settings = app_state(ctx).settings
    texts = [p.strip() for p in period.split(",") if p.strip()] if period else [None]
    if not texts:
        raise UsageError("--period is empty", hint="e.g. --period 2024Q2 or 2024Q1,2024Q2")
    folder = settings.cache_dir / "market"
    cache = PriceCache(folder)
    if not offline:
        set_yfinance_cache(folder / "yfinance")
    results: list[MarketSummary] = []
    failures: list[FinragError] = []
    with _store_connection(settings, skip=calendar_quarters) as conn:
        for ticker in tickers:
            for text in texts:
                company, chosen = resolve_period(conn, ticker, text)
                try:
                    results.append(
                        market_summary(
                            ticker, company, chosen, cache, offline=offline, timeout=timeout
                        )
                    )
                except FinragError as exc:
                    if len(tickers) * len(texts) == 1:
                        raise
                    failures.append(exc)
                    warn(f"{ticker.upper()} {chosen.label}: {exc.message}")
    if not results:
        raise failures[0]
    if questions is not None:
        _write_questions(questions, results, as_json=as_json)
    elif as_json:
        print_json(results[0].as_dict() if len(results) == 1 else [r.as_dict() for r in results])
    else:
        for i, summary in enumerate(results):
            if i:
                out.print()
            _print_summary(summary)
    if failures:
        raise typer.Exit(ExitCode.PARTIAL)


@contextlib.contextmanager
def _store_connection(settings: Settings, *, skip: bool) -> Iterator[object | None]:
    """A connection to the store for the fiscal calendars, or None: --calendar, no store
    made yet (an embedded home never initialised is not created for this), or none
    reachable (a warning; calendar quarters then)."""
    if skip or (
        settings.database_url is None and not EmbeddedServer(settings.home).status().initialized
    ):
        yield None
        return
    try:
        store = open_store(settings)
    except DatabaseError as exc:
        warn(f"the store is not reachable ({exc.message}): calendar quarters")
        yield None
        return
    with store, store.connect() as conn:
        yield conn


def _print_summary(s: MarketSummary) -> None:
    p: MarketPeriod = s.period
    who = f"{s.ticker} ({s.company})" if s.company else s.ticker
    out.print(Text(f"{who} · {p.label} · {p.start} to {p.end}", style="bold"))
    out.print(f"  period         {p.how}")
    out.print(
        f"  price change   {s.change_pct:+.2f}%  "
        f"(close {s.first.close:.2f} on {s.first.day} → {s.last.close:.2f} on {s.last.day})"
    )
    vol = "n/a (under 3 trading days)" if s.volatility_pct is None else f"{s.volatility_pct:.1f}%"
    out.print(f"  volatility     {vol} (annualised std of daily log returns)")
    out.print(f"  avg volume     {s.average_volume:,.0f} shares a day")
    out.print(f"  high / low     {s.high.high:.2f} ({s.high.day}) / {s.low.low:.2f} ({s.low.day})")
    out.print(f"  trading days   {s.trading_days}")
    where = "from the cache" if s.from_cache else "downloaded now, cached"
    out.print(f"  source         {s.source}, {where} (fetched {s.fetched_at}; {s.cache_file})")


def _write_questions(path: Path, results: list[MarketSummary], *, as_json: bool) -> None:
    lines = [performance_question(s) for s in results]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")
    err.print(
        f"wrote {len(lines)} price-based question(s) to {path} (rule: {RULE})", highlight=False
    )
    if as_json:
        print_json(lines)
        return
    for line in lines:
        change = line["market"]["price_change_pct"]
        out.print(f"{line['id']}\t{line['answer']}\t{line['question']} ({change:+.2f}%)")
