"""Market data for a company's fiscal quarter: daily prices through yfinance, kept in an
on-disk cache so a quarter once fetched is answered offline; and yes/no "did it perform
well" questions generated from those prices for `finrag eval answers`."""

from finrag.market.cache import PriceBar, PriceCache
from finrag.market.fetch import MarketDataUnavailable, bounded_download, yahoo_daily
from finrag.market.periods import MarketPeriod, parse_period, resolve_period
from finrag.market.questions import performance_question
from finrag.market.summary import MarketSummary, market_summary, summarize

__all__ = [
    "MarketDataUnavailable",
    "MarketPeriod",
    "MarketSummary",
    "PriceBar",
    "PriceCache",
    "bounded_download",
    "market_summary",
    "parse_period",
    "performance_question",
    "resolve_period",
    "summarize",
    "yahoo_daily",
]
