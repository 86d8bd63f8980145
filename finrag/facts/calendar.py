"""A company's fiscal calendar, learned from one filing's own words.

Inline XBRL declares it (dei:CurrentFiscalYearEndDate, DocumentPeriodEndDate,
DocumentFiscalPeriodFocus, DocumentFiscalYearFocus); a PDF says it on its cover ("for
the quarterly period ended July 29, 2023"), in its statements' column headers ("Six
Months Ended July 29, 2023": the second quarter) and in its prose ("the second quarter
of fiscal 2024": how the company names the year). Companies differ in that last point
(Best Buy's fiscal 2024 and a retailer's "fiscal 2023" both ended February 3, 2024), so
it is read first. Where the filing does not say, the general convention names a fiscal
year for the calendar year it ends in (Apple's fiscal 2024 ended September 28, 2024;
P&G's fiscal 2025 ends June 30, 2025), recorded as such; a year ending in January or
February is left ambiguous and places nothing, since it lies almost wholly in the
calendar year before and companies name it both ways. Words that contradict the
convention, or each other, flag the calendar rather than pick a side.
"""

from __future__ import annotations

import calendar as _cal
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from finrag.facts.periods import BY_CONVENTION, SPAN_WORDS, FiscalCalendar, month_number

_DATE_TEXT = r"([A-Z][a-z]{2,8}\.?\s+\d{1,2}\s*,\s*\d{4})"
_SPAN = re.compile(
    r"\b(three|six|nine|twelve|thirteen|twenty[\s-]six|thirty[\s-]nine|fifty[\s-]two|"
    r"fifty[\s-]three|\d{1,2})[\s-]+(months?|weeks?)\s+ended:?\s+" + _DATE_TEXT,
    re.I,
)
_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4}
_QUARTER_OF_FISCAL = re.compile(
    r"\b(first|second|third|fourth)\s+quarter\s+of\s+fiscal\s+(?:year\s+)?((?:19|20)\d\d)\b", re.I
)
_Q_FY = re.compile(r"\bQ([1-4])\s*(?:FY|fiscal\s+)'?(\d{2}|(?:19|20)\d{2})\b", re.I)
# A filing naming a year where it defines it: "the fiscal year ended September 28, 2024
# (the “2024 Form 10-K”)", "fiscal year ended February 1, 2025 (“fiscal 2025”)".
_DEFINED_YEAR = re.compile(
    r"\bfiscal\s+year\s+ended:?\s+" + _DATE_TEXT + r"\s*\(\s*(?:the\s+)?[“\"']?\s*"
    r"(?:fiscal\s+(?:year\s+)?|FY\s*)?((?:19|20)\d\d)\b",
    re.I,
)
# A 10-Q naming its own quarter in its page footers: "Apple Inc. | Q3 2025 Form 10-Q".
_OWN_QUARTER = re.compile(r"\bQ([1-4])\s+(?:FY\s*)?((?:19|20)\d\d)\s+Form\s+10-Q\b", re.I)
_OWN_ANNUAL = re.compile(r"\b((?:19|20)\d\d)\s+Form\s+10-K\b", re.I)
_FISCAL_YEAR = re.compile(r"\bfiscal\s+(?:year\s+)?((?:19|20)\d\d)\b(?!\s*(?:and|to|-))", re.I)
_NAME = r"\bfiscal\s+(?:year\s+)?(?P<year>(?:19|20)\d\d)\b"
_DAY = r"(?P<day>[A-Z][a-z]{2,8}\.?\s+\d{1,2}\s*,\s*\d{4})"
# A fiscal year's name beside a day inside it, in one phrase: "fiscal 2024 ended June 30,
# 2024", "the end of the second quarter of fiscal 2024 on July 29, 2023", "fiscal 2025
# ... refer to the fiscal year ending January 31, 2025", "February 2, 2018, the last
# trading day of fiscal 2018", "the 53 weeks ended February 3, 2024 (“fiscal 2023”)".
_DATED = tuple(
    re.compile(pattern, re.I)
    for pattern in (
        _NAME + r",?\s+(?:which\s+|that\s+)?(?:ended|ends|ending|closed)\s+(?:on\s+)?" + _DAY,
        r"\b(?:first|second|third|fourth)\s+quarter\s+of\s+"
        + _NAME
        + r",?\s+(?:which\s+|that\s+)?(?:(?:ended|ends|ending)\s+)?(?:on\s+)?"
        + _DAY,
        _NAME + r"[^.;]{0,40}?\brefers?\s+to\s+(?:the\s+|our\s+)?fiscal\s+year\s+"
        r"(?:ended|ending)\s+" + _DAY,
        _DAY + r",?\s+(?:the\s+)?(?:last|final|first)\s+(?:trading\s+|business\s+)?"
        r"day\s+of\s+(?:our\s+)?" + _NAME,
        r"\b(?:year|weeks|quarter|period)\s+ended:?\s+"
        + _DAY
        + r"\s*\(\s*(?:the\s+)?[“\"']?\s*"
        + _NAME,
    )
)


