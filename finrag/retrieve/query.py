"""What a question asks, in the words a filing uses.

Analysts write "capex", "PPNE", "quick ratio", "top line"; filings write "purchases of
property, plant and equipment", "cash and cash equivalents", "net sales". Questions
also carry instructions that describe nothing in any filing ("Give a response ... by
relying on the details shown in the cash flow statement", "If operating margin is not a
useful metric for a company like this, then state that and explain why"), which pull a
sentence embedding away from the page that answers.

``analyze_question`` keeps the sentences that describe the information, notes which
financial statement an instruction points at, and adds the filing vocabulary for the
metrics the question names (a fixed glossary of standard US GAAP line items, never
company names). Both halves of the hybrid search use the result.

A question can also imply the kind of section that answers it ("ongoing legal battles":
Item 3 and the contingencies note; "primary customers": the concentration note; a
metric: the statement the metric dictionary puts it on). Chunks carry their section's
kind in words at the head of their embedded text (finrag.ingest.sections), so the
analysis adds the same words to the search text, and says which kinds it implied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from finrag.facts.dictionary import metrics
from finrag.ingest.sections import KIND_LABELS

# Sentences that tell the reader how to answer, not what to find.
_INSTRUCTION = re.compile(
    r"^\s*(?:give\s+a\s+response|answer\s+the\s+following|assume\s+that\s+you|"
    r"please\s+(?:help|answer|respond|provide|round|base)|we\s+want\s+to\s+calculate|"
    r"using\s+only|based\s+(?:only\s+)?on\s+the\s+information|respond\s|round\s|"
    r"express\s+(?:the|your)|answer\s+in\s|provide\s+(?:a|the|your)\s+(?:response|answer)|"
    r"if\s+[\w\s\-/&%]{1,60}?\s+(?:is|are)\s+not\s+(?:a\s+)?(?:useful|relevant|meaningful|"
    r"explicitly)|calculate\s+what\s+was\s+asked|"
    r"(?:this|the)\s+(?:metric|ratio)\s+is\s+(?:defined|calculated))",
    re.I,
)
_STATEMENTS = {
    "cash flow": (
        re.compile(r"\bcash\s*flows?\s+statements?\b|\bstatements?\s+of\s+cash\s+flows?\b", re.I),
        "consolidated statements of cash flows",
    ),
    "balance sheet": (
        re.compile(r"\bbalance\s+sheets?\b|\bstatements?\s+of\s+financial\s+position\b", re.I),
        "consolidated balance sheets total assets total liabilities",
    ),
    "income statement": (
        re.compile(
            r"\b(?:income|earnings|operations)\s+statements?\b|\bP\s*&\s*L\b|"
            r"\bstatements?\s+of\s+(?:income|operations|earnings)\b",
            re.I,
        ),
        "consolidated statements of income operations net sales",
    ),
}
# Metric -> the line items and words filings use for it.
_GLOSSARY: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p, re.I), words)
    for p, words in (
        (
            r"\bcap(?:ital)?[\s-]*ex(?:penditures?)?\b|\bcapital\s+spending\b",
            "capital expenditures purchases of property plant and equipment",
        ),
        (r"\bPP\s*&\s*E\b|\bPPNE\b|\bfixed\s+assets?\b", "property plant and equipment net"),
        (
            r"\btop[\s-]*line\b|\brevenues?\b|\bsales\b",
            "revenue net sales total revenues cost of sales gross profit",
        ),
        (r"\bgross\s+margins?\b", "gross margin gross profit cost of sales net sales"),
        (r"\boperating\s+margins?\b", "operating income operating margin net sales revenue"),
        (r"\bnet\s+(?:profit\s+)?margins?\b", "net income net sales revenue"),
        (r"\bEBITDAR?\b", "operating income depreciation and amortization"),
        (r"\bEBIT\b", "operating income earnings before interest and taxes"),
        (r"\beffective\s+tax\s+rate\b", "effective tax rate provision for income taxes"),
        (r"\bworking\s+capital\b", "total current assets total current liabilities"),
        (
            r"\bquick\s+ratio\b|\bacid[\s-]+test\b",
            "cash and cash equivalents marketable securities accounts receivable total current "
            "liabilities",
        ),
        (r"\bcurrent\s+ratio\b", "total current assets total current liabilities"),
        (r"\bliquidity\b", "liquidity cash and cash equivalents current assets"),
        (
            r"\bfree\s+cash\s*flow\b|\bFCF\b",
            "net cash provided by operating activities purchases of property and equipment",
        ),
        (
            r"\boperating\s+cash\s*flow\b|\bcash\s+from\s+operations\b",
            "net cash provided by operating activities",
        ),
        (
            r"\b(?:operating|investing|financing)(?:,?\s+(?:and\s+)?(?:operating|investing|"
            r"financing))*\s+activities\b",
            "net cash provided by used in operating activities investing activities financing "
            "activities",
        ),
        (r"\bDPO\b|\bdays\s+payable\b", "accounts payable cost of sales"),
        (r"\bDSO\b|\bdays\s+sales\s+outstanding\b", "accounts receivable net sales"),
        (r"\binventory\s+turnover\b|\bDIO\b", "inventories cost of sales"),
        (
            r"\bcapital[\s-]+intensive\b|\bcapital\s+intensity\b",
            "capital expenditures property plant and equipment total assets revenue",
        ),
        (
            r"\b(?:total\s+)?debt\b|\bborrowings\b|\bleverage\b",
            "long-term debt short-term borrowings current portion of long-term debt",
        ),
        (r"\binterest\s+coverage\b", "operating income interest expense"),
        (r"\bROA\b|\breturn\s+on\s+assets\b", "net income total assets"),
        (r"\bROE\b|\breturn\s+on\s+equity\b", "net income total shareholders equity"),
        (r"\bdividends?\b|\bpayout\b", "dividends paid cash dividends declared per share"),
        (
            r"\bbuybacks?\b|\bshare\s+repurchases?\b|\brepurchased?\s+shares\b",
            "purchases of treasury stock repurchases of common stock",
        ),
        (r"\bEPS\b|\bearnings\s+per\s+share\b", "earnings per share diluted basic"),
        (r"\bliabilit(?:y|ies)\b", "total liabilities"),
        (r"\brestructuring\b", "restructuring and impairment charges"),
        (r"\blegal\b|\blitigation\b|\blawsuits?\b", "legal proceedings litigation contingencies"),
        (r"\bacquisitions?\b|\bacquired\b|\bM\s*&\s*A\b", "acquisitions business combinations"),
        (r"\bgeograph(?:y|ies|ic)\b|\bregions?\b", "geographic segments regions"),
        (r"\bsegments?\b", "segment results reportable segments"),
        (r"\bguidance\b|\boutlook\b", "outlook guidance expects"),
        (r"\bpension\b|\bretirees?\b", "pension and postretirement benefit payments"),
    )
]


# Words that say which kind of section answers (finrag.ingest.sections.SECTION_KINDS).
_IMPLIED: list[tuple[re.Pattern[str], tuple[str, ...]]] = [
    (re.compile(p, re.I), kinds)
    for p, kinds in (
        (
            r"\blegal\s+(?:battles?|proceedings?|disputes?|matters|actions?|claims?|issues|"
            r"challenges|cases?)\b|\blawsuits?\b|\blitigations?\b|\bsued\b|\bclass\s+actions?\b",
            ("legal_proceedings",),
        ),
        (
            r"\b(?:primary|main|major|largest|biggest|key|principal|significant|top)\s+"
            r"customers?\b|\bcustomer\s+(?:concentration|base)\b|\bconcentration\s+of\s+"
            r"(?:customers?|revenues?|sales|credit\s+risk)\b",
            ("customers_concentration",),
        ),
        (
            r"\bacquisitions?\b|\bacquired\b|\bacquir(?:e|ing)\b|\bM\s*&\s*A\b|\bmergers?\b|"
            r"\bbusiness\s+combinations?\b",
            ("acquisitions",),
        ),
        (r"\bcyclical(?:ity)?\b|\bseasonal(?:ity)?\b", ("business", "mdna")),
        (r"\bguidance\b|\boutlook\b|\bforecasts?\b", ("guidance_outlook",)),
        (
            r"\bdebt\b|\bborrowings?\b|\bnotes\s+due\b|\bsenior\s+notes\b|\bindebtedness\b|"
            r"\bcredit\s+facilit(?:y|ies)\b",
            ("debt_note",),
        ),
        (
            r"\brisk\s+factors\b|\b(?:main|key|major|biggest|principal|primary|material)\s+risks\b",
            ("risk_factors",),
        ),
        (
            r"\bsegments?\b|\bgeographic(?:al)?\s+(?:breakdown|mix|regions?|areas?)\b",
            ("segment_note",),
        ),
    )
]
_STATEMENT_KINDS = {
    "cash flow": "cash_flows",
    "balance sheet": "balance_sheet",
    "income statement": "income_statement",
}
# The metric dictionary's statements, as section kinds (comprehensive income has none).
_DICTIONARY_STATEMENTS = {
    "income_statement": "income_statement",
    "balance_sheet": "balance_sheet",
    "cash_flow": "cash_flows",
    "equity": "equity_statement",
}
# One-word aliases of the metric dictionary that name no one statement in a question
# ("tax" is as often a tax contingency, "cash" any amount of it).
_GENERIC_ALIASES = frozenset(
    [
        "tax",
        "taxes",
        "interest",
        "cash",
        "shares",
        "equity",
        "assets",
        "liabilities",
        "research",
        "marketing",
        "profit",
        "earnings",
        "debt",
        "borrowings",
        "ar",
        "ap",
        "da",
        "ltd",
    ]
)


@dataclass(frozen=True)
class QueryAnalysis:
    focus: str  # the question without its instructions
    statement: str | None = None  # "cash flow", "balance sheet", "income statement"
    expansions: tuple[str, ...] = field(default_factory=tuple)  # filing vocabulary
    # The kinds of section that answer (finrag.ingest.sections), most specific first.
    section_kinds: tuple[str, ...] = field(default_factory=tuple)

    @property
    def search_text(self) -> str:
        """What both halves search with: the focus, the statement's title, the vocabulary,
        and the implied kinds' words (those not said already)."""
        extra = [_STATEMENTS[self.statement][1]] if self.statement else []
        text = " ".join([self.focus, *extra, *self.expansions]).strip()
        said = set(re.findall(r"\w+", text.lower()))
        labels: list[str] = []
        for kind in self.section_kinds:
            for word in KIND_LABELS[kind].split():
                if word not in said:
                    said.add(word)
                    labels.append(word)
        return " ".join([text, *labels]).strip()


