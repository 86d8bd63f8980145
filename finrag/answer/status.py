"""How far each number in an answer is checked, in words that mean what they say.

- ``verified``: the number is a value of the facts store (a stored line item, with its
  fact id) that passed a cross-check against the filing's own arithmetic or tags
  (finrag.facts.checks), or the result of a calculation whose every input is such a
  value. A stored value that failed its checks, or that no check covers, is
  ``found_in_source`` with the reason, and the answer carries a warning.
- ``found_in_source``: the number is printed in an excerpt its sentence cites (or in a
  checked fact's quote from it), or computed from numbers found there. The model chose
  it; nothing says it is the figure asked for (Best Buy's 26.1 % tax rate read as the
  gross margin is "found in source").
- ``unsupported``: neither.

An answer's status is the weakest of its numbers' (``no_numbers`` when it states none,
``refused`` when it gives no answer). ``ask`` and ``chat`` both report it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from finrag.answer.citations import answer_sentences, cited
from finrag.answer.extraction import CalculationOutcome, CheckedFact
from finrag.answer.numbers import Amount, found_in, material, parse_amounts, without_dates
from finrag.retrieve.context import ContextChunk

if TYPE_CHECKING:
    from finrag.answer.result import Answer

VERIFIED = "verified"
FOUND_IN_SOURCE = "found_in_source"
UNSUPPORTED = "unsupported"
NO_NUMBERS = "no_numbers"
REFUSED = "refused"
# Weakest first: an answer is as trustworthy as its least checked number.
_ORDER = (UNSUPPORTED, FOUND_IN_SOURCE, VERIFIED)
WORDS = {
    VERIFIED: "verified",
    FOUND_IN_SOURCE: "found in source",
    UNSUPPORTED: "unsupported",
    NO_NUMBERS: "no numbers",
    REFUSED: "refused",
}


@dataclass(frozen=True)
class NumberCheck:
    number: str  # as the answer writes it: "26.1%"
    status: str  # verified | found_in_source | unsupported
    source: str  # what it was traced to, in words ("" when unsupported)
    sentence: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def check_numbers_status(
    text: str,
    *,
    excerpts: Sequence[ContextChunk] = (),
    fact_values: Sequence[dict[str, Any]] = (),
    calculations: Sequence[CalculationOutcome] = (),
    facts: Sequence[CheckedFact] = (),
) -> list[NumberCheck]:
    """Every number of ``text`` (dates and years aside) with its status and source."""
    stored = [(fv, _fact_amounts(fv)) for fv in fact_values]
    on_facts, on_excerpts = _calculation_results(calculations, stored)
    by_n = {c.n: c for c in excerpts}
    checks: list[NumberCheck] = []
    for sentence in answer_sentences(text):
        marks = [n for n in cited(sentence) if n in by_n]
        shown: list[tuple[int, list[Amount]]] = [
            (n, parse_amounts(by_n[n].hit.content)) for n in marks
        ]
        shown += [(f.source, parse_amounts(f.quote)) for f in facts if f.ok and f.source in marks]
        for amount in material(parse_amounts(without_dates(sentence))):
            checks.append(_check(amount, sentence, stored, on_facts, on_excerpts, shown, marks))
    return checks


def _check(amount, sentence, stored, on_facts, on_excerpts, shown, marks) -> NumberCheck:
    checks = _checked(amount, sentence, stored, on_facts, on_excerpts, shown, marks)
    text = checks.number
    if text.startswith("(") and not text.endswith(")"):  # "($746 million)": the parenthesis
        text = text[1:].strip()
    return replace(checks, number=text)


def _checked(amount, sentence, stored, on_facts, on_excerpts, shown, marks) -> NumberCheck:
    for fv, amounts in stored:
        if found_in(amount, amounts):
            if fv.get("verified") is False:
                why = fv.get("unverified_reason") or "not cross-checked"
                words = f"{_fact_words(fv)}, not verified: {why}"
                return NumberCheck(amount.text, FOUND_IN_SOURCE, words, sentence)
            return NumberCheck(amount.text, VERIFIED, _fact_words(fv), sentence)
    for outcome, results in on_facts:
        if found_in(amount, results):
            return NumberCheck(
                amount.text,
                VERIFIED,
                f"calculation on stored facts: {outcome.description}",
                sentence,
            )
    for n, amounts in shown:
        if found_in(amount, amounts):
            return NumberCheck(amount.text, FOUND_IN_SOURCE, f"excerpt [{n}]", sentence)
    for outcome, results in on_excerpts:
        if found_in(amount, results):
            return NumberCheck(
                amount.text,
                FOUND_IN_SOURCE,
                f"calculation on excerpt numbers: {outcome.description}",
                sentence,
            )
    reason = "not in the cited excerpts" if marks else "no citation"
    return NumberCheck(amount.text, UNSUPPORTED, reason, sentence)


def overall_status(checks: Sequence[NumberCheck], *, refused: bool = False) -> str:
    """The answer's status: its weakest number's, or no_numbers / refused."""
    if refused:
        return REFUSED
    if not checks:
        return NO_NUMBERS
    return min((c.status for c in checks), key=_ORDER.index)


def settle(answer: Answer) -> Answer:
    """Fill ``answer.numbers`` and ``answer.status`` from its text and sources."""
    if answer.refused:
        answer.numbers, answer.status = [], REFUSED
        return answer
    checks = check_numbers_status(
        answer.answer,
        excerpts=answer.chunks,
        fact_values=answer.fact_values,
        calculations=answer.calculations,
        facts=answer.facts,
    )
    answer.numbers = [c.as_dict() for c in checks]
    answer.status = overall_status(checks)
    for words in fact_warnings(answer.fact_values):
        if words not in answer.warnings:
            answer.warnings.append(words)
            answer.flags.append(words)
    return answer


def fact_warnings(fact_values: Sequence[dict[str, Any]]) -> list[str]:
    """What an answer must say of the stored values it rests on: one that is not
    verified (and why), one that a later filing restated (and from what)."""
    found = []
    for fv in fact_values:
        what = fv.get("label") or fv.get("concept") or fv.get("metric") or "a stored fact"
        period = f" {fv['period']}" if fv.get("period") else ""
        if fv.get("verified") is False:
            why = fv.get("unverified_reason") or "not cross-checked"
            found.append(f"not verified: {what}{period} ({fv.get('printed', '')}): {why}")
        for old in fv.get("restated_from") or ():
            found.append(
                f"restated: {what}{period} is {fv.get('printed', '')} in "
                f"{fv.get('ref') or fv.get('document')}, restated from {old.get('printed')} "
                f"({old.get('ref') or old.get('document')})"
            )
    return found


def _fact_amounts(fv: dict[str, Any]) -> list[Amount]:
    amounts = []
    with contextlib.suppress(KeyError, TypeError, ValueError):  # a value that is no number
        amounts.append(Amount.plain(float(fv["value"])))
    if fv.get("printed"):
        amounts += material(parse_amounts(str(fv["printed"])))
    return amounts


def _fact_words(fv: dict[str, Any]) -> str:
    what = fv.get("label") or fv.get("concept") or fv.get("metric") or "a stored fact"
    period = f" {fv['period']}" if fv.get("period") else ""
    n = f" [{fv['n']}]" if fv.get("n") is not None else ""
    # Verified against what OCR read off a scan: the page is the check on the reading.
    ocr = " (read by OCR from a scan)" if fv.get("ocr") else ""
    return f"stored fact{n}: {what}{period}{ocr}"


def _calculation_results(calculations, stored):
    """Calculations split by what their inputs rest on: stored facts only, or excerpts."""
    on_facts, on_excerpts = [], []
    # Only verified values make a calculation verified.
    fact_amounts = [a for fv, amounts in stored if fv.get("verified") is not False for a in amounts]
    for outcome in calculations:
        if outcome.result is None or outcome.error or outcome.unsourced_inputs:
            continue
        results = [*parse_amounts(outcome.formatted or ""), Amount.plain(outcome.result)]
        inputs = [Amount.plain(float(i["value"])) for i in outcome.inputs if "value" in i]
        if inputs and fact_amounts and all(found_in(a, fact_amounts) for a in inputs):
            on_facts.append((outcome, results))
        else:
            on_excerpts.append((outcome, results))
    return on_facts, on_excerpts