@dataclass(frozen=True)
class Placement:
    """A filing's calendar and its own period on it."""

    calendar: FiscalCalendar
    period_end: date | None = None
    fiscal_year: int | None = None
    fiscal_quarter: int | None = None  # 4 for a 10-K

    @property
    def placed(self) -> bool:
        return self.calendar.placeable and self.fiscal_year is not None


def from_dei(values: Mapping[str, str], period_end: date | None = None) -> Placement:
    """The calendar an inline XBRL filing declares (``values``: dei local name -> text;
    ``period_end``: the end of the dei facts' own context, when known)."""
    end = period_end or parse_date(values.get("DocumentPeriodEndDate", ""))
    focus = values.get("DocumentFiscalPeriodFocus", "").strip().upper()
    quarter = int(focus[1]) if re.fullmatch(r"Q[1-4]", focus) else None
    if focus == "FY" or (quarter is None and "10-K" in values.get("DocumentType", "").upper()):
        quarter = 4
    declared = month_day(values.get("CurrentFiscalYearEndDate", ""))
    evidence = []
    if declared:
        evidence.append(f"CurrentFiscalYearEndDate {values['CurrentFiscalYearEndDate']}")
    if end:
        evidence.append(f"period ended {end.isoformat()} ({focus or 'no period focus'})")
    month = _normalized_month(*declared) if declared else None
    if end and quarter:
        from_end = FiscalCalendar.from_document(end, quarter).year_end_month
        if month is not None and month != from_end:
            return Placement(
                FiscalCalendar(
                    month,
                    source="dei",
                    ambiguous=f"the declared fiscal year end "
                    f"({values['CurrentFiscalYearEndDate']}) and the period ended "
                    f"{end.isoformat()} as {focus} disagree",
                    evidence="; ".join(evidence),
                ),
                end,
            )
        month = from_end
    if month is None:
        reason = "the filing declares neither its fiscal year end nor its period"
        return Placement(FiscalCalendar(source="dei", ambiguous=reason), end)
    weeks = _weeks(declared, end)
    day = declared[1] if declared else None
    base = FiscalCalendar(month)
    year_text = values.get("DocumentFiscalYearFocus", "").strip()
    if end is None or not re.fullmatch(r"(?:19|20)\d\d", year_text):
        problem = _SILENT if _convention(month) is None else None
        if not problem:
            evidence.append(_CONVENTION_SAID)
        cal = FiscalCalendar(month, 0, day, weeks, "dei", problem, "; ".join(evidence))
        return Placement(cal, end, cal.fiscal_year(end) if end and not problem else None, quarter)
    focus_year = int(year_text)
    evidence.append(f"DocumentFiscalYearFocus {focus_year}")
    # The year the period's fiscal year ends in; a 10-Q's year ends after its period.
    naming = focus_year - base.fiscal_year(end)
    if naming not in (0, -1):
        reason = (
            f"DocumentFiscalYearFocus {focus_year} names the fiscal year ending in "
            f"{base.fiscal_year(end)} neither for its end nor for its start"
        )
        return Placement(
            FiscalCalendar(month, 0, day, weeks, "dei", reason, "; ".join(evidence)), end
        )
    cal = FiscalCalendar(month, naming, day, weeks, "dei", None, "; ".join(evidence))
    return Placement(cal, end, focus_year, quarter)


