"""The facts route: a quantitative question answered from the facts store and the
calculator, every number a stored fact (cited by document, page and row) or a
calculation on them (shown with its inputs).

A plan (finrag.answer.question_plan) says what is asked; here each measure is resolved
for each company and period. Anything missing or ambiguous ends the route with the
reason, and the text route answers instead: the route never guesses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import psycopg

from finrag.answer.calculator import CalculationError, calculate
from finrag.answer.citations import Citation
from finrag.answer.extraction import CalculationOutcome, CheckedFact
from finrag.answer.fact_words import (
    amount_words,
    change_words,
    measure_words,
    period_words,
    short_name,
)
from finrag.answer.figure import Company, Figure
from finrag.answer.question_plan import Measure, QuestionPlan
from finrag.answer.result import Answer
from finrag.errors import UsageError
from finrag.facts.dictionary import metric as dictionary_metric
from finrag.facts.kpi import KpiGap, KpiValue, compute, evaluate, kpi
from finrag.facts.lookup import MetricValue, Period, Unresolved, is_metric, resolve_metric
from finrag.facts.periods import FiscalCalendar
from finrag.facts.statements import period_key
from finrag.facts.store import query_facts
from finrag.retrieve.context import ContextChunk
from finrag.retrieve.hybrid import Hit

FLAG = "answered from the facts store and the calculator"


@dataclass(frozen=True)
class Gap:
    """A measure the facts store lacks for a company and period (not an ambiguity: a
    conflict between printed values is no reason to refuse)."""

    company: Company
    measure: Measure
    period: Period
    held: tuple[str, ...] = ()  # the periods the store does hold the measure for


@dataclass
class FactsOutcome:
    answer: Answer | None
    reason: str  # why this route answered, or why it could not
    missing: list[Gap] = field(default_factory=list)
    periods: list[Period] = field(default_factory=list)  # the periods the plan asked for


def answer_with_facts(
    conn: psycopg.Connection,
    question: str,
    plan: QuestionPlan,
    companies: list[Company],
) -> FactsOutcome:
    """The answer from stored facts, or why there is none (missing, ambiguous)."""
    figures: list[Figure] = []
    gaps: list[str] = []
    missing: list[Gap] = []
    for company in companies:
        for measure in plan.measures:
            for period in plan.periods:
                found = _resolve(conn, company, measure, period)
                if isinstance(found, str):
                    gaps.append(found)
                    if found.startswith("missing"):
                        held = _held_periods(conn, company, measure)
                        missing.append(Gap(company, measure, period, held))
                else:
                    figures.append(found)
    if gaps:
        reason = "facts store: " + "; ".join(gaps[:3])
        return FactsOutcome(None, reason, missing, list(plan.periods))
    answer = _compose(conn, question, plan, companies, figures)
    return FactsOutcome(answer, f"facts store: {plan.describe()}")


def _resolve(conn, company: Company, measure: Measure, period: Period) -> Figure | str:
    """A figure, or a sentence naming what is missing or ambiguous."""
    if measure.kind == "metric":
        item = dictionary_metric(measure.name)
        found = resolve_metric(conn, company.id, item, period)
        if isinstance(found, Unresolved):
            return f"{found.reason}: {found.detail}"
        figure = Figure(company, measure, period, found.value, item.unit, _currency(found), [found])
        figure.dated = _plausible_end(conn, found)
        return figure
    if measure.kind == "kpi":
        result = compute(conn, company.id, kpi(measure.name), period)
    else:
        try:
            result = evaluate(
                conn,
                company.id,
                measure.formula or "",
                period,
                name="defined",
                display=measure.words,
                unit=measure.unit,
            )
        except UsageError as exc:  # a formula read from words the KPI language refuses
            return f"formula: {exc.message}"
    if isinstance(result, KpiGap):
        return f"{result.reason}: {result.detail}"
    return _figure(company, measure, period, result)


def _held_periods(conn, company: Company, measure: Measure) -> tuple[str, ...]:
    """The periods the store holds a line item for (for a refusal to name); none for
    KPIs and formulas, whose inputs each have their own."""
    if measure.kind != "metric":
        return ()
    item = dictionary_metric(measure.name)
    facts = query_facts(
        conn,
        company_id=company.id,
        concepts=item.concepts,
        labels=item.normalized_labels,
        entity_total=True,
    )
    instant = item.period == "instant"
    keys = {
        period_key(f)
        for f in facts
        if f.value is not None and f.instant == instant and is_metric(f, item)
    }
    # Only the periods a question can name: a year, a quarter, a balance date.
    return tuple(sorted(k for k in keys if k.startswith(("FY", "at "))))


def _figure(company: Company, measure: Measure, period: Period, result: KpiValue) -> Figure:
    inputs = [i.value for i in result.inputs]
    return Figure(
        company,
        measure,
        period,
        Decimal(str(result.value)),
        result.unit,
        next((_currency(v) for v in inputs if _currency(v)), None),
        inputs,
        result.formula,
        result.expression,
    )


def _plausible_end(conn: psycopg.Connection, value: MetricValue) -> bool:
    """Whether a fact's end date closes a quarter of its filing's fiscal calendar. A
    header the PDF text mangled ("Year Ended December 3 2016" for December 31) gives a
    date no answer states."""
    end = value.fact.period_end
    row = conn.execute(
        "SELECT period_end, fiscal_quarter FROM documents WHERE id = %s",
        (value.fact.document_id,),
    ).fetchone()
    if end is None or row is None or row[0] is None:
        return True
    return FiscalCalendar.from_document(*row).is_quarter_end(end)


def _currency(value: MetricValue) -> str | None:
    unit = value.fact.unit or ""
    return unit.split("/")[0] if unit and unit not in ("shares", "pure", "%") else None


# ------------------------------------------------------------------ the answer


class _Sources:
    """Citation numbers for facts, in order of first use: one per stored fact."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn
        self.by_fact: dict[int, int] = {}
        self.citations: list[Citation] = []
        self.checked: list[CheckedFact] = []
        self.chunks: list[ContextChunk] = []
        self.values: list[dict] = []

    def answer(self, question: str, text: str, calculations: list, flags: list[str]) -> Answer:
        """The facts route's answer, citing these sources."""
        return Answer(
            question=question,
            answer=text,
            route="facts",
            citations=self.citations,
            calculations=calculations,
            facts=self.checked,
            fact_values=self.values,
            flags=flags,
            chunks=self.chunks,
        )

    def cite(self, value: MetricValue) -> int:
        fact = value.fact
        if fact.id in self.by_fact:
            return self.by_fact[fact.id]
        n = len(self.citations) + 1
        self.by_fact[fact.id] = n
        chunk = _chunk(self.conn, fact.chunk_id, n) if fact.chunk_id is not None else None
        where = chunk.section if chunk and chunk.section else fact.statement.replace("_", " ")
        row = fact.label or (f"tagged {fact.concept}" if fact.concept else None)
        if row and fact.dimensions:  # a segment's, a region's: which one
            # A printed segment row is labelled by its member: "Americas", not twice.
            members = [m.split(":")[-1] for _, m in fact.dimensions if m != fact.label]
            row += " · " + ", ".join(members) if members else ""
        quote = f"{fact.label}: {fact.printed}" if fact.label else fact.printed
        self.citations.append(
            Citation(
                n=n,
                document=Path(fact.document).stem,
                pages=[fact.page, fact.page],
                section=" · ".join(p for p in (where, row, value.period) if p),
                chunk_id=fact.chunk_id if fact.chunk_id is not None else 0,
                quote=quote,
                flagged=chunk.hit.flagged if chunk else None,
                path=fact.document,
                document_id=fact.document_id,
                ocr=chunk.hit.ocr if chunk else False,
            )
        )
        self.checked.append(CheckedFact(source=n, quote=quote, value=fact.printed, ok=True))
        ocr = chunk.hit.ocr if chunk else False
        self.values.append({"n": n, **value.as_dict(), **({"ocr": True} if ocr else {})})
        if chunk is not None:
            self.chunks.append(chunk)
        return n

    def marks(self, figure: Figure) -> str:
        numbers = sorted({self.cite(v) for v in figure.inputs})
        return f"[{', '.join(map(str, numbers))}]"


