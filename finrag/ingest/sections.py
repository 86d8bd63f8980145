"""What a chunk is about: its section's kind, and the short header both retrievers read.

A question about "ongoing legal battles" should meet Item 3 and the contingencies note,
not an MD&A paragraph that mentions a lawsuit in passing. So every chunk's section path
(and a table's title) is classified at ingest into one of ``SECTION_KINDS``, and the
kind's plain words go into the header in front of the embedded and full-text indexed
text, beside the company, form and fiscal period ("contextual retrieval" without a
model). finrag.retrieve.query adds the same words to a question that implies the kind.

The deepest heading that says something decides ("Item 8 > Note 12. Debt" is a debt
note); Item 1A decides for everything under it (a risk factor titled "Litigation may
harm us" is a risk factor). Headings longer than a short title, but for an Item's, are
sentences (risk factors, captions) and say nothing about the section's kind.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from finrag.ingest.metadata import DocumentMetadata

# The plain words each kind puts into a chunk's header (and a question's search text).
KIND_LABELS: dict[str, str] = {
    "income_statement": "income statement",
    "balance_sheet": "balance sheet",
    "cash_flows": "cash flows statement",
    "equity_statement": "shareholders equity statement",
    "debt_note": "debt",
    "segment_note": "segment information",
    "legal_proceedings": "legal proceedings",
    "risk_factors": "risk factors",
    "customers_concentration": "customers concentration",
    "acquisitions": "acquisitions",
    "mdna": "management discussion",
    "guidance_outlook": "outlook guidance",
    "business": "business overview",
    "other": "",
}
SECTION_KINDS = tuple(KIND_LABELS)

_TITLE_MAX_WORDS = 12
_ITEM = re.compile(r"^item\s*\d", re.I)  # an Item's title is long and still a title
# A statement's title may run on with its units: "... Equity $ and shares in millions, ...".
_UNITS_TAIL = re.compile(r"[($]|\b(?:in|amounts\s+in)\s+(?:millions|thousands|billions)\b", re.I)

_RISK_FACTORS = re.compile(r"\brisk\s+factors\b|^risks?\s+relat(?:ed|ing)\s+to\b", re.I)


def _rule(
    pattern: str, unless: str | None = None
) -> tuple[re.Pattern[str], re.Pattern[str] | None]:
    return re.compile(pattern, re.I), re.compile(unless, re.I) if unless else None


# First match wins within one heading: a statement title before the words it may hold
# ("Statements of cash flows" is no debt note for mentioning borrowings elsewhere).
_RULES: list[tuple[str, tuple[re.Pattern[str], re.Pattern[str] | None]]] = [
    (
        "cash_flows",
        _rule(
            r"\bstatements?\s+of\s+(?:consolidated\s+)?cash\s+flows?\b|\bcash\s+flows?\s+statements?\b"
        ),
    ),
    (
        "balance_sheet",
        _rule(
            r"\bbalance\s+sheets?\b|\bstatements?\s+of\s+(?:consolidated\s+)?financial\s+(?:position|condition)\b",
            unless=r"\boff[\s-]*balance\b",
        ),
    ),
    (
        "equity_statement",
        _rule(
            r"\bstatements?\s+of\s+(?:consolidated\s+)?(?:changes\s+in\s+)?(?:(?:stock|share)holders['’]?|"
            r"shareowners['’]?|shareholders['’]?)?\s*equity\b"
        ),
    ),
    (
        "income_statement",
        _rule(
            r"\bstatements?\s+of\s+(?:consolidated\s+)?(?:income|operations|earnings)\b|"
            r"\bincome\s+statements?\b"
        ),
    ),
    (
        "legal_proceedings",
        _rule(
            r"\blegal\s+(?:proceedings?|matters)\b|\blitigation\b|\bcontingenc(?:y|ies)\b|\blawsuits?\b",
            unless=r"\btax\s+contingenc|\bincome\s+tax\b|securities\s+litigation\s+reform",
        ),
    ),
    (
        "debt_note",
        _rule(
            r"\bdebt\b|\bborrowings?\b|\bindebtedness\b|\bcommercial\s+paper\b|"
            r"\bcredit\s+(?:facilit(?:y|ies)|agreements?)\b|\bsenior\s+notes\b|\bnotes\s+payable\b",
            unless=r"\bdebt\s+(?:and\s+equity\s+)?(?:securities|investments)\b",
        ),
    ),
    (
        "segment_note",
        _rule(r"\bsegments?\b|\bgeographic\s+(?:information|areas?|data|operations)\b"),
    ),
    (
        "customers_concentration",
        _rule(
            r"\bconcentrations?\b|\b(?:major|significant|principal|largest|key)\s+customers?\b|"
            r"^customers?$",
            unless=r"\bsuppl(?:y|ies|iers?)\b",  # a concentration of suppliers is no customer's
        ),
    ),
    (
        "acquisitions",
        _rule(
            r"\bacquisitions?\b|\bbusiness\s+combinations?\b|\bmergers?\b|\bdivestitures?\b",
            unless=r"\b(?:contract|customer)\s+acquisition|\bacquisition\s+costs?\b",
        ),
    ),
    ("guidance_outlook", _rule(r"\boutlook\b|\bguidance\b", unless=r"\baccounting\s+guidance\b")),
    ("mdna", _rule(r"\bmanagement['’`]?s?\s+discussion\b|\bMD\s*&\s*A\b")),
    ("business", _rule(r"^item\s*1\s*[.:\-—–]*\s*busines\s?s\b")),
]
_STATEMENT_RULES = 4  # the first four: the financial statements' titles


def classify_section(headings: Sequence[str]) -> str:
    """The kind of the section under ``headings`` (outermost first), or "other"."""
    cleaned = [" ".join(h.split()) for h in headings if h and h.strip()]
    if any(_RISK_FACTORS.search(h) for h in cleaned):
        return "risk_factors"
    for heading in reversed(cleaned):
        title = _UNITS_TAIL.split(heading, maxsplit=1)[0]
        short = len(title.split()) <= _TITLE_MAX_WORDS or _ITEM.match(heading)
        # A statement's title can run long ("3M Company and Subsidiaries Consolidated
        # Statement of Cash Flows Years ended December 31"); a topic's cannot.
        for kind, (pattern, unless) in _RULES if short else _RULES[:_STATEMENT_RULES]:
            if pattern.search(heading) and not (unless and unless.search(heading)):
                return kind
    return "other"


_LEGAL_SUFFIX = re.compile(
    r"[,\s]+(?:the\s+)?(?:company|inc|incorporated|corp|corporation|co|ltd|limited|plc|"
    r"llc|l\.?p|n\.?v|s\.?a|ag|se)\.?$",
    re.I,
)


def short_company(name: str) -> str:
    """'INTERNATIONAL BUSINESS MACHINES CORPORATION' -> 'INTERNATIONAL BUSINESS MACHINES'."""
    name = " ".join(name.split()).strip(" ,")
    while (shorter := _LEGAL_SUFFIX.sub("", name).strip(" ,")) != name and shorter:
        name = shorter
    return name


def document_context(meta: DocumentMetadata | None) -> str:
    """'Apple (AAPL) 10-Q FY2025 Q3': who filed what for which period, in few tokens."""
    if meta is None:
        return ""
    parts: list[str] = []
    company = short_company(meta.company) if meta.company else ""
    if company:
        parts.append(company)
    if meta.ticker and meta.ticker.lower() not in company.lower().split():
        parts.append(f"({meta.ticker})" if company else meta.ticker)
    if meta.form_type:
        parts.append(meta.form_type)
    if meta.fiscal_year:
        parts.append(f"FY{meta.fiscal_year}")
        if meta.fiscal_quarter:
            parts.append(f"Q{meta.fiscal_quarter}")
    return " ".join(parts)


def chunk_header(document: str, kind: str, section: Sequence[str]) -> str:
    """The lines in front of a chunk's text: 'Apple 10-K FY2024, risk factors' and its path."""
    first = ", ".join(p for p in (document, KIND_LABELS.get(kind, "")) if p)
    return "\n".join(p for p in (first, " > ".join(section)) if p)
