"""A hit's snippet: the stretch of its text where the question's words are densest, with
those words highlighted (on a terminal; piped, the same words, unstyled)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.text import Text

from finrag.retrieve.hybrid import text_query

SNIPPET_CHARS = 240
_MARKUP = re.compile(r"(\*\*|__|`|#+ |<br>|\|\s*-{3,}[-|\s]*)")
_SPACE = re.compile(r"\s+")
_CELLS = re.compile(r"(?:\s*\|\s*)+")  # a pipe table's cell and row breaks


def query_terms(question: str) -> list[str]:
    """The question's content words, as full-text search reads them (stop words out)."""
    query = text_query(question)
    return [w for w in [*query.words.split(), *query.exact] if w]


def _pattern(terms: Sequence[str]) -> re.Pattern[str] | None:
    """Each term as a word start, loosely stemmed: 'revenues' finds 'revenue' too."""
    stems = []
    for term in terms:
        term = term.lower()
        stems.append(re.escape(term[: max(4, len(term) - 2)] if len(term) > 5 else term))
    if not stems:
        return None
    return re.compile(
        r"\b(?:" + "|".join(sorted(set(stems), key=len, reverse=True)) + r")\w*", re.I
    )


def _clean(text: str) -> str:
    return _CELLS.sub(" | ", _SPACE.sub(" ", _MARKUP.sub(" ", text))).strip(" |")


def snippet(texts: Sequence[str], terms: Sequence[str], *, width: int = SNIPPET_CHARS) -> Text:
    """About ``width`` characters of the text (of ``texts``, the first best one) where
    the most distinct terms fall, the terms styled bold yellow; the start when none does."""
    pattern = _pattern(terms)
    best: tuple[tuple[int, int], str, int] | None = None  # ((distinct, all), text, start)
    for raw in texts:
        text = _clean(raw)
        if pattern is None:
            break
        matches = list(pattern.finditer(text))
        for m in matches:
            start = max(0, m.start() - width // 4)
            inside = [x.group().lower()[:4] for x in matches if start <= x.start() < start + width]
            score = (len(set(inside)), len(inside))
            if best is None or score > best[0]:
                best = (score, text, start)
    if best is None:
        text, start = _clean(texts[0]) if texts else "", 0
    else:
        _, text, start = best
        # Begin at a word boundary, not mid-word.
        if start:
            space = text.rfind(" ", 0, start)
            start = space + 1 if space >= 0 else start
    end = min(len(text), start + width)
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start else end
    shown = ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
    result = Text(shown)
    if pattern is not None:
        result.highlight_regex(pattern, "bold yellow")
    return result
