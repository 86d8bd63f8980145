"""The on-disk price cache: one JSON file per ticker under ``<cache_dir>/market``, holding
daily bars and the date range they were fetched for (weekends and holidays inside it have
no bar, so the range, not the bars, says what the cache can answer)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from finrag.errors import FinragError

FORMAT = "finrag-market-cache/1"
COLUMNS = ["date", "open", "high", "low", "close", "volume"]
_UNSAFE = re.compile(r"[^A-Z0-9._^=-]")


@dataclass(frozen=True)
class PriceBar:
    """One trading day: prices in the listing's currency, volume in shares."""

    day: date
    open: float
    high: float
    low: float
    close: float
    volume: int


@dataclass(frozen=True)
class CachedPrices:
    ticker: str
    source: str
    fetched_at: str
    start: date  # the range fetched, inclusive
    end: date
    bars: list[PriceBar]
    path: Path

    def covers(self, start: date, end: date) -> bool:
        return self.start <= start and end <= self.end

    def between(self, start: date, end: date) -> list[PriceBar]:
        return [b for b in self.bars if start <= b.day <= end]


class PriceCache:
    """Daily bars by ticker in ``folder`` (created on first write)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, ticker: str) -> Path:
        name = _UNSAFE.sub("_", ticker.upper())
        return self.folder / f"{name}.json"

    def load(self, ticker: str) -> CachedPrices | None:
        path = self.path(ticker)
        if not path.is_file():
            return None
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return _parse(raw, path)
        except (ValueError, KeyError, TypeError) as exc:
            raise FinragError(
                f"the market cache file {path} is not readable ({type(exc).__name__}: {exc})",
                hint=f"delete it; the next run with network fetches {ticker.upper()} again",
            ) from None

    def save(
        self,
        ticker: str,
        start: date,
        end: date,
        bars: list[PriceBar],
        *,
        source: str,
        fetched_at: str,
    ) -> CachedPrices:
        """Write the file whole (a temporary file renamed over it: never half-written)."""
        path = self.path(ticker)
        path.parent.mkdir(parents=True, exist_ok=True)
        bars = sorted({b.day: b for b in bars}.values(), key=lambda b: b.day)
        data = {
            "format": FORMAT,
            "ticker": ticker.upper(),
            "source": source,
            "fetched_at": fetched_at,
            "covers": {"start": start.isoformat(), "end": end.isoformat()},
            "columns": COLUMNS,
            "rows": [[b.day.isoformat(), b.open, b.high, b.low, b.close, b.volume] for b in bars],
        }
        temporary = path.with_suffix(".json.tmp")
        temporary.write_text(_dumps(data), encoding="utf-8")
        temporary.replace(path)
        return CachedPrices(ticker.upper(), source, fetched_at, start, end, bars, path)


def _parse(raw: dict[str, Any], path: Path) -> CachedPrices:
    if raw.get("format") != FORMAT:
        raise ValueError(f"format {raw.get('format')!r}, expected {FORMAT!r}")
    if raw["columns"] != COLUMNS:
        raise ValueError(f"columns {raw['columns']}, expected {COLUMNS}")
    bars = [
        PriceBar(date.fromisoformat(d), float(o), float(h), float(lo), float(c), int(v))
        for d, o, h, lo, c, v in raw["rows"]
    ]
    return CachedPrices(
        ticker=raw["ticker"],
        source=raw["source"],
        fetched_at=raw["fetched_at"],
        start=date.fromisoformat(raw["covers"]["start"]),
        end=date.fromisoformat(raw["covers"]["end"]),
        bars=sorted(bars, key=lambda b: b.day),
        path=path,
    )


def _dumps(data: dict[str, Any]) -> str:
    """Indented JSON with one bar a line: a cache file reads (and diffs) as a table."""
    rows = data["rows"]
    head = json.dumps({**data, "rows": []}, indent=1)[: -len("[]\n}")].rstrip()
    lines = ",\n  ".join(json.dumps(row) for row in rows)
    return f"{head}[\n  {lines}\n ]\n}}\n"
