"""The calculator: right answers, and a clear refusal for everything that is not arithmetic."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finrag.answer.calculator import FUNCTIONS, CalculationError, calculate, format_number


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
        ("max(1577)", 1577),  # one argument is a list of one, not an iterable
        ("min(-2)", -2),
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


def test_deep_nesting_is_refused() -> None:
    with pytest.raises(CalculationError, match="too long"):
        calculate("-" * 199 + "(1+1)")  # 200+ nodes within the length limit


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


@pytest.mark.parametrize(
    "expression",
    [
        "cagr(1, 2, 1e-300)",  # 2 ** 1e300: OverflowError inside the function
        "1e-300 ** -2",  # a tiny base to a negative power overflows in **
        "1" + "0" * 399,  # an integer literal too large for a float
    ],
)
def test_overflow_is_a_calculation_error(expression: str) -> None:
    with pytest.raises(CalculationError):
        calculate(expression)


def assert_finite_or_refused(expression: str) -> None:
    """The calculator's contract: a finite number, or its own error; nothing else escapes."""
    try:
        result = calculate(expression)
    except CalculationError:
        return
    assert math.isfinite(result.value), expression
    format_number(result.value)


# Numbers where float arithmetic breaks: zero, the extremes, subnormals, huge integers.
EDGE_NUMBERS = [0, 1, -1, 0.5, 2, 1e-300, 1e300, 5e-324, 1.7976931348623157e308, 10**18, 10**25]
numbers = st.one_of(
    st.sampled_from(EDGE_NUMBERS),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=-(10**30), max_value=10**30),
).map(repr)
expressions = st.recursive(
    numbers,
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        st.tuples(st.sampled_from(sorted(FUNCTIONS)), st.lists(inner, max_size=4)).map(
            lambda t: f"{t[0]}({', '.join(t[1])})"
        ),
        inner.map(lambda e: f"-{e}"),
    ),
    max_leaves=10,
)
# No deadline: the property is about outcomes, never time; no database: nothing written.
FUZZ = settings(max_examples=400, deadline=None, database=None)


@FUZZ
@given(expressions)
def test_generated_expressions_give_a_number_or_a_calculation_error(expression: str) -> None:
    assert_finite_or_refused(expression)


@FUZZ
@given(
    st.sampled_from(sorted(FUNCTIONS)),
    st.lists(st.sampled_from(EDGE_NUMBERS) | st.floats(allow_nan=False), max_size=4),
)
def test_functions_on_extreme_inputs(name: str, args: list[float]) -> None:
    assert_finite_or_refused(f"{name}({', '.join(map(repr, args))})")


@FUZZ
@given(st.text(max_size=60) | st.text(alphabet="0123456789.e+-*/()%$, ", max_size=60))
def test_any_text_gives_a_number_or_a_calculation_error(text: str) -> None:
    assert_finite_or_refused(text)
