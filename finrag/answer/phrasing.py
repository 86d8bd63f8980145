"""The model writes the sentence around numbers the facts route found; it may not change
them. Its reply is kept only when every number in it is one the checked answer states,
every source label is one the answer has, and a Yes/No opening is the same; otherwise the
template answer stands, and the answer says why."""

from __future__ import annotations

import re

from finrag.answer.citations import cited
from finrag.answer.extraction import calculations_for_prompt
from finrag.answer.numbers import found_in, material, parse_amounts, without_dates
from finrag.answer.result import Answer
from finrag.errors import ModelNotAvailable
from finrag.llm import LLM, LLMError
from finrag.llm.prompts import load_prompt
from finrag.personas import Persona, with_persona

_OPENING = re.compile(r"^\W*(yes|no)\b", re.I)

PHRASING_BUDGET = 200  # tokens: three sentences


def phrase(
    llm: LLM, answer: Answer, persona: Persona | None = None
) -> tuple[str | None, str | None, dict[str, int]]:
    """(the model's wording, for ``persona``'s reader when given, or None; why it was not
    kept; tokens used)."""
    messages = load_prompt("facts_answer").messages(
        question=answer.question,
        answer=answer.answer,
        calculations=calculations_for_prompt(answer.calculations),
    )
    messages = with_persona(messages, persona)
    try:
        reply = llm.chat(messages, max_tokens=PHRASING_BUDGET)
    except (LLMError, ModelNotAvailable) as exc:  # unreachable, timed out, off its schema
        return None, f"the model could not phrase the answer ({exc.message}): template kept", {}
    tokens = {"prompt": reply.prompt_tokens, "completion": reply.completion_tokens}
    text = without_stray_opening(reply.text.strip(), answer.answer)
    text = with_labels(text, answer.answer)
    problem = check_phrasing(answer.answer, text)
    if problem:
        return None, f"the model's wording was not kept ({problem}): template kept", tokens
    return text, None, tokens


def without_stray_opening(text: str, template: str) -> str:
    """``text`` without a "Yes,"/"No," the template does not open with: a small model
    opens so whatever was asked ("Yes, PepsiCo's EBITDA margin was 16.5%")."""
    if yes_no_opening(template) is not None or yes_no_opening(text) is None:
        return text
    rest = _OPENING.sub("", text, count=1).lstrip(" ,.;:!-")
    return rest[:1].upper() + rest[1:] if rest else text


def with_labels(text: str, template: str) -> str:
    """``text`` with the template's source labels when it has none (small models drop
    them): after each sentence that states one of the template's figures. Labels the model
    wrote itself are left as they are, for the check to judge."""
    if cited(text) or not cited(template):
        return text
    labels = "[" + ", ".join(map(str, sorted(set(cited(template))))) + "]"
    figures = material(parse_amounts(without_dates(template)))
    out = []
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        stated = material(parse_amounts(without_dates(sentence)))
        if any(found_in(a, figures, rel=0.0005) for a in stated):
            body, end = re.match(r"(.*?)([.!?]*)$", sentence, re.S).groups()
            sentence = f"{body.rstrip()} {labels}{end}"
        out.append(sentence)
    return " ".join(out)


def check_phrasing(template: str, text: str) -> str | None:
    """Why ``text`` may not replace ``template``, or None."""
    if not text:
        return "empty reply"
    template, text = without_dates(template), without_dates(text)
    allowed = parse_amounts(template)
    for amount in material(parse_amounts(text)):
        if not found_in(amount, allowed, rel=0.0005):
            return f"{amount.text} is not in the checked answer"
    headline = material(parse_amounts(template))
    if headline and not found_in(headline[0], parse_amounts(text), rel=0.0005):
        return f"it leaves out {headline[0].text}"
    marks = set(cited(template))
    if not set(cited(text)) <= marks or (marks and not cited(text)):
        return "its source labels differ"
    if yes_no_opening(template) != yes_no_opening(text):
        return "its Yes/No differs"
    said, wrote = _directions(template), _directions(text)
    if wrote - said:
        # "fell from $12.03 to $19.83": the numbers right, the movement turned around.
        return f"it says the figures went {' and '.join(sorted(wrote - said))}"
    return None


_UP_WORDS = re.compile(
    r"\b(?:up|rose|risen|rising|grew|grown|growing|increas\w*|higher|improv\w*|gain\w*)\b", re.I
)
_DOWN_WORDS = re.compile(
    r"\b(?:down|fell|fallen|falling|declin\w*|decreas\w*|lower|drop\w*|shr[iu]nk\w*|"
    r"deteriorat\w*)\b",
    re.I,
)


def _directions(text: str) -> set[str]:
    """Which ways a text says figures moved: 'up', 'down' or both."""
    return {w for w, p in (("up", _UP_WORDS), ("down", _DOWN_WORDS)) if p.search(text)}


def yes_no_opening(text: str) -> str | None:
    """'yes' or 'no' when ``text`` opens with it, else None."""
    m = _OPENING.match(text)
    return m.group(1).lower() if m else None
