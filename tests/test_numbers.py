"""Numbers as filings and answers write them."""

from __future__ import annotations

import pytest

from finrag.answer.numbers import found_in, material, parse_amounts, same_quantity


def one(text: str):
    (amount,) = parse_amounts(text)
    return amount


@pytest.mark.parametrize(
    ("text", "value", "percent"),
    [
        ("$1,577 million", 1.577e9, False),
        ("1.577 billion", 1.577e9, False),
        ("(95)", -95, False),
        ("$(1,577)", -1577, False),
        ("2.8%", 2.8, True),
        ("-2.80%", -2.8, True),
        ("12 percent", 12, True),
        ("$9.6bn", 9.6e9, False),
        ("$8.70", 8.7, False),
        ("0.54", 0.54, False),
        ("€3.2 thousand", 3200, False),
        ("12.5x", 12.5, False),
    ],
)
def test_parse(text: str, value: float, percent: bool) -> None:
    amount = one(text)
    assert amount.value == pytest.approx(value)
    assert amount.percent is percent


@pytest.mark.parametrize("text", ["3M", "10-K", "8-K", "Q2", "4Q", "Item 7A", "COVID-19", "[3]"])
def test_names_and_citations_are_not_amounts(text: str) -> None:
    assert parse_amounts(text) == []


def test_years_are_numbers_but_not_material() -> None:
    amounts = parse_amounts("In FY2018 and 2017 capex was $1,577 million [2]; $2,018 in fees.")
    assert [a.value for a in material(amounts)] == [1.577e9, 2018]
    assert {a.value for a in amounts if a.is_year} == {2018, 2017}


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("$1577.00", "$1,577 million", True),  # gold answers leave the scale implicit
        ("$1.6 billion", "1,577", True),  # rounded to two significant digits
        ("30.8%", "0.308", True),
        ("93.86", "93.9", True),
        ("(1,577)", "1,577", True),  # a cash outflow in a table is the amount spent
        ("24.6%", "21.6%", False),
        ("1,577", "1,373", False),
        ("$2 billion", "1,577", False),  # one significant digit is too loose
    ],
)
def test_same_quantity(a: str, b: str, same: bool) -> None:
    assert same_quantity(one(a), one(b)) is same
    assert same_quantity(one(b), one(a)) is same


def test_found_in_a_table_chunk() -> None:
    table = "|Purchases of property, plant and equipment (PP&E)|(1,577)|(1,373)|(1,420)|"
    sources = parse_amounts(table)
    assert found_in(one("$1,577 million"), sources)
    assert found_in(one("$1.6 billion"), sources), "1,577 at two significant digits"
    assert not found_in(one("$1,700 million"), sources)
