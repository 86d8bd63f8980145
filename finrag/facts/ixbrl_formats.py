"""Inline XBRL number formats: printed text -> the non-negative Decimal it stands for.

The XBRL transformation registries (versions 1 to 5, one namespace each) and the SEC's
own registry name the formats; the fact's ``sign`` and ``scale`` are applied by the
caller. Text a format does not allow raises ValueError, a format not known here
raises UnknownFormat: a number is read exactly or not at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal

from finrag.facts.numwords import parse_number_words

_XBRL_REGISTRIES = frozenset(
    {
        "http://www.xbrl.org/2008/inlineXBRL/transformation",
        "http://www.xbrl.org/inlineXBRL/transformation/2010-04-20",
        "http://www.xbrl.org/inlineXBRL/transformation/2011-07-31",
        "http://www.xbrl.org/inlineXBRL/transformation/2015-02-26",
        "http://www.xbrl.org/inlineXBRL/transformation/2020-02-12",
        "http://www.xbrl.org/inlineXBRL/transformation/2022-02-16",
    }
)
_SEC_REGISTRY = "http://www.sec.gov/inlineXBRL/transformation/2015-08-31"
_MAX_DIGITS = 40  # no reported number has more; longer text is not a number to store
_DASH = re.compile(r"[-\u058a\u05be\u2010-\u2015\ufe58\ufe63\uff0d]")
_APOSTROPHES = "'`´’′"
_INDIAN = r"(?:(?:[0-9]{1,2}[, \u00a0])?(?:[0-9]{2}[, \u00a0])*[0-9]{3}|[0-9]+)"


class UnknownFormat(Exception):
    """A format this module does not read (or that is not a number format)."""


def parse_number(text: str, format_name: str | None, namespace: str | None) -> Decimal:
    """The number ``text`` shows under format ``namespace``:``format_name`` (local
    name), or under no format (plain xs:decimal) when ``format_name`` is None."""
    text = text.strip(" \t\r\n\u00a0\u2009\u200b\u202f")
    if format_name is None:
        return _plain(text)
    if namespace in _XBRL_REGISTRIES:
        read = _XBRL_FORMATS.get(format_name)
    elif namespace == _SEC_REGISTRY:
        read = _SEC_FORMATS.get(format_name)
    elif namespace is None:
        raise UnknownFormat(f"format {format_name!r}: its prefix is not declared")
    else:
        raise UnknownFormat(f"format {format_name!r}: registry {namespace} is not supported")
    if read is None:
        raise UnknownFormat(f"format {format_name!r} is not a number format read here")
    return read(text)


def _plain(text: str) -> Decimal:
    if not re.fullmatch(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+", text):
        raise ValueError(f"{text!r} is not a plain decimal number")
    return _decimal(text)


def _grouped(separators: str, point: str) -> Callable[[str], Decimal]:
    """Digits grouped in threes by any of ``separators``, ``point`` before a fraction."""
    group = f"[{re.escape(separators)}]?" if separators else ""
    whole = rf"[0-9]{{1,3}}(?:{group}[0-9]{{3}})*" if separators else "[0-9]+"
    pattern = re.compile(rf"(?P<whole>{whole})?(?:{re.escape(point)}(?P<fraction>[0-9]+))?")

    def read(text: str) -> Decimal:
        found = pattern.fullmatch(text)
        if not text or not found:
            raise ValueError(f"{text!r} does not match")
        whole_digits = re.sub(r"[^0-9]", "", found.group("whole") or "") or "0"
        fraction = found.group("fraction")
        return _decimal(f"{whole_digits}.{fraction}" if fraction else whole_digits)

    return read


def _indian(text: str) -> Decimal:
    """1,23,45,678.90: the Indian grouping, in twos above the thousands."""
    found = re.fullmatch(rf"({_INDIAN})(?:\.([0-9]+))?", text)
    if not found:
        raise ValueError(f"{text!r} does not match")
    whole_digits = re.sub(r"[^0-9]", "", found.group(1))
    return _decimal(f"{whole_digits}.{found.group(2)}" if found.group(2) else whole_digits)


def _with_unit(whole: str) -> Callable[[str], Decimal]:
    """'5 dollars 7 cents' -> 5.07: a whole part, a unit word, one or two minor digits."""
    pattern = re.compile(rf"({whole})[^0-9,.]+([0-9]{{1,2}})[^0-9]*")

    def read(text: str) -> Decimal:
        found = pattern.fullmatch(text)
        if not found:
            raise ValueError(f"{text!r} does not match")
        whole_digits = re.sub(r"[^0-9]", "", found.group(1))
        return _decimal(f"{whole_digits}.{found.group(2).zfill(2)}")

    return read


def _dash(text: str) -> Decimal:
    if not _DASH.fullmatch(text):
        raise ValueError(f"{text!r} is not a dash")
    return Decimal(0)


def _words(text: str) -> Decimal:
    return Decimal(parse_number_words(text))


def _decimal(digits: str) -> Decimal:
    if sum(c.isdigit() for c in digits) > _MAX_DIGITS:
        raise ValueError(f"more than {_MAX_DIGITS} digits")
    return Decimal(digits)


_DOT_DECIMAL = _grouped(", \u00a0", ".")
_COMMA_DECIMAL = _grouped(". \u00a0", ",")
_UNIT_DECIMAL = _with_unit(r"[0-9]{1,3}(?:[.,]?[0-9]{3})*")
_XBRL_FORMATS: dict[str, Callable[[str], Decimal]] = {
    # registry 1 (2010)
    "numcommadot": _grouped(",", "."),
    "numspacedot": _grouped(" \u00a0", "."),
    "numdotcomma": _grouped(".", ","),
    "numspacecomma": _grouped(" \u00a0", ","),
    "numcomma": _grouped("", ","),
    "numdash": _dash,
    # registries 2 and 3
    "numdotdecimal": _DOT_DECIMAL,
    "numcommadecimal": _COMMA_DECIMAL,
    "numunitdecimal": _UNIT_DECIMAL,
    "numdotdecimalin": _indian,
    "numunitdecimalin": _with_unit(_INDIAN),
    "zerodash": _dash,
    # registries 4 and 5
    "num-dot-decimal": _DOT_DECIMAL,
    "num-comma-decimal": _COMMA_DECIMAL,
    "num-unit-decimal": _UNIT_DECIMAL,
    "num-dot-decimal-in": _indian,
    "num-unit-decimal-in": _with_unit(_INDIAN),
    "num-dot-decimal-apos": _grouped(", \u00a0" + _APOSTROPHES, "."),
    "num-comma-decimal-apos": _grouped(". \u00a0" + _APOSTROPHES, ","),
    "num-unit-decimal-apos": _with_unit(rf"[0-9]{{1,3}}(?:[.,{_APOSTROPHES}]?[0-9]{{3}})*"),
    "fixed-zero": lambda _text: Decimal(0),  # any text: "—", "no", "nil" are zero
}
_SEC_FORMATS: dict[str, Callable[[str], Decimal]] = {"numwordsen": _words}
