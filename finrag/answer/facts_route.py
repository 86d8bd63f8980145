"""The facts route: a question asking one reported line item of one company for one period,
answered from the facts store with its printed cell as the citation, no model involved.

Anything it cannot pin down (two metrics, a computation, no single period, a period the
store lacks, two values for one period) returns None, and the text route answers.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import cache
from pathlib import Path

import psycopg

from finrag.answer.citations import Citation
from finrag.answer.extraction import CheckedFact
from finrag.answer.result import Answer
from finrag.facts.dictionary import COMPANY, Metric, label_key, metrics, not_line_items
from finrag.facts.lookup import MetricValue, metric_values
from finrag.facts.model import normalize_label
from finrag.facts.periods import FiscalCalendar
from finrag.retrieve.context import ContextChunk
from finrag.retrieve.hybrid import Hit

FLAG = "answered from the facts store (no model)"
# Words that ask for more than one printed value: a computation, a comparison, a reason.
# "Gross margin" is a printed line item too, but a reader asking for it means the ratio.
_NOT_A_LOOKUP = re.compile(
    r"\b(?:growth|grow|grew|growing|ratio|ratios|margin|margins|compare|compared|comparing|"
    r"comparison|vs|versus|average|averages|why|drove|drive|driven|drivers?|explain|"
    r"explains|difference|trend|trends|yoy|cagr)\b"
)
# ...and words that do so outside a line item's own name ("Net change in cash").
_CHANGE = re.compile(r"\b(?:change|changed|changes|increase|increased|decrease|decreased)\b")
# A word right after a matched phrase that makes it another measure: the "cash" of "cash
# flow", the "inventory" of "inventory turnover", the "revenue" of "revenue per employee".
_CONTINUES = re.compile(r"^\s*(?:flows?|per|yield|rates?|coverage|turnover|days)\b")
_SUFFIXES = re.compile(
    r"(?:,?\s+(?:inc|incorporated|co|corp|corporation|company|ltd|limited|plc|llc|n\.?v|"
    r"s\.?a|ag)\.?)+$",
    re.I,
)
_MONTHS_WORDS = {3: "three months", 6: "six months", 9: "nine months", 12: "year"}


def metric_question(question: str) -> Metric | None:
    """The one metric a question asks for; None when it names none or several, or asks
    for a computation or comparison."""
    text = _question_key(question)
    if _NOT_A_LOOKUP.search(text):
        return None
    found: list[tuple[int, int, Metric]] = []
    for phrase, item in _phrases():  # longest first: "cost of revenue" before "revenue"
        for m in re.finditer(rf"(?<![\w&]){re.escape(phrase)}(?![\w&])", text):
            if any(m.start() < end and start < m.end() for start, end, _ in found):
                continue
            if _CONTINUES.match(text[m.end() :]):
                return None
            found.append((m.start(), m.end(), item))
    if len({item.name for _, _, item in found}) != 1:
        return None
    # The rest of the question, without the metric's own words ("Net change in cash").
    rest = text
    for start, end, _ in sorted(found, reverse=True):
        rest = rest[:start] + " " + rest[end:]
    if _CHANGE.search(rest) or any(_has(rest, p) for p in _not_line_items()):
        return None
    return found[0][2]


def answer_from_facts(
    conn: psycopg.Connection,
    question: str,
    metric: Metric,
    company_id: int,
    company_name: str,
    fiscal_year: int,
    fiscal_quarter: int | None,
) -> Answer | None:
    """The answer from the one stored value for the period asked; None when the store
    holds none, or two that differ."""
    asked = [
        v
        for v in metric_values(conn, company_id, metric, fiscal_year=fiscal_year)
        if _is_period(conn, v, fiscal_year, fiscal_quarter)
    ]
    if len({v.value for v in asked}) != 1:
        return None
    value = asked[0]
    fact = value.fact
    chunk = _chunk(conn, fact.chunk_id, fact.page) if fact.chunk_id is not None else None
    where = chunk.section if chunk and chunk.section else _statement_words(fact.statement)
    citation = Citation(
        n=1,
        document=Path(fact.document).stem,
        pages=[fact.page, fact.page],
        section=" · ".join(p for p in (where, value.period) if p),
        chunk_id=fact.chunk_id,
        quote=_quote(fact.label, fact.printed, fact.concept),
        flagged=chunk.hit.flagged if chunk else None,
    )
    subject = f"{_short_name(company_name)}'s {_metric_words(metric)}"
    verb = "were" if _plural(metric.display) else "was"
    text = f"{subject} {_period_words(value, fiscal_quarter)} {verb} {_amount(value)} [1]."
    return Answer(
        question=question,
        answer=text,
        route="facts",
        citations=[citation],
        facts=[CheckedFact(source=1, quote=citation.quote, value=fact.printed, ok=True)],
        fact_values=[value.as_dict()],
        flags=[FLAG],
        chunks=[chunk] if chunk else [],
    )


def _quote(label: str | None, printed: str, concept: str | None) -> str:
    # A tagged number has no row label of its own: its tag says what it is.
    if label:
        return f"{label}: {printed}"
    return f"{printed} (tagged {concept})" if concept else printed


def _is_period(
    conn: psycopg.Connection, value: MetricValue, year: int, quarter: int | None
) -> bool:
    """Whether a value is for the period asked: the quarter's three months or the full
    year; for a balance, the quarter's or the year's end on the filing's fiscal calendar."""
    fact = value.fact
    if not fact.instant:
        if quarter is None:
            return fact.months == 12 and fact.fiscal_year == year
        return fact.months == 3 and (fact.fiscal_year, fact.fiscal_quarter) == (year, quarter)
    if fact.period_end is None:
        return False
    calendar = _calendar(conn, fact.document_id)
    ends = calendar.fiscal_year(fact.period_end), calendar.fiscal_quarter(fact.period_end)
    # A balance at a date that is not a quarter end (a "6m to" column) has no quarter.
    return ends == (year, quarter or 4) and calendar.is_quarter_end(fact.period_end)


