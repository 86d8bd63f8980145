"""Daily prices from Yahoo Finance through yfinance, bounded in time.

Without network yfinance may hang on a socket or return an empty frame; the download
runs in a daemon thread that is abandoned past ``timeout`` seconds, and every failure
(timeout, exception, no rows) becomes one ``MarketDataUnavailable``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

from finrag.errors import NothingFound
from finrag.market.cache import PriceBar

SOURCE = "Yahoo Finance (yfinance)"
DEFAULT_TIMEOUT_S = 10.0

# (ticker, first day, last day, timeout in seconds) -> the bars in that range.
Downloader = Callable[[str, date, date, float], list[PriceBar]]


class MarketDataUnavailable(NothingFound):
    """No prices for the ticker and period: not cached, and the download failed, timed
    out or came back empty. Exit 7, as for a question the store cannot answer."""


def yahoo_daily(ticker: str, start: date, end: date, timeout: float) -> list[PriceBar]:
    """Unadjusted daily bars from ``start`` to ``end`` inclusive."""
    import yfinance  # pandas and yfinance take a second to import: only when fetching

    logging.getLogger("yfinance").setLevel(logging.CRITICAL)  # failures raise instead
    frame = yfinance.Ticker(ticker).history(
        start=start.isoformat(),
        end=(end + timedelta(days=1)).isoformat(),  # yfinance's end is exclusive
        interval="1d",
        auto_adjust=False,
        actions=False,
        timeout=timeout,
        raise_errors=True,
    )
    return [
        PriceBar(
            day=stamp.date(),
            open=round(float(row["Open"]), 4),
            high=round(float(row["High"]), 4),
            low=round(float(row["Low"]), 4),
            close=round(float(row["Close"]), 4),
            volume=int(row["Volume"]),
        )
        for stamp, row in frame.iterrows()
        if row["Close"] == row["Close"]  # NaN rows: days with no trade
    ]


def set_yfinance_cache(folder: Path) -> None:
    """yfinance keeps its own small caches (time zones, cookies): in finrag's cache dir."""
    try:
        import yfinance

        folder.mkdir(parents=True, exist_ok=True)
        yfinance.set_tz_cache_location(str(folder))
    except Exception:
        logging.getLogger(__name__).debug("yfinance cache location not set", exc_info=True)


def bounded_download(
    downloader: Downloader, ticker: str, start: date, end: date, timeout: float
) -> list[PriceBar]:
    """``downloader``'s bars, or MarketDataUnavailable within about ``timeout`` seconds."""
    result: list[list[PriceBar]] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(downloader(ticker, start, end, timeout))
        except BaseException as exc:
            failure.append(exc)

    worker = threading.Thread(target=run, name=f"yfinance {ticker}", daemon=True)
    worker.start()
    worker.join(timeout)
    wanted = f"{ticker.upper()} {start.isoformat()} to {end.isoformat()}"
    if worker.is_alive():
        raise MarketDataUnavailable(
            f"no answer from {SOURCE} within {timeout:g} s for {wanted} "
            "(no network?) and nothing cached for it",
            hint=_HINT,
        )
    if failure:
        exc = failure[0]
        raise MarketDataUnavailable(
            f"{SOURCE} download failed for {wanted}: {type(exc).__name__}: {exc}",
            hint=_HINT,
        ) from exc
    if not result or not result[0]:
        raise MarketDataUnavailable(
            f"{SOURCE} returned no prices for {wanted} (no network, an unknown ticker, "
            "or no trading in that period) and nothing is cached for it",
            hint=_HINT,
        )
    return result[0]


_HINT = (
    "run it once with network to fill the cache (finrag market TICKER --period P), "
    "or copy a cache file into FINRAG_HOME/cache/market/; --timeout S waits longer"
)
