"""The facts route: a quantitative question answered from the facts store and the
calculator, every number a stored fact (cited by document, page and row) or a
calculation on them (shown with its inputs).

A plan (finrag.answer.question_plan) says what is asked; here each measure is resolved
for each company and period. Anything missing or ambiguous ends the route with the
reason, and the text route answers instead: the route never guesses.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from decimal import Decimal

import psycopg

from finrag.answer.extraction import CalculationOutcome
from finrag.answer.fact_sources import (
    Sources,
    calculate_outcome,
    currency_of,
    number_text,
)
from finrag.answer.fact_words import (
    amount_words,
    change_words,
    measure_words,
    period_words,
    short_name,
)
from finrag.answer.figure import Company, Figure
from finrag.answer.inapplicable import explain, never_reported
from finrag.answer.question_plan import Measure, QuestionPlan
from finrag.answer.result import Answer
from finrag.answer.verdicts import decide
from finrag.errors import UsageError
from finrag.facts.dictionary import metric as dictionary_metric
from finrag.facts.kpi import KpiGap, KpiValue, compute, evaluate, kpi
from finrag.facts.kpi_definitions import Kpi, kpis
from finrag.facts.lookup import MetricValue, Period, Unresolved, is_metric, resolve_metric
from finrag.facts.periods import FiscalCalendar
from finrag.facts.statements import period_key
from finrag.facts.store import query_facts

FLAG = "answered from the facts store and the calculator"
# A verdict a stated rule decides: its wording is the template's, never the model's (a
# small model rewording "below one" wrote "indicating a healthy liquidity profile").
RULED = "the verdict is a stated rule's: the template's words stand"
NOT_APPLICABLE = "the measure does not apply to the company: the template's words stand"
FIXED_WORDING = (RULED, NOT_APPLICABLE)


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
    optional = set(plan.rule.extra) if plan.rule else set()
    for company in companies:
        for measure in plan.measures:
            mine: list[Figure] = []
            lacking: list[tuple[Period, str]] = []
            for period in plan.periods:
                found = _resolve(conn, company, measure, period)
                if isinstance(found, str):
                    lacking.append((period, found))
                else:
                    mine.append(found)
            figures += mine
            if measure in optional or (plan.rule and plan.rule.series and len(mine) >= 2):
                continue  # a rule's side measure, or a series long enough without them
            for period, why in lacking:
                gaps.append(why)
                if why.startswith("missing"):
                    held = _held_periods(conn, company, measure)
                    missing.append(Gap(company, measure, period, held))
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
            whole = _completed_by(measure.name) if found.reason == "missing" else None
            if whole is not None:
                result = compute(conn, company.id, whole, period)
                if isinstance(result, KpiValue):
                    return _figure(company, measure, period, result)
            return f"{found.reason}: {found.detail}"
        figure = Figure(
            company, measure, period, found.value, item.unit, currency_of(found), [found]
        )
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


def _completed_by(metric_name: str) -> Kpi | None:
    """The KPI that is the same measure as a line item, computed from its parts where the
    filing prints no total (kpis.toml's `completes`): a balance sheet printing only "Debt
    maturing within one year" and "Long-term debt" still has a total debt. A KPI that only
    stands near the line item (EBIT for operating income) is another measure: not marked."""
    return next((k for k in kpis() if k.completes == metric_name), None)


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
        next((currency_of(v) for v in inputs if currency_of(v)), None),
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


# ------------------------------------------------------------------ the answer


def _compose(
    conn: psycopg.Connection,
    question: str,
    plan: QuestionPlan,
    companies: list[Company],
    figures: list[Figure],
) -> Answer:
    sources = Sources(conn)
    if plan.operation == "rank":
        return _ranked(question, plan, companies, figures, sources)
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
    flags = [FLAG]
    ruled = _verdict(plan, companies, figures) if plan.yes_no is None else None
    if ruled is not None:
        text = ("Yes. " if ruled.holds else "No. ") + text + " " + ruled.because
        calculations += _steps(plan, figures, sources)
        flags.append(RULED)
    answer = sources.answer(question, text, calculations, flags)
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


def _ranked(
    question: str,
    plan: QuestionPlan,
    companies: list[Company],
    figures: list[Figure],
    sources: Sources,
) -> Answer:
    """Measures of one period side by side, the first by the question's end ("the most":
    the largest signed value, so an outflow ranks below any inflow)."""
    sentences = []
    for company in companies:
        mine = sorted(
            (f for f in figures if f.company == company),
            key=lambda f: f.value,
            reverse=plan.yes_no != "down",
        )
        if not mine:
            continue
        top = mine[0]
        listed = "; ".join(
            f"{_activity(f)} {amount_words(f, plan)} {sources.marks(f)}" for f in mine
        )
        verb = "used the most cash" if plan.yes_no == "down" else "brought in the most cash"
        sentences.append(
            f"At {short_name(company.name)}, {_activity(top)} {verb} {period_words(top)} "
            f"(net cash flows: {listed})."
        )
    return sources.answer(question, " ".join(sentences), [], [FLAG])


def answer_inapplicable(
    conn: psycopg.Connection, question: str, plan: QuestionPlan, company: Company
) -> Answer | None:
    """The measure does not apply to the company (finrag.answer.inapplicable), with what
    its income statement does report for the period cited; None when it may apply."""
    for measure in plan.measures:
        if lacking := never_reported(conn, company, measure):
            break
    else:
        return None
    sources = Sources(conn)
    words = measure_words(measure)
    text = explain(short_name(company.name), words[:1].upper() + words[1:], lacking)
    period = plan.periods[-1]
    revenue = resolve_metric(conn, company.id, dictionary_metric("revenue"), period)
    if isinstance(revenue, MetricValue):
        figure = Figure(
            company, Measure("metric", "revenue", "Revenue"), period, revenue.value,
            "money", currency_of(revenue), [revenue],
        )  # fmt: skip
        label = revenue.fact.label or "revenue"
        text += (
            f" Its income statement reports {label[:1].lower() + label[1:]} of "
            f"{amount_words(figure, plan)} {period_words(figure)} {sources.marks(figure)}."
        )
    return sources.answer(question, text, [], [FLAG, NOT_APPLICABLE])


def _activity(f: Figure) -> str:
    """'operating activities' for operating_cash_flow: the net flow named without the
    "provided by" / "used in" its label assumes, since its sign says which."""
    return f.measure.name.removesuffix("_cash_flow") + " activities"


def _steps(plan: QuestionPlan, figures: list[Figure], sources: Sources) -> list:
    """The year-to-year moves a consistency verdict states, as calculations on the rates
    as stated (finrag.answer.verdicts.consistency_steps), each input cited."""
    if plan.rule is None or not plan.rule.series:
        return []
    out = []
    for measure in plan.measures:
        mine = sorted(
            (f for f in figures if f.measure == measure),
            key=lambda f: (f.period.fiscal_year, f.period.fiscal_quarter or 0),
        )
        for old, new in itertools.pairwise(mine):
            a, b = round(old.value, 1), round(new.value, 1)
            inputs = [
                {"text": f"{a}", "value": float(a), "sources": [sources.cite(v) for v in f.inputs]}
                for f, a in ((old, a), (new, b))
            ]
            out.append(
                calculate_outcome(
                    f"change in {measure_words(measure)} from {old.period.label} to "
                    f"{new.period.label}, as stated",
                    f"{b} - {a}",
                    inputs,
                )
            )
    return out


def _verdict(plan: QuestionPlan, companies: list[Company], figures: list[Figure]):
    """The rule's verdict for one company's figures (a judgement about several companies
    at once is left to the words)."""
    if plan.rule is None or len(companies) != 1:
        return None
    values: dict[str, list[tuple[str, Decimal]]] = {}
    for f in sorted(figures, key=lambda f: (f.period.fiscal_year, f.period.fiscal_quarter or 0)):
        values.setdefault(f.measure.name, []).append((f.period.label, f.value))
    return decide(plan.rule, values)


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


def _change(old: Figure, new: Figure, plan: QuestionPlan, sources: Sources):
    """The change from ``old`` to ``new`` in words, and its calculation: points for rates,
    per cent and amount for everything else."""
    a, b = _shown(old), _shown(new)
    marks = [sources.cite(v) for v in (*old.inputs, *new.inputs)]
    inputs = [
        {"text": number_text(a), "value": float(a), "sources": [marks[0]]},
        {"text": number_text(b), "value": float(b), "sources": [marks[-1]]},
    ]
    description = (
        f"change in {measure_words(new.measure)} from {old.period.label} to {new.period.label}"
    )
    difference = calculate_outcome(description, f"{number_text(b)} - {number_text(a)}", inputs)
    if new.measure.is_rate:
        return change_words(new, Decimal(str(difference.result)), None, plan), [difference]
    percent = calculate_outcome(
        f"{description}, per cent", f"percent_change({number_text(a)}, {number_text(b)})", inputs
    )
    words = change_words(new, Decimal(str(difference.result)), percent.result, plan)
    return words, [percent, difference]


def _kpi_calculation(f: Figure, sources: Sources) -> CalculationOutcome:
    """The KPI's formula with its inputs, computed again by the calculator (money in
    millions, as filings print it)."""
    marks = {id(v): sources.cite(v) for v in f.inputs}
    expression, inputs = _display_expression(f, marks)
    description = f"{measure_words(f.measure)} {f.period.label} = {f.formula}"
    return calculate_outcome(description, expression, inputs)


def _display_expression(f: Figure, marks: dict[int, int]) -> tuple[str, list[dict]]:
    expression = f.expression or ""
    inputs = []
    for v in f.inputs:
        raw = number_text(v.value)
        shown = v.value / Decimal(1_000_000) if _scaled(f) else v.value
        text = number_text(shown)
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


def _shown(f: Figure) -> Decimal:
    """A figure as its sentence states it: money in millions."""
    return f.value / Decimal(1_000_000) if f.unit == "money" else f.value


def _plural(measure: Measure) -> bool:
    """Whether the head noun is plural: 'Total assets' were, 'Net cash provided by...' was."""
    words = measure_words(measure)
    head = re.split(r",| (?:provided|used|by|of|for|from|to|paid|outstanding|and)\b", words)
    last = head[0].split()[-1].lower()
    return last.endswith("s") and not last.endswith(("ss", "us", "is"))
