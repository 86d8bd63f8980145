"""What a quantitative question asks, read without a model: the measures (line items of
the metric dictionary, KPIs, or a formula the question defines), the periods, and what
to do with them (state, compare over time, answer yes or no).

Reading is deliberately narrow: a question this module cannot read completely gets no
plan, with the reason, and goes the text route. A plan that reads half a question would
answer the wrong thing with the authority of a stored fact.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from finrag.answer.formula_words import (
    FILLER,
    YEAR_TOKEN,
    Measure,
    computed_words,
    defined_at,
    match,
    measure_phrases,
    operator,
    split_words,
    translate,
    unit_of,
)
from finrag.answer.verdicts import Rule, rule_for
from finrag.facts.dictionary import metric as dictionary_metric
from finrag.facts.lookup import Period
from finrag.facts.model import normalize_label
from finrag.facts.periods import FiscalCalendar

Operation = Literal["value", "change", "rank"]
Direction = Literal["up", "down", "positive", "negative"]

# Figures the statements do not print as one entity-wide line item: a segment's, a
# region's, an adjusted (non-GAAP) one, a count of stores. Those questions go the text route.
_NOT_IN_STATEMENTS = re.compile(
    r"\b(?:segments?|regions?|regional|geograph\w*|categor(?:y|ies)|products?|brands?|"
    r"organic(?:ally)?|adjusted|non ?gaap|core|constant currency|guidance|outlook|"
    r"per employee|employees|stores?|customers?|subscribers?|members?|backlog|"
    r"excluding|exclude|ex|pro forma|notional|guarantee|commitments?|events?|one ?time|"
    r"unusual|non ?recurring)\b"
)
# Questions after names or a ranking, not a figure: "which debt securities...", "who
# audits...", "what are the major acquisitions...".
_NOT_A_FIGURE = re.compile(
    r"^(?:which|who|whom|whose|where|name|list)\b|\b(?:major|main|largest|biggest|"
    r"smallest|key|notable|significant|primary|principal)\b"
)
_REASONS = re.compile(
    r"\b(?:why|drove|drive|drives|driven|drivers?|explain\w*|reasons?|due to|behind|"
    r"contribut\w*|caused?|impact\w*|affect\w*|influenc\w*|hurt|benefit(?:ed|ted|s)?)\b"
)
# A question after what the filing says, not only the figure: the figure comes from facts,
# the rest from quoted text (the mixed route), never a bare stored number.
_NARRATIVE = re.compile(
    r"\b(?:say|says|said|saying|discuss\w*|describ\w*|comment\w*|mention\w*|explain\w*|"
    r"why|drove|drivers?|outlook|guidance|expect\w*|risks?|one ?offs?|litigation|lawsuits?|"
    r"legal proceedings|narrative|highlight\w*|attribut\w*)\b"
)
_CHANGE = re.compile(
    r"\b(?:growth|grow|grew|grown|growing|change|changed|changes|increase[ds]?|increasing|"
    r"decrease[ds]?|decreasing|decline[ds]?|declining|drop(?:ped|s)?|fall|fell|fallen|"
    r"rise|rose|risen|improv\w*|deteriorat\w*|yoy|year over year|trend)\b"
)
_UP = re.compile(
    r"\b(?:grow|grew|grown|growing|increase[ds]?|increasing|rise|rose|risen|improv\w*)\b"
)
_DOWN = re.compile(
    r"\b(?:decrease[ds]?|decreasing|decline[ds]?|declining|drop(?:ped|s)?|fall|fell|fallen|"
    r"deteriorat\w*|shr[iu]nk\w*|reduc\w*)\b"
)
_SIGN = re.compile(r"\b(positive|negative)\b")
_YES_NO = re.compile(r"^(?:is|was|were|are|did|does|do|has|have|had|can|could|will)\b")
# Yes/no questions that ask for a judgement ("healthy", "capital intensive"): the numbers
# come from facts, the judgement from the model (the mixed route).
_JUDGEMENT = re.compile(
    r"\b(?:healthy|strong|weak|good|bad|efficient\w*|intensive|sustainable|consistent|"
    r"stable|reasonabl\w*|useful|relevant|historically)\b"
)
# A word right after a measure that makes it another measure ("cash flow", "revenue per
# employee", "inventory turnover" when turnover is no KPI alias).
_CONTINUES = re.compile(r"^\s*(?:flows?|per|yield|rates?|coverage|turnover|days|mix|split)\b")
_DEFINITION = re.compile(
    r"(?:^|[.?!:;]\s+)(?:(?P<term>[^.?!:;]{1,80}?)\s+(?:is|are|was)\s+(?:defined|calculated|"
    r"computed)\s+as|define\s+(?P<term2>[^.?!:;]{1,80}?)\s+as)\s*:?\s*(?P<body>[^?!;]+?)"
    r"(?:\.(?:\s|$)|[?!;]|$)",
    re.I,
)
# Notes in brackets ("[from cash flow statement]", "(in USD millions)") and abbreviations
# after a name ("days payable outstanding (DPO)") say nothing about what to compute.
_BRACKETS = re.compile(
    r"\[[^\]]*\]|\((?:from|as|in|per|see|using|i\.e\.|e\.g\.)[^)]*\)|\((?-i:[A-Z&%]{2,8})\)",
    re.I,
)
_SCALE = re.compile(r"\b(?:in|to)\s+(?:usd\s+|us\$\s*|\$\s*)?(millions|billions|thousands)\b", re.I)
_DECIMALS = re.compile(r"\b(?:to|with)\s+(one|two|three|four|1|2|3|4)\s+decimal", re.I)
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4}


@dataclass
class QuestionPlan:
    measures: list[Measure]
    periods: list[Period]  # oldest first
    operation: Operation = "value"
    yes_no: Direction | None = None  # the answer opens "Yes"/"No" by this test
    wants_reasons: bool = False  # "what drove...": numbers from facts, reasons from text
    narrative: bool = False  # "what did X say about...": numbers from facts, words from text
    judgement: bool = False  # "is it healthy": numbers from facts, the verdict from text
    scale: str | None = None  # "millions", "billions" as the question asks
    decimals: int | None = None
    rule: Rule | None = None  # a judgement a stated rule decides (finrag.answer.verdicts)

    @property
    def mixed(self) -> bool:
        ruled = self.judgement and self.rule is not None
        return self.wants_reasons or self.narrative or (self.judgement and not ruled)

    def describe(self) -> str:
        what = ", ".join(m.name for m in self.measures)
        when = ", ".join(p.label for p in self.periods)
        return f"{self.operation} of {what} for {when}" + (" (with reasons)" if self.mixed else "")


NO_YEAR = "names no fiscal year"


@dataclass(frozen=True)
class NoPlan:
    reason: str


def plan_question(
    question: str,
    years: Sequence[int],
    quarter: int | None,
    calendar: FiscalCalendar | None = None,
    company_words: Sequence[str] = (),
) -> QuestionPlan | NoPlan:
    """The plan for ``question`` given the fiscal years and quarter it names (read by
    the retriever's filters), or why there is none. With the company's fiscal calendar,
    a period named by its end date ("the quarter ended June 28, 2025") is its fiscal one.
    ``company_words`` (as the question names its companies) are no measure: "GM" is
    General Motors before it is gross margin."""
    if calendar is not None and (dated := _dated_period(question, calendar)):
        years, quarter = [dated.fiscal_year], dated.fiscal_quarter
    target = max(years, default=None)  # the year a defined formula's periods count from
    asking = _asking_text(question)
    definitions = _definitions(question, target)
    # "..., defined as X / Y?" inside the question: X / Y is what is asked.
    asking, inline = _split_inline(asking)
    key = _key(asking)
    if (ranked := _ranked_activities(key, years, quarter)) is not None:
        return ranked
    if m := _NOT_A_FIGURE.search(key):
        return NoPlan(f"asks for names or a ranking, not a figure ({m[0]!r})")
    if m := _NOT_IN_STATEMENTS.search(key):
        return NoPlan(f"asks for a figure the statements do not print as one line item ({m[0]!r})")
    named = {w for words in company_words for w in split_words(words)}
    tokens = [t for t in split_words(_BRACKETS.sub(" ", asking)) if t not in named]
    if inline:
        formula = translate(split_words(_BRACKETS.sub(" ", inline)), definitions, target)
        if formula is None:
            return NoPlan(f"defines a formula finrag cannot read ({inline.strip()[:60]!r})")
        named = next((m for i in range(len(tokens)) if (m := match(tokens, i))), None)
        found: list[Measure] | NoPlan = [
            _as_named(_defined_words(tokens), formula, named[1] if named else None)
        ]
    else:
        found = _measures(tokens, definitions, target)
    if isinstance(found, NoPlan):
        return found
    if not found:
        return NoPlan("names no line item or KPI of the metric dictionary")
    if not years:
        return NoPlan(NO_YEAR)
    if quarter is not None and len(years) > 1:
        first, last = min(years), max(years)
        two = len(set(years)) == 2
        # "revenue from Q3 FY2024 to Q3 FY2025": the quarter named with each year, the
        # same quarter a year apart.
        if two and len(_QUARTER_NAMED.findall(question)) >= 2:
            return _change_plan(found, Period(first, quarter), Period(last, quarter), key)
        # "cash from the end of fiscal 2023 to Q2 of fiscal 2024": a balance at a year's
        # end against the later year's quarter end; a year's and a quarter's flows do not
        # compare.
        if two and all(_instant(m) for m in found):
            return _change_plan(found, Period(first, None), Period(last, quarter), key)
        return NoPlan("mixes fiscal years and a quarter")
    plan = QuestionPlan(measures=found, periods=[])
    yes_no = bool(_YES_NO.match(key))
    plan.wants_reasons = bool(_REASONS.search(key))
    plan.narrative = bool(_NARRATIVE.search(key))
    # A growth KPI holds its own comparison: "revenue growth year over year in Q2 2025"
    # is one value, not a change between two growth rates.
    own = all(m.kind == "kpi" and ("growth" in m.name or "cagr" in m.name) for m in found)
    changes = not own and bool(_CHANGE.search(_without_measures(key, found)))
    if any(m.kind == "formula" for m in found):
        # A defined formula carries its own periods (averages, changes): one target year.
        plan.periods = [Period(max(years), quarter)]
    elif changes or len(years) > 1:
        first, last = min(years), max(years)
        if first == last:
            first = last - 1
        plan.periods = [Period(first, quarter), Period(last, quarter)]
        plan.operation = "change" if (changes or yes_no) else "value"
        if len(years) > 2 and not changes:
            plan.periods = [Period(y, quarter) for y in sorted(set(years))]
    else:
        plan.periods = [Period(years[0], quarter)]
    if yes_no:
        direction = _direction(key)
        moves = direction in ("up", "down")
        if direction is None or _JUDGEMENT.search(key) or (moves and plan.operation != "change"):
            plan.judgement = True
        else:
            plan.yes_no = direction
    elif _JUDGEMENT.search(key):
        plan.judgement = True
    if plan.judgement and (rule := rule_for(key, found)) is not None:
        plan.rule = rule
        plan.measures = [*found, *rule.extra]
        if rule.series:  # consecutive fiscal years: those named, else three to the year
            first, last = min(years), max(years)
            span = range(first, last + 1) if last > first else range(last - 2, last + 1)
            plan.periods = [Period(y, quarter) for y in span]
            plan.operation = "value"
    if m := _SCALE.search(question):
        plan.scale = m[1].lower()
    if m := _DECIMALS.search(question):
        plan.decimals = _NUMBER_WORDS.get(m[1].lower()) or int(m[1])
    return plan


_CASH_FLOWS = {"operating_cash_flow", "investing_cash_flow", "financing_cash_flow"}
_INLINE_DEFINITION = re.compile(r",?\s+(?:defined|calculated|computed)\s+as:?\s+", re.I)
# "..., using average shareholders' equity": how, not what; the KPI's definition says it.
_USING = re.compile(r",\s*(?:using|based on|with)\b[^,?]*", re.I)
_MONTH_DATE = (
    r"(?P<date>(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2},?\s+"
    r"(?:19|20)\d\d)"
)
_ENDED = re.compile(
    r"\b(?:(?P<quarter>quarter|three months|3 months|13 weeks)|(?P<year>(?:fiscal )?year|"
    r"twelve months|12 months|52 weeks|53 weeks))\s+(?:ended|ending)\s+(?:on\s+)?" + _MONTH_DATE,
    re.I,
)
_AS_OF = re.compile(r"\b(?:as of|as at|at|on)\s+" + _MONTH_DATE, re.I)


# "Among operating, investing and financing activities, which brought in the most cash?":
# the three net cash flows of one period, ranked. Words for the activities as filings and
# analysts write them.
_ACTIVITY_WORDS = (
    (re.compile(r"\boperat(?:ing|ions?)\b"), "operating_cash_flow"),
    (re.compile(r"\binvesting\b"), "investing_cash_flow"),
    (re.compile(r"\bfinancing\b"), "financing_cash_flow"),
)
_RANK_WORDS = re.compile(
    r"\b(?P<high>most|largest|highest|biggest|greatest|best)\b|"
    r"\b(?P<low>least|smallest|lowest|worst|fewest)\b"
)


def _ranked_activities(key: str, years: Sequence[int], quarter: int | None) -> QuestionPlan | None:
    """A plan ranking the cash-flow activities the question lists, or None."""
    if "cash" not in key or not (rank := _RANK_WORDS.search(key)) or len(set(years)) != 1:
        return None
    names = [name for pattern, name in _ACTIVITY_WORDS if pattern.search(key)]
    if len(names) < 2:
        return None
    measures = [m for m in measure_phrases().values() if m.kind == "metric" and m.name in names]
    unique = list({m.name: m for m in measures}.values())
    plan = QuestionPlan(measures=unique, periods=[Period(years[0], quarter)], operation="rank")
    # "brought in the most", "lost the least": the highest; "used the most": the lowest.
    outflow = re.search(
        r"\b(?:used|uses|use|spent|spends|spend|lost|loses|burn\w*|consum\w*)\s+"
        r"(?:the\s+)?$",
        key[: rank.start()],
    )
    plan.yes_no = "down" if bool(rank["low"]) != bool(outflow) else "up"  # the end ranked first
    return plan


_QUARTER_NAMED = re.compile(
    r"\bQ[1-4]\b|\b[1-4]Q\b|\b(?:first|second|third|fourth)\s+(?:fiscal\s+)?quarter\b", re.I
)


def _change_plan(found: list[Measure], old: Period, new: Period, key: str) -> QuestionPlan:
    """A change between two periods, answered Yes or No when the question asks a way."""
    plan = QuestionPlan(measures=found, periods=[old, new], operation="change")
    if _YES_NO.match(key) and (direction := _direction(key)) in ("up", "down"):
        plan.yes_no = direction
    # "What drove the change from Q2 FY2023 to Q2 FY2024?": the reasons too (mixed route).
    plan.wants_reasons = bool(_REASONS.search(key))
    plan.narrative = bool(_NARRATIVE.search(key))
    return plan


def _instant(measure: Measure) -> bool:
    """A balance at a date (a line item of the balance sheet), not a flow over a period."""
    return measure.kind == "metric" and dictionary_metric(measure.name).period == "instant"


def _split_inline(asking: str) -> tuple[str, str]:
    """(the question, a formula it defines inline or '')."""
    asking = _USING.sub("", asking)
    parts = _INLINE_DEFINITION.split(asking, maxsplit=1)
    return (parts[0], parts[1]) if len(parts) == 2 else (asking, "")


def _defined_words(tokens: Sequence[str]) -> str:
    """What the question calls its defined measure, as written: 'asset turnover',
    'buyback payout' (from the first measure word on)."""
    start = next((i for i in range(len(tokens)) if match(tokens, i)), None)
    words = [
        t
        for t in tokens[start or 0 :]
        if t not in FILLER and not YEAR_TOKEN.match(t) and not re.fullmatch(r"q[1-4]", t)
    ]
    return " ".join(words[-4:] if start is None else words[:4]) or "defined formula"


def _dated_period(question: str, calendar: FiscalCalendar) -> Period | None:
    """The fiscal period a question names by its end date, on the company's calendar."""
    from datetime import datetime

    if m := _ENDED.search(question):
        day = _parse_date(m["date"], datetime)
        if day is None:
            return None
        if m["quarter"]:
            return Period(calendar.fiscal_year(day), calendar.fiscal_quarter(day))
        return Period(calendar.fiscal_year(day))
    if m := _AS_OF.search(question):
        day = _parse_date(m["date"], datetime)
        if day is None or not calendar.is_quarter_end(day):
            return None
        quarter = calendar.fiscal_quarter(day)
        return Period(calendar.fiscal_year(day), None if quarter == 4 else quarter)
    return None


def _parse_date(text: str, datetime):
    text = re.sub(r"\s+", " ", text.replace(",", "").replace(".", "")).strip()
    month, day, year = text.split(" ")
    try:
        return datetime.strptime(f"{month[:3]} {day} {year}", "%b %d %Y").date()
    except ValueError:
        return None


def _direction(key: str) -> Direction | None:
    if m := _SIGN.search(key):
        return m[1]  # type: ignore[return-value]
    up, down = _UP.search(key), _DOWN.search(key)
    if up and not down:
        return "up"
    if down and not up:
        return "down"
    return None


# ------------------------------------------------------------------ reading the words


def _asking_text(question: str) -> str:
    """The question itself, without the instructions around it (FinanceBench wraps
    "what is the FY2018 net PPNE for 3M?" in "Answer ... using the balance sheet: ...")."""
    sentences = re.split(r"(?<=[.?!])\s+", question.strip())
    asked = [s for s in sentences if s.rstrip().endswith("?")]
    text = asked[0] if asked else sentences[0]
    return text.rsplit(": ", 1)[-1] if ": " in text else text


def _key(text: str) -> str:
    key = normalize_label(text).replace(" & ", " and ")
    return re.sub(r"\bnon (?=\w)", "non", key)


def _measures(
    tokens: list[str], definitions: dict[str, str], target: int | None
) -> list[Measure] | NoPlan:
    """The measures the asking text names, in order; several joined by arithmetic words
    ("EBITDA less capex") become one formula."""
    spans: list[tuple[int, int, Measure]] = []
    i = 0
    while i < len(tokens):
        defined = defined_at(tokens, i, definitions)
        if defined is not None:
            n, measure = defined
            words = measure.words.split()
            named = match(words, 0)
            if named is not None and named[0] == len(words):
                measure = _as_named(measure.words, measure.formula or "", named[1])
        elif (hit := match(tokens, i)) is not None:
            n, measure = hit
        else:
            i += 1
            continue
        rest = " ".join(tokens[i + n : i + n + 2])
        if _CONTINUES.match(rest):
            return NoPlan(f"asks for '{' '.join(tokens[i : i + n])} {rest.split()[0]}', no measure")
        if measure.kind != "formula" and (own := _defined_as(measure, definitions)):
            measure = own
        spans.append((i, i + n, measure))
        i += n
    names = {m.name for _, _, m in spans}
    if names & _CASH_FLOWS and "cash_and_equivalents" in names:
        # "cash did it generate from operating activities": one cash flow, not the balance.
        spans = [s for s in spans if s[2].name != "cash_and_equivalents"]
    text = " ".join(tokens)
    for words in computed_words():
        if re.search(rf"(?<!\S){re.escape(words)}(?!\S)", text) and not any(
            s[2].kind != "metric" for s in spans
        ):
            return NoPlan(f"asks for {words}, which no KPI defines")
    if len(spans) < 2:
        return [m for _, _, m in spans]
    # Arithmetic between measures: the span from the first to the last must read as one
    # formula, or the question is about several measures side by side.
    between = [tokens[a:b] for (_, a, _), (b, _, _) in itertools.pairwise(spans)]
    if any(operator(words) for words in between):
        formula = translate(tokens[spans[0][0] : spans[-1][1]], definitions, target)
        if formula is None:
            return NoPlan("names several measures in arithmetic finrag cannot read")
        words = " ".join(tokens[spans[0][0] : spans[-1][1]])
        return [Measure("formula", "defined", words, formula, unit_of(formula))]
    return list({m.name: m for _, _, m in spans}.values())


# ------------------------------------------------------------------ definitions


def _defined_as(measure: Measure, definitions: dict[str, str]) -> Measure | None:
    """The question's own formula for a measure it also names another way ("DPO is defined
    as ..." and "days payable outstanding"): the question's definition wins."""
    for term, formula in definitions.items():
        words = term.split()
        hit = match(words, 0)
        if hit is not None and hit[0] == len(words) and hit[1].name == measure.name:
            return _as_named(term, formula, measure)
    return None


def _as_named(words: str, formula: str, named: Measure | None) -> Measure:
    """A defined formula, stated in the unit of the measure the question calls it: "R&D
    intensity, defined as R&D / revenue" is a percentage, as the KPI of that name is."""
    if named is not None and named.unit == "percent" and unit_of(formula) == "ratio":
        return Measure("formula", "defined", words, f"100 * ({formula})", "percent")
    return Measure("formula", "defined", words, formula, unit_of(formula))


def _definitions(question: str, target: int | None) -> dict[str, str]:
    """Formulas the question defines ("DPO is defined as: 365 * ..."), by the defined
    term's words; a definition that does not read as a formula is left out."""
    out: dict[str, str] = {}
    for m in _DEFINITION.finditer(_BRACKETS.sub(" ", question)):
        term = m["term"] or m["term2"]
        term_tokens = [t for t in split_words(term) if t not in ("the", "a", "an", "unadjusted")]
        # "What is X? X is defined as": the term is the last words before "is defined".
        term_tokens = term_tokens[-4:]
        formula = translate(split_words(m["body"]), {}, target)
        if formula is not None and term_tokens:
            out[" ".join(term_tokens)] = formula
    return out


def _without_measures(key: str, found: Sequence[Measure]) -> str:
    """The question's words outside its measures' own ("Net change in cash" is a line item)."""
    text = key
    for m in found:
        for words in {m.words.lower(), normalize_label(m.words)}:
            text = text.replace(words, " ")
    for phrase, measure in measure_phrases().items():
        if measure in found and measure.kind != "formula":
            text = re.sub(rf"(?<!\S){re.escape(phrase)}(?!\S)", " ", text)
    return text
