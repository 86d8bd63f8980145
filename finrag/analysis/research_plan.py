"""A research question planned into sub-questions, one per angle of the topic.

By rule: the topic is what the question asks about ("How exposed is Boeing to China?" ->
China); a place is researched by the angles an analyst reads a geographic exposure from
(revenue by geography, customers, supply chain, risk factors, operations and assets),
anything else by figures, risk factors, customers and suppliers, and management's
discussion. Each angle has rephrasings a later round uses when the first found nothing.
Optionally the model plans instead, its reply constrained by a JSON schema; an empty or
failed reply falls back to the rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, Field

from finrag.analysis.subjects import Subject, resolve_subjects
from finrag.db import Store
from finrag.errors import UsageError
from finrag.llm import LLM, LLMError
from finrag.llm.prompts import load_prompt
from finrag.retrieve.filters import extract_query_filters

MAX_MODEL_QUESTIONS = 6
_EXPOSURE = re.compile(
    r"\b(?:exposed|exposure|exposures|depend\w*|relian\w*|rel(?:y|ies)|vulnerab\w*|"
    r"sensitiv\w*|risks?|impact\w*|affected)\b.*?\b(?:to|on|from|of|in|by)\s+(?P<topic>[^?.;]+)",
    re.I,
)
_STOP = re.compile(
    r"\b(?:how|what|which|is|are|was|were|the|a|an|does|do|did|much|many|its|their|"
    r"exposed|exposure|risk|risks|company|to|of|on|in|from|and|for)\b",
    re.I,
)

# angle -> phrasings, first tried first; {company}, {topic}, {year}, {prior}.
PLACE_ANGLES: dict[str, tuple[str, ...]] = {
    "revenue by geography": (
        "What was {company}'s revenue from {topic} in {year}?",
        "How much of {company}'s net sales came from {topic}?",
    ),
    "customers": (
        "What does {company} say about its customers in {topic}?",
        "Which orders or deliveries to customers in {topic} does {company} mention?",
    ),
    "supply chain": (
        "Does {company} rely on suppliers or manufacturing in {topic}?",
        "Where are {company}'s suppliers and manufacturing partners located?",
    ),
    "risk factors": (
        "What risks related to {topic} does {company} describe in its risk factors?",
        "How could trade relations, tariffs or regulation involving {topic} affect {company}?",
    ),
    "operations and assets": (
        "What operations, assets or employees does {company} have in {topic}?",
        "What long-lived assets does {company} hold in {topic}?",
    ),
}
TOPIC_ANGLES: dict[str, tuple[str, ...]] = {
    "reported amounts": (
        "What did {company} report about {topic} in {year}?",
        "What amounts related to {topic} does {company} disclose?",
    ),
    "risk factors": (
        "What risks related to {topic} does {company} describe in its risk factors?",
        "How could {topic} harm {company}'s results?",
    ),
    "customers and suppliers": (
        "How does {topic} affect {company}'s customers or suppliers?",
        "Which customers, suppliers or partners of {company} are tied to {topic}?",
    ),
    "management's discussion": (
        "What does {company}'s management say about {topic} in its discussion of results?",
        "How did {topic} affect {company}'s results in {year}?",
    ),
}

# What a passage must also mention to count for an angle, read without a model (a passage
# naming China under "supply chain" must be about suppliers or making things). None: any.
ANGLE_CUES: dict[str, tuple[str, ...] | None] = {
    "revenue by geography": ("revenue", "net sales", "sales"),
    "customers": ("customer", "deliver", "order", "backlog", "airline", "sales"),
    "supply chain": ("supplier", "supply", "manufactur", "component", "sourc", "outsourc"),
    "risk factors": None,
    "operations and assets": (
        "operation",
        "facilit",
        "employee",
        "asset",
        "subsidiar",
        "joint venture",
        "plant",
    ),
    "reported amounts": None,
    "customers and suppliers": ("customer", "supplier", "partner"),
    "management's discussion": None,
}


@dataclass
class SubQuestion:
    id: int
    angle: str
    phrasings: tuple[str, ...]  # filled in: the company, topic and years named
    origin: str = "rules"  # rules | model | follow-up
    added_in: int = 0  # the round that added it (0: the plan)
    tries: int = 0
    # Tries the model failed on (a timeout, a reply off its schema): no try of the
    # filings, so they never exhaust the question.
    model_failures: int = 0
    state: str = "open"  # open | found | exhausted
    cues: tuple[str, ...] = ()  # a passage read without a model must mention one (): any)

    @property
    def text(self) -> str:
        """What the next try asks: the next phrasing, the last once all were tried."""
        return self.phrasings[min(self.tries, len(self.phrasings) - 1)]

    @property
    def exhausted(self) -> bool:
        return self.tries >= len(self.phrasings)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "angle": self.angle,
            "question": self.phrasings[0],
            "rephrasings": list(self.phrasings[1:]),
            "origin": self.origin,
            "added_in_round": self.added_in,
            "tries": self.tries,
            "model_failures": self.model_failures,
            "state": self.state,
        }


@dataclass
class Plan:
    question: str
    subject: Subject
    topic: str | None  # None: the question names no topic apart from the company
    place: bool  # the topic is a country or region
    planner: str  # rules | model | rules (the model's plan failed: ...)
    sub_questions: list[SubQuestion] = field(default_factory=list)

    def topic_pattern(self) -> re.Pattern[str] | None:
        return topic_pattern(self.topic) if self.topic else None

    def add(
        self,
        angle: str,
        phrasings: tuple[str, ...],
        origin: str,
        round_n: int,
        cues: tuple[str, ...] = (),
    ) -> bool:
        """A new sub-question, unless one with the same first phrasing exists."""
        if any(q.phrasings[0].lower() == phrasings[0].lower() for q in self.sub_questions):
            return False
        n = len(self.sub_questions) + 1
        self.sub_questions.append(
            SubQuestion(n, angle, phrasings, origin, round_n, cues=tuple(cues))
        )
        return True

    def as_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "company": self.subject.as_dict(),
            "topic": self.topic,
            "topic_is_place": self.place,
            "planner": self.planner,
            "sub_questions": [q.as_dict() for q in self.sub_questions],
        }


class PlannedQuestion(BaseModel):
    angle: str = Field(max_length=40)
    question: str = Field(max_length=220)


class ModelPlan(BaseModel):
    sub_questions: list[PlannedQuestion] = Field(max_length=MAX_MODEL_QUESTIONS)


def plan_for(
    store: Store, question: str, company: str | None = None, *, llm: LLM | None = None
) -> Plan:
    """The plan for ``question`` about the company it names (or ``company``; or the one
    company the store holds); a question naming none, or several, is a UsageError."""
    with store.connect() as conn:
        filters = extract_query_filters(question, conn)
        named = [company] if company else [c.name for c in filters.companies]
        if not named:
            held = [r[0] for r in conn.execute("SELECT name FROM companies ORDER BY name")]
            if len(held) != 1:
                raise UsageError(
                    "the question names no company the store holds",
                    hint="name it in the question or with --company "
                    f"(the store holds: {', '.join(held) or 'nothing yet'})",
                )
            named = held
        if len(named) > 1:
            raise UsageError(
                f"research one company at a time (the question names {', '.join(named)})",
                hint="or `finrag analyze` to read several companies side by side",
            )
        [subject] = resolve_subjects(conn, named)
        conn.rollback()
    words = [*filters.matched.get("company", []), subject.short, subject.name]
    if subject.ticker:
        words.append(subject.ticker)
    return plan_research(question, subject, words, llm=llm)


def plan_research(
    question: str, subject: Subject, company_words: list[str], *, llm: LLM | None = None
) -> Plan:
    """The plan: the rules' angles for the topic, or the model's sub-questions when
    ``llm`` is given and its reply holds any (the rules otherwise, saying why)."""
    topic = topic_of(question, company_words)
    place = topic is not None and is_place(topic)
    plan = Plan(question, subject, topic, place, "rules")
    if llm is not None:
        try:
            reply = llm.chat(
                load_prompt("research_plan").messages(
                    question=question, company=subject.name, topic=topic or "(none named)"
                ),
                output=ModelPlan,
                max_tokens=600,
            )
            for item in reply.data.sub_questions:
                if len(re.findall(r"[A-Za-z]{2,}", item.question)) >= 3:
                    plan.add(item.angle.strip() or "model", (item.question.strip(),), "model", 0)
            plan.planner = "model" if plan.sub_questions else "rules (the model planned nothing)"
        except LLMError as exc:
            plan.planner = f"rules (the model's plan failed: {exc.message})"
    if not plan.sub_questions:
        angles = PLACE_ANGLES if place else TOPIC_ANGLES
        for angle, phrasings in angles.items():
            filled = fill(phrasings, subject, topic or question.rstrip("?"))
            plan.add(angle, filled, "rules", 0, ANGLE_CUES.get(angle) or ())
    return plan


def fill(phrasings: tuple[str, ...], subject: Subject, topic: str) -> tuple[str, ...]:
    year, prior = subject.year or "the latest year", subject.prior or "the year before"
    return tuple(
        p.format(company=subject.short, topic=topic, year=year, prior=prior) for p in phrasings
    )


def topic_of(question: str, company_words: list[str]) -> str | None:
    """What the question asks the company's exposure to: 'How exposed is Boeing to
    China?' -> 'China'; else the words left once the company and question words go."""
    text = question
    for words in sorted(company_words, key=len, reverse=True):
        text = re.sub(rf"\b{re.escape(words)}(?:'s|’s)?\b", " ", text, flags=re.I)
    topic = m.group("topic") if (m := _EXPOSURE.search(text)) else _STOP.sub(" ", text)
    topic = re.sub(r"^\s*(?:the|its|their)\s+", "", " ".join(topic.split()), flags=re.I)
    topic = topic.strip(" ?.,;:'\"")
    return topic or None


@cache
def _places() -> frozenset[str]:
    text = (resources.files("finrag.graph") / "places.txt").read_text(encoding="utf-8")
    return frozenset(
        line.strip().lower() for line in text.splitlines() if line.strip() and line[0] != "#"
    )


def is_place(topic: str) -> bool:
    """A country, region or US state, as the graph's place list names them."""
    words = topic.lower().removeprefix("greater ").removeprefix("mainland ")
    return words in _places()


def topic_pattern(topic: str) -> re.Pattern[str]:
    """The topic's words in order, each with its usual derived forms: China -> China,
    Chinese; India -> India, Indian; "interest rates" -> interest rate(s), never "rates"
    alone (a word's stem is it without its closing vowels)."""
    parts = []
    for word in re.findall(r"[A-Za-z][A-Za-z&'-]*", topic):
        stem = word.rstrip("aeiouys") if len(word) > 4 else word
        parts.append(rf"{re.escape(stem)}(?:a|e|o|y|ese|an|ian|n|s|es|ies)?")
    if not parts:
        return re.compile(re.escape(topic), re.I)
    joined = r"[\s-]+".join(parts)
    return re.compile(rf"\b{joined}\b", re.I)
