"""A question whose second part depends on the first part's answer, split into hops.

"Which of NVIDIA's segments grew fastest in fiscal 2025, and what was its operating
income?" is two questions, the second one unknown until the first is answered: hop 1
finds the segment (Compute And Networking), hop 2 asks its operating income. The split is
read from the question's structure first: a ranking or superlative clause ("the segment
with the largest revenue", "the company with the higher current ratio"), a break (a
colon, a semicolon, ", and what", "then", a second question mark), and a reference back
in what follows ("its", "their", "that segment", "the company"). Only a question that
has that shape but no break the rules read goes to the model (``plan_with_model``), whose
reply is held to a JSON schema; anything else is one question, answered as before.

A later hop's question holds ``{1}`` where hop 1's answer goes (the slot); the chain
(finrag.answer.hops) reads the entity from hop 1's answer and fills it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg
from pydantic import BaseModel, Field

from finrag.errors import ModelNotAvailable
from finrag.llm import LLM, LLMError
from finrag.llm.prompts import load_prompt
from finrag.retrieve.filters import extract_query_filters

MAX_HOPS = 3

# A clause that picks one of several: the slot's value is the one it picks.
_RANK_WORDS = (
    r"largest|biggest|highest|lowest|smallest|most|least|fastest|slowest|best|worst|"
    r"strongest|weakest|top|higher|lower|larger|smaller|bigger|greater|greatest|faster|"
    r"slower|more|less|stronger|weaker"
)
_RANK = re.compile(rf"\b(?:{_RANK_WORDS})\b", re.I)
_DOWN = re.compile(
    r"\b(?:lowest|smallest|least|slowest|worst|weakest|lower|smaller|less|slower|weaker)\b", re.I
)
# What the clause picks among: a breakdown's member, or one of the companies named.
_MEMBER_NOUN = re.compile(
    r"\b(segment|region|product|business|division|geograph(?:y|ic area)|categor(?:y|ies)|"
    r"product line)s?\b",
    re.I,
)
_COMPANY_NOUN = re.compile(r"\b(?:company|companies|firms?|issuers?|one)\b", re.I)
# The breaks between the picking clause and the question about what it picked.
_BREAK = re.compile(
    r"\s*[:;]\s+|\?\s+|\s+[—–]\s+|\s+--\s+|,?\s+(?:and\s+)?then\s+|"
    r",?\s+and\s+(?=(?:what|how|why|which|who|when|where|did|does|do|is|was|were|has|had)\b)",
    re.I,
)
# The reference back to what hop 1 picked; the first one found is the slot.
_THE_NOUN = re.compile(
    r"\b(?:that|this|the same|the)\s+(?:segment|region|product|business|division|company|"
    r"firm|one)('s)?\b",
    re.I,
)
_POSSESSIVE = re.compile(r"\b(?:its|their)\b", re.I)
# A bare "it" or "they" is no reference here: "which segment had the highest revenue and
# how did it change" asks about the revenue, one question the segment route answers.
_ASKS = re.compile(r"\b(?:what|how|why|which|who|when|where)\b", re.I)
# "in Q2 FY2024", "for fiscal 2025", "in the second quarter of fiscal 2024": carried to
# each hop that names no period of its own.
_PERIOD = re.compile(
    r"\b(?:in|for|during|over|at the end of|as of)\s+(?:the\s+)?"
    r"(?:(?:first|second|third|fourth)\s+quarter\s+of\s+|Q[1-4]\s+)?"
    r"(?:fiscal\s+(?:year\s+)?|FY\s?)?(?:19|20)\d{2}\b(?:\s+Q[1-4]\b)?",
    re.I,
)
# "the higher current ratio in fiscal 2024": the measure is what the rank word ranks.
_MEASURE = re.compile(
    rf"\b(?:{_RANK_WORDS})\s+(?P<measure>[a-z][\w\s&'-]*?)"
    r"(?=\s+(?:in|for|during|over|as of|at|among|between|of)\b|[,?.]|$)",
    re.I,
)


@dataclass
class Hop:
    n: int
    question: str  # a later hop's holds "{1}" (or "{1}'s"): what hop 1 found goes there
    depends_on: list[int] = field(default_factory=list)
    # What the next hop takes from this one's answer: "member" (a segment, region,
    # product), "company", or None when nothing is taken.
    slot: str | None = None
    noun: str = ""  # the member's kind as the question says it: "segment", "region"
    pick: str | None = None  # "max" or "min": which value wins, when values decide
    # The period phrase the question gave elsewhere and this hop was given ("in Q2
    # FY2024"); not one it wrote itself. A refusal for it is worth one try without it.
    carried: str = ""

    def as_dict(self) -> dict:
        return {
            "hop": self.n,
            "question": self.question,
            "depends_on": self.depends_on,
            "slot": self.slot,
        }


@dataclass
class HopPlan:
    hops: list[Hop]
    planner: str  # "rules" or "model"
    owner: str | None = None  # the company as the question writes it ("Best Buy")


def plan_hops(conn: psycopg.Connection, question: str) -> HopPlan | None:
    """The dependent hops the question's structure shows; None: it is one question."""
    for brk in _BREAK.finditer(question):
        first, rest = question[: brk.start()].strip(), question[brk.end() :].strip()
        if not first or not rest or not _RANK.search(first) or _reference(rest) is None:
            continue
        plan = _two_hops(conn, question, first, rest)
        if plan is not None:
            return plan
    return None


