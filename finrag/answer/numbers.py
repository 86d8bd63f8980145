"""Numbers as finance writes them: "$1,577 million", "1.577 billion", "(95)", "2.8%".

Used three ways: to check that every number in an answer comes from its sources or a
calculation, to check that cited pages hold the numbers used, and to score answers
against gold answers whose scale is often implicit ("$1577.00" meaning USD millions).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_SCALES = {
    "thousand": 1e3,
    "thousands": 1e3,
    "k": 1e3,
    "million": 1e6,
    "millions": 1e6,
    "mm": 1e6,
    "mn": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "billions": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "trillion": 1e12,
    "trillions": 1e12,
    "tn": 1e12,
}
_NUMBER = re.compile(
    r"(?P<neg>[-−–]\s*)?(?P<open>\()?\s*(?P<cur>[$€£])?\s*"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?P<close>\))?"
    r"(?:\s*(?P<pct>%|percent\b|per\s+cent\b)|\s*(?P<scale>thousands?|millions?|billions?|"
    r"trillions?|mm|mn|bn|tn|[kmb])\b)?",
    re.I,
)


@dataclass(frozen=True)
class Amount:
    number: float  # as written, with its sign ("(95)" -> -95), before the scale word
    scale: float  # 1, 1e3, 1e6, 1e9, 1e12 from a scale word
    percent: bool
    currency: bool
    text: str
    is_year: bool

    @property
    def value(self) -> float:
        return self.number * self.scale

    @classmethod
    def plain(cls, value: float) -> Amount:
        """A computed number (a calculation's result) as an amount to compare against."""
        return cls(value, 1.0, False, False, str(value), False)


def parse_amounts(text: str) -> list[Amount]:
    """Every number in ``text``; citation markers like [3] are not numbers."""
    text = re.sub(r"\[\d+(?:\s*[,;]\s*\d+)*\]", " ", text)
    amounts = []
    for m in _NUMBER.finditer(text):
        start = m.start("num")
        if start > 0 and (text[start - 1].isalpha() or text[start - 1] in "_/"):
            continue  # part of a word or a date: 'FY2018' is read as a year below, 'Q2' not
        if m.group("neg") and m.start() > 0 and text[m.start() - 1].isalnum():
            continue  # 'COVID-19', 'Item 1-2': a hyphen inside a word, not a minus
        scale_word = (m.group("scale") or "").lower()
        after = text[m.end("num") + (1 if m.group("close") else 0) :]
        glued = re.match(r"-?[A-Za-z]", after) is not None and not re.match(r"x\b", after)
        if glued and not (m.group("cur") and scale_word):
            continue  # '10-K', '3M', '4Q': names, not amounts ('$9.6bn' is one)
        raw = m.group("num")
        number = float(raw.replace(",", ""))
        negative = bool(m.group("neg")) or bool(m.group("open") and m.group("close"))
        if negative:
            number = -number
        is_year = re.fullmatch(r"(19|20)\d\d", raw) is not None and not (
            m.group("cur") or m.group("pct") or scale_word or negative
        )
        amounts.append(
            Amount(
                number=number,
                scale=_SCALES.get(scale_word, 1.0),
                percent=bool(m.group("pct")),
                currency=bool(m.group("cur")),
                text=m.group(0).strip(),
                is_year=is_year,
            )
        )
    for m in re.finditer(r"\bFY\s?'?((?:19|20)\d\d)\b", text, re.I):
        amounts.append(Amount(float(m.group(1)), 1.0, False, False, m.group(0), True))
    return amounts


def values_close(a: float, b: float, *, rel: float = 0.01) -> bool:
    if a == b:
        return True
    return abs(a - b) <= rel * max(abs(a), abs(b))


def same_quantity(a: Amount, b: Amount, *, rel: float = 0.01) -> bool:
    """Equal up to rounding, an implicit scale (1,577 vs $1.577 billion) or a percent
    written as a fraction (2.8% vs 0.028). Signs may differ: "(1,577)" in a cash-flow
    table is the 1,577 spent."""
    left = abs(a.value)
    for factor in _FACTORS:
        right = abs(b.value) * factor
        if values_close(left, right, rel=rel) or _rounds_to(left, right) or _rounds_to(right, left):
            return True
    return False


_FACTORS = (1, 1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9, 1e12, 1e-12, 100, 0.01)


def _rounds_to(precise: float, rounded: float) -> bool:
    """Is ``rounded`` what ``precise`` shows at 2 or 3 significant digits ('$1.6 billion'
    for 1,577 million)?"""
    if precise == 0 or rounded == 0:
        return False
    return any(float(f"{precise:.{digits}g}") == rounded for digits in (2, 3))


def found_in(amount: Amount, candidates: Iterable[Amount], *, rel: float = 0.01) -> bool:
    return any(same_quantity(amount, c, rel=rel) for c in candidates)


def material(amounts: Iterable[Amount]) -> list[Amount]:
    """The amounts that carry a claim: not years, not list numbering like '1.'."""
    return [a for a in amounts if not a.is_year]


def normalize(text: str) -> str:
    """Lower-case words and numbers only: Markdown tables and PDF text meet on this."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_DATE = re.compile(rf"\b{_MONTH}\.?\s+\d{{1,2}}(?:,\s*\d{{4}})?\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b")
# What an answer writes beside a figure to say its period: "three months", "12 months".
_SPAN = re.compile(r"\b\d{1,2}\s+(?:months?|weeks?)\b", re.I)


def without_dates(text: str) -> str:
    """``text`` without dates and period lengths ("September 30, 2023", "12 months"):
    periods, not amounts a check should count."""
    return _SPAN.sub(" ", _DATE.sub(" ", text))
