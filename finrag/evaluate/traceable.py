"""Which numbers of an answer built on facts did no fact and no calculation give?

Checked here, apart from the pipeline, so that "zero untraceable numbers" is measured
rather than assumed: a facts-route answer's text is read for amounts, and each must be a
value of the facts it used (up to the scale it is written in) or a calculation's result
or input, to the precision it is shown at, or printed in a text fact it restates (a
cover's class of stock). Dates, fiscal labels and statute sections are not claims. A
mixed answer also reads excerpts, so the pipeline's own number check (its
``unverified_numbers``) counts for it too.
"""

from __future__ import annotations

import re

from finrag.answer.numbers import Amount, found_in, material, parse_amounts, without_dates
from finrag.answer.result import Answer

_STATUTE = re.compile(r"\bSection\s+\d+\s*\([a-z]\)", re.I)  # "Section 12(b)": a name
_SHOWN_REL = 0.005  # a figure shown rounded ("46.2%" for 46.206) still traces to its value


def untraceable_numbers(answer: Answer) -> list[str]:
    """The amounts in ``answer``'s text no fact value or calculation gave, as written."""
    known = known_amounts(answer)
    text = _STATUTE.sub(" ", without_dates(answer.answer))
    found = [
        a.text.strip("()")
        for a in material(parse_amounts(text))
        if not found_in(a, known, rel=_SHOWN_REL) and not _shown_rounded(a, known)
    ]
    if answer.route == "mixed":
        found += [p["number"] for p in answer.unverified_numbers if p["number"] not in found]
    return found


def _shown_rounded(amount: Amount, known: list[Amount]) -> bool:
    """'0.2%' for a computed 0.152: the value rounded to the decimals the answer shows."""
    digits = re.search(r"\.(\d+)", amount.text)
    half = 0.5 * 10 ** -(len(digits[1]) if digits else 0)
    return any(abs(abs(k.value) - abs(amount.value)) <= half + 1e-9 for k in known)


def known_amounts(answer: Answer) -> list[Amount]:
    """The values an answer built on facts may state: its facts', its calculations' results
    and inputs, and the numbers printed in the text facts it restates."""
    values: list[float] = []
    for fact in answer.fact_values:
        try:
            values.append(float(fact["value"]))
        except (KeyError, TypeError, ValueError):
            continue
    # A text fact (a cover's class of stock, "Common Shares (par value $0.20 per Share)")
    # is restated as printed: its numbers are the fact's own.
    texts = [f.quote for f in answer.facts if f.ok and f.value == f.quote]
    amounts = [a for text in texts for a in parse_amounts(text)]
    for calc in answer.calculations:
        if calc.result is not None:
            values.append(calc.result)
        values += [float(i["value"]) for i in calc.inputs if i.get("value") is not None]
    return [Amount.plain(v) for v in values] + amounts