def plan_for(
    conn: psycopg.Connection, question: str, model: Callable[[], LLM] | None
) -> tuple[HopPlan | None, str | None]:
    """The rules' plan; else, for a question of the dependent shape and with a model on
    (``model`` gives it), the model's. The note says why a model plan was not taken."""
    plan = plan_hops(conn, question)
    if plan is not None or model is None or not looks_dependent(question):
        return plan, None
    try:
        llm = model()
    except (LLMError, ModelNotAvailable) as exc:
        return None, f"no model to plan the hops ({exc.message}): asked as one question"
    plan, why = plan_with_model(llm, question)
    return plan, None if plan is not None else f"{why}: asked as one question"


def looks_dependent(question: str) -> bool:
    """A ranking clause and something that refers to what it picks, in a form the rules
    do not split ("the operating income of the segment with the largest revenue"): the
    one shape worth a model call to plan."""
    rank = _RANK.search(question)
    if rank is None or not (_MEMBER_NOUN.search(question) or _COMPANY_NOUN.search(question)):
        return False
    after = question[rank.end() :]
    nested = re.search(
        r"\bof\s+(?:the|\w+'s)\s+(?:\w+\s+){0,2}?(?:segment|region|product|business|division|"
        r"company|firm)s?\s+(?:with|that|which|whose)\b",
        question,
        re.I,
    )
    # Otherwise a second question after the ranking that refers back to what it picked.
    asks = _ASKS.search(after)
    return bool(nested) or (asks is not None and _reference(after[asks.end() :]) is not None)


def _reference(text: str, *, member: bool = False) -> re.Match | None:
    """The words that refer back to what hop 1 picked; for a member, never "the company"
    ("...and what was the company's total revenue" asks about the whole company)."""
    for pattern in (_THE_NOUN, _POSSESSIVE):
        for m in pattern.finditer(text):
            if member and re.search(r"\b(?:company|firm)\b", m.group(0), re.I):
                continue
            return m
    return None


