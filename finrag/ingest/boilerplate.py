"""Text that only adds noise to retrieval: tables of contents, running headers and
footers, bare page numbers, "Table of Contents" links. Removed and counted."""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

from finrag.tables import parse_markdown_table

if TYPE_CHECKING:
    from finrag.ingest.blocks import Block

_PAGE_NUMBER = re.compile(
    r"^(page\s+)?[-–—]?\s*(\d{1,4}|[ivxlc]{1,6})\s*[-–—]?$|^page \d+ of \d+$", re.I
)
_TOC_LINK = re.compile(r"^\[?\s*(table of contents|index)\s*\]?(\(#[^)]*\))?$", re.I)
_TOC_ENTRY = re.compile(r"^(part\s+[iv]+|item\s+\d{1,2}[a-c]?)\b", re.I)
_TOC_TEXT_LINE = re.compile(r"^(item\s+\d{1,2}[a-c]?\.?|part\s+[iv]+).{0,150}?\s\d{1,3}$", re.I)
_UNITS_LINE = re.compile(r"\b(millions|thousands|billions)\b", re.I)
_REPEAT_SHARE = 0.3  # a line on this share of pages (and at least 3) is a running header
_REPEAT_MIN_PAGES = 3
_REPEAT_MAX_CHARS = 120


_EDGE_NUMBER = re.compile(r"^\d{1,4}\b|\b\d{1,4}$")


def _key(line: str) -> str:
    """Lines that differ only in a page number at either end share a key; numbers
    elsewhere are kept, so real sentences that differ in their figures never merge."""
    return _EDGE_NUMBER.sub("#", re.sub(r"\s+", " ", line.strip().lower()))


def remove_boilerplate(blocks: list[Block], page_count: int) -> tuple[list[Block], Counter]:
    dropped: Counter = Counter()
    pages_with: dict[str, set[int]] = {}
    for block in blocks:
        if block.kind == "table":
            continue
        for line in block.text.splitlines():
            if len(line.strip()) <= _REPEAT_MAX_CHARS:
                pages_with.setdefault(_key(line), set()).add(block.page)
    threshold = max(_REPEAT_MIN_PAGES, _REPEAT_SHARE * page_count)
    repeated = {
        k
        for k, pages in pages_with.items()
        if len(pages) >= threshold and not _UNITS_LINE.search(k)
    }

    kept: list[Block] = []
    for block in blocks:
        if block.kind == "table":
            if _is_toc_table(block.text):
                dropped["toc tables"] += 1
                continue
            kept.append(block)
            continue
        lines = []
        for line in block.text.splitlines():
            stripped = line.strip()
            if _PAGE_NUMBER.match(stripped):
                dropped["page numbers"] += 1
            elif _TOC_LINK.match(stripped):
                dropped["table-of-contents links"] += 1
            elif _key(stripped) in repeated:
                dropped["running headers/footers"] += 1
            elif _TOC_TEXT_LINE.match(stripped) and block.kind == "paragraph":
                dropped["table-of-contents lines"] += 1
            else:
                lines.append(line)
        if lines:
            block.text = "\n".join(lines)
            kept.append(block)
    return kept, dropped


def _is_toc_table(text: str) -> bool:
    table = parse_markdown_table(text)
    if table is None:
        return False
    rows = [table.header, *table.rows]
    entries = sum(1 for r in rows if any(_TOC_ENTRY.match(c) for c in r if c))
    return len(rows) >= 3 and entries >= 0.5 * len(rows)
