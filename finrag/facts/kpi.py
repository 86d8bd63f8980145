"""KPIs computed from the facts store: their values for a company and period, every input
traceable to a stored fact (the definitions are ``kpi_definitions``, re-exported here).

Arithmetic is done here with Decimal over the formula's syntax tree (facts sit below
answers, so the answer calculator is not imported); ``KpiValue.expression`` is the same
calculation written with numbers only, which ``finrag.answer.calculator`` accepts too.
"""

from __future__ import annotations

import ast
import decimal
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import psycopg

from finrag.errors import UsageError
from finrag.facts import model
from finrag.facts.dictionary import metric as find_metric
from finrag.facts.dictionary import metrics
from finrag.facts.kpi_definitions import Kpi, KpiFile, Unit, find_kpi, kpi, kpis, load_kpis
from finrag.facts.kpi_formula import DAYS, FormulaError, formula_names, parse_formula
from finrag.facts.lookup import MetricResolver, MetricValue, Period, Unresolved

# The definitions are part of this module's face: callers import them from here.
__all__ = [
    "Kpi",
    "KpiFile",
    "KpiGap",
    "KpiInput",
    "KpiValue",
    "available_periods",
    "compute",
    "evaluate",
    "find_kpi",
    "kpi",
    "kpi_table",
    "kpis",
    "load_kpis",
]


@dataclass(frozen=True)
class KpiInput:
    term: str  # "metric@PeriodLabel": avg(total_assets) for FY2018 is two, @FY2017 and @FY2018
    value: MetricValue

    def as_dict(self) -> dict[str, Any]:
        return {"term": self.term, **self.value.as_dict()}


@dataclass(frozen=True)
class KpiValue:
    name: str
    display: str
    unit: str
    period: str  # Period.label
    value: Decimal  # unrounded
    formula: str  # as written: "100 * gross_profit / revenue"
    expression: str  # with the inputs' numbers: "100 * 180683000000 / 391035000000"
    inputs: tuple[KpiInput, ...]
    definition: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "display": self.display,
            "unit": self.unit,
            "period": self.period,
            "value": str(self.value),
            "formula": self.formula,
            "expression": self.expression,
            "definition": self.definition,
            "inputs": [i.as_dict() for i in self.inputs],
        }


@dataclass(frozen=True)
class KpiGap:
    name: str
    period: str
    reason: str  # "missing" | "ambiguous" | "calculation"
    detail: str  # what is missing or ambiguous, per formula tried
    unresolved: tuple[Unresolved, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "period": self.period,
            "reason": self.reason,
            "detail": self.detail,
            "unresolved": [u.as_dict() for u in self.unresolved],
        }


def compute(
    conn: psycopg.Connection, company_id: int, kpi: Kpi, period: Period
) -> KpiValue | KpiGap:
    """``kpi`` for one company and period: the first formula whose inputs all resolve."""
    return _Computer(MetricResolver(conn, company_id)).compute(kpi, period)


def evaluate(
    conn: psycopg.Connection,
    company_id: int,
    formula: str,
    period: Period,
    *,
    name: str = "custom",
    display: str = "custom formula",
    unit: Unit = "ratio",
    definition: str = "",
) -> KpiValue | KpiGap:
    """A formula of the KPI language defined by a question, computed like a KPI; a
    formula that is not one, or names no metric or KPI, is a UsageError."""
    try:
        names = formula_names(formula)
    except FormulaError as exc:
        raise UsageError(f"formula {formula!r}: {exc}", hint=_LANGUAGE_HINT) from None
    known = {k.name for k in kpis()} | {m.name for m in metrics()}
    for word in names:
        if word not in known:
            meant = find_metric(word)  # UsageError with close matches when no metric
            raise UsageError(
                f"formula {formula!r}: {word!r} is not a name; write {meant.name}",
                hint=_LANGUAGE_HINT,
            )
    custom = Kpi.model_construct(
        name=name,
        display=display,
        aliases=(),
        unit=unit,
        definition=definition or f"as defined: {formula}",
        formulas=(formula,),
        needs=None,
    )
    return _Computer(MetricResolver(conn, company_id)).compute(custom, period)


_LANGUAGE_HINT = "metric and KPI names, numbers, + - * / ( ), prev(x), open(x), avg(x), ago(x, n)"


