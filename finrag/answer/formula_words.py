"""The words of a question as measures and formulas: the metric dictionary's and the KPI
file's names, aliases and printed labels, and arithmetic written in words
("365 * (average accounts payable between FY2016 and FY2017) / ...") as a formula of the
KPI language (finrag.facts.kpi_formula)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

from finrag.facts.dictionary import COMPANY, label_key, metrics, not_line_items
from finrag.facts.kpi import kpis

FILLER = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "in",
        "for",
        "at",
        "as",
        "its",
        "their",
        "company",
        "s",
        "year",
        "years",
        "fiscal",
        "end",
        "ending",
        "ended",
        "annual",
        "reported",
        "unadjusted",
        "total",
        "amount",
        "value",
        "figure",
        "figures",
        "level",
        "between",
        "and",
        "from",
        "to",
        "on",
        "by",
        "with",
        "full",
        "expense",
        "expenses",
        "spend",
        "spent",
    ]
)
# Longest first. "as a percentage of" divides and makes the result a percentage.
_OPERATOR_WORDS = [
    ("as a percentage of", "%/"),
    ("as a percent of", "%/"),
    ("as a share of", "%/"),
    ("as a proportion of", "/"),
    ("divided by", "/"),
    ("multiplied by", "*"),
    ("less", "-"),
    ("minus", "-"),
    ("plus", "+"),
    ("times", "*"),
    ("over", "/"),
]


@dataclass(frozen=True)
class Measure:
    """One thing asked for: a line item, a KPI, or a formula the question defines."""

    kind: Literal["metric", "kpi", "formula"]
    name: str  # metric or KPI name; "defined" for a question's own formula
    words: str  # as the question put it
    formula: str | None = None  # kind "formula": finrag's formula language
    unit: str = "money"  # money, per_share, shares, percent, ratio, times, days

    @property
    def is_rate(self) -> bool:
        """A value whose change is read in points, not in percent of itself."""
        return self.unit in ("percent", "ratio", "times", "days")


# "%" is no token: "EBITDA % margin" and "gross margin %" name the KPIs without it.
_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?|[a-z][a-z0-9&']*(?:/[a-z]+)?|[-+*/()]")
YEAR_TOKEN = re.compile(r"^(?:fy)?(?:19|20)?\d\d$")


def split_words(text: str) -> list[str]:
    text = text.lower().replace("’", "'")
    text = re.sub(r"'s\b", "", text)
    text = re.sub(r"\bcashflows?\b", "cash flow", text)
    text = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", text)  # long-term, year-over-year
    return _TOKEN.findall(text)


@cache
def measure_phrases() -> dict[str, Measure]:
    """Every way a question may name a measure: what users type for metrics, then KPI
    names and aliases, then metrics' printed labels (a KPI alias such as "gross margin"
    wins over a label some filing prints for gross profit)."""
    seen: dict[str, Measure] = {}

    def add(words: str, measure: Measure) -> None:
        key = " ".join(split_words(words))
        if key:
            seen.setdefault(key, measure)

    for item in metrics():
        measure = Measure("metric", item.name, item.display, unit=item.unit)
        for words in (item.name.replace("_", " "), item.display, *item.aliases):
            add(words, measure)
    for k in kpis():
        measure = Measure("kpi", k.name, k.display, unit=k.unit)
        for words in (k.name.replace("_", " "), k.display, *k.aliases):
            add(words, measure)
    for item in metrics():
        measure = Measure("metric", item.name, item.display, unit=item.unit)
        for label in item.labels:
            if COMPANY not in label and ": " not in label:
                add(label_key(label), measure)
    return seen


@cache
def _longest_phrase() -> int:
    return max(len(p.split()) for p in measure_phrases())


@cache
def computed_words() -> tuple[str, ...]:
    """Computed measures the metric dictionary describes but no KPI defines."""
    return tuple(" ".join(split_words(w)) for w in not_line_items())


def match(tokens: Sequence[str], i: int) -> tuple[int, Measure] | None:
    """The longest measure phrase starting at token ``i``: (tokens used, measure)."""
    phrases = measure_phrases()
    for n in range(min(_longest_phrase(), len(tokens) - i), 0, -1):
        words = " ".join(tokens[i : i + n])
        if words in phrases:
            return n, phrases[words]
        # "gross margins", "operating margins": the plural names the same measure.
        if words.endswith("s") and not words.endswith("ss") and words[:-1] in phrases:
            return n, phrases[words[:-1]]
    return None


def operator(words: Sequence[str]) -> str | None:
    text = " ".join(words)
    if any(w in ("+", "-", "*", "/") for w in words):
        return "op"
    for phrase, symbol in _OPERATOR_WORDS:
        if re.search(rf"(?<!\S){phrase}(?!\S)", text):
            return symbol
    return None


def defined_at(
    tokens: Sequence[str], i: int, definitions: dict[str, str]
) -> tuple[int, Measure] | None:
    for term, formula in definitions.items():
        words = term.split()
        for start in range(len(words)):  # "DPO" defined as "days payable outstanding (DPO)"
            tail = words[start:]
            if list(tokens[i : i + len(tail)]) == tail:
                measure = Measure("formula", "defined", term, formula, unit_of(formula))
                return len(tail), measure
    return None


def unit_of(formula: str) -> str:
    if re.match(r"^\s*100\s*\*", formula):
        return "percent"
    if re.match(r"^\s*36[05]\s*\*", formula):
        return "days"
    return "ratio" if "/" in formula else "money"


def translate(
    tokens: Sequence[str], definitions: dict[str, str], target: int | None = None
) -> str | None:
    """Words of a formula in finrag's formula language, or None when any word is not a
    measure, a number, an operator or a period:

    '365 * (average accounts payable between FY2016 and FY2017) / (FY2017 COGS + change
    in inventory between FY2016 and FY2017)' ->
    '365 * (avg(accounts_payable)) / (cost_of_revenue + (inventory - prev(inventory)))'
    """
    years = [_year(t, tokens[j - 1] if j else "") for j, t in enumerate(tokens)]
    target = target or max((y for y in years if y), default=None)
    out: list[str] = []
    pending: str | None = None  # "avg" or "change", waiting for its measure
    percent = False  # "X as a percentage of Y": 100 * X / Y
    year_before: int | None = None
    expect_operand = True
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if years[i]:
            year_before = years[i]
            i += 1
            continue
        if t in ("fy", "fiscal"):
            i += 1
            continue
        word_op = next(
            (
                (len(p.split()), s)
                for p, s in _OPERATOR_WORDS
                if list(tokens[i : i + len(p.split())]) == p.split()
            ),
            None,
        )
        if t in ("+", "-", "*", "/") or word_op:
            if expect_operand:
                return None
            symbol = t if t in ("+", "-", "*", "/") else word_op[1]
            if symbol == "%/":
                percent, symbol = True, "/"
            out.append(symbol)
            i += word_op[0] if word_op and t not in ("+", "-", "*", "/") else 1
            expect_operand = True
            continue
        if t == "(":
            if not expect_operand:
                return None
            out.append("(")
            i += 1
            continue
        if t == ")":
            if expect_operand:
                return None
            out.append(")")
            i += 1
            continue
        if t == "average" or t == "avg" or t == "mean":
            pending = "avg"
            i += 1
            continue
        if t in ("change", "increase", "difference") and tokens[i + 1 : i + 2] == ["in"]:
            pending = "change"
            i += 2
            continue
        if re.fullmatch(r"\d[\d,]*(?:\.\d+)?", t):
            if not expect_operand:
                return None
            out.append(t.replace(",", ""))
            expect_operand = False
            i += 1
            continue
        hit = defined_at(tokens, i, definitions) or match(tokens, i)
        if hit is not None:
            n, measure = hit
            if not expect_operand:
                return None
            term = f"({measure.formula})" if measure.kind == "formula" else measure.name
            following = next((y for y in years[i + n : i + n + 2] if y), None)
            when = year_before or following
            if pending == "avg":
                term = f"avg({term})"
            elif pending == "change":
                term = f"({term} - prev({term}))"
            elif when and target and when < target:
                gap = target - when
                term = f"prev({term})" if gap == 1 else f"ago({term}, {gap})"
            out.append(term)
            pending, year_before, expect_operand = None, None, False
            i += n
            continue
        if t in FILLER:
            i += 1
            continue
        return None
    if expect_operand or not out or out.count("(") != out.count(")"):
        return None
    formula = " ".join(out).replace("( ", "(").replace(" )", ")")
    return f"100 * ({formula})" if percent else formula


def _year(token: str, before: str) -> int | None:
    if not YEAR_TOKEN.match(token):
        return None
    digits = token.removeprefix("fy")
    if len(digits) == 2:
        if not token.startswith("fy") and before not in ("fy", "fiscal"):
            return None
        return 2000 + int(digits)
    if len(digits) != 4:
        return None
    return int(digits)