def _compose(
    conn: psycopg.Connection,
    question: str,
    plan: QuestionPlan,
    companies: list[Company],
    figures: list[Figure],
) -> Answer:
    sources = _Sources(conn)
    calculations: list[CalculationOutcome] = []
    sentences: list[str] = []
    verdicts: list[bool] = []
    series: list[dict] = []
    for company in companies:
        for measure in plan.measures:
            mine = [f for f in figures if f.company == company and f.measure == measure]
            mine.sort(key=lambda f: (f.period.fiscal_year, f.period.fiscal_quarter or 0))
            if len({f.period for f in mine}) >= 2:
                series.append(_series(company, measure, mine))
            for f in mine:
                if f.formula:
                    calculations.append(_kpi_calculation(f, sources))
            subject = f"{short_name(company.name)}'s {measure_words(measure)}"
            if plan.operation == "change" and len(mine) >= 2:
                old, new = mine[0], mine[-1]
                change, calcs = _change(old, new, plan, sources)
                calculations += calcs
                verdicts.append(_holds(plan.yes_no, old.value, new.value))
                sentences.append(
                    f"{subject} went from {amount_words(old, plan)} "
                    f"{period_words(old)} {sources.marks(old)} to "
                    f"{amount_words(new, plan)} {period_words(new)} {sources.marks(new)}, "
                    f"{change}."
                )
            else:
                for f in mine:
                    verdicts.append(_holds(plan.yes_no, None, f.value))
                    verb = "were" if _plural(measure) else "was"
                    sentences.append(
                        f"{subject} {period_words(f)} {verb} {amount_words(f, plan)} "
                        f"{sources.marks(f)}."
                    )
    text = " ".join(sentences)
    if plan.yes_no is not None:
        text = ("Yes. " if all(verdicts) else "No. ") + text
    answer = sources.answer(question, text, calculations, [FLAG])
    answer.series = series
    return answer


