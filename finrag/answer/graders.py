"""Graders around the text route's answer step (answer.graders; off by default).

Two cheap checks, no model call of their own:

- **Passages** (``grade_passages``): before the answer step, each retrieved passage is
  graded against the question: *relevant* when it holds at least ``MIN_TERM_SHARE`` of
  the question's topic terms (the words left once company names, periods and question
  words are dropped; a term matches a passage word sharing its first five letters), or
  when its cosine similarity to the question reaches answer.min_relevance (the threshold
  already calibrated for refusals). Irrelevant passages are dropped, but the best
  ``FLOOR`` in retrieval order always stay, so the grader never empties the context.
- **The answer against the question** (``asked`` and ``named``): does the answer name the
  company, the period and the measure the question asks about? The company by its stored
  name, ticker or the words the question named it with; the period by its year ("2022",
  "FY22") or quarter ("Q2", "second quarter"); the measure by any name the metric
  dictionary gives it (finrag/facts/metrics). A part the question does not ask is not
  checked. A failed check gets one retry from the ungraded passages (when the grader
  dropped any: the dropped one may have held the answer), then a hedge: a note in the
  answer naming what it does not say.

``graded_answer`` runs both around one answer call; the pipeline's hook is one line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache

from finrag.answer.result import Answer
from finrag.config import Settings
from finrag.facts.dictionary import metrics
from finrag.retrieve.hybrid import Hit, SearchResult
from finrag.retrieve.query import analyze_question

FLOOR = 3  # passages kept whatever their grade
MIN_TERM_SHARE = 0.34  # of the question's topic terms a relevant passage holds
_STEM = 5  # letters two words share to count as one term ("margins" / "margin")

# Words of a question that say how it asks, not what about.
_QUESTION_WORDS = frozenset(
    re.findall(
        r"\w+",
        "a about according after all also an and any are as at based be been by can company "
        "company's companies compared could did do does during each for from fiscal fy give "
        "had has have how in into is it its last latest many much of on or over per period "
        "please quarter report reported reports the their them there these this those to "
        "total use using was were what when where which while who why will with within would "
        "year years yes no",
    )
)
_WORD = re.compile(r"[a-z][a-z&-]*[a-z]|[a-z]")
_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth"}


# -- passages ---------------------------------------------------------------------------


def topic_terms(question: str, names: Sequence[str] = ()) -> list[str]:
    """The question's topic words: lower-cased, question words and company names out."""
    named = {w for n in names for w in _WORD.findall(n.lower())}
    focus = re.sub(r"['’]s\b", "", analyze_question(question).focus.lower())
    words = [w for w in _WORD.findall(focus) if w not in _QUESTION_WORDS and w not in named]
    return list(dict.fromkeys(w for w in words if len(w) > 2 or "&" in w))


def passage_grade(terms: Sequence[str], hit: Hit) -> float:
    """Share of ``terms`` the passage holds (by their first letters)."""
    if not terms:
        return 1.0
    stems = {w[:_STEM] for w in _WORD.findall(hit.content.lower())}
    return sum(t[:_STEM] in stems for t in terms) / len(terms)


def relevant(terms: Sequence[str], hit: Hit, min_cosine: float) -> bool:
    if hit.dense_score is not None and hit.dense_score >= min_cosine:
        return True
    return passage_grade(terms, hit) >= MIN_TERM_SHARE


def grade_passages(settings: Settings, question: str, found: SearchResult) -> SearchResult:
    """``found`` without the passages graded irrelevant (the first FLOOR always stay);
    ``found`` itself when the graders are off or nothing is dropped."""
    if not settings.answer.graders or len(found.hits) <= FLOOR:
        return found
    terms = topic_terms(question, _company_words(found))
    kept = [
        h
        for i, h in enumerate(found.hits)
        if i < FLOOR or relevant(terms, h, settings.answer.min_relevance)
    ]
    if len(kept) == len(found.hits):
        return found
    return replace(found, hits=kept)


def _company_words(found: SearchResult) -> list[str]:
    f = found.filters
    return [c.name for c in f.companies] + f.matched.get("company", [])


# -- the answer against the question ----------------------------------------------------


@dataclass(frozen=True)
class Asked:
    """What a question asks about: each company by the names that count for it, the
    years and quarter, and each measure by its names."""

    companies: list[list[str]] = field(default_factory=list)
    years: list[int] = field(default_factory=list)
    quarter: int | None = None
    measures: list[list[str]] = field(default_factory=list)


def asked(question: str, found_filters) -> Asked:
    """From the question's parsed filters (finrag.retrieve.filters) and the measures the
    metric dictionary finds in its words."""
    matched = found_filters.matched.get("company", [])
    companies = []
    for c in found_filters.companies:
        names = [c.name, _short_name(c.name), *([c.ticker] if c.ticker else [])]
        names += [m for m in matched if _contains(c.name, m) or _contains(m, _short_name(c.name))]
        companies.append(list(dict.fromkeys(n for n in names if n)))
    return Asked(
        companies=companies,
        years=list(found_filters.years),
        quarter=found_filters.quarter,
        measures=measures_in(question),
    )


