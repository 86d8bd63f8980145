"""How a document and a page are named in every ``--json`` and on the command line.

One shape everywhere (ask and chat citations, search hits, facts, KPI inputs, docs):
``document`` is the file's name (``BESTBUY_2024Q2_10Q.pdf``, what ``docs list`` shows),
``path`` the file as ingested, ``document_id`` the store's id. A page of it is cited as
``NAME#page=12`` (the ``ref``: the PDF open-parameters form, which viewers and browsers
understand after a path), and ``finrag open`` takes that back, or ``NAME:p12``,
``NAME p.12`` (as the Sources list prints it), a path, or a document id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any


def document_name(path: str) -> str:
    """'/filings/BESTBUY_2024Q2_10Q.pdf' -> 'BESTBUY_2024Q2_10Q.pdf'."""
    return PurePath(path).name


def document_fields(path: str, document_id: int | None = None) -> dict[str, Any]:
    """The three keys that name a document in JSON."""
    return {"document": document_name(path), "document_id": document_id, "path": path}


def page_ref(path: str, page: int | None) -> str:
    """The canonical citation string: 'BESTBUY_2024Q2_10Q.pdf#page=12' (the name alone
    when the page is unknown)."""
    name = document_name(path)
    return f"{name}#page={page}" if page is not None else name


@dataclass(frozen=True)
class PageRef:
    document: str  # an id, a path, a file name or its stem, as given
    page: int | None


_FORMS = (
    re.compile(r"^(?P<doc>.+?)#page=(?P<page>\d+)$"),  # NAME#page=12 (the ref)
    re.compile(r"^(?P<doc>.+?):p?(?P<page>\d+)$"),  # NAME:p12, NAME:12
    re.compile(r"^(?P<doc>.+?)\s+p\.?\s*(?P<page>\d+)(?:[-–]\d+)?$"),  # NAME p.12 (Sources)
)


def parse_ref(text: str) -> PageRef:
    """A citation or a document as typed: 'X.pdf#page=12', 'X:p12', 'X p.12-13', 'X', '3'."""
    text = re.sub(r"^\[\d+\]\s*", "", text.strip())  # a Sources line pasted with its marker
    for form in _FORMS:
        match = form.match(text)
        if match:
            return PageRef(match.group("doc").strip(), int(match.group("page")))
    return PageRef(text, None)
