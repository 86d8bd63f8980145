"""A parsed filing as blocks: headings (with their level), paragraphs and tables, each
with its page. What the chunker and the boilerplate filter both read."""

from __future__ import annotations

import re
from dataclasses import dataclass

from finrag.ingest.parse import ParsedDocument

_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*$")
# Longer '#' lines are text: the heading pattern's lazy title retries its tail at every
# character, which costs a long line's length squared.
_HEADING_MAX_CHARS = 500
_PART = re.compile(r"^PART\s+(I|II|III|IV)\b", re.I)
_ITEM = re.compile(r"^ITEM\s+(\d{1,2}[A-C]?)\b\.?", re.I)


@dataclass
class Block:
    kind: str  # heading | paragraph | table
    text: str
    page: int
    level: int = 0  # headings: 1 Part, 2 Item, 3+ sub-headings


def heading_level(text: str, markdown_level: int) -> int:
    if _PART.match(text):
        return 1
    if _ITEM.match(text):
        return 2
    return max(3, markdown_level)


def to_blocks(parsed: ParsedDocument) -> list[Block]:
    blocks: list[Block] = []
    for page in parsed.pages:
        for raw in re.split(r"\n\s*\n", page.markdown):
            text = raw.strip()
            if not text:
                continue
            lines = text.splitlines()
            if all(ln.lstrip().startswith("|") for ln in lines) and len(lines) >= 2:
                blocks.append(Block("table", text, page.number))
                continue
            if (
                len(lines) == 1
                and len(text) <= _HEADING_MAX_CHARS
                and (m := _MD_HEADING.match(text))
            ):
                title = re.sub(r"\s+", " ", m.group(2)).strip()
                if title:
                    blocks.append(
                        Block("heading", title, page.number, heading_level(title, len(m.group(1))))
                    )
                continue
            paragraph = " ".join(ln.strip() for ln in lines) if not _is_list(lines) else text
            if len(paragraph) < 200 and (_PART.match(paragraph) or _ITEM.match(paragraph)):
                paragraph = re.sub(r"\s+", " ", paragraph)
                blocks.append(Block("heading", paragraph, page.number, heading_level(paragraph, 0)))
            else:
                blocks.append(Block("paragraph", paragraph, page.number))
    return blocks


def _is_list(lines: list[str]) -> bool:
    return sum(bool(re.match(r"\s*([-*•●]|\d+\.)\s", ln)) for ln in lines) >= 2
