"""Cover-page facts of an inline XBRL filing: the ``dei:`` elements that are text, not
numbers: the securities registered under Section 12(b) (title, trading symbol, exchange,
one context per class of stock), the fiscal year end, the filer category, the
registrant's name. Stored as facts without a value: ``printed`` holds the text, the
context's class-of-stock member the dimension. (Shares outstanding, a ``dei:`` number,
is an ``ix:nonFraction`` and already a fact of finrag.facts.ixbrl.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

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
from finrag.facts.periods import Period
from finrag.facts.table_facts import split_table_chunk
from finrag.tables import parse_markdown_table

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


# A printed cover's Section 12(b) table: its three column headings, as 10-K covers print
# them. A PDF's table reader often runs the first class into the headings ("Title of each
# class Common Stock, Par Value $.01 Per Share"): what follows a heading is that row's.
_TITLE_HEAD = re.compile(r"^\s*title\s+of\s+each\s+class\b", re.I)
_SYMBOL_HEAD = re.compile(r"^\s*trading\s+symbols?(?:\s*\(s\))?", re.I)
_EXCHANGE_HEAD = re.compile(r"^\s*name\s+of\s+each\s+exchange\s+on\s+which\s+registered\b", re.I)
_COVER_PAGES = 3  # the cover, and a continuation of its table


class _PrintedChunk(Protocol):
    ordinal: int
    kind: str
    page_start: int
    content: str


def printed_cover_facts(chunks: Sequence[_PrintedChunk]) -> list[Fact]:
    """The securities registered under Section 12(b), from a printed cover's table (one
    fact per field and class, the class as the dimension, as a tagged cover gives them)."""
    out: list[Fact] = []
    seen: set[str] = set()
    for chunk in chunks:
        if chunk.kind != "table" or chunk.page_start > _COVER_PAGES:
            continue
        found = split_table_chunk(chunk.content)
        table = parse_markdown_table(found.grid) if found else None
        if table is None or table.width < 3:
            continue
        heads = (_TITLE_HEAD, _SYMBOL_HEAD, _EXCHANGE_HEAD)
        if not all(h.match(c) for h, c in zip(heads, table.header, strict=False)):
            continue
        first = [h.sub("", c, count=1).strip() for h, c in zip(heads, table.header, strict=False)]
        for row in ([first] if first[0] else []) + [r[:3] for r in table.rows]:
            title, symbol, exchange = (" ".join(c.split()) for c in row)
            title = _once(title)
            if not title or title in seen:
                continue  # a cut table repeats its heading row, and so its first class
            seen.add(title)
            for concept, text in (
                ("Security12bTitle", title),
                ("TradingSymbol", _one_symbol(symbol)),
                ("SecurityExchangeName", exchange),
            ):
                if text and len(text) <= _MAX_TEXT:
                    out.append(
                        Fact(
                            value=None,
                            unit=None,
                            period=Period(),
                            source="table",
                            concept=f"dei:{concept}",
                            dimensions=(("class", title),),
                            statement=model.TEXT,
                            page=chunk.page_start,
                            chunk_ordinal=chunk.ordinal,
                            printed=text,
                        )
                    )
    return out


def _once(printed: str) -> str:
    """'Common Stock, par value $0.10 Common Stock, par value $0.10' (one class printed
    once per exchange) -> the class once."""
    words = printed.split()
    half = len(words) // 2
    return (
        " ".join(words[:half])
        if half and len(words) % 2 == 0 and words[:half] == words[half:]
        else printed
    )


def _one_symbol(printed: str) -> str:
    """'MMM MMM' (one symbol printed once per exchange) -> 'MMM'; 'VZ 24B' stays."""
    words = printed.split()
    return words[0] if len(words) > 1 and len(set(words)) == 1 else printed
