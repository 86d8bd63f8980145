"""SEC EDGAR (inline XBRL) HTML -> Markdown pages.

Generic converters leak the hidden ``ix:header`` and keep EDGAR's habit of putting
``$``, ``(``, ``)`` and ``%`` in cells of their own. Here: hidden facts dropped (but
read as declared metadata), symbol cells merged into their numbers, spanned headers
aligned with the column that holds the numbers, layout tables unwrapped, 10-K/10-Q
Items and Parts turned into headings, pages split at EDGAR's page breaks.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from finrag.errors import DocumentParseError
from finrag.ingest.parse import Page, ParsedDocument, decode_text
from finrag.tables import is_header_row, tighten

_BLOCK_TAGS = {
    "p",
    "div",
    "table",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "li",
    "ul",
    "ol",
    "center",
    "section",
    "article",
    "blockquote",
    "pre",
    "hr",
    "br",
    "body",
    "tr",
}
_BLOCK_LIST = sorted(_BLOCK_TAGS)
_SKIP_TAGS = {"script", "style", "head", "title", "ix:header", "noscript"}
_HIDDEN = re.compile(r"display\s*:\s*none", re.I)
_BREAK_AFTER = re.compile(r"page-break-after\s*:\s*always|break-after\s*:\s*page", re.I)
_BREAK_BEFORE = re.compile(r"page-break-before\s*:\s*always|break-before\s*:\s*page", re.I)
_BOLD_STYLE = re.compile(r"font-weight\s*:\s*(bold|[6-9]00)", re.I)
_PART = re.compile(r"^PART\s+(I|II|III|IV)\b\.?", re.I)
_ITEM = re.compile(r"^ITEM\s+(\d{1,2}[A-C]?)\s*[.:\-\u2014\u2013]?\s*", re.I)
_NUMERIC = re.compile(r"^[\(\-\u2014\u2013$€£¥]*\s*\d[\d,.]*\s*[\)%]*$|^[\u2014\u2013\-]$")
_WS = re.compile(r"[ \t\r\n\u00a0\u2009\u200b]+")
# Any of these tags makes a file HTML; lxml would wrap plain text in a body of its own.
_MARKUP = re.compile(
    r"<\s*(?:!doctype\s+html|html|head|body|div|p|span|table|font|br|center|pre|h[1-6]|ix:\w+)\b",
    re.I,
)
_PAGE_BREAK = object()
_LEADING_SYMBOLS = ("$", "(", "$(", "$ (", "€", "£")
_TRAILING_SYMBOLS = (")", "%", ")%", "%)")
_SYMBOLS = frozenset(_LEADING_SYMBOLS + _TRAILING_SYMBOLS)


@dataclass
class _Cell:
    text: str
    start: int
    span: int


class EdgarHtmlParser:
    name = "edgar-html"

    def parse(self, path: Path) -> ParsedDocument:
        from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

        raw = path.read_bytes()
        if not raw.strip():
            raise DocumentParseError("the file is empty")
        if not _MARKUP.search(decode_text(raw, path.suffix)):
            raise DocumentParseError(
                "no HTML markup: this is not an HTML filing",
                hint="if it is plain text, rename it to .txt",
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
            soup = BeautifulSoup(raw, "lxml")
        body = soup.body
        if body is None:
            raise DocumentParseError("no HTML body: not an HTML filing")
        declared = _dei_facts(soup)
        pages: list[list[str]] = [[]]
        for block in _blocks(body):
            if block is _PAGE_BREAK:
                if pages[-1]:
                    pages.append([])
            else:
                pages[-1].append(block)
        result = [
            Page(number=i + 1, markdown="\n\n".join(blocks))
            for i, blocks in enumerate(pages)
            if blocks
        ]
        if not result:
            raise DocumentParseError("no text found in the HTML")
        return ParsedDocument(pages=result, parser=self.name, declared=declared)


def _dei_facts(soup) -> dict[str, str]:
    """EDGAR's cover-page facts (dei:DocumentType, dei:TradingSymbol, ...)."""
    facts: dict[str, str] = {}
    for tag in soup.find_all(attrs={"name": re.compile(r"^dei:", re.I)}):
        key = tag["name"].split(":", 1)[1]
        value = _text(tag)
        if value and key not in facts:
            facts[key] = value
    return facts


def _text(tag) -> str:
    text = _WS.sub(" ", tag.get_text(" ")).strip()
    # "( 2,266 )" and "$ 5" as EDGAR's spans leave them -> "(2,266)", "$5"
    return tighten(text)


def _is_hidden(tag) -> bool:
    return bool(_HIDDEN.search(tag.get("style", "")))


def _blocks(node):
    """Yield Markdown blocks and page breaks in document order."""
    inline: list[str] = []

    def flush():
        text = _WS.sub(" ", " ".join(inline)).strip()
        inline.clear()
        return text

    for child in node.children:
        name = getattr(child, "name", None)
        if name is None:  # a string
            if type(child).__name__ in ("Comment", "Doctype", "ProcessingInstruction"):
                continue
            inline.append(str(child))
            continue
        if name in _SKIP_TAGS or _is_hidden(child):
            continue
        style = child.get("style", "")
        if name not in _BLOCK_TAGS and not child.find(_BLOCK_LIST):
            inline.append(child.get_text(" "))
            continue
        text = flush()
        if text:
            yield _paragraph(text, node)
        if _BREAK_BEFORE.search(style):
            yield _PAGE_BREAK
        if name == "table":
            yield from _table_blocks(child)
        elif name == "hr":
            pass
        elif child.find(_BLOCK_LIST):
            yield from _blocks(child)
        else:
            text = _text(child)
            if text:
                yield _paragraph(text, child)
        if _BREAK_AFTER.search(style):
            yield _PAGE_BREAK
    text = flush()
    if text:
        yield _paragraph(text, node)


