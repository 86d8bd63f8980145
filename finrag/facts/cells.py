"""Numbers as tables print them, and the units notes that scale them.

``parse_cell("$ (1,577)")`` is -1577; "—" is zero; "(7.2)%" is -7.2 percent points;
words, dates and empty cells are not numbers. ``Units`` reads notes such as
"(In millions, except number of shares, which are reflected in thousands, and
per-share amounts)" and says which scale applies to a row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

_DASHES = {"—", "–", "-", "−", "‒", "―"}
# A footnote mark after a number: "1,577 (a)", "1,234(2)"; a bare "(12)" is minus twelve.
_FOOTNOTE = re.compile(r"(?<=[\d%)])\s*(?:\((?:[a-z]|\d{1,2}|\*+)\)|\[\d{1,2}\]|\*+)\s*$", re.I)
_NUMBER = re.compile(
    r"""^(?P<open>\()?\s*
        (?P<minus>[-−–])?\s*
        (?P<currency>[$€£¥])?\s*
        (?P<minus2>[-−–])?\s*
        (?P<open2>\()?\s*
        (?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)\s*
        (?P<close>\))?\s*
        (?P<percent>%|percent\b)?\s*
        (?P<close2>\))?$""",
    re.X | re.I,
)
_SCALES = {
    "thousand": 3,
    "thousands": 3,
    "000s": 3,
    "000's": 3,
    "million": 6,
    "millions": 6,
    "mm": 6,
    "billion": 9,
    "billions": 9,
}
_SCALE_WORD = r"(thousands?|millions?|billions?|000'?s|mm)"
_OWN_SCALE = re.compile(r"\(\s*(?:in\s+|amounts\s+in\s+)?" + _SCALE_WORD + r"\s*\)\s*:?$", re.I)


@dataclass(frozen=True)
class CellNumber:
    value: Decimal  # as printed: 1577 for "(1,577)" before scaling is -1577
    percent: bool
    currency: str | None  # "$" when printed in the cell

    @property
    def is_integer_like(self) -> bool:
        return self.value == self.value.to_integral_value()


def parse_cell(text: str) -> CellNumber | None:
    """The number a table cell prints, or None when it holds none."""
    raw = " ".join(text.replace("\u00a0", " ").split())
    if not raw:
        return None
    if raw in _DASHES or raw in {"$ —", "$—", "$ -", "$-", "$ –", "$–"}:
        return CellNumber(Decimal(0), False, "$" if raw.startswith("$") else None)
    raw = _FOOTNOTE.sub("", raw)
    found = _NUMBER.match(raw)
    if not found:
        return None
    opened = bool(found.group("open") or found.group("open2"))
    closed = bool(found.group("close") or found.group("close2"))
    if opened != closed:
        return None
    try:
        value = Decimal(found.group("digits").replace(",", ""))
    except InvalidOperation:
        return None
    if opened or found.group("minus") or found.group("minus2"):
        value = -value
    return CellNumber(value, found.group("percent") is not None, found.group("currency"))


@dataclass(frozen=True)
class Units:
    """The scale a table's units note gives, with its exceptions."""

    scale: int = 0  # power of ten: 6 for "in millions"
    share_scale: int | None = None  # "shares in thousands"; None: same as ``scale``
    per_share_unscaled: bool = True  # "except per share amounts" (and always, in practice)
    currency: str = "USD"

    def scale_for(self, label: str, percent: bool, parents: Sequence[str] = ()) -> int:
        kind = row_kind(label, parents)
        if percent or kind in ("per_share", "ratio"):
            return 0
        own = own_scale(label, parents)
        if own is not None:
            return own
        if kind == "shares":
            return self.share_scale if self.share_scale is not None else self.scale
        return self.scale

    def unit_for(self, label: str, percent: bool, parents: Sequence[str] = ()) -> str:
        if percent:
            return "%"
        kind = row_kind(label, parents)
        if kind == "per_share":
            return f"{self.currency}/shares"
        return {"shares": "shares", "ratio": "pure"}.get(kind, self.currency)