def _series(company: Company, measure: Measure, mine: list[Figure]) -> dict:
    """One company's one measure over its periods, oldest first (money in base units)."""
    return {
        "company": short_name(company.name),
        "measure": measure_words(measure),
        "unit": mine[0].unit,
        "points": [{"period": f.period.label, "value": float(f.value)} for f in mine],
    }


def _holds(direction: str | None, old: Decimal | None, new: Decimal) -> bool:
    if direction == "positive":
        return new > 0
    if direction == "negative":
        return new < 0
    if direction == "up" and old is not None:
        return new > old
    if direction == "down" and old is not None:
        return new < old
    return True


def _change(old: Figure, new: Figure, plan: QuestionPlan, sources: _Sources):
    """The change from ``old`` to ``new`` in words, and its calculation: points for rates,
    per cent and amount for everything else."""
    a, b = _shown(old), _shown(new)
    marks = [sources.cite(v) for v in (*old.inputs, *new.inputs)]
    inputs = [
        {"text": _number(a), "value": float(a), "sources": [marks[0]]},
        {"text": _number(b), "value": float(b), "sources": [marks[-1]]},
    ]
    description = (
        f"change in {measure_words(new.measure)} from {old.period.label} to {new.period.label}"
    )
    difference = _calculate(description, f"{_number(b)} - {_number(a)}", inputs)
    if new.measure.is_rate:
        return change_words(new, Decimal(str(difference.result)), None, plan), [difference]
    percent = _calculate(
        f"{description}, per cent", f"percent_change({_number(a)}, {_number(b)})", inputs
    )
    words = change_words(new, Decimal(str(difference.result)), percent.result, plan)
    return words, [percent, difference]


def _kpi_calculation(f: Figure, sources: _Sources) -> CalculationOutcome:
    """The KPI's formula with its inputs, computed again by the calculator (money in
    millions, as filings print it)."""
    marks = {id(v): sources.cite(v) for v in f.inputs}
    expression, inputs = _display_expression(f, marks)
    description = f"{measure_words(f.measure)} {f.period.label} = {f.formula}"
    return _calculate(description, expression, inputs)


def _display_expression(f: Figure, marks: dict[int, int]) -> tuple[str, list[dict]]:
    expression = f.expression or ""
    inputs = []
    for v in f.inputs:
        raw = _number(v.value)
        shown = v.value / Decimal(1_000_000) if _scaled(f) else v.value
        text = _number(shown)
        if _scaled(f):
            expression = re.sub(rf"(?<![\d.]){re.escape(raw)}(?![\d.])", text, expression)
        inputs.append(
            {
                "text": text,
                "value": float(shown),
                "sources": [marks[id(v)]],
                "label": v.fact.label or v.fact.concept,
                "period": v.period,
            }
        )
    return expression, inputs


def _scaled(f: Figure) -> bool:
    """Money inputs shown in millions: exact when every input is money."""
    return all(v.metric.unit == "money" for v in f.inputs)


def _calculate(description: str, expression: str, inputs: list[dict]) -> CalculationOutcome:
    outcome = CalculationOutcome(description, expression, inputs=inputs)
    try:
        outcome.result = calculate(expression).value
    except CalculationError as exc:
        outcome.error = str(exc)
    return outcome


def _shown(f: Figure) -> Decimal:
    """A figure as its sentence states it: money in millions."""
    return f.value / Decimal(1_000_000) if f.unit == "money" else f.value


def _number(value: Decimal) -> str:
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _plural(measure: Measure) -> bool:
    """Whether the head noun is plural: 'Total assets' were, 'Net cash provided by...' was."""
    words = measure_words(measure)
    head = re.split(r",| (?:provided|used|by|of|for|from|to|paid|outstanding|and)\b", words)
    last = head[0].split()[-1].lower()
    return last.endswith("s") and not last.endswith(("ss", "us", "is"))


def _chunk(conn: psycopg.Connection, chunk_id: int, n: int) -> ContextChunk | None:
    """The chunk that prints the fact, as excerpt [n] (the chat's checks read it)."""
    row = conn.execute(
        """
        SELECT c.id, c.document_id, d.path, co.name, d.fiscal_year, d.fiscal_quarter,
               d.form_type, c.kind, c.page_start, c.page_end, c.section_path, c.content,
               1.0, NULL, NULL, NULL, NULL, c.flagged, c.ocr
        FROM chunks c JOIN documents d ON d.id = c.document_id
        LEFT JOIN companies co ON co.id = d.company_id
        WHERE c.id = %s
        """,
        (chunk_id,),
    ).fetchone()
    return ContextChunk(n, Hit(*row)) if row else None
