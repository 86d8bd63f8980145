"""English number words -> integers, as the SEC's ``ixt-sec:numwordsen`` transformation
reads them: "no", "none", "zero", "two", "twenty-one", "one hundred and five",
"three million two hundred thousand".

Words only, case-insensitive; hyphens, commas and "and" may join the parts. Digits
("1.5 million"), fractions and ordinals are not number words here: they raise, so a
fact is reported rather than read wrong.
"""

from __future__ import annotations

import re

_ZERO = frozenset({"no", "none", "nil", "zero"})  # "nil": EDGAR accepts it for zero
_SMALL = {
    word: number
    for number, word in enumerate(
        [
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
        ],
        start=1,
    )
}
_TENS = {
    word: 10 * number
    for number, word in enumerate(
        ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"], start=2
    )
}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_SEPARATORS = re.compile(r"[\s,\-\u2010\u2011]+")
_MAX_WORDS = 40  # longer than any number a filing writes out: not a number


def parse_number_words(text: str) -> int:
    """The non-negative integer ``text`` spells; ValueError when it spells none."""
    words = [w for w in _SEPARATORS.split(text.strip().lower()) if w]
    if not words or len(words) > _MAX_WORDS:
        raise ValueError(f"not English number words: {text!r}")
    if len(words) == 1 and words[0] in _ZERO:
        return 0
    total, position = 0, 0
    last_scale = None
    while position < len(words):
        group, position = _group(words, position, text)
        scale = _SCALES.get(words[position]) if position < len(words) else None
        if scale is None:
            if position < len(words):
                raise ValueError(f"unexpected {words[position]!r} in {text!r}")
            if last_scale is not None and group >= 1000:
                raise ValueError(f"{text!r}: hundreds after {last_scale:,} do not add up")
            return total + group
        if group >= 1000 or (last_scale is not None and scale >= last_scale):
            raise ValueError(f"{text!r}: scale words out of order")
        total += group * scale
        last_scale = scale
        position = _skip_and(words, position + 1, text)
    return total


def _group(words: list[str], position: int, text: str) -> tuple[int, int]:
    """A number below ten thousand ("twelve hundred", "three hundred and five") from
    ``position``: its value and the position after it."""
    value, position = _below_hundred(words, position, text)
    if position < len(words) and words[position] == "hundred":
        value *= 100
        position = _skip_and(words, position + 1, text)
        if position < len(words) and (words[position] in _SMALL or words[position] in _TENS):
            rest, position = _below_hundred(words, position, text)
            value += rest
    return value, position


def _below_hundred(words: list[str], position: int, text: str) -> tuple[int, int]:
    word = words[position] if position < len(words) else ""
    if word in _SMALL:
        return _SMALL[word], position + 1
    if word in _TENS:
        value = _TENS[word]
        following = words[position + 1] if position + 1 < len(words) else ""
        if following in _SMALL and _SMALL[following] < 10:
            return value + _SMALL[following], position + 2
        return value, position + 1
    raise ValueError(f"expected a number word, not {word or 'the end'!r}, in {text!r}")


def _skip_and(words: list[str], position: int, text: str) -> int:
    if position < len(words) and words[position] == "and":
        if position + 1 == len(words):
            raise ValueError(f"{text!r} ends in 'and'")
        return position + 1
    return position