def split_sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.?!])\s+(?=[A-Z(\"'])", text.strip()) if s.strip()]


def analyze_question(question: str) -> QueryAnalysis:
    statement = next(
        (name for name, (pattern, _) in _STATEMENTS.items() if pattern.search(question)), None
    )
    sentences = split_sentences(question)
    kept = [s for s in sentences if not _INSTRUCTION.match(s)]
    focus = " ".join(kept) if kept else question.strip()
    expansions = tuple(
        dict.fromkeys(words for pattern, words in _GLOSSARY if pattern.search(focus))
    )
    return QueryAnalysis(
        focus=focus,
        statement=statement,
        expansions=expansions,
        section_kinds=implied_kinds(focus, statement),
    )


def implied_kinds(focus: str, statement: str | None = None) -> tuple[str, ...]:
    """The section kinds a question implies: its topic words first; else the statement it
    names, else the statements of the metrics it names (the metric dictionary's)."""
    kinds = [kind for pattern, found in _IMPLIED if pattern.search(focus) for kind in found]
    if statement:
        kinds.append(_STATEMENT_KINDS[statement])
    if not kinds:
        words = f" {' '.join(re.findall(r'[a-z0-9&/]+', focus.lower()))} "
        kinds = [kind for phrase, kind in _metric_phrases() if f" {phrase} " in words]
    return tuple(dict.fromkeys(kinds))


@cache
def _metric_phrases() -> tuple[tuple[str, str], ...]:
    """(name or alias in lower-case words, section kind of its statement), longest first."""
    out: dict[str, str] = {}
    for item in metrics():
        kind = _DICTIONARY_STATEMENTS.get(item.statement)
        if kind is None:
            continue
        for phrase in (item.display, *item.aliases):
            words = " ".join(re.findall(r"[a-z0-9&/]+", phrase.lower()))
            if words and words not in _GENERIC_ALIASES:
                out.setdefault(words, kind)
    return tuple(sorted(out.items(), key=lambda p: -len(p[0])))
