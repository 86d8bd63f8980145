"""Is an answer right? Deterministic checks against a gold answer, and an optional LLM judge.

The numeric check reads amounts the way filings and analysts write them ("$1,577
million", "1.577 billion", "(95)", "2.8%") and compares the gold answer's first amount
(its headline figure) with every amount the answer states or computed, within a
relative tolerance and up to an implicit scale (gold "$1577.00" is USD millions). Signs
are not compared: "(1,577)" in a cash-flow table and "spent $1,577 million" agree.
A gold answer that opens with Yes or No also needs the answer to say the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel

from finrag.answer.numbers import Amount, found_in, material, parse_amounts
from finrag.answer.phrasing import yes_no_opening

_NEGATION = re.compile(r"\b(?:no|not|none|never)\b|n't\b", re.I)


@dataclass(frozen=True)
class Correctness:
    numeric: bool | None  # None: the gold answer has no amount
    polarity: bool | None  # None: the gold answer is not a yes/no
    gold_numbers_found: float | None  # share of all the gold's amounts the answer states

    @property
    def auto(self) -> bool | None:
        """Right by every deterministic check that applies; None when none applies."""
        checks = [c for c in (self.numeric, self.polarity) if c is not None]
        return all(checks) if checks else None


def answer_polarity(text: str) -> str | None:
    """'Yes'/'No' as the answer opens, else whether its first sentence negates."""
    if found := yes_no_opening(text):
        return found
    first = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    if not first:
        return None
    return "no" if _NEGATION.search(first) else "yes"


def score_correctness(
    gold: str, answer: str, computed: list[float], *, tolerance: float = 0.01
) -> Correctness:
    gold_amounts = material(parse_amounts(gold))
    stated = material(parse_amounts(answer)) + [Amount.plain(v) for v in computed]
    numeric = found = None
    if gold_amounts:
        numeric = found_in(gold_amounts[0], stated, rel=tolerance)
        found = sum(found_in(a, stated, rel=tolerance) for a in gold_amounts) / len(gold_amounts)
    expected = yes_no_opening(gold)
    agrees = None if expected is None else answer_polarity(answer) == expected
    return Correctness(numeric=numeric, polarity=agrees, gold_numbers_found=found)


class Verdict(BaseModel):
    correct: bool
    reason: str


def judge(llm, question: str, gold: str, answer: str) -> Verdict:
    """The configured model compares the answer with the gold answer (JSON verdict)."""
    from finrag.llm.prompts import load_prompt

    reply = llm.chat(
        load_prompt("judge").messages(question=question, gold=gold, answer=answer),
        output=Verdict,
        max_tokens=200,
    )
    return reply.data
