"""Cover-page facts of an inline XBRL filing: the ``dei:`` elements that are text, not
numbers: the securities registered under Section 12(b) (title, trading symbol, exchange,
one context per class of stock), the fiscal year end, the filer category, the
registrant's name. Stored as facts without a value: ``printed`` holds the text, the
context's class-of-stock member the dimension. (Shares outstanding, a ``dei:`` number,
is an ``ix:nonFraction`` and already a fact of finrag.facts.ixbrl.)
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from lxml import etree

from finrag.facts import model
from finrag.facts.ixbrl import (
    _DEI,
    _NON_NUMERIC,
    _SPACES,
    _content,
    _Context,
    _contexts,
    _fiscal_calendar,
    _parse,
    _qname,
)
from finrag.facts.ixbrl_pages import PageMap
from finrag.facts.model import Fact

# The cover's text facts a question asks about; the rest (addresses, phone) are left out.
COVER_CONCEPTS = (
    "Security12bTitle",
    "TradingSymbol",
    "SecurityExchangeName",
    "CurrentFiscalYearEndDate",
    "EntityFilerCategory",
    "EntityRegistrantName",
    "EntityCentralIndexKey",
    "DocumentFiscalYearFocus",
    "DocumentFiscalPeriodFocus",
    "EntityIncorporationStateCountryCode",
    "EntityWellKnownSeasonedIssuer",
    "NoTradingSymbolFlag",
)
_MAX_TEXT = 200  # a cover field is a few words; a longer one is not a cover field


def cover_facts(html: bytes | str | Path | etree._Element) -> list[Fact]:
    """The cover-page text facts of an inline XBRL filing (none for another document)."""
    root = html if isinstance(html, etree._Element) else _parse(html)
    contexts = _contexts(root)
    calendar = _fiscal_calendar(root, contexts)
    pages = PageMap(root)
    out: list[Fact] = []
    seen: set[tuple] = set()
    for el in root.iter(_NON_NUMERIC):
        name = _qname(el, el.get("name"))
        if not name or not (name[0] or "").startswith(_DEI) or name[1] not in COVER_CONCEPTS:
            continue
        context = contexts.get(el.get("contextRef") or "")
        if not isinstance(context, _Context):
            continue
        text = _SPACES.sub(" ", _content(el)).strip()
        key = (name[1], text, context.dimensions)
        if not text or len(text) > _MAX_TEXT or key in seen:
            continue
        seen.add(key)
        fact = Fact(
            value=None,
            unit=None,
            period=calendar.resolve(context.period),
            source="ixbrl",
            concept=f"dei:{name[1]}",
            dimensions=context.dimensions,
            statement=model.TEXT,
            printed=text,
        )
        out.append(replace(fact, page=pages.page(el)))
    return out
