"""A period asked for ('2024Q2', 'FY2024', 'Q2 2023') as the dates it spans: the company's
fiscal quarter when the store holds its filings, a calendar quarter otherwise."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

import psycopg

from finrag.errors import UsageError
from finrag.facts.periods import FiscalCalendar

_PERIOD = re.compile(
    r"(?:FY\s*)?(?P<y1>\d{4})\s*-?\s*Q(?P<q1>[1-4])"  # 2024Q2, FY2024Q2, 2024-Q2
    r"|Q(?P<q2>[1-4])\s*(?:FY\s*)?(?P<y2>\d{4})"  # Q2 2024, Q2 FY2024
    r"|FY\s*(?P<y3>\d{4})",  # FY2024: the whole year
    re.I,
)
_WEEK_QUARTER = timedelta(weeks=13)


@dataclass(frozen=True)
class MarketPeriod:
    """The dates a fiscal or calendar period spans, and how they were found."""

    year: int
    quarter: int | None  # None: the whole year
    start: date
    end: date
    basis: str  # "fiscal" or "calendar"
    how: str  # where the dates come from, in words

    @property
    def label(self) -> str:
        """'Q2 FY2024' (fiscal), 'Q2 2023' (calendar), 'FY2024' or '2023'."""
        year = f"FY{self.year}" if self.basis == "fiscal" else str(self.year)
        return f"Q{self.quarter} {year}" if self.quarter else year

    @property
    def key(self) -> str:
        """'2024Q2' or 'FY2024': the form --period takes."""
        return f"{self.year}Q{self.quarter}" if self.quarter else f"FY{self.year}"

    def as_dict(self) -> dict[str, object]:
        return {
            "label": self.label,
            "year": self.year,
            "quarter": self.quarter,
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "basis": self.basis,
            "how": self.how,
        }


def parse_period(text: str) -> tuple[int, int | None]:
    """'2024Q2', 'FY2024Q2', 'Q2 2024' -> (2024, 2); 'FY2024' -> (2024, None)."""
    found = _PERIOD.fullmatch(text.strip())
    if not found:
        raise UsageError(
            f"--period {text!r} is not a quarter or a fiscal year",
            hint="e.g. 2023Q2, Q2 FY2024 or FY2023",
        )
    year = found["y1"] or found["y2"] or found["y3"]
    quarter = found["q1"] or found["q2"]
    return int(year), int(quarter) if quarter else None


def calendar_period(year: int, quarter: int | None, why: str) -> MarketPeriod:
    """January-March is Q1; a year is January to December."""
    first, last = (1, 12) if quarter is None else (3 * quarter - 2, 3 * quarter)
    return MarketPeriod(
        year, quarter, date(year, first, 1), _month_end(year, last), "calendar", why
    )


def fiscal_period(year: int, quarter: int | None, fiscal: FiscalCalendar) -> MarketPeriod:
    """The period by whole months of the company's fiscal calendar (fiscal year named for
    the calendar year it ends in, as FiscalCalendar does)."""
    year_end = year * 12 + fiscal.year_end_month - 1  # months since year 0, 0-based
    first = year_end - 11 + (3 * (quarter - 1) if quarter else 0)
    last = first + (2 if quarter else 11)
    start = date(first // 12, first % 12 + 1, 1)
    end = _month_end(last // 12, last % 12 + 1)
    month = calendar.month_name[fiscal.year_end_month]
    how = f"fiscal year ending in {month} (from the store's filings), by whole months"
    return MarketPeriod(year, quarter, start, end, "fiscal", how)


def from_filing_end(year: int, quarter: int | None, end: date, source: str) -> MarketPeriod:
    """The period that closes on a filing's own period end: 13 weeks (or 52) back for a
    52/53-week calendar (an end that is not a month's last day), whole months otherwise."""
    if end == _month_end(end.year, end.month):
        months = 3 if quarter else 12
        first = end.year * 12 + end.month - months  # 0-based month index of the first
        start = date(first // 12, first % 12 + 1, 1)
    else:
        start = end - (_WEEK_QUARTER if quarter else timedelta(weeks=52)) + timedelta(days=1)
    how = f"fiscal period ending {end.isoformat()} ({source})"
    return MarketPeriod(year, quarter, start, end, "fiscal", how)


def resolve_period(
    conn: psycopg.Connection | None, ticker: str, text: str | None
) -> tuple[str | None, MarketPeriod]:
    """(the company's name in the store or None, the period's dates). ``text`` None: the
    quarter of the company's latest filing, or the last whole calendar quarter."""
    company = _company(conn, ticker) if conn is not None else None
    if company is None:
        why = (
            "calendar quarter: no store consulted (--calendar, or no store yet)"
            if conn is None
            else f"calendar quarter: {ticker.upper()}'s fiscal calendar is not in the store"
        )
        year, quarter = parse_period(text) if text else _last_calendar_quarter(date.today())
        return None, calendar_period(year, quarter, why)
    company_id, name = company
    filings = conn.execute(  # type: ignore[union-attr]
        "SELECT fiscal_year, fiscal_quarter, period_end, form_type, path FROM documents "
        "WHERE company_id = %s AND period_end IS NOT NULL ORDER BY period_end DESC",
        (company_id,),
    ).fetchall()
    if not filings:
        year, quarter = parse_period(text) if text else _last_calendar_quarter(date.today())
        why = f"calendar quarter: {name} has no filing with a period end in the store"
        return name, calendar_period(year, quarter, why)
    latest = filings[0]
    if text:
        year, quarter = parse_period(text)
    else:
        year, quarter = latest[0], latest[1]
    for fy, fq, end, form, path in filings:
        is_year = fq is None and str(form or "").upper().startswith("10-K")
        if fy == year and (fq == quarter or (quarter is None and is_year)):
            return name, from_filing_end(year, quarter, end, path.rsplit("/", 1)[-1])
    fiscal = FiscalCalendar.from_document(latest[2], latest[1])
    anchor = _same_year_quarter(filings, year, quarter)
    if anchor is not None:  # a 52/53-week year: 13-week steps from a quarter it states
        fq, end, path = anchor
        moved = end + _WEEK_QUARTER * (quarter - fq)  # type: ignore[operator]
        period = from_filing_end(year, quarter, moved, f"13-week steps from {path}")
        return name, period
    return name, fiscal_period(year, quarter, fiscal)


def _company(conn: psycopg.Connection, ticker: str) -> tuple[int, str] | None:
    row = conn.execute(
        "SELECT id, name FROM companies WHERE lower(ticker) = lower(%s) "
        "OR lower(%s) = ANY(aliases) ORDER BY id LIMIT 1",
        (ticker, ticker),
    ).fetchone()
    return (row[0], row[1]) if row else None


def _same_year_quarter(filings, year: int, quarter: int | None):
    """A quarterly filing of the same fiscal year with a 52/53-week period end."""
    if quarter is None:
        return None
    for fy, fq, end, _form, path in filings:
        if fy == year and fq and end != _month_end(end.year, end.month):
            return fq, end, path.rsplit("/", 1)[-1]
    return None


def _last_calendar_quarter(today: date) -> tuple[int, int]:
    quarter = (today.month - 1) // 3  # the one before the current quarter
    return (today.year, quarter) if quarter else (today.year - 1, 4)


def _month_end(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])