def _calendar(conn: psycopg.Connection, document_id: int) -> FiscalCalendar:
    row = conn.execute(
        "SELECT period_end, fiscal_quarter FROM documents WHERE id = %s", (document_id,)
    ).fetchone()
    return FiscalCalendar.from_document(*(row or (None, None)))


def _chunk(conn: psycopg.Connection, chunk_id: int, page: int | None) -> ContextChunk | None:
    """The chunk that prints the fact, as the excerpt [1] (the chat's checks read it)."""
    row = conn.execute(
        """
        SELECT c.id, c.document_id, d.path, co.name, d.fiscal_year, d.fiscal_quarter,
               d.form_type, c.kind, c.page_start, c.page_end, c.section_path, c.content,
               1.0, NULL, NULL, NULL, NULL, c.flagged
        FROM chunks c JOIN documents d ON d.id = c.document_id
        LEFT JOIN companies co ON co.id = d.company_id
        WHERE c.id = %s
        """,
        (chunk_id,),
    ).fetchone()
    return ContextChunk(1, Hit(*row)) if row else None


def _amount(value: MetricValue) -> str:
    """As filings print it: money and shares in millions, per-share amounts in units."""
    unit = value.fact.unit or ""
    amount = value.value
    if value.metric.unit == "per_share":
        return _money(unit, f"{amount:,.2f}" if amount == round(amount, 2) else f"{amount:,}")
    if unit == "%":
        return f"{_plain(amount)}%"
    if unit == "pure":
        return f"{_plain(amount * 100)}%"
    scaled = _millions(amount)
    if value.metric.unit == "shares" or unit == "shares":
        return f"{scaled} shares"
    return _money(unit, scaled)


def _millions(amount: Decimal) -> str:
    # Exact, never rounded: a filing in thousands keeps its last digits.
    if amount % 1000:
        return f"{amount:,f}"
    return f"{_plain(amount / 1_000_000)} million"


def _plain(number: Decimal) -> str:
    text = f"{number:,f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _money(unit: str, amount: str) -> str:
    sign, digits = ("-", amount[1:]) if amount.startswith("-") else ("", amount)
    currency = unit.split("/")[0]  # per-share amounts are in "USD/shares"
    return f"{sign}${digits}" if currency == "USD" else f"{sign}{currency} {digits}".strip()


def _period_words(value: MetricValue, quarter: int | None) -> str:
    fact = value.fact
    name = f"FY{fact.fiscal_year}" + (f" Q{quarter}" if quarter else "")
    if fact.period_end is None:
        return f"at the end of {name}" if fact.instant else f"in {name}"
    end = f"{fact.period_end:%B} {fact.period_end.day}, {fact.period_end.year}"
    if fact.instant:
        return f"at the end of {name} ({end})"
    return f"in {name} (the {_MONTHS_WORDS.get(fact.months or 0, 'period')} ended {end})"


def _metric_words(metric: Metric) -> str:
    display = metric.display
    return display[0].lower() + display[1:] if display[1:2].islower() else display


def _plural(display: str) -> bool:
    """Whether the head noun is plural: 'Total assets' were, 'Net cash provided by...' was."""
    head = re.split(r",| (?:provided|used|by|of|for|from|to|paid|outstanding|and)\b", display)
    last = head[0].split()[-1].lower()
    return last.endswith("s") and not last.endswith(("ss", "us", "is"))


def _short_name(name: str) -> str:
    """'Best Buy Co., Inc.' -> 'Best Buy'."""
    return _SUFFIXES.sub("", name).strip() or name


def _statement_words(statement: str) -> str:
    return statement.replace("_", " ")


def _question_key(question: str) -> str:
    key = normalize_label(question).replace(" & ", " and ")
    return re.sub(r"\bnon (?=\w)", "non", key)


def _has(text: str, phrase: str) -> bool:
    return re.search(rf"(?<![\w&]){re.escape(phrase)}(?![\w&])", text) is not None


@cache
def _phrases() -> list[tuple[str, Metric]]:
    """Every way a question may name a metric, longest first; what users type (name,
    display, aliases) wins over a printed label claimed by another metric."""
    seen: dict[str, Metric] = {}
    for item in metrics():
        for word in (item.name.replace("_", " "), item.display, *item.aliases):
            seen.setdefault(_question_key(word), item)
    for item in metrics():
        for label in item.labels:
            if COMPANY not in label and ": " not in label:
                seen.setdefault(label_key(label), item)
    return sorted(((p, m) for p, m in seen.items() if p), key=lambda pm: -len(pm[0]))


@cache
def _not_line_items() -> tuple[str, ...]:
    """Computed measures ('free cash flow', 'operating margin'): not one printed value."""
    return tuple(_question_key(words) for words in not_line_items())
