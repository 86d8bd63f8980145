"""Which page finrag's EDGAR HTML parser prints each element of a filing on.

``EdgarHtmlParser`` (finrag.ingest.parse.html) splits pages while it walks the filing
into blocks: a page break counts only on an element it walks as a block, and only
after the current page got some text. An XBRL fact cites the page its number is on,
so this walks the lxml tree the same way, with that module's tag sets and regexes,
and notes the page of every piece of text it would print.
"""

from __future__ import annotations

from collections.abc import Iterable

from lxml import etree

from finrag.ingest.parse.html import (
    _BLOCK_TAGS,
    _BREAK_AFTER,
    _BREAK_BEFORE,
    _HIDDEN,
    _SKIP_TAGS,
    _WS,
)

XHTML = "http://www.w3.org/1999/xhtml"
# Table tags as lxml filters: XHTML's, and bare ones in a file without the namespace.
_TABLE = (f"{{{XHTML}}}table", "table")
_ROW = (f"{{{XHTML}}}tr", "tr")
_CELL = (f"{{{XHTML}}}td", f"{{{XHTML}}}th", "td", "th")


class PageMap:
    """Page numbers (1-based) of a filing's printed elements."""

    def __init__(self, root: etree._Element) -> None:
        self._names: dict[tuple[str, str | None], str] = {}
        self._has_block = self._elements_with_block_descendants(root)
        self._page = 1
        self._filled = False  # the current page has text: a break now starts a new one
        self._pending: list[etree._Element] = []  # inline elements awaiting their flush
        self._pending_text = False
        self._unit_page: dict[etree._Element, int] = {}
        body = next((el for el in root.iter() if self.name(el) == "body"), None)
        if body is not None:
            self._blocks(body)
        self.page_count = self._page if self._filled else self._page - 1

    def page(self, element: etree._Element) -> int | None:
        """The page that prints ``element``'s text; None when the parser drops it."""
        for el in (element, *element.iterancestors()):
            page = self._unit_page.get(el)
            if page is not None:
                return page
        return None

    def name(self, el: etree._Element) -> str:
        """The tag name BeautifulSoup's HTML parse gives ``el``: 'td', 'ix:header'."""
        tag = el.tag
        if not isinstance(tag, str):
            return ""
        key = (tag, el.prefix)
        name = self._names.get(key)
        if name is None:
            namespace, _, local = tag[1:].partition("}") if tag[0] == "{" else ("", "", tag)
            if namespace and namespace != XHTML and el.prefix:
                local = f"{el.prefix}:{local}"
            name = self._names[key] = local.lower()
        return name

    # ---- the walk: finrag.ingest.parse.html._blocks, _table_blocks and _grid ----------

    def _blocks(self, node: etree._Element) -> None:
        self._inline_text(node.text)
        for child in node:
            name = self.name(child)
            if not name:  # a comment or processing instruction: only its tail is text
                if isinstance(child, etree._Entity):
                    self._pending_text = True
                self._inline_text(child.tail)
                continue
            style = child.get("style", "")
            if name in _SKIP_TAGS or _HIDDEN.search(style):
                self._inline_text(child.tail)
                continue
            if name not in _BLOCK_TAGS and child not in self._has_block:
                self._pending.append(child)
                self._inline_text("".join(child.itertext()))
                self._inline_text(child.tail)
                continue
            self._flush()
            if _BREAK_BEFORE.search(style):
                self._break()
            if name == "table":
                self._table(child)
            elif name == "hr":
                pass
            elif child in self._has_block:
                self._blocks(child)
            else:
                self._emit([child], not _blank("".join(child.itertext())))
            if _BREAK_AFTER.search(style):
                self._break()
            self._inline_text(child.tail)
        self._flush()

    def _table(self, table: etree._Element) -> None:
        if next(table.iterdescendants(*_TABLE), None) is not None:
            # A layout table: the parser walks each of its own cells as blocks.
            for cell in self._own(table, _CELL):
                self._blocks(cell)
            return
        cells = [
            cell
            for tr in self._own(table, _ROW)
            if not _HIDDEN.search(tr.get("style", ""))
            for cell in tr
            if self.name(cell) in ("td", "th")
        ]
        self._emit(cells, any(not _blank("".join(c.itertext())) for c in cells))

    def _own(self, table: etree._Element, tags: tuple[str, ...]) -> Iterable[etree._Element]:
        """Descendants with one of ``tags`` whose nearest table is ``table``."""
        for el in table.iterdescendants(*tags):
            if next(el.iterancestors(*_TABLE), None) is table:
                yield el

    def _inline_text(self, text: str | None) -> None:
        if text and not self._pending_text and not _blank(text):
            self._pending_text = True

    def _flush(self) -> None:
        if self._pending or self._pending_text:
            self._emit(self._pending, self._pending_text)
        self._pending, self._pending_text = [], False

    def _emit(self, elements: list[etree._Element], printed: bool) -> None:
        if printed:
            self._filled = True
        for el in elements:
            self._unit_page[el] = self._page

    def _break(self) -> None:
        if self._filled:
            self._page += 1
            self._filled = False

    def _elements_with_block_descendants(self, root: etree._Element) -> set[etree._Element]:
        marked: set[etree._Element] = set()
        for el in root.iter():
            if self.name(el) in _BLOCK_TAGS:
                for ancestor in el.iterancestors():
                    if ancestor in marked:
                        break
                    marked.add(ancestor)
        return marked


def _blank(text: str) -> bool:
    return not _WS.sub(" ", text).strip()
