"""Reporting periods: from column headers as filings print them, and on the company's
fiscal calendar.

A column header names a period in pieces that tables spread over rows and spanned
cells: "Three Months Ended" over two columns, "July 29, 2023" and "July 30, 2022"
below. ``parse_period`` reads the pieces of one column joined; what it cannot pin
down it leaves unknown rather than guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, timedelta

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATE = re.compile(_MONTH + r"\s+(?P<day>\d{1,2}),?\s+(?P<year>(?:19|20)\d{2})\b", re.I)
_MONTH_YEAR = re.compile(_MONTH + r",?\s+(?P<year>(?:19|20)\d{2})\b", re.I)
_YEAR = re.compile(
    r"(?<![\d,.$])(?:fiscal\s+(?:year\s+)?|fy\s*'?)?((?:19|20)\d{2})(?![\d,.%])", re.I
)
_FY_SHORT = re.compile(r"\bfy\s*'?(\d{2})\b", re.I)
_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "twenty-six": 26,
    "thirty-nine": 39,
    "fifty-two": 52,
    "fifty-three": 53,
}
_SPAN = re.compile(
    r"\b(?P<n>\d{1,2}|" + "|".join(_NUMBER_WORDS) + r")[\s-]+(?P<unit>months?|weeks?)\b", re.I
)
_YEAR_SPAN = re.compile(r"\b(?:years?|fiscal\s+years?|twelve\s+months)\s+ended\b", re.I)
_QUARTER_SPAN = re.compile(r"\bquarters?\s+ended\b", re.I)
_INSTANT = re.compile(r"\b(?:as\s+of|at|balance\s+as\s+of)\b", re.I)
_QUARTER = re.compile(
    r"\b(?:q([1-4])|([1-4])q|(first|second|third|fourth)\s+quarter)\b(?:\s+(?:of\s+)?(?:fiscal\s+)?(?:fy\s*)?'?((?:19|20)?\d{2}))?",
    re.I,
)
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4}


# Spans said in words, as a header runs them together ("Twentysix Weeks Ended").
SPAN_WORDS = {
    "three": 3,
    "six": 6,
    "nine": 9,
    "twelve": 12,
    "thirteen": 13,
    "twentysix": 26,
    "thirtynine": 39,
    "fiftytwo": 52,
    "fiftythree": 53,
}


def month_number(name: str) -> int | None:
    """1-12 for a month's name or its abbreviation ('Sept.', 'december'), else None."""
    return _MONTHS.get(name.lower().rstrip("."))


@dataclass(frozen=True)
class Period:
    """A reporting period; any field may be unknown (None)."""

    end: date | None = None
    start: date | None = None
    months: int | None = None  # duration; None for an instant or when unknown
    instant: bool = False
    fiscal_year: int | None = None
    fiscal_quarter: int | None = None

    @property
    def known(self) -> bool:
        return self.end is not None or self.fiscal_year is not None

    def label(self) -> str:
        if self.fiscal_quarter and self.fiscal_year:
            return f"FY{self.fiscal_year} Q{self.fiscal_quarter}"
        if self.fiscal_year and not self.instant:
            return f"FY{self.fiscal_year}" + (
                f" ({self.months}m)" if self.months not in (None, 12) else ""
            )
        if self.end:
            return ("at " if self.instant else "") + self.end.isoformat()
        return "unknown"


def parse_period(header: str, *, instant_default: bool = False) -> Period:
    """The period a column header names. ``instant_default``: a bare date is a point in
    time (balance sheets) rather than the end of a duration the header does not state."""
    text = " ".join(header.split())
    months = _months(text)
    end = _date(text)
    instant = bool(_INSTANT.search(text)) or (
        months is None and end is not None and instant_default
    )
    fiscal_year = fiscal_quarter = None
    quarter = _QUARTER.search(text)
    if quarter:
        fiscal_quarter = int(
            quarter.group(1) or quarter.group(2) or _ORDINALS[quarter.group(3).lower()]
        )
        if quarter.group(4):
            fiscal_year = _full_year(quarter.group(4))
        if months is None and not instant:
            months = 3
    if end is None and fiscal_year is None:
        if _MONTH_YEAR.search(text):  # "March 2024": a month's end, its day unknown
            return Period(months=months, instant=instant)
        short = _FY_SHORT.search(text)
        years = {int(y) for y in _YEAR.findall(text)}
        if short and not years:
            years = {_full_year(short.group(1))}
        if len(years) == 1:
            fiscal_year = years.pop()
            if months is None and fiscal_quarter is None and not instant:
                # "2018", "Fiscal 2024": a whole fiscal year, or on a balance sheet its end
                instant = instant_default
                months = None if instant else 12
    if instant:
        months = None
    # No start date: a header says "Three Months Ended July 29, 2023", and the first day
    # of a 13-week quarter is not something to guess. Durations compare by end and months.
    return Period(end, None, months, instant, fiscal_year, fiscal_quarter)


# In a calendar's evidence where the filing did not say how it names its years and the
# general convention named them (see finrag.facts.calendar).
BY_CONVENTION = "named by convention"