def _two_hops(conn: psycopg.Connection, question: str, first: str, rest: str) -> HopPlan | None:
    filters = extract_query_filters(question, conn)
    conn.rollback()
    words = filters.matched.get("company", [])
    period = _PERIOD.search(question)
    when = period.group(0) if period else ""
    member = _MEMBER_NOUN.search(first)
    if member is not None:
        owner = words[0] if words else None
        ask = first if re.match(r"(?:which|what)\b", first, re.I) else f"Which is {_lower(first)}"
        if owner and owner.lower() not in ask.lower():
            ask += f" at {owner}"
        noun = member.group(1).lower()
        if noun.startswith("categor"):
            noun = "category"
        hop1 = Hop(1, _with_period(ask, when), slot="member", noun=noun, pick=_pick(first))
        plan = HopPlan([hop1], "rules", owner=owner)
    elif len(filters.companies) >= 2:
        measure = _MEASURE.search(first)
        names = " and ".join(words)
        if measure is not None:
            ask = f"What was the {measure.group('measure').strip()} of {names}"
        else:
            ask = first if re.match(r"(?:which|what)\b", first, re.I) else f"Which is {first}"
        hop1 = Hop(1, _with_period(ask, when), slot="company", pick=_pick(first))
        plan = HopPlan([hop1], "rules")
    else:
        return None
    ref = _reference(rest, member=member is not None)
    if ref is None:
        return None
    possessive = ref.re is _POSSESSIVE or bool(ref.lastindex and ref.group(1))
    slot = "{1}'s" if possessive else "{1}"
    hop2 = rest[: ref.start()] + slot + rest[ref.end() :]
    carried = when if when and not _PERIOD.search(hop2) else ""
    plan.hops.append(Hop(2, _with_period(_upper(hop2), when), depends_on=[1], carried=carried))
    return plan


def has_period(text: str) -> bool:
    return bool(_PERIOD.search(text))


def without_period(text: str, phrase: str) -> str:
    """The question with a carried period phrase taken out."""
    return re.sub(r"\s+" + re.escape(phrase) + r"(?=\W*$)", "", text, count=1)


def _with_period(text: str, when: str) -> str:
    text = text.strip().rstrip("?.!").strip()
    if when and not _PERIOD.search(text):
        text += f" {when}"
    return text + "?"


def _pick(clause: str) -> str:
    return "min" if _DOWN.search(clause) else "max"


def _lower(text: str) -> str:
    # "The segment with ..." reads "Which is the segment with ..."; a name keeps its case.
    return text[:1].lower() + text[1:] if re.match(r"(?:The|A|An)\b", text) else text


def _upper(text: str) -> str:
    return text[:1].upper() + text[1:]


# ---- the model, where the rules read no break -------------------------------------


class PlannedHop(BaseModel):
    question: str = Field(max_length=300)
    # What a later question takes from this one's answer.
    passes_on: str = Field(pattern="^(nothing|segment|region|product|company)$")


class PlannedHops(BaseModel):
    hops: list[PlannedHop] = Field(min_length=1, max_length=MAX_HOPS)


def plan_with_model(llm: LLM, question: str) -> tuple[HopPlan | None, str]:
    """The model's split, held to ``PlannedHops``; (None, why) when it fails or is no
    chain (one hop, a later hop that uses no earlier answer, a slot out of order)."""
    try:
        reply = llm.chat(
            load_prompt("plan_hops").messages(question=question),
            output=PlannedHops,
            max_tokens=600,
        )
    except LLMError as exc:
        return None, f"the model could not plan the hops ({exc.message})"
    planned: PlannedHops = reply.data
    if len(planned.hops) < 2:
        return None, "the model planned one hop"
    hops: list[Hop] = []
    for i, p in enumerate(planned.hops, 1):
        uses = sorted({int(n) for n in re.findall(r"\{(\d)\}", p.question)})
        if any(n >= i or n < 1 for n in uses):
            return None, f"hop {i} uses an answer not found before it ({p.question!r})"
        if i > 1 and not uses:
            return None, f"hop {i} uses no earlier answer ({p.question!r})"
        kind = p.passes_on if p.passes_on != "nothing" else None
        slot = None if kind is None else "company" if kind == "company" else "member"
        hops.append(
            Hop(i, p.question.strip(), uses, slot=slot, noun=kind or "", pick=_pick(p.question))
        )
    for hop in hops:
        for n in hop.depends_on:
            if hops[n - 1].slot is None:
                return None, f"hop {hop.n} uses hop {n}, which passes nothing on"
    return HopPlan(hops, "model"), "planned by the model"
