"""Facts from inline XBRL: every ``ix:nonFraction`` of an EDGAR filing as a typed Fact.

Each fact gets its context's period and dimensions, its unit's measures, its value in
base units as an exact Decimal (scale and sign applied, the ixt format undone), and
the page finrag's HTML parser prints it on. A fact that cannot be read exactly (an
unknown format, text its format does not allow, a missing context) is reported in
``IxbrlFacts.skipped`` instead of guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal
from pathlib import Path

from lxml import etree

from finrag.errors import DocumentParseError
from finrag.facts import model
from finrag.facts.calendar import from_dei, month_day
from finrag.facts.ixbrl_formats import UnknownFormat, parse_number
from finrag.facts.ixbrl_pages import PageMap
from finrag.facts.model import Fact
from finrag.facts.periods import FiscalCalendar, Period, months_between

IX = "http://www.xbrl.org/2013/inlineXBRL"
XBRLI = "http://www.xbrl.org/2003/instance"
XBRLDI = "http://xbrl.org/2006/xbrldi"
_NON_FRACTION = f"{{{IX}}}nonFraction"
_NON_NUMERIC = f"{{{IX}}}nonNumeric"
_EXCLUDE = f"{{{IX}}}exclude"
_HIDDEN_SECTION = f"{{{IX}}}hidden"
_NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"
_TABLE = "{http://www.w3.org/1999/xhtml}table"
_DEI = "http://xbrl.sec.gov/dei/"
_SEC_HIDDEN = re.compile(r"-sec-ix-hidden\s*:\s*([^;\s]+)")
_SPACES = re.compile(r"[\s\u00a0\u2009\u200b\u202f]+")
_DECIMALS = re.compile(r"-?\d{1,3}")
_MAX_SCALE = 30  # XBRL allows any integer; a filing uses -6..12, and the store has bounds


@dataclass(frozen=True)
class SkippedFact:
    """An ix:nonFraction that could not be read exactly, and why."""

    element_id: str | None
    concept: str | None
    printed: str
    reason: str


@dataclass
class IxbrlFacts:
    facts: list[Fact] = field(default_factory=list)
    element_ids: list[str | None] = field(default_factory=list)  # facts[i]'s element id
    skipped: list[SkippedFact] = field(default_factory=list)
    page_count: int = 0  # pages as EdgarHtmlParser splits the same file
    calendar: FiscalCalendar = field(default_factory=FiscalCalendar)  # from its dei facts

    def by_id(self, element_id: str) -> Fact:
        return self.facts[self.element_ids.index(element_id)]


@dataclass(frozen=True)
class _Context:
    period: Period
    dimensions: tuple[tuple[str, str], ...]


class _Unreadable(Exception):
    """One fact cannot be read; its message says why."""


def extract_ixbrl_facts(html: bytes | str | Path) -> IxbrlFacts:
    """Every ix:nonFraction fact of an inline XBRL filing: a Path, or the markup itself."""
    root = _parse(html)
    contexts = _contexts(root)
    units = _units(root)
    pages = PageMap(root)
    calendar = _fiscal_calendar(root, contexts)
    shown_by = {
        match.group(1): el
        for el in root.iter()
        if isinstance(el.tag, str) and (match := _SEC_HIDDEN.search(el.get("style") or ""))
    }
    result = IxbrlFacts(page_count=pages.page_count, calendar=calendar)
    for el in root.iter(_NON_FRACTION):
        printed = _SPACES.sub(" ", _content(el)).strip()
        element_id = el.get("id")
        try:
            fact = _fact(el, printed, contexts, units)
        except _Unreadable as problem:
            result.skipped.append(SkippedFact(element_id, el.get("name"), printed, str(problem)))
            continue
        where = el
        if element_id in shown_by and _in_hidden_section(el):
            where = shown_by[element_id]  # SEC's -sec-ix-hidden: shown by another element
        page = pages.page(where)
        in_table = any(a.tag == _TABLE for a in where.iterancestors())
        statement = model.TEXT if page is not None and not in_table else model.OTHER_TABLE
        period = calendar.resolve(fact.period)
        result.facts.append(replace(fact, period=period, page=page, statement=statement))
        result.element_ids.append(element_id)
    return result


def _parse(html: bytes | str | Path) -> etree._Element:
    if isinstance(html, Path):
        try:
            html = html.read_bytes()
        except OSError as exc:
            raise DocumentParseError(f"cannot read {html}: {exc.strerror or exc}") from exc
    if isinstance(html, str):
        # lxml refuses a str that declares its own encoding; the str is already decoded.
        html = re.sub(r"^[\s\ufeff]*<\?xml[^>]*\?>", "", html, count=1)
    # No entity expansion, DTD or network: a filing is data, never instructions to fetch.
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        return etree.fromstring(html, parser)
    except (etree.XMLSyntaxError, ValueError) as exc:
        raise DocumentParseError(
            f"not well-formed inline XBRL: {exc}",
            hint="EDGAR's inline XBRL is XHTML; a plain HTML filing has no XBRL facts",
        ) from exc


def _fact(
    el: etree._Element,
    printed: str,
    contexts: dict[str, _Context | str],
    units: dict[str, str],
) -> Fact:
    concept = el.get("name")
    if not concept:
        raise _Unreadable("no name (concept)")
    context = contexts.get(el.get("contextRef") or "")
    if context is None:
        raise _Unreadable(f"context {el.get('contextRef')!r} is not defined")
    if isinstance(context, str):
        raise _Unreadable(context)
    unit = units.get(el.get("unitRef") or "")
    if unit is None:
        raise _Unreadable(f"unit {el.get('unitRef')!r} is not defined")
    nil = el.get(_NIL) in ("true", "1")
    return Fact(
        value=None if nil else _value(el, printed),
        unit=unit,
        period=context.period,
        source="ixbrl",
        concept=concept,
        dimensions=context.dimensions,
        printed=printed,
        decimals=None if nil else _decimals(el.get("decimals")),
    )


def _value(el: etree._Element, printed: str) -> Decimal:
    format_name = _qname(el, el.get("format"))
    namespace, local = format_name if format_name else (None, None)
    try:
        number = parse_number(printed, local, namespace)
    except UnknownFormat as exc:
        raise _Unreadable(str(exc)) from exc
    except ValueError as exc:
        raise _Unreadable(f"{el.get('format') or 'no format'}: {exc}") from exc
    raw_scale = (el.get("scale") or "0").strip()
    if not re.fullmatch(r"-?\d{1,3}", raw_scale) or abs(int(raw_scale)) > _MAX_SCALE:
        raise _Unreadable(f"scale {raw_scale!r} is not an integer within ±{_MAX_SCALE}")
    # Exact: Decimal.scaleb and unary minus round to the context's 28 digits.
    sign, digits, exponent = number.as_tuple()
    assert isinstance(exponent, int)  # parse_number returns finite numbers
    exponent += int(raw_scale)
    value = Decimal((sign, digits, exponent))
    if exponent > 0:
        value = Decimal(int(value))  # 391035E+6 -> 391035000000, as written in base units
    sign_attr = el.get("sign")
    if sign_attr not in (None, "-"):
        raise _Unreadable(f"sign {sign_attr!r}: only '-' is allowed")
    return value.copy_negate() if sign_attr == "-" and value else value


def _decimals(raw: str | None) -> int | None:
    if raw is None or raw.strip() == "INF":
        return None
    if not _DECIMALS.fullmatch(raw.strip()):
        raise _Unreadable(f"decimals {raw!r} is neither an integer nor INF")
    return int(raw)


def _content(el: etree._Element) -> str:
    """The element's text without ix:exclude parts, nested facts' text included."""
    parts = [el.text or ""]
    for child in el:
        if isinstance(child.tag, str) and child.tag != _EXCLUDE:
            parts.append(_content(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _in_hidden_section(el: etree._Element) -> bool:
    return any(a.tag == _HIDDEN_SECTION for a in el.iterancestors())


def _qname(el: etree._Element, value: str | None) -> tuple[str | None, str] | None:
    """('namespace URI', 'local') of a QName attribute; the namespace None when its
    prefix is not declared."""
    if not value:
        return None
    prefix, _, local = value.strip().rpartition(":")
    return el.nsmap.get(prefix or None), local


def _local(qname: str) -> str:
    return qname.strip().rpartition(":")[2]


# ---- contexts and units ---------------------------------------------------------------


def _contexts(root: etree._Element) -> dict[str, _Context | str]:
    """Each context by id; a context that cannot be read maps to the reason."""
    contexts: dict[str, _Context | str] = {}
    for ctx in root.iter(f"{{{XBRLI}}}context"):
        try:
            contexts[ctx.get("id") or ""] = _Context(_period(ctx), _dimensions(ctx))
        except ValueError as exc:
            contexts[ctx.get("id") or ""] = f"context {ctx.get('id')!r}: {exc}"
    return contexts


def _period(ctx: etree._Element) -> Period:
    period = ctx.find(f"{{{XBRLI}}}period")
    if period is None:
        raise ValueError("no period")
    instant = period.findtext(f"{{{XBRLI}}}instant")
    if instant is not None:
        return Period(end=_date(instant), instant=True)
    start = period.findtext(f"{{{XBRLI}}}startDate")
    end = period.findtext(f"{{{XBRLI}}}endDate")
    if start is not None and end is not None:
        first, last = _date(start), _date(end)
        if last < first:
            raise ValueError(f"ends ({last}) before it starts ({first})")
        return Period(end=last, start=first, months=months_between(first, last))
    if period.find(f"{{{XBRLI}}}forever") is not None:
        return Period()
    raise ValueError("a period with neither an instant nor start and end dates")


def _date(text: str) -> date:
    # XBRL dates may carry a time ("2024-09-28T00:00:00"); the date is kept as written.
    return date.fromisoformat(text.strip()[:10])


def _dimensions(ctx: etree._Element) -> tuple[tuple[str, str], ...]:
    dims = [
        (member.get("dimension", "").strip(), (member.text or "").strip())
        for member in ctx.iter(f"{{{XBRLDI}}}explicitMember")
    ]
    dims += [
        (member.get("dimension", "").strip(), _SPACES.sub(" ", "".join(member.itertext())).strip())
        for member in ctx.iter(f"{{{XBRLDI}}}typedMember")
    ]
    return tuple(sorted(dims))


def _units(root: etree._Element) -> dict[str, str]:
    """'USD', 'shares', 'USD/shares', 'pure' by unit id."""
    units = {}
    for unit in root.iter(f"{{{XBRLI}}}unit"):
        divide = unit.find(f"{{{XBRLI}}}divide")
        if divide is not None:
            numerator = divide.find(f"{{{XBRLI}}}unitNumerator")
            denominator = divide.find(f"{{{XBRLI}}}unitDenominator")
            name = f"{_measures(numerator)}/{_measures(denominator)}"
        else:
            name = _measures(unit)
        units[unit.get("id") or ""] = name
    return units


def _measures(parent: etree._Element | None) -> str:
    if parent is None:
        return ""
    return "*".join(_local(m.text or "") for m in parent.iterchildren(f"{{{XBRLI}}}measure"))


# ---- the fiscal calendar --------------------------------------------------------------


def _fiscal_calendar(root: etree._Element, contexts: dict[str, _Context | str]) -> FiscalCalendar:
    """The calendar the filing's dei facts declare (finrag.facts.calendar.from_dei)."""
    dei: dict[str, tuple[str, etree._Element]] = {}
    for el in root.iter(_NON_NUMERIC, _NON_FRACTION):
        namespace_and_local = _qname(el, el.get("name"))
        if namespace_and_local and (namespace_and_local[0] or "").startswith(_DEI):
            dei.setdefault(namespace_and_local[1], (_SPACES.sub(" ", _content(el)).strip(), el))
    document_end = None  # the filing's own period ends where its cover facts' context does
    for name in (
        "DocumentPeriodEndDate",
        "DocumentFiscalPeriodFocus",
        "DocumentType",
        "DocumentFiscalYearFocus",
        "CurrentFiscalYearEndDate",
    ):
        context = contexts.get(dei[name][1].get("contextRef") or "") if name in dei else None
        if isinstance(context, _Context) and context.period.end:
            document_end = context.period.end
            break
    values = {name: text for name, (text, _) in dei.items()}
    if "CurrentFiscalYearEndDate" in dei:
        text, el = dei["CurrentFiscalYearEndDate"]
        found = month_day(text, _local(el.get("format") or ""))
        if found:  # as --MM-DD, whatever the filing's own format
            values["CurrentFiscalYearEndDate"] = f"--{found[0]:02d}-{found[1]:02d}"
    return from_dei(values, document_end).calendar