def kpi_table(
    conn: psycopg.Connection,
    company_id: int,
    kpis: Sequence[Kpi],
    periods: Sequence[Period],
) -> list[KpiValue | KpiGap]:
    """Every KPI for every period, KPI by KPI in the order given, each KPI's periods in
    the order given; each metric's facts are read once for the whole table."""
    computer = _Computer(MetricResolver(conn, company_id))
    return [computer.compute(item, period) for item in kpis for period in periods]


def available_periods(
    conn: psycopg.Connection, company_id: int, *, quarterly: bool = False
) -> list[Period]:
    """The fiscal years (or quarters) for which the store holds an income-statement or
    balance-sheet figure of the company, oldest first."""
    rows = conn.execute(
        """
        SELECT DISTINCT f.fiscal_year, f.fiscal_quarter, f.months, f.instant, f.period_end
        FROM facts f
        WHERE f.company_id = %s AND f.statement = ANY(%s) AND f.dimensions = '[]'::jsonb
          AND f.value IS NOT NULL AND f.fiscal_year IS NOT NULL
        """,
        (company_id, [model.INCOME, model.BALANCE]),
    ).fetchall()
    found: set[Period] = set()
    for year, quarter, months, instant, end in rows:
        if instant:
            if end is None and quarter is None and not quarterly:
                found.add(Period(year))  # an annual column headed by its year alone
                continue
            if end is None or quarter is None:  # placed at ingest; no quarter: no quarter end
                continue
            at = Period(year, quarter)
            if quarterly:
                found.add(at)
            elif at.fiscal_quarter == 4:
                found.add(Period(at.fiscal_year))
        elif quarterly and months == 3 and quarter:
            found.add(Period(year, quarter))
        elif not quarterly and months == 12:
            found.add(Period(year))
    return sorted(found, key=lambda p: (p.fiscal_year, p.fiscal_quarter or 0))


@dataclass
class _Term:
    value: Decimal
    node: ast.expr  # the calculation with numbers, for ``expression``
    inputs: tuple[KpiInput, ...]


class _Failed(Exception):
    """A formula that cannot give a value: inputs missing or ambiguous, or no number."""

    def __init__(self, reason: str, detail: str, unresolved: Sequence[Unresolved] = ()) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
        self.unresolved = tuple(unresolved)


