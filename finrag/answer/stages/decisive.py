"""A yes/no the filing's own conclusion decides, read without the model.

"Has X reported any material legal proceedings?" The small model answers "Yes" on the
boilerplate every filing prints ("we are party to a variety of litigation, claims ...").
What decides the question is management's conclusion, which filings state in a fixed
form: the matters pending are not expected to have a material adverse effect. When the
retrieved text holds that conclusion, in a legal context, and no sentence reports a
litigation charge, settlement or judgment with an amount, the answer is "No" with that
sentence as its quote. Anything else (a charge recorded, nothing concluded) is left to the
model's reading of the quotes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from finrag.retrieve.context import ContextChunk

_ASKS = re.compile(
    r"\b(?:material\w*|significant|major|important)\b.{0,60}\b(?:legal|litigation|lawsuits?|"
    r"proceedings?|legal battles?|legal matters?|claims?|suits?)\b|\b(?:legal|litigation|"
    r"lawsuits?|proceedings?)\b.{0,60}\bmaterial\w*\b",
    re.I,
)
_LEGAL = re.compile(
    r"\b(?:legal|litigation|lawsuits?|proceedings?|claims?|suits?|contingenc\w*|"
    r"investigations?|matters?)\b",
    re.I,
)
# Management's conclusion on what is pending: "we do not believe ... will have a material
# adverse effect", "... is not expected to have a material adverse effect".
_NOT_MATERIAL = re.compile(
    r"\b(?:not|no)\b[^.;]{0,80}\b(?:believe|expect|anticipate)\w*\b[^.;]{0,160}\b"
    r"material(?:ly)?\s+(?:adverse|effect|impact)|\b(?:believe|expect|anticipate)\w*\b"
    r"[^.;]{0,160}\b(?:will|would|should)\s+not\s+(?:have|result in|be)\b[^.;]{0,40}\b"
    r"material|\bnot\s+(?:expected|likely|reasonably likely)\s+to\s+(?:have|result in)\s+"
    r"a\s+material|\b(?:will|would|should)\s+not\s+(?:have|result in)\s+a\s+material\s+"
    r"(?:adverse|effect|impact)",
    re.I,
)
# "... cannot assure that it will not have a material adverse effect": no conclusion. (A
# conclusion may open on a caveat: "While the results cannot be predicted with certainty,
# management believes that ... will not have a material adverse effect".)
_HEDGED = re.compile(
    r"\b(?:cannot|can ?not|can't)\s+(?:assure|guarantee|be\s+(?:sure|certain)\s+that)|"
    r"\bno\s+assurance|\bnot\s+assure|\bthere\s+can\s+be\s+no\b",
    re.I,
)
# A litigation outcome with an amount: a charge, accrual, settlement, verdict or payment.
_MATERIAL_OUTCOME = re.compile(
    r"\b(?:accru\w*|charges?|settle\w*|verdict|judgments?|damages|paid|pay)\b[^.;]{0,120}"
    r"(?:[$€£]\s?\d[\d,.]*\s*(?:million|billion)|\d[\d,.]*\s*(?:million|billion))",
    re.I,
)
# A risk factor says what could happen, not what is pending.
_RISK_SECTION = re.compile(r"risk factors", re.I)


@dataclass(frozen=True)
class Decision:
    verdict: str  # "Yes" / "No"
    chunk: ContextChunk
    quote: str


def asks_material_litigation(question: str) -> bool:
    return bool(_ASKS.search(question))


def litigation(question: str, pool: list[tuple[ContextChunk, str]]) -> Decision | None:
    """ "No" with management's conclusion quoted, when the pool holds one and no litigation
    outcome with an amount; otherwise None (the model reads)."""
    if not asks_material_litigation(question):
        return None
    concluded = None
    for chunk, unit in pool:
        if _RISK_SECTION.search(" ".join(chunk.hit.section_path or ())):
            continue
        if not _LEGAL.search(unit):
            continue
        if _MATERIAL_OUTCOME.search(unit):
            return None
        if concluded is None and _NOT_MATERIAL.search(unit) and not _HEDGED.search(unit):
            concluded = (chunk, unit)
    if concluded is None:
        return None
    return Decision("No", *concluded)