@dataclass(frozen=True)
class FiscalCalendar:
    """Maps dates to the company's fiscal years and quarters, as the company names them.

    ``year_end_month`` is the month its fiscal year ends in, after pulling 52/53-week
    year ends that spill into the next month's first week back (Best Buy's FY2024
    ended February 3, 2024: month 1). ``naming`` is what the company adds to the
    calendar year its fiscal year ends in to name it: 0 for most (NVIDIA's FY2025 ended
    January 26, 2025), -1 for those that name a year for the calendar year it begins in
    (a retailer's "fiscal 2023" ending February 3, 2024). Only the filing says which
    (dei:DocumentFiscalYearFocus, or its own words): see finrag.facts.calendar.

    ``ambiguous`` says why the calendar cannot place a date (the year end or the naming
    is unknown): then every fiscal year and quarter is left unknown, never guessed.
    """

    year_end_month: int = 12
    naming: int = 0
    year_end_day: int | None = None  # as the filing declares it (28 for "--09-28")
    weeks: bool = False  # a 52/53-week year: it ends on a weekday, not a month's end
    source: str = "default"  # dei | cover | path | default
    ambiguous: str | None = None
    evidence: str = ""  # what it was learned from, in words

    def __post_init__(self) -> None:
        if not 1 <= self.year_end_month <= 12:
            raise ValueError(f"year_end_month must be 1-12, not {self.year_end_month}")
        if self.naming not in (-1, 0):
            raise ValueError(f"naming must be 0 or -1, not {self.naming}")

    @classmethod
    def from_document(
        cls, period_end: date | None, fiscal_quarter: int | None = None
    ) -> FiscalCalendar:
        """From a filing's own period end: a 10-K's is the fiscal year end; a 10-Q's is
        the end of quarter ``fiscal_quarter``, 3 months a quarter before it."""
        if period_end is None:
            return cls()
        month = _normalized(period_end).month
        if fiscal_quarter and fiscal_quarter < 4:
            month = (month + 3 * (4 - fiscal_quarter) - 1) % 12 + 1
        return cls(month)

    @property
    def placeable(self) -> bool:
        return self.ambiguous is None

    def fiscal_year(self, day: date) -> int:
        day = _normalized(day)
        return (day.year if day.month <= self.year_end_month else day.year + 1) + self.naming

    def fiscal_quarter(self, end: date) -> int:
        months_into_year = (_normalized(end).month - self.year_end_month) % 12
        return months_into_year // 3 or 4

    def is_quarter_end(self, day: date) -> bool:
        """Whether ``day`` closes one of the fiscal quarters (a half-year's end does too)."""
        return (_normalized(day).month - self.year_end_month) % 3 == 0

    def describe(self) -> str:
        """One line: 'year ends near the end of September (52/53-week years); a fiscal
        year is named for the year it ends in (from dei)', or '... (by convention, the
        filing does not say; from cover)'."""
        if self.ambiguous:
            return f"unknown: {self.ambiguous}"
        month = date(2000, self.year_end_month, 1).strftime("%B")
        day = f" {self.year_end_day}" if self.year_end_day and not self.weeks else ""
        when = f"near the end of {month} (52/53-week years)" if self.weeks else f"{month}{day}"
        when = when if self.weeks or day else f"in {month}"
        named = "the year it begins in" if self.naming else "the year it ends in"
        how = "by convention, the filing does not say; " if BY_CONVENTION in self.evidence else ""
        return f"year ends {when}; a fiscal year is named for {named} ({how}from {self.source})"

    def resolve(self, period: Period) -> Period:
        """``period`` with fiscal year and quarter filled in from its end date: a
        duration's quarter when it spans three months, an instant's when it falls on a
        quarter end (4 at the year end). Unplaceable: left as it is."""
        if period.end is None or self.ambiguous:
            return period
        fiscal_year = period.fiscal_year or self.fiscal_year(period.end)
        quarter = period.fiscal_quarter
        if quarter is None and (
            period.months == 3 or (period.instant and self.is_quarter_end(period.end))
        ):
            quarter = self.fiscal_quarter(period.end)
        return replace(period, fiscal_year=fiscal_year, fiscal_quarter=quarter)


def months_between(start: date, end: date) -> int:
    """Whole months a duration spans, rounding 52/53-week and 13-week periods."""
    return max(1, round((end - start).days / 30.44))


def _normalized(day: date) -> date:
    # A 52/53-week year or quarter may end up to a week into the next month.
    return day - timedelta(days=7) if day.day <= 7 else day


def _months(text: str) -> int | None:
    span = _SPAN.search(text)
    if span:
        raw = span.group("n").lower()
        n = int(raw) if raw.isdigit() else _NUMBER_WORDS[raw]
        return round(n / 4.33) if span.group("unit").lower().startswith("week") else n
    if _YEAR_SPAN.search(text):
        return 12
    if _QUARTER_SPAN.search(text):
        return 3
    return None


def _date(text: str) -> date | None:
    found = _DATE.search(text)
    if not found:
        return None
    try:
        return date(
            int(found.group("year")),
            _MONTHS[found.group("month").lower()],
            int(found.group("day")),
        )
    except ValueError:  # "February 30"
        return None


def _full_year(digits: str) -> int:
    year = int(digits)
    return year if year >= 100 else 2000 + year
