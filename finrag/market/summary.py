"""A period's market figures from daily bars: price change, volatility, volume, range;
and ``market_summary``, which takes the bars from the cache or fetches (bounded) and
caches them."""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from finrag.market.cache import CachedPrices, PriceBar, PriceCache
from finrag.market.fetch import (
    DEFAULT_TIMEOUT_S,
    SOURCE,
    Downloader,
    MarketDataUnavailable,
    bounded_download,
    yahoo_daily,
)
from finrag.market.periods import MarketPeriod

TRADING_DAYS_A_YEAR = 252


@dataclass(frozen=True)
class MarketSummary:
    ticker: str
    company: str | None  # the store's name for it, when the store knows the ticker
    period: MarketPeriod
    trading_days: int
    first: PriceBar
    last: PriceBar
    change_pct: float  # first close to last close
    volatility_pct: float | None  # annualised std of daily log returns; None under 3 bars
    average_volume: float
    high: PriceBar  # the bar with the period's highest high
    low: PriceBar  # the bar with the period's lowest low
    source: str
    from_cache: bool
    fetched_at: str
    cache_file: Path

    def as_dict(self) -> dict[str, Any]:
        return {
            "ticker": self.ticker,
            "company": self.company,
            "period": self.period.as_dict(),
            "trading_days": self.trading_days,
            "first": {"date": self.first.day.isoformat(), "close": self.first.close},
            "last": {"date": self.last.day.isoformat(), "close": self.last.close},
            "price_change_pct": round(self.change_pct, 4),
            "volatility_pct": None
            if self.volatility_pct is None
            else round(self.volatility_pct, 4),
            "average_volume": round(self.average_volume),
            "high": {"date": self.high.day.isoformat(), "price": self.high.high},
            "low": {"date": self.low.day.isoformat(), "price": self.low.low},
            "source": self.source,
            "from_cache": self.from_cache,
            "fetched_at": self.fetched_at,
            "cache_file": str(self.cache_file),
        }


def summarize(
    ticker: str,
    company: str | None,
    period: MarketPeriod,
    prices: CachedPrices,
    *,
    from_cache: bool,
) -> MarketSummary:
    """The figures over the bars of ``period``; at least one bar is needed."""
    bars = prices.between(period.start, period.end)
    if not bars:
        raise MarketDataUnavailable(
            f"no trading day for {ticker.upper()} in {period.label} "
            f"({period.start.isoformat()} to {period.end.isoformat()}) in {prices.path}",
            hint="a period before the listing, or a holiday-only range: try another --period",
        )
    returns = [math.log(b.close / a.close) for a, b in itertools.pairwise(bars)]
    volatility = (
        statistics.stdev(returns) * math.sqrt(TRADING_DAYS_A_YEAR) * 100
        if len(returns) >= 2
        else None
    )
    return MarketSummary(
        ticker=ticker.upper(),
        company=company,
        period=period,
        trading_days=len(bars),
        first=bars[0],
        last=bars[-1],
        change_pct=(bars[-1].close / bars[0].close - 1) * 100,
        volatility_pct=volatility,
        average_volume=statistics.fmean(b.volume for b in bars),
        high=max(bars, key=lambda b: b.high),
        low=min(bars, key=lambda b: b.low),
        source=prices.source,
        from_cache=from_cache,
        fetched_at=prices.fetched_at,
        cache_file=prices.path,
    )


def market_summary(
    ticker: str,
    company: str | None,
    period: MarketPeriod,
    cache: PriceCache,
    *,
    offline: bool = False,
    timeout: float = DEFAULT_TIMEOUT_S,
    downloader: Downloader | None = None,
    today: date | None = None,
) -> MarketSummary:
    """From the cache when it covers the period; else fetched (within ``timeout``
    seconds), merged into the cache, then summarised. ``offline``: never fetch."""
    cached = cache.load(ticker)
    if cached is not None and cached.covers(period.start, period.end):
        return summarize(ticker, company, period, cached, from_cache=True)
    wanted = f"{ticker.upper()} {period.label}"
    if offline:
        raise MarketDataUnavailable(
            f"nothing cached for {wanted} ({period.start} to {period.end}) and --offline: "
            "no download tried",
            hint=_hint(cache, ticker, cached),
        )
    today = today or date.today()
    if period.start >= today:
        raise MarketDataUnavailable(
            f"{wanted} starts on {period.start}: no trading day yet", hint="ask for a past period"
        )
    # A range that includes today is not over: fetch to yesterday; it is fetched again later.
    last = min(period.end, today - timedelta(days=1))
    start, end = period.start, last
    if cached is not None and cached.start <= end and start <= cached.end + timedelta(days=1):
        start, end = min(start, cached.start), max(end, cached.end)  # one contiguous range
    try:
        bars = bounded_download(downloader or yahoo_daily, ticker, start, end, timeout)
    except MarketDataUnavailable as exc:
        raise MarketDataUnavailable(
            f"{wanted}: {exc.message}", hint=_hint(cache, ticker, cached)
        ) from exc.__cause__
    if cached is not None and cached.start >= start and cached.end <= end:
        bars = [*cached.bars, *bars]  # the new download wins where both have a day (save)
    fetched_at = datetime.now(UTC).isoformat(timespec="seconds")
    saved = cache.save(ticker, start, end, bars, source=SOURCE, fetched_at=fetched_at)
    return summarize(ticker, company, period, saved, from_cache=False)


def _hint(cache: PriceCache, ticker: str, cached: CachedPrices | None) -> str:
    have = (
        f"the cache holds {cached.start} to {cached.end} ({cached.path})"
        if cached is not None
        else f"no cache file {cache.path(ticker)}"
    )
    return (
        f"no network and nothing cached for this period ({have}): run once with network, "
        f"or put a cache file there in the same format; --timeout S waits longer"
    )
