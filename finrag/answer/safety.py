"""Requests finrag declines, in `ask` and in `chat` alike: investment advice framed as
certainty, people's personal data, and instructions for harm.

Deterministic, so a refusal never depends on a small model's mood, and screened before
anything is searched. Questions *about* risk, guidance or recommendations in a filing
("what risks does 3M disclose?"), about a company's own contact details, or about how a
company protects personal data pass.
"""

from __future__ import annotations

import re

from finrag.answer.result import Answer
from finrag.answer.status import REFUSED

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
# What identifies or locates a person. A company's own address and telephone number, and
# its officers' names, ages and pay, are in its filings: those pass.
_IDENTITY = (
    r"(?:social\s+security\s+number|ssn|passport\s+number|driver['’]?s\s+licen[cs]e\s+number"
    r"|(?:bank\s+account|credit\s+card)\s+number|date\s+of\s+birth|birth\s*date|birthday)"
)
_CONTACT = r"(?:(?:cell|mobile)\s+(?:phone\s+)?number|e-?mail\s+address|phone\s+number|address)"
_PERSON = (
    r"(?:ceo|cfo|coo|cto|chair(?:man|woman|person)?|president|founder|director|officer"
    r"|executive|employee|board\s+member|shareholder|owner|wife|husband|children)s?"
)
_PERSONAL = re.compile(
    r"\b(?:(?:home|personal|private|residential)\s+(?:address|phone|telephone|cell|mobile"
    r"|e-?mail|number)"
    rf"|(?:his|her|their|\w+['’]s)\s+(?:\w+\s+)?{_IDENTITY}"
    rf"|(?:his|her|their|{_PERSON}['’]s?)\s+(?:\w+\s+)?{_CONTACT}"
    rf"|(?:{_IDENTITY}|{_CONTACT})\s+(?:of|for)\s+(?:the\s+|its\s+|\w+['’]s\s+)?{_PERSON}"
    r"|where\s+(?:does|do|did)\s+(?:the\s+)?(?:\w+\s+){0,3}(?:live|reside))\b",
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
PERSONAL_REPLY = (
    "I can't help find personal details about people (home addresses, private contact "
    "details, identity numbers, birth dates). I answer questions about what companies' "
    "filings report, with citations: officers' names, roles and pay as filed, for example."
)
HARM_REPLY = (
    "I can't help with that. I answer questions about what companies' filings report, "
    "with citations."
)


def safety_reply(question: str) -> tuple[str, str] | None:
    """(kind, reply) when the request is declined, else None. Kinds: "harmful",
    "personal-data", "investment-advice"."""
    if _HARM.search(question):
        return "harmful", HARM_REPLY
    if _PERSONAL.search(question):
        return "personal-data", PERSONAL_REPLY
    if _ADVICE.search(question):
        return "investment-advice", ADVICE_REPLY
    return None


def declined_answer(question: str) -> Answer | None:
    """The fixed reply to a declined request, as `ask` returns it (refused: exit 7, as a
    declined turn of `chat`), or None when the question may be answered."""
    declined = safety_reply(question)
    if declined is None:
        return None
    kind, reply = declined
    return Answer(
        question=question,
        answer=reply,
        refused=True,
        refusal=kind,
        route="declined",
        status=REFUSED,
        retrieval={"route_reason": f"declined: {kind}"},
    )