def from_content(
    cover: str,
    text: str,
    *,
    form: str | None = None,
    hint_year: int | None = None,
    hint_quarter: int | None = None,
) -> Placement:
    """The calendar a filing without tags states in words: ``cover`` its first pages,
    ``text`` the whole of it (statement headers, prose). ``hint_*``: what its file name
    says, used only where the text is silent (and then the calendar says so)."""
    flat = " ".join(cover.replace("\u00a0", " ").split())
    found = re.search(
        r"for the (fiscal year|quarterly period|year|transition period) ended:?\s+" + _DATE_TEXT,
        flat,
        re.I,
    )
    if not found or (end := parse_date(found.group(2))) is None:
        reason = "the cover states no fiscal year or quarterly period end"
        return Placement(FiscalCalendar(source="cover", ambiguous=reason))
    body = " ".join(text.replace("\u00a0", " ").split())
    annual = found.group(1).lower() != "quarterly period" or (form or "").upper() == "10-K"
    evidence = [f"cover: {found.group(0)}"]
    source = "cover"
    quarter: int | None = 4 if annual else None
    if quarter is None:
        quarter, how = _quarter_from_statements(body, end)
        if quarter:
            evidence.append(how)
    if quarter is None:
        votes = Counter(_ORDINAL[m.group(1).lower()] for m in _QUARTER_OF_FISCAL.finditer(body))
        votes.update(int(m.group(1)) for m in _Q_FY.finditer(body))
        top = votes.most_common(2)
        if top and top[0][1] >= 2 and (len(top) == 1 or top[0][1] >= 2 * top[1][1]):
            quarter = top[0][0]
            evidence.append(f"prose: quarter {quarter} named {top[0][1]} times")
    if quarter is None and hint_quarter:
        quarter, source = hint_quarter, "path"
        evidence.append(f"file name: Q{hint_quarter}")
    if quarter is None:
        reason = f"a quarterly period ended {end.isoformat()}; which fiscal quarter is not said"
        cal = FiscalCalendar(source="cover", ambiguous=reason, evidence=evidence[0])
        return Placement(cal, end)
    month = FiscalCalendar.from_document(end, quarter).year_end_month
    weeks = _weeks(None, end)
    base = FiscalCalendar(month)
    naming, problem, how = _naming(body, base, end, quarter if not annual else None)
    if how:
        evidence.append(how)
    if problem == _SILENT and hint_year in (base.fiscal_year(end), base.fiscal_year(end) - 1):
        naming, problem, source = hint_year - base.fiscal_year(end), None, "path"
        evidence.append(f"file name: FY{hint_year}")
    cal = FiscalCalendar(month, naming or 0, None, weeks, source, problem, "; ".join(evidence))
    year = None if problem else cal.fiscal_year(end)
    return Placement(cal, end, year, quarter)


def _quarter_from_statements(body: str, end: date) -> tuple[int | None, str]:
    """The fiscal quarter a 10-Q's period closes, from the longest year-to-date column
    its statements print for that date ("Nine Months Ended March 31, 2025": Q3)."""
    months = set()
    for m in _SPAN.finditer(body):
        if parse_date(m.group(3)) != end:
            continue
        raw = re.sub(r"[\s-]", "", m.group(1).lower())
        n = int(raw) if raw.isdigit() else SPAN_WORDS[raw]
        months.add(round(n / 4.33) if m.group(2).lower().startswith("week") else n)
    quarterly = {n for n in months if n in (3, 6, 9)}
    if not quarterly:
        return None, ""
    longest = max(quarterly)
    return longest // 3, f"statements: {longest} months ended {end.isoformat()}"