def _paragraph(text: str, tag) -> str:
    if len(text) < 200:
        if _PART.match(text) and len(text) < 80:
            return f"# {text}"
        match = _ITEM.match(text)
        if match:
            return f"## Item {match.group(1).upper()}. {text[match.end() :].strip()}".rstrip()
        if len(text) < 120 and not text.endswith((".", ":", ";", ",")) and _all_bold(tag):
            return f"### {text}"
    return text


def _all_bold(tag) -> bool:
    spans = [s for s in tag.find_all(["span", "font", "b", "strong"]) if s.get_text(strip=True)]
    if tag.name in ("b", "strong") or _BOLD_STYLE.search(tag.get("style", "")):
        return True
    return bool(spans) and all(
        s.name in ("b", "strong") or _BOLD_STYLE.search(s.get("style", "")) for s in spans
    )


# ---- tables -------------------------------------------------------------------------


def _table_blocks(table):
    """A data table as one Markdown table; a layout table as the blocks inside it."""
    if table.find("table"):
        for cell in table.find_all(["td", "th"]):
            if cell.find_parent("table") is table:
                yield from _blocks(cell)
        return
    rows = _grid(table)
    if not rows:
        return
    width = max(c.start + c.span for row in rows for c in row)
    placed = _place(rows, width)
    placed = [_merge_symbols(r) for r in placed]
    keep = [j for j in range(width) if any(r[j] for r in placed)]
    placed = [[r[j] for j in keep] for r in placed]
    placed = [r for r in placed if any(r)]
    if not placed:
        return
    if len(keep) == 1 or _is_list_layout(placed):
        for row in placed:
            text = " ".join(c for c in row if c)
            yield _paragraph(text, table)
        return
    yield _markdown_table(placed)


def _grid(table) -> list[list[_Cell]]:
    rows: list[list[_Cell]] = []
    for tr in table.find_all("tr"):
        if tr.find_parent("table") is not table or _is_hidden(tr):
            continue
        col, row = 0, []
        for td in tr.find_all(["td", "th"], recursive=False):
            try:
                span = max(1, int(td.get("colspan", 1)))
            except ValueError:
                span = 1
            row.append(_Cell(_text(td), col, span))
            col += span
        if row:
            rows.append(row)
    return rows


def _place(rows: list[list[_Cell]], width: int) -> list[list[str]]:
    """Put each cell's text in one grid column; spanned cells go where the numbers are."""
    filled = [0] * width
    for row in rows:
        for c in row:
            # Symbol cells ('$', '%', ')') merge into a neighbour later: they hold no value.
            if c.span == 1 and c.text and c.text not in _SYMBOLS:
                filled[c.start] += 1
    placed = []
    for row in rows:
        out = [""] * width
        for c in row:
            if not c.text:
                continue
            cols = range(c.start, c.start + c.span)
            valued = [j for j in cols if filled[j]]
            if len(valued) > 1:
                targets = valued  # a group header ("Years ended") heads every column below it
            else:
                targets = [max(cols, key=lambda j: (filled[j], j)) if valued else c.start]
            for j in targets:
                out[j] = f"{out[j]} {c.text}".strip() if out[j] else c.text
        placed.append(out)
    return placed


def _merge_symbols(row: list[str]) -> list[str]:
    """'$' '(' join the next value; ')' '%' join the previous one."""
    row = list(row)
    for j, cell in enumerate(row):
        if cell in _LEADING_SYMBOLS:
            for k in range(j + 1, len(row)):
                if row[k]:
                    row[k] = cell.replace(" ", "") + row[k]
                    row[j] = ""
                    break
        elif cell in _TRAILING_SYMBOLS:
            for k in range(j - 1, -1, -1):
                if row[k]:
                    row[k] = row[k] + cell
                    row[j] = ""
                    break
    return row


def _is_list_layout(rows: list[list[str]]) -> bool:
    """Bulleted text laid out as a two-column table: '•' | 'text'."""
    return all(len([c for c in r if c]) <= 2 and (r[0] in ("•", "●", "◦", "-", "")) for r in rows)


def _markdown_table(rows: list[list[str]]) -> str:
    first_data = next(
        (
            i
            for i, r in enumerate(rows)
            if any(_NUMERIC.match(c) for c in r[1:] if c) and not is_header_row(r)
        ),
        0,
    )
    header_rows, body = rows[:first_data], rows[first_data:]
    width = len(rows[0])
    if header_rows:
        header = [" ".join(r[j] for r in header_rows if r[j]).strip() for j in range(width)]
    else:
        header, body = body[0], body[1:]
    lines = [_md_row(header), "|" + "---|" * width]
    lines += [_md_row(r) for r in body]
    return "\n".join(lines)


def _md_row(cells: list[str]) -> str:
    return "|" + "|".join(c.replace("|", "\\|") for c in cells) + "|"