class _Computer:
    """Computes KPIs against one resolver; a KPI used by others is computed once per period."""

    def __init__(self, resolver: MetricResolver) -> None:
        self.resolver = resolver
        self.done: dict[tuple[str, Period], KpiValue | KpiGap] = {}

    def compute(self, item: Kpi, period: Period) -> KpiValue | KpiGap:
        key = (item.name, period)
        if key not in self.done:
            self.done[key] = self._compute(item, period)
        return self.done[key]

    def _compute(self, item: Kpi, period: Period) -> KpiValue | KpiGap:
        failures: list[tuple[str, _Failed]] = []
        for formula in item.formulas:
            try:
                term = self._formula(formula, period)
            except _Failed as failed:
                failures.append((formula, failed))
                if failed.reason == "ambiguous":
                    break  # a conflict in a preferred input is not passed over
                continue
            return KpiValue(
                name=item.name,
                display=item.display,
                unit=item.unit,
                period=period.label,
                value=term.value,
                formula=formula,
                expression=ast.unparse(term.node),
                inputs=tuple({i.term: i for i in term.inputs}.values()),
                definition=item.definition,
            )
        reasons = {failed.reason for _, failed in failures}
        reason = next(r for r in ("ambiguous", "calculation", "missing") if r in reasons)
        unresolved = {(u.metric, u.period): u for _, failed in failures for u in failed.unresolved}
        if len(failures) == 1:
            detail = failures[0][1].detail
        else:
            detail = " | ".join(f"{formula}: {failed.detail}" for formula, failed in failures)
        return KpiGap(item.name, period.label, reason, detail, tuple(unresolved.values()))

    def _formula(self, formula: str, period: Period) -> _Term:
        missing: list[Unresolved] = []
        calculation: list[str] = []
        term = self._term(parse_formula(formula), period, missing, calculation)
        if missing:
            reason = "ambiguous" if any(u.reason == "ambiguous" for u in missing) else "missing"
            unique = list({(u.metric, u.period): u for u in missing}.values())
            raise _Failed(reason, "; ".join(u.detail for u in unique), unique)
        if calculation or term is None:
            raise _Failed("calculation", "; ".join(calculation) or "no value")
        return term

    def _term(
        self, node: ast.expr, period: Period, missing: list[Unresolved], errors: list[str]
    ) -> _Term | None:
        """The node's value for ``period``; None when an input is missing (noted in
        ``missing``) or the arithmetic has no value (noted in ``errors``); every input
        is still looked up, so the gap names all that is missing."""
        if isinstance(node, ast.Constant):
            return _Term(Decimal(str(node.value)), node, ())
        if isinstance(node, ast.Name):
            return self._name(node.id, period, missing, errors)
        if isinstance(node, ast.UnaryOp):
            operand = self._term(node.operand, period, missing, errors)
            if operand is None or isinstance(node.op, ast.UAdd):
                return operand
            return _Term(-operand.value, ast.UnaryOp(ast.USub(), operand.node), operand.inputs)
        if isinstance(node, ast.BinOp):
            left = self._term(node.left, period, missing, errors)
            right = self._term(node.right, period, missing, errors)
            if left is None or right is None:
                return None
            value = _arithmetic(node.op, left.value, right.value)
            if value is None:
                what = "division by zero" if isinstance(node.op, ast.Div) else "no finite value"
                errors.append(f"{what} in {ast.unparse(node)} for {period.label}")
                return None
            return _Term(
                value, ast.BinOp(left.node, node.op, right.node), left.inputs + right.inputs
            )
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        return self._call(node.func.id, node.args, period, missing, errors)

    def _call(
        self,
        function: str,
        args: list[ast.expr],
        period: Period,
        missing: list[Unresolved],
        errors: list[str],
    ) -> _Term | None:
        if function == "prev":
            return self._term(args[0], period.previous_year(), missing, errors)
        if function == "open":
            return self._term(args[0], period.opening(), missing, errors)
        if function == "ago":
            years = args[1]
            assert isinstance(years, ast.Constant)
            return self._term(args[0], period.years_before(int(years.value)), missing, errors)
        opening = self._term(args[0], period.opening(), missing, errors)
        closing = self._term(args[0], period, missing, errors)
        if opening is None or closing is None:
            return None
        total = ast.BinOp(opening.node, ast.Add(), closing.node)
        return _Term(
            (opening.value + closing.value) / 2,
            ast.BinOp(total, ast.Div(), ast.Constant(2)),
            opening.inputs + closing.inputs,
        )

    def _name(
        self, name: str, period: Period, missing: list[Unresolved], errors: list[str]
    ) -> _Term | None:
        if name == DAYS:
            days = 91 if period.fiscal_quarter else 365
            return _Term(Decimal(days), ast.Constant(days), ())
        other = find_kpi(name)
        if other is not None and other.name == name:
            computed = self.compute(other, period)
            if isinstance(computed, KpiGap):
                missing.extend(computed.unresolved)
                if computed.reason == "calculation":
                    errors.append(f"{name}: {computed.detail}")
                return None
            node = ast.parse(computed.expression, mode="eval").body
            return _Term(computed.value, node, computed.inputs)
        value = self.resolver.resolve(find_metric(name), period)
        if isinstance(value, Unresolved):
            missing.append(value)
            return None
        number = _number(value.value)
        return _Term(value.value, number, (KpiInput(f"{name}@{period.label}", value),))


def _number(value: Decimal) -> ast.expr:
    # A Name prints its id as is: the exact digits, never a float's repr.
    digits = ast.Name(format(abs(value), "f"))
    return ast.UnaryOp(ast.USub(), digits) if value < 0 else digits


_CONTEXT = decimal.Context(prec=28, traps=[decimal.InvalidOperation, decimal.Overflow])


def _arithmetic(op: ast.operator, left: Decimal, right: Decimal) -> Decimal | None:
    """left op right, or None where it has no finite value (division by zero)."""
    try:
        if isinstance(op, ast.Add):
            return _CONTEXT.add(left, right)
        if isinstance(op, ast.Sub):
            return _CONTEXT.subtract(left, right)
        if isinstance(op, ast.Mult):
            return _CONTEXT.multiply(left, right)
        if isinstance(op, ast.Div):
            return None if right == 0 else _CONTEXT.divide(left, right)
        return _CONTEXT.power(left, right)
    except (decimal.InvalidOperation, decimal.Overflow):
        return None