def _naming(
    body: str, base: FiscalCalendar, end: date, quarter: int | None
) -> tuple[int | None, str | None, str]:
    """How the filing names its years: (naming, None, how it was read), or (None, why
    not, ""). What the filing states (a defined name, its own page footers, a year's name
    beside a day inside it) decides, and must agree with itself; then its prose's count of
    names, checked against the convention; then the convention alone."""
    if base.year_end_month == 12:
        return 0, None, "a December year end: the calendar year"
    stated = _stated_naming(body, base, end, quarter)
    if len(stated) > 1:
        both = " and ".join(f"'{stated[n]}' (named for its {_ENDS[n]})" for n in sorted(stated))
        return None, f"the filing names its fiscal years both ways: {both}", ""
    if stated:
        [(naming, phrase)] = stated.items()
        return naming, None, f"stated: '{phrase}': a fiscal year is named for its {_ENDS[naming]}"
    counted, how = _naming_from_prose(body, base, end, quarter)
    convention = _convention(base.year_end_month)
    if convention is None:
        return (counted, None, how) if counted is not None else (None, _SILENT, "")
    if counted is None:
        return convention, None, _CONVENTION_SAID
    if counted != convention:
        problem = (
            f"{how} would name a fiscal year for its start, against the convention that "
            "it is named for the year it ends in"
        )
        return None, problem, ""
    return counted, None, f"{how}, as the convention has it"


def _stated_naming(
    body: str, base: FiscalCalendar, end: date, quarter: int | None
) -> dict[int, str]:
    """Each naming (0 or -1) the filing states, with the first phrase that states it."""
    found: dict[int, str] = {}

    def said(year: int, day: date, phrase: str | re.Match) -> None:
        if (naming := year - base.fiscal_year(day)) not in (0, -1) or naming in found:
            return
        if isinstance(phrase, re.Match):  # to the parenthesis it opened, if any
            close = body.find(")", phrase.end(), phrase.end() + 20)
            phrase = body[
                phrase.start() : close + 1 if "(" in phrase[0] and close > 0 else phrase.end()
            ]
        found[naming] = phrase[:100]

    for m in _DEFINED_YEAR.finditer(body):
        if (day := parse_date(m.group(1))) is not None:
            said(int(m.group(2)), day, m)
    for pattern in _DATED:
        for m in pattern.finditer(body):
            if (day := parse_date(m.group("day"))) is not None:
                said(int(m.group("year")), day, m)
    if quarter:
        for m in _OWN_QUARTER.finditer(body):
            if int(m.group(1)) == quarter:
                said(int(m.group(2)), end, m.group(0))
    else:
        # An annual report names itself in its page footers ("Apple Inc. | 2024 Form 10-K"):
        # the year it names most, by a clear margin.
        own = Counter(int(m.group(1)) for m in _OWN_ANNUAL.finditer(body)).most_common(2)
        if own and own[0][1] >= 2 and (len(own) == 1 or own[0][1] >= 2 * own[1][1]):
            said(own[0][0], end, f"{own[0][0]} Form 10-K")
    return found


