"""One numbering of sources over many answers: each answer's local [n] markers become
numbers of one list, so a synthesis or memo built from several answers keeps every
citation, and the same passage (document, page, quote) keeps one number."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from finrag.answer.citations import MARK, Citation


@dataclass(frozen=True)
class Source:
    n: int
    document: str  # the file name: 'aapl-10-k-2024-11-01.html'
    page: int | None
    quote: str
    ref: str  # what `finrag open` takes back: 'aapl-10-k-2024-11-01.html#page=33'

    @property
    def where(self) -> str:
        """'aapl-10-k-2024-11-01 · p.33': document and page, as a memo cites them."""
        stem = PurePath(self.document).stem
        return f"{stem} · p.{self.page}" if self.page is not None else stem

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "document": self.document,
            "page": self.page,
            "quote": self.quote,
            "ref": self.ref,
        }


class SourceList:
    """The sources of a whole analysis, numbered from 1 in order of first use."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, int | None, str], Source] = {}

    @property
    def sources(self) -> list[Source]:
        return list(self._by_key.values())

    def add(self, document: str, page: int | None, quote: str, ref: str = "") -> Source:
        key = (PurePath(document).name, page, " ".join(quote.split()))
        if key not in self._by_key:
            ref = ref or (f"{key[0]}#page={page}" if page is not None else key[0])
            self._by_key[key] = Source(len(self._by_key) + 1, key[0], page, quote.strip(), ref)
        return self._by_key[key]

    def cite(self, citation: Citation) -> Source:
        data = citation.as_dict()
        return self.add(data["document"], citation.page, citation.quote, data.get("ref", ""))

    def rewrite(self, text: str, local: dict[int, Source]) -> str:
        """``text`` with its [n] markers renumbered by ``local`` (an answer's n -> its
        source); a marker that names no source is dropped, as the answer's check flagged it."""

        def renumber(match: re.Match) -> str:
            numbers = [int(n) for n in re.split(r"\s*[,;]\s*", match.group(1))]
            kept = [str(local[n].n) for n in numbers if n in local]
            return f"[{', '.join(dict.fromkeys(kept))}]" if kept else ""

        return re.sub(r"\s+(?=[.,;])", "", MARK.sub(renumber, text))


def markers(sources: list[Source]) -> str:
    """'[3, 4]' for the sources given; '' for none."""
    numbers = list(dict.fromkeys(s.n for s in sources))
    return f"[{', '.join(map(str, numbers))}]" if numbers else ""


def sources_markdown(sources: list[Source]) -> str:
    """'## Sources' with one line per source: '[n] document · p.N — "quote"'."""
    if not sources:
        return ""
    lines = ["## Sources", ""]
    for s in sources:
        quote = " ".join(s.quote.split())
        quote = quote if len(quote) <= 240 else quote[:239].rstrip() + "…"
        lines.append(f"[{s.n}] {s.where} — “{quote}”  ")
    return "\n".join(lines) + "\n"
