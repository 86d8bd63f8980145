"""Stage 5, compose: the model writes the answer around the selected quotes, in one call
whose output is constrained at decoding time to a JSON schema built for the question:
every claim's source must be one of the quotes' ids, a yes/no question must name the
quote that decides it and say Yes or No. So the reply always parses, and each claim is
tied to its quote by construction. The prompt is the fixed instructions first (the
model's KV cache keeps them between questions), then the few quotes and the question."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field, create_model

from finrag.answer.extraction import longest_json
from finrag.answer.stages.evidence import Evidence
from finrag.llm import LLM, ChatResult
from finrag.llm.base import json_schema
from finrag.llm.prompts import load_prompt
from finrag.personas import Persona, with_persona

OnToken = Callable[[str], None]
CLAIM_CHARS = 220
MAX_CLAIMS = 3

_YES_NO = re.compile(
    r"^\W*(?:is|was|were|are|did|does|do|has|have|had|can|could|will|would|should)\b", re.I
)
_MARKS = re.compile(r"\s*\[\d+(?:\s*[,;]\s*\d+)*\]")


# A question after one pick: "which segment grew fastest", "what was the largest ...".
# A superlative after "the" ("had the largest", "performed the best"): not a name that
# holds one ("Best Buy").
_ONE_PICK = re.compile(
    r"\b(which|what)\b.{0,80}(?:\bthe\s+(?:\w+\s+)?(highest|lowest|largest|smallest|biggest|"
    r"most|least|best|worst|fastest|slowest|greatest|weakest|strongest|top)\b|"
    r"\b(?:fastest|slowest)\b)",
    re.I,
)


def is_yes_no(question: str) -> bool:
    return bool(_YES_NO.match(question))


def asks_one_pick(question: str) -> bool:
    return bool(_ONE_PICK.search(question))


def reply_model(ids: Sequence[int], yes_no: bool, max_claims: int = MAX_CLAIMS) -> type[BaseModel]:
    """The schema the reply is held to: sources only among ``ids``; ``max_claims`` 1 for a
    question after one pick, where the small model otherwise fills every claim with
    another candidate ("the largest was A [1]. The largest was B [2].")."""
    source = Literal[tuple(ids)]  # type: ignore[valid-type]
    claim = create_model(
        "Claim",
        text=(str, Field(max_length=CLAIM_CHARS)),
        source=(source, ...),
    )
    fields: dict = {"answerable": (bool, ...)}
    if yes_no:
        fields["decisive"] = (source, ...)
        fields["verdict"] = (Literal["Yes", "No"], ...)
    fields["claims"] = (list[claim], Field(max_length=max_claims))
    return create_model("EvidenceAnswer", **fields)


@dataclass
class Composed:
    answerable: bool
    claims: list[tuple[str, int]]  # (sentence with its [n], n)
    verdict: str | None = None  # "Yes" / "No" for a yes/no question
    decisive: int | None = None
    result: ChatResult | None = None


def compose(
    llm: LLM,
    question: str,
    evidence: Sequence[Evidence],
    *,
    persona: Persona | None = None,
    on_progress: OnToken | None = None,
) -> Composed:
    yes_no = is_yes_no(question)
    output = reply_model(
        [e.n for e in evidence], yes_no, 1 if asks_one_pick(question) else MAX_CLAIMS
    )
    messages = load_prompt("evidence_answer").messages(
        quotes="\n".join(e.render() for e in evidence), question=question.strip()
    )
    reply = llm.chat(
        with_persona(messages, persona),
        output=output,
        max_tokens=longest_json(json_schema(output)) + 16,
        on_token=on_progress,
    )
    data = reply.data
    claims = []
    said: set[str] = set()
    for claim in data.claims:
        text = _sentence(claim.text)
        # "The costs were 411." then "The costs were 247.": the same statement with
        # another figure contradicts the first (the best-ranked quote's); it is dropped.
        if text and (shape := _shape(text)) not in said:
            said.add(shape)
            claims.append((f"{text[:-1]} [{claim.source}]{text[-1]}", claim.source))
    return Composed(
        answerable=data.answerable,
        claims=claims,
        verdict=getattr(data, "verdict", None),
        decisive=getattr(data, "decisive", None),
        result=reply,
    )


def _shape(text: str) -> str:
    """A claim with its figures taken out: two claims of one shape say one thing twice."""
    return " ".join(_FIGURES.sub("#", text.lower()).split())


_FIGURES = re.compile(r"[$€£]?\d[\d,.]*%?")


def _sentence(text: str) -> str:
    """The claim as one sentence without markers of its own (the schema's source is its
    citation), ending with a stop."""
    text = " ".join(_MARKS.sub("", text).split()).strip()
    if not text:
        return ""
    return text if text[-1] in ".!?" else text + "."


def write(composed: Composed, evidence: Sequence[Evidence], claims: Sequence[str]) -> str:
    """The answer: for a yes/no question the verdict and the quote that decides it, then
    the claims that survived the check."""
    by_n = {e.n: e for e in evidence}
    parts = []
    if composed.verdict and composed.decisive in by_n:
        quote = by_n[composed.decisive].text.rstrip()
        parts.append(f"{composed.verdict}. The filing says: “{quote}” [{composed.decisive}].")
    parts += claims
    return " ".join(parts)
