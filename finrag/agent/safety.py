"""Requests finrag declines: investment advice framed as certainty, and harmful content.

Deterministic, so a refusal never depends on a small model's mood. Questions *about*
risk, guidance or recommendations in a filing ("what risks does 3M disclose?") pass.
"""

from __future__ import annotations

import re

_ADVICE = re.compile(
    r"\b(?:should\s+i\s+(?:buy|sell|short|invest|hold|put\s+my)"
    r"|(?:is|are)\s+\S+(?:\s+\S+)?\s+(?:stock|shares?)\s+a\s+(?:sure|safe|guaranteed)"
    r"|guarantee[ds]?\s+(?:me\s+)?(?:a\s+)?(?:return|profit|gain)s?"
    r"|(?:sure|certain|guaranteed|risk[- ]free)\s+(?:bet|thing|win|profit|return|investment)"
    r"|will\s+(?:the\s+)?(?:\S+\s+){0,3}(?:stock|shares?|price)\s+(?:definitely\s+|surely\s+)?"
    r"(?:go\s+up|rise|double|moon|crash|fall)"
    r"|tell\s+me\s+(?:which|what)\s+(?:stocks?|shares?)\s+to\s+(?:buy|sell))",
    re.I,
)
_HARM = re.compile(
    r"\b(?:launder(?:ing)?\s+(?:money|funds|cash)|money\s+laundering\s+scheme"
    r"|insider\s+(?:trading\s+)?(?:tip|scheme)|trade\s+on\s+insider"
    r"|(?:evade|dodge)\s+(?:taxes|tax|sanctions)|cook\s+the\s+books|falsify\s+(?:the\s+)?"
    r"(?:financial|accounts|statements|records)|manipulate\s+(?:the\s+)?(?:stock|share|market)"
    r"|pump\s+and\s+dump|(?:make|build)\s+a\s+(?:bomb|weapon)|hack\s+into)\b",
    re.I,
)

ADVICE_REPLY = (
    "I can't tell you what to buy or sell, or promise how a stock will move: nobody can "
    "do that with certainty, and it is not what filings say. I can show you what the "
    "filings report (results, guidance, risk factors, debt, cash flow) with page "
    "citations, so you can judge for yourself."
)
HARM_REPLY = (
    "I can't help with that. I answer questions about what companies' filings report, "
    "with citations."
)


def safety_reply(question: str) -> tuple[str, str] | None:
    """(kind, reply) when the request is declined, else None."""
    if _HARM.search(question):
        return "harmful", HARM_REPLY
    if _ADVICE.search(question):
        return "investment-advice", ADVICE_REPLY
    return None