def named(wanted: Asked, text: str) -> dict[str, bool | None]:
    """For entity, period and measure: whether ``text`` names every one asked (None: the
    question asks none)."""
    return {
        "entity": all(any(_contains(text, n) for n in names) for names in wanted.companies)
        if wanted.companies
        else None,
        "period": _names_period(wanted, text) if wanted.years or wanted.quarter else None,
        "measure": all(any(_contains(text, n) for n in names) for names in wanted.measures)
        if wanted.measures
        else None,
    }


def relevance(parts: dict[str, bool | None]) -> float | None:
    """Share of the asked parts the answer names; None when the question asks none."""
    checked = [v for v in parts.values() if v is not None]
    return round(sum(checked) / len(checked), 4) if checked else None


def missing(parts: dict[str, bool | None]) -> list[str]:
    return [k for k, v in parts.items() if v is False]


def measures_in(question: str) -> list[list[str]]:
    """Each dictionary measure the question asks about (its instructions, "use the cash
    flow statement", aside), as all its names; a longer phrase wins over one inside it
    ("gross margin" over "margin")."""
    text = f" {_plain(analyze_question(question).focus)} "  # instructions aside
    found: list[list[str]] = []
    for phrase, names in _phrases():
        if f" {phrase} " in text:
            text = text.replace(f" {phrase} ", " | ")
            if names not in found:
                found.append(names)
    return found


@cache
def _phrases() -> tuple[tuple[str, list[str]], ...]:
    out: list[tuple[str, list[str]]] = []
    for item in metrics():
        names = [item.display, item.name.replace("_", " "), *item.aliases, *item.labels]
        plain = list(dict.fromkeys(p for n in names if len(p := _plain(n)) > 2))
        out += [(p, plain) for p in plain]
    return tuple(sorted(out, key=lambda p: -len(p[0])))


def _names_period(wanted: Asked, text: str) -> bool:
    for year in wanted.years:
        short = f"{year % 100:02d}"
        if not re.search(rf"(?<!\d){year}(?!\d)|\bFY\s?'?{short}\b", text, re.I):
            return False
    if wanted.quarter:
        q = wanted.quarter
        pattern = rf"\bQ{q}\b|\b{_ORDINALS.get(q, '')}[- ]quarter\b|\b{q}Q\b"
        if not re.search(pattern, text, re.I):
            return False
    return True


def _short_name(name: str) -> str:
    """'Best Buy Co., Inc.' -> 'Best Buy': the name without its legal form."""
    return re.sub(
        r"[,\s]+(?:co|corp|corporation|inc|incorporated|company|ltd|plc|llc|lp|the|group|"
        r"holdings?)\.?(?=[,\s]|$).*$",
        "",
        name,
        flags=re.I,
    ).strip()


def _plain(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9&]+", text.lower()))


def _contains(text: str, name: str) -> bool:
    name = _plain(name)
    return bool(name) and f" {name} " in f" {_plain(text)} "


# -- both, around one answer --------------------------------------------------------------

HEDGE = "(Note: the answer does not name the {parts} asked about; read it with care.)"


def graded_answer(
    settings: Settings,
    question: str,
    found: SearchResult,
    answer_from: Callable[[SearchResult], Answer],
) -> Answer:
    """``answer_from`` on the graded passages, then the answer checked against the
    question: on failure one retry from the ungraded passages (when any were dropped),
    then a hedge. With answer.graders off, just ``answer_from(found)``."""
    if not settings.answer.graders:
        return answer_from(found)
    graded = grade_passages(settings, question, found)
    dropped = len(found.hits) - len(graded.hits)
    answer = answer_from(graded)
    record = {"passages_dropped": dropped}
    answer.retrieval["graders"] = record
    if answer.refused or answer.route == "facts" or not answer.answer.strip():
        return answer
    wanted = asked(question, found.filters)
    parts = named(wanted, answer.answer)
    record["answer_check"] = parts
    if not missing(parts):
        return answer
    if dropped:
        retried = answer_from(found)
        retried.tokens = {k: retried.tokens.get(k, 0) + v for k, v in answer.tokens.items()}
        retried.retrieval["graders"] = record
        record["retried"] = True
        if not retried.refused:
            answer = retried
            parts = named(wanted, answer.answer)
            record["answer_check"] = parts
            if not missing(parts):
                return answer
    words = " and ".join(
        {"entity": "company", "measure": "measure"}.get(p, p) for p in missing(parts)
    )
    answer.answer = f"{answer.answer.rstrip()} {HEDGE.format(parts=words)}"
    answer.flags.append(f"grader: the answer does not name the {words} asked about")
    record["hedged"] = True
    return answer
