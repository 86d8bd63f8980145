"""Tables as their own chunks: the Markdown for the LLM, a summary in words for retrieval.

A summary reads "Purchases of property, plant and equipment (PP&E): 2018 $(1,577);
2017 $(1,373)", so a question in words meets the row it asks about. It is built
from the table alone (deterministic). Long tables split by rows, header repeated.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from finrag.tables import Table, promote_header_rows, summarize_rows, to_markdown, units_note

# At most four words before the unit ("dollars in", "amounts in", "shares in"): an
# unbounded repeat backtracked through every word of a long "in in in ..." run.
_UNITS = re.compile(
    r"\(?\b(?:(?:dollars|amounts|\$|shares|in)\s+){0,4}"
    r"(millions|thousands|billions)(?:[^)\n]{0,60})\)?",
    re.I,
)


def find_units(*texts: str) -> str | None:
    """'(In millions, except per share amounts)' -> 'In millions, except per share amounts'."""
    for text in texts:
        if not text:
            continue
        if m := _UNITS.search(text):
            return m.group(0).strip(" ()")
    return None


@dataclass
class TablePart:
    content: str  # Markdown with title, units and heading path: what the LLM reads
    embed_text: str  # the summary: what is embedded and full-text indexed
    tokens: int
    rows: tuple[int, int]  # body rows [start, end) of the original table
    summary_cut: bool = False  # one row alone was longer than the model reads


def split_table(
    table: Table,
    *,
    title: str,
    units: str | None,
    context: str,
    lead: str = "",
    max_tokens: int,
    count_tokens: Callable[[Sequence[str]], list[int]],
) -> list[TablePart]:
    """Cut the body into runs of rows whose summary fits ``max_tokens``; header in each.

    ``lead`` opens the summary only (the document and the section's kind, for retrieval);
    ``context`` (the heading path) opens both the summary and the Markdown."""
    table = promote_header_rows(table)
    opening = " ".join(p for p in (lead, context, title) if p)
    row_tokens = count_tokens(
        [summarize_rows(table, [r], "", None, legend=False) for r in table.rows] or [""]
    )
    base = count_tokens([summarize_rows(table, [], opening, units)])[0]
    parts: list[TablePart] = []
    start = 0
    while start < len(table.rows) or (not parts and not table.rows):
        end, used = start, base
        while end < len(table.rows) and (end == start or used + row_tokens[end] <= max_tokens):
            used += row_tokens[end]
            end += 1
        rows = table.rows[start:end]
        summary = summarize_rows(table, rows, opening, units)
        tokens = count_tokens([summary])[0]
        while tokens > max_tokens and len(rows) > 1:  # counts of parts do not add up exactly
            end -= 1
            rows = table.rows[start:end]
            summary = summarize_rows(table, rows, opening, units)
            tokens = count_tokens([summary])[0]
        cut = tokens > max_tokens
        if cut:  # one row too long for the model: its summary keeps the words that fit
            summary = _fit(summary, max_tokens, count_tokens)
            tokens = count_tokens([summary])[0]
        head = "\n".join(p for p in (context, title, units_note(title, units)) if p)
        content = "\n\n".join(p for p in (head, to_markdown(table.header, rows)) if p)
        parts.append(TablePart(content, summary, tokens, (start, end), cut))
        start = end
        if not table.rows:
            break
    return parts


def _fit(text: str, max_tokens: int, count_tokens: Callable[[Sequence[str]], list[int]]) -> str:
    words = text.split(" ")
    low, high = 1, len(words)
    while low < high:
        mid = (low + high + 1) // 2
        if count_tokens([" ".join(words[:mid])])[0] <= max_tokens:
            low = mid
        else:
            high = mid - 1
    return " ".join(words[:low])
