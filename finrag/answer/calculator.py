"""All arithmetic in an answer is done here, never by the model.

Expressions are parsed with ``ast`` and walked over a whitelist: numbers, + - * / **,
parentheses, and a few named functions (percent_change, ratio, cagr, sum, avg, min,
max, abs, round). No names, no attribute access, no strings, no ``eval``. Sizes are
bounded so no input can make the evaluator slow or its numbers meaningless.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

_MAX_CHARS = 400
_MAX_NODES = 200
_MAX_MAGNITUDE = 1e18  # far beyond any figure in a filing; guards ** and products
_MAX_EXPONENT = 100


class CalculationError(ValueError):
    """The expression is not allowed, or has no finite value."""


def _percent_change(old: float, new: float) -> float:
    if old == 0:
        raise CalculationError("percent_change from 0 is undefined")
    return (new - old) / abs(old) * 100


def _ratio(a: float, b: float) -> float:
    if b == 0:
        raise CalculationError("ratio with a zero denominator")
    return a / b


def _cagr(start: float, end: float, years: float) -> float:
    if start <= 0 or end <= 0 or years <= 0:
        raise CalculationError("cagr needs positive start, end and years")
    return ((end / start) ** (1 / years) - 1) * 100


def _avg(*values: float) -> float:
    if not values:
        raise CalculationError("avg of nothing")
    return sum(values) / len(values)


def _round(value: float, digits: float = 0) -> float:
    if digits != int(digits) or not 0 <= digits <= 10:
        raise CalculationError("round takes 0 to 10 digits")
    return round(value, int(digits))


def _sum(*values: float) -> float:
    return math.fsum(values)


def _at_least_one(fn: Callable[..., float]) -> Callable[..., float]:
    def checked(*values: float) -> float:
        if not values:
            raise CalculationError(f"{fn.__name__} of nothing")
        return fn(values)  # the tuple: min(5) would be a TypeError, min((5,)) is 5

    return checked


FUNCTIONS: dict[str, tuple[Callable[..., float], int, int | None]] = {
    # name: (function, fewest arguments, most arguments or None for any)
    "percent_change": (_percent_change, 2, 2),
    "ratio": (_ratio, 2, 2),
    "cagr": (_cagr, 3, 3),
    "sum": (_sum, 1, None),
    "avg": (_avg, 1, None),
    "min": (_at_least_one(min), 1, None),
    "max": (_at_least_one(max), 1, None),
    "abs": (abs, 1, 1),
    "round": (_round, 1, 2),
}

_OPERATORS: dict[type, Callable[[float, float], float]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
}


@dataclass(frozen=True)
class Calculation:
    expression: str
    value: float

    def formatted(self) -> str:
        return format_number(self.value)


_SCALE_WORDS = {"thousand": "1e3", "million": "1e6", "billion": "1e9", "trillion": "1e12"}
_SCALED = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(thousand|million|billion|trillion)s?\b", re.I)
_RESULT_TAIL = re.compile(r"=\s*-?\(?\s*[\d.,]+\s*\)?\s*(?:%|[a-z]+)?\s*$", re.I)


def normalize_expression(text: str) -> str:
    """What small models write around arithmetic, made plain: typographic operators
    become ASCII, currency signs go, '9.6 billion' becomes '9.6 * 1e9', and a trailing
    '= result' (the model's own, unchecked) is dropped."""
    text = text.replace("×", "*").replace("÷", "/").replace("−", "-").replace("–", "-")
    text = re.sub(r"[$€£]", "", text)
    tail = _RESULT_TAIL.search(text)
    if tail and text[: tail.start()].count("(") == text[: tail.start()].count(")"):
        text = text[: tail.start()]
    text = _SCALED.sub(lambda m: f"({m.group(1)} * {_SCALE_WORDS[m.group(2).lower()]})", text)
    return text.strip()


def calculate(expression: str) -> Calculation:
    """Evaluate one expression or raise ``CalculationError`` saying what is wrong."""
    text = normalize_expression(expression)
    if not text:
        raise CalculationError("empty expression")
    if len(text) > _MAX_CHARS:
        raise CalculationError(f"expression longer than {_MAX_CHARS} characters")
    if re.search(r"\d,\d{3}", text):
        raise CalculationError("write numbers without thousands separators (1577, not 1,577)")
    if "%" in text:
        raise CalculationError("'%' is not an operator here; use percent_change(old, new)")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CalculationError(f"not an arithmetic expression: {text!r}") from None
    if sum(1 for _ in ast.walk(tree)) > _MAX_NODES:
        raise CalculationError("expression too long")
    try:
        value = _eval(tree.body)
    except CalculationError:
        raise
    except OverflowError:  # float ** and int-to-float conversion raise instead of giving inf
        raise CalculationError("result out of range") from None
    except ArithmeticError as exc:
        raise CalculationError(f"no finite value: {exc}") from None
    return Calculation(expression=text, value=value)


def _checked(value: float) -> float:
    if not math.isfinite(value) or abs(value) > _MAX_MAGNITUDE:
        raise CalculationError("result out of range")
    return float(value)


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise CalculationError(f"only numbers are allowed, not {node.value!r}")
        return _checked(float(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        value = _eval(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        if isinstance(node.op, ast.Div) and right == 0:
            raise CalculationError("division by zero")
        operator = _OPERATORS.get(type(node.op))
        if operator is None:
            raise CalculationError(f"operator {type(node.op).__name__} is not allowed")
        return _checked(operator(left, right))
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.keywords:
            raise CalculationError("only plain calls of the listed functions are allowed")
        name = node.func.id
        if name not in FUNCTIONS:
            raise CalculationError(
                f"unknown function {name!r}; allowed: {', '.join(sorted(FUNCTIONS))}"
            )
        fn, fewest, most = FUNCTIONS[name]
        if len(node.args) < fewest or (most is not None and len(node.args) > most):
            raise CalculationError(
                f"{name} takes {fewest}{'' if most == fewest else '+'} arguments"
            )
        args = [_eval(arg) for arg in node.args]
        try:
            return _checked(fn(*args))
        except ZeroDivisionError:
            raise CalculationError(f"division by zero in {name}") from None
    if isinstance(node, ast.Name):
        raise CalculationError(f"names are not allowed ({node.id!r}): write the number itself")
    raise CalculationError(f"{type(node).__name__} is not allowed in a calculation")


def _power(base: float, exponent: float) -> float:
    if abs(exponent) > _MAX_EXPONENT:
        raise CalculationError(f"exponent beyond ±{_MAX_EXPONENT}")
    if base == 0 and exponent < 0:
        raise CalculationError("division by zero")
    if base < 0 and exponent != int(exponent):
        raise CalculationError("fractional power of a negative number")
    if abs(base) > 1 and exponent * math.log10(abs(base)) > math.log10(_MAX_MAGNITUDE):
        raise CalculationError("result out of range")
    return _checked(base**exponent)


def format_number(value: float) -> str:
    """1577.0 -> '1,577'; 14.8581 -> '14.86'; 0.04567 -> '0.0457'."""
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 100:
        return f"{value:,.1f}"
    if abs(value) >= 1:
        return f"{value:,.2f}"
    return f"{value:.3g}"
