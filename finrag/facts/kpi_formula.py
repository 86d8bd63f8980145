"""The KPI formula language: a Python-like expression read with ``ast``, never evaluated
by Python.

Names are metrics or KPIs (which ones exist is the caller's to check), ``days`` is the
period's day count; numbers, + - * /, ** with a constant exponent, and four period
functions: prev(x), open(x), avg(x), ago(x, n). kpis.toml documents what each means.
"""

from __future__ import annotations

import ast
from functools import lru_cache

DAYS = "days"
# name: how many arguments
FUNCTIONS = {"prev": 1, "open": 1, "avg": 1, "ago": 2}
MAX_YEARS_AGO = 10
_MAX_CHARS = 400
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


class FormulaError(ValueError):
    """The text is not a formula of the language; the message says what is wrong."""


@lru_cache(maxsize=1024)  # bounded: questions bring formulas of their own
def parse_formula(text: str) -> ast.expr:
    """The formula's checked syntax tree, or FormulaError."""
    if len(text) > _MAX_CHARS:
        raise FormulaError(f"longer than {_MAX_CHARS} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise FormulaError("not an expression") from None
    _check(tree.body)
    return tree.body


def formula_names(text: str) -> list[str]:
    """The metric and KPI names a formula uses, in order of first use."""
    names: dict[str, None] = {}
    _collect(parse_formula(text), names)
    return list(names)


def _collect(node: ast.expr, names: dict[str, None]) -> None:
    if isinstance(node, ast.Name) and node.id != DAYS:
        names[node.id] = None
    elif isinstance(node, ast.Call):
        for arg in node.args:
            _collect(arg, names)
    elif isinstance(node, ast.BinOp):
        _collect(node.left, names)
        _collect(node.right, names)
    elif isinstance(node, ast.UnaryOp):
        _collect(node.operand, names)


def _check(node: ast.expr) -> None:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise FormulaError(f"only numbers are allowed, not {node.value!r}")
    elif isinstance(node, ast.Name):
        if node.id.startswith("_"):
            raise FormulaError(f"{node.id!r} is not a metric or KPI name")
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, ast.UAdd | ast.USub):
            raise FormulaError(f"operator {type(node.op).__name__} is not allowed")
        _check(node.operand)
    elif isinstance(node, ast.BinOp):
        if not isinstance(node.op, _OPERATORS):
            raise FormulaError(f"operator {type(node.op).__name__} is not allowed")
        # A constant exponent keeps every power bounded: (x / y) ** (1 / 3) for a CAGR.
        if isinstance(node.op, ast.Pow) and any(
            isinstance(n, ast.Name | ast.Call) for n in ast.walk(node.right)
        ):
            raise FormulaError("an exponent must be a number: ** (1 / 3)")
        _check(node.left)
        _check(node.right)
    elif isinstance(node, ast.Call):
        _check_call(node)
    else:
        raise FormulaError(f"{type(node).__name__} is not allowed in a formula")


def _check_call(node: ast.Call) -> None:
    if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
        called = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
        raise FormulaError(
            f"function {called!r} is not allowed; allowed: {', '.join(sorted(FUNCTIONS))}"
        )
    name = node.func.id
    if node.keywords or len(node.args) != FUNCTIONS[name]:
        raise FormulaError(f"{name} takes {FUNCTIONS[name]} plain argument(s)")
    if name == "ago":
        years = node.args[1]
        if (
            not isinstance(years, ast.Constant)
            or type(years.value) is not int
            or not 1 <= years.value <= MAX_YEARS_AGO
        ):
            raise FormulaError(f"ago(x, n) takes a whole number of years n, 1 to {MAX_YEARS_AGO}")
    _check(node.args[0])
