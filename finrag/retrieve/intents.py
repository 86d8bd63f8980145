"""Retrieval aimed at the kind of question: what a question asks for implies the kind of
section that answers it (risk factors: Item 1A; legal matters: Item 3 and the
contingencies note; what drove a line item: MD&A; liquidity, debt and covenants: MD&A
and the debt note; guidance: the outlook section; segments: the segment note and MD&A;
dividends and buybacks: the equity statement and note). Chunks carry their section's
kind (sql/006, finrag.ingest.sections).

The kinds only BOOST the fused candidates' scores, they never filter: a filing whose
sections were not classified, or a question whose answer sits elsewhere, still gets its
best chunks. And where a question names several companies or years, no one document
may fill the top-k: each gets a share of the places, the rest filled in order after.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import psycopg

from finrag.retrieve.filters import QueryFilters
from finrag.retrieve.hybrid import Hit

# A candidate in a section of an implied kind weighs this much more (fused scores).
BOOST = 1.25

_INTENTS: list[tuple[re.Pattern[str], tuple[str, ...]]] = [
    (re.compile(p, re.I), kinds)
    for p, kinds in (
        (r"\brisks?\b|\buncertaint(?:y|ies)\b|\bthreats?\b", ("risk_factors",)),
        (
            r"\blitigation\b|\blawsuits?\b|\blegal\b|\bproceedings\b|\bcontingenc(?:y|ies)\b|"
            r"\bsettlements?\b|\bsued\b|\bregulatory\s+(?:actions?|investigations?)\b",
            ("legal_proceedings",),
        ),
        (
            r"\bwhy\b|\bdr(?:o|i)ve[ns]?\b|\bdrivers?\b|\bdue\s+to\b|\bexplain\w*\b|"
            r"\battribut\w*\b|\bcontribut\w*\b|\bcaused?\b|\breasons?\b|\bone[\s-]?(?:off|time)\b",
            ("mdna",),
        ),
        (
            r"\bliquidity\b|\bcovenants?\b|\bdebt\b|\bborrow\w*\b|\bcredit\s+facilit\w*\b|"
            r"\bcapital\s+resources\b|\bcommercial\s+paper\b|\brefinanc\w*\b",
            ("debt_note", "mdna"),
        ),
        (r"\bguidance\b|\boutlook\b|\bforecast\w*\b|\bexpects?\b", ("guidance_outlook", "mdna")),
        (
            r"\bsegments?\b|\bregions?\b|\bregional\b|\bgeograph\w*\b",
            ("segment_note", "mdna"),
        ),
        (
            r"\bdividends?\b|\bbuybacks?\b|\b(?:share|stock)\s+repurchases?\b|\brepurchas\w*\b",
            ("equity_statement",),
        ),
    )
]


def intent_kinds(question: str) -> tuple[str, ...]:
    """The section kinds a question's intent implies, most specific first."""
    kinds = [kind for pattern, found in _INTENTS if pattern.search(question) for kind in found]
    return tuple(dict.fromkeys(kinds))


def aim(
    conn: psycopg.Connection,
    hits: Sequence[Hit],
    question: str,
    filters: QueryFilters,
    k: int,
) -> list[Hit]:
    """The candidates re-scored by the question's section kinds (a boost), then capped per
    document where the question names several companies or years."""
    kinds = intent_kinds(question)
    out = list(hits)
    if kinds and out:
        found = dict(
            conn.execute(
                "SELECT id, section_kind FROM chunks WHERE id = ANY(%s)",
                ([h.chunk_id for h in out],),
            ).fetchall()
        )
        for h in out:
            if found.get(h.chunk_id) in kinds:
                h.score *= BOOST
        out.sort(key=lambda h: -h.score)  # stable: ties keep the fused order
    return capped(out, filters, k)


def capped(hits: Sequence[Hit], filters: QueryFilters, k: int) -> list[Hit]:
    """At most a fair share of the first ``k`` places per document when the question
    names several companies or years; the places left are filled in order."""
    groups = max(len(filters.companies), 1) * max(len(filters.years), 1)
    if groups < 2:
        return list(hits)
    share = max(1, math.ceil(k / min(groups, k)))
    first: list[Hit] = []
    later: list[Hit] = []
    taken: dict[int, int] = {}
    for h in hits:
        if len(first) < k and taken.get(h.document_id, 0) < share:
            taken[h.document_id] = taken.get(h.document_id, 0) + 1
            first.append(h)
        else:
            later.append(h)
    room = k - len(first)
    return first + later[:room] + later[room:]