def own_scale(label: str, parents: Sequence[str] = ()) -> int | None:
    """The scale a row or its heading states for itself, at its end: "Shares used in
    calculation (000's)" in a table "in millions". None when neither states one."""
    for text in (label, *reversed(parents)):
        found = _OWN_SCALE.search(text.replace("’", "'"))
        if found:
            return _SCALES[found.group(1).lower().replace("'", "")]
    return None


def row_kind(label: str, parents: Sequence[str] = ()) -> str:
    """What a row counts: 'per_share', 'shares', 'ratio' or 'money'. A bare "Basic" or
    "Diluted" takes its meaning from the heading above it ("Earnings per share:")."""
    if _SHARES_HEAD.search(label):
        return "shares"  # "Shares used to compute basic net income per share"
    if _PER_SHARE.search(label):
        return "per_share"
    if _SHARES_ROW.search(label):
        # "Outstanding shares — 477 and 484": the label gives the count, the cells the
        # stock's dollar amount.
        return "money" if _COUNT_IN_LABEL.search(label) else "shares"
    if _RATIO_ROW.search(label):
        return "ratio"
    for parent in reversed(parents):
        if _SHARES_HEADING.search(parent):
            return "shares"
        if _PER_SHARE.search(parent):
            return "per_share"
    return "money"


# "Basic lossper share": a PDF runs the words together.
_PER_SHARE = re.compile(
    r"(?:\b|(?<=loss)|(?<=income)|(?<=earnings))per\s+(?:common\s+|ordinary\s+|diluted\s+|"
    r"basic\s+)?share\b|\beps\b",
    re.I,
)
_SHARES_ROW = re.compile(
    r"\bshares\b|\bweighted[- ]average\b.*\b(?:outstanding|basic|diluted)\b", re.I
)
_SHARES_HEADING = re.compile(
    r"^(?:shares|weighted[- ]average|number\s+of\s+(?:common\s+)?shares)|shares\s+outstanding",
    re.I,
)
_SHARES_HEAD = re.compile(
    r"^(?:(?:weighted[- ]average|average|number\s+of)\s+)*(?:(?:common|ordinary)\s+)?shares\b",
    re.I,
)
_COUNT_IN_LABEL = re.compile(
    r"\bshares\b\s*[—–:-]\s*(?:none\b|\d)|\d[\d,.]*\s+(?:and\s+[\d,.]+\s+)?shares\b", re.I
)
_RATIO_ROW = re.compile(r"\bratio\b|\btimes\b|\bmultiple\b", re.I)


def read_units(*texts: str) -> Units | None:
    """The units note among ``texts`` (a table's title lines, its first header cell),
    or None when none states a scale."""
    for text in texts:
        lowered = " ".join(text.lower().replace("’", "'").split())
        main = re.search(
            r"(?:\bin\s+|\$\s*(?:and\s+shares\s+)?in\s+|\bamounts\s+in\s+|\(\s*|^)"
            + _SCALE_WORD
            + r"\b",
            lowered,
        )
        if not main:
            continue
        scale = _SCALES[main.group(1).replace("'", "")]
        share_scale = None
        shares = re.search(
            r"shares?[^.;)]{0,60}?\b(?:in|reflected\s+in)\s+" + _SCALE_WORD + r"\b", lowered
        )
        if shares:
            share_scale = _SCALES[shares.group(1).replace("'", "")]
        elif re.search(r"\$\s*and\s+shares\s+in\s+", lowered):
            share_scale = scale
        elif re.search(
            r"except\s+(?:for\s+)?(?:number\s+of\s+)?shares?\b(?!\s+(?:price|data|amounts?\s+per))",
            lowered,
        ):
            share_scale = 0  # "except share and per share data": shares as counted
        currency = "EUR" if "€" in lowered or "euro" in lowered else "USD"
        return Units(scale=scale, share_scale=share_scale, currency=currency)
    return None