def _naming_from_prose(
    body: str, base: FiscalCalendar, end: date, quarter: int | None
) -> tuple[int | None, str]:
    """-1 or 0 where the prose names the period's fiscal year by a clear margin among the
    two candidates (for a 10-Q, in phrases naming its own quarter), else None."""
    ends_in = base.fiscal_year(end)
    candidates = {ends_in: 0, ends_in - 1: -1}
    if quarter:
        years = [
            int(m.group(2))
            for m in _QUARTER_OF_FISCAL.finditer(body)
            if _ORDINAL[m.group(1).lower()] == quarter
        ]
        years += [
            _full_year(m.group(2)) for m in _Q_FY.finditer(body) if int(m.group(1)) == quarter
        ]
        what = f"quarter {quarter} of fiscal"
    else:
        years = [int(m.group(1)) for m in _FISCAL_YEAR.finditer(body)]
        what = "fiscal"
    votes = Counter(y for y in years if y in candidates)
    top = votes.most_common(2)
    if not top or top[0][1] < 2 or (len(top) == 2 and top[0][1] < 2 * top[1][1]):
        return None, ""
    year = top[0][0]
    return candidates[year], f"prose: '{what} {year}' {top[0][1]} times"


_ENDS = {0: "end", -1: "start"}
_SILENT = "the filing does not say whether a fiscal year is named for its start or its end"
_CONVENTION_SAID = (
    f"{BY_CONVENTION}: the filing does not say, and a fiscal year is named for the year it ends in"
)


def _convention(month: int) -> int | None:
    """How a fiscal year ending in ``month`` is named where its filing does not say: for
    the calendar year it ends in (Apple, P&G, Oracle, Costco; a December year is the
    calendar year). A year ending in January or February (a retailer's 52/53-week year
    ending early in February counts as January) lies almost wholly in the calendar year
    before, and companies name it both ways (NVIDIA's and Walmart's fiscal 2025 ended in
    January 2025; a retailer's "fiscal 2023" ended February 3, 2024): None, not a guess."""
    return None if month in (1, 2) else 0


def _normalized_month(month: int, day: int) -> int:
    return month - 1 or 12 if day <= 7 else month


def _weeks(declared: tuple[int, int] | None, end: date | None) -> bool:
    """A 52/53-week year: its end is a weekday of the month's last week or the next
    month's first, not the month's last day."""
    if end is not None:
        return end.day != _cal.monthrange(end.year, end.month)[1]
    if declared:
        month, day = declared
        return day != _cal.monthrange(2001, month)[1] and not (month == 2 and day == 29)
    return False


def parse_date(text: str) -> date | None:
    """'September 28, 2024', 'DECEMBER 31, 2024', 'Sept. 28 , 2024'."""
    cleaned = re.sub(r"\s*,\s*", ", ", " ".join(text.replace(".", " ").split())).strip()
    found = re.fullmatch(r"([A-Za-z]+) (\d{1,2}), (\d{4})", cleaned)
    if not found:
        return None
    name = found.group(1)
    month = month_number(name) or (month_number(name[:3]) if len(name) > 3 else None)
    if month is None:
        return None
    try:
        return date(int(found.group(3)), month, int(found.group(2)))
    except ValueError:
        return None


def month_day(text: str, format_name: str = "") -> tuple[int, int] | None:
    """(month, day) of '--09-28', 'September 28', '1/25', '12-31', '28 September'."""
    text = text.strip().lower()
    if not text:
        return None
    found = re.fullmatch(r"--(\d\d)-(\d\d)", text)
    if found:
        month, day = int(found.group(1)), int(found.group(2))
    elif (name := re.search(r"[a-z]{3,}", text)) and (number := month_number(name.group(0)[:3])):
        numbers = re.findall(r"\d{1,2}", text)
        if len(numbers) != 1:
            return None
        month, day = number, int(numbers[0])
    else:
        numbers = re.findall(r"\d{1,2}", text)
        if len(numbers) != 2:
            return None
        first, second = int(numbers[0]), int(numbers[1])
        day_first = "day-month" in format_name or "daymonth" in format_name
        month, day = (second, first) if day_first else (first, second)
    try:
        date(2000, month, day)
    except ValueError:
        return None
    return month, day


def _full_year(digits: str) -> int:
    year = int(digits)
    return year if year >= 100 else 2000 + year
