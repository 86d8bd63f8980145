"""The calculator: right answers, and a clear refusal for everything that is not arithmetic."""

from __future__ import annotations

import time

import pytest

from finrag.answer.calculator import CalculationError, calculate, format_number


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("1577 - 1373", 204),
        ("(1577 - 1373) / 1373 * 100", 14.857975236707938),
        ("percent_change(1373, 1577)", 14.857975236707938),
        ("percent_change(-100, -50)", 50.0),  # from a loss of 100 to a loss of 50: +50%
        ("ratio(6439, 5363)", 6439 / 5363),
        ("cagr(100, 121, 2)", 10.000000000000009),
        ("sum(1, 2, 3.5)", 6.5),
        ("avg(2, 4)", 3.0),
        ("max(1, -5, 3)", 3),
        ("round(2.71828, 2)", 2.72),
        ("365 * avg(4000, 4500) / 10000", 155.125),
        ("2 ** 10", 1024),
        ("-(3 - 5)", 2),
        ("1577 × 2 − 4 ÷ 2", 3152),
        # What small models write: currency signs, scale words, their own '= result'.
        ("$9.6 billion - $8.6 billion = $1.0 billion", 1e9),
        ("(9.6 billion - 860 million) / 860 million", (9.6e9 - 860e6) / 860e6),
        ("percent_change(8.6, 9.6) = 11.6", (9.6 - 8.6) / 8.6 * 100),
    ],
)
def test_arithmetic(expression: str, value: float) -> None:
    assert calculate(expression).value == pytest.approx(value)


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("__import__('os').system('echo hacked')", "plain calls"),
        ("().__class__.__bases__[0].__subclasses__()", "plain calls"),
        ("(1).__class__", "not allowed"),
        ("open('/etc/passwd').read()", "plain calls"),
        ("eval('1+1')", "unknown function"),
        ("x + 1", "names are not allowed"),
        ("'a' * 10", "only numbers"),
        ("[1, 2, 3]", "not allowed"),
        ("lambda: 1", "not allowed"),
        ("1 if True else 2", "not allowed"),
        ("True + 1", "only numbers"),
        ("9 ** 9 ** 9", "exponent"),
        ("10 ** 99", "out of range"),
        ("2 ** 0.5 ** -400", "exponent"),
        ("(-8) ** 0.5", "negative"),
        ("0 ** -1", "division by zero"),
        ("1 / 0", "division by zero"),
        ("1 / (3 - 3)", "division by zero"),
        ("ratio(5, 0)", "zero denominator"),
        ("percent_change(0, 5)", "undefined"),
        ("cagr(-1, 5, 2)", "positive"),
        ("1e308 * 10", "out of range"),
        ("1,577 - 1,373", "thousands separators"),
        ("12% * 3", "percent_change"),
        ("7 // 2", "FloorDiv"),
        ("7 % 2", "percent_change"),
        ("round(1.5, 99)", "0 to 10"),
        ("sum()", "takes"),
        ("ratio(1, 2, 3)", "takes"),
        ("abs(x=1)", "plain calls"),
        ("", "empty"),
        ("1 +", "not an arithmetic"),
        ("1 + " * 200 + "1", "longer than"),
    ],
)
def test_refusals(expression: str, reason: str) -> None:
    with pytest.raises(CalculationError, match=reason):
        calculate(expression)


def test_deep_nesting_is_refused_quickly() -> None:
    started = time.perf_counter()
    with pytest.raises(CalculationError, match="too long"):
        calculate("-" * 199 + "(1+1)")  # 200+ nodes within the length limit
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1577.0, "1,577"),
        (14.8579, "14.86"),
        (-2.8049, "-2.80"),
        (1234.56, "1,234.6"),
        (0.04567, "0.0457"),
    ],
)
def test_format_number(value: float, text: str) -> None:
    assert format_number(value) == text
