"""Period arithmetic on real EDGAR filings: trailing twelve months from a 10-K and a later
10-Q (Apple FY2024 + Q3 FY2025, Boeing FY2024 + Q2 2025), quarters de-cumulated from
year-to-date figures, and the gap, naming its input, where the store lacks one (P&G's
third-quarter 10-Q alone). The expected numbers are read off the filings' statements."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest

from finrag.db.companies import require_company
from finrag.facts.derived import (
    Derived,
    DerivedGap,
    DerivedInput,
    PeriodArithmetic,
    _calculated,
)
from finrag.facts.dictionary import metric
from finrag.facts.lookup import MetricValue, Period
from finrag.facts.store import StoredFact
from tests.conftest import SHARED, clean_env, ingested_home, run_finrag

EDGAR = SHARED / "edgar-html"
FILINGS = [
    EDGAR / name
    for name in (
        "aapl-10-k-2024-11-01.html",
        "aapl-10-q-2025-08-01.html",
        "ba-10-k-2025-02-03.html",
        "ba-10-q-2025-07-29.html",
        "pg-10-q-2025-04-24.html",
    )
]
needs_filings = pytest.mark.skipif(
    not all(path.is_file() for path in FILINGS), reason=f"EDGAR filings not found at {EDGAR}"
)
M = Decimal(1_000_000)


@pytest.fixture(scope="module")
def derived_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("derived") / "home"
    with ingested_home(home, FILINGS):
        yield home


@pytest.fixture
def conn(derived_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[psycopg.Connection]:
    from finrag.config import load_settings
    from finrag.db import open_store

    monkeypatch.setenv("FINRAG_HOME", str(derived_home))
    with open_store(load_settings()) as store, store.connect() as connection:
        yield connection


def _arithmetic(conn: psycopg.Connection, company: str) -> PeriodArithmetic:
    return PeriodArithmetic(conn, require_company(conn, company)[0])


# (company, metric, fiscal year, quarter, [(term, filing, value in millions)], TTM in millions)
TTM = [
    ("Apple", "revenue", 2025, 3,
     [("FY2024", "aapl-10-k", 391035), ("FY2025 9M", "aapl-10-q", 313695),
      ("FY2024 9M", "aapl-10-q", 296105)], 408625),
    ("Apple", "operating_cash_flow", 2025, 3,
     [("FY2024", "aapl-10-k", 118254), ("FY2025 9M", "aapl-10-q", 81754),
      ("FY2024 9M", "aapl-10-q", 91443)], 108565),
    ("Apple", "capex", 2025, 3,
     [("FY2024", "aapl-10-k", 9447), ("FY2025 9M", "aapl-10-q", 9473),
      ("FY2024 9M", "aapl-10-q", 6539)], 12381),
    ("Boeing", "revenue", 2025, 2,
     [("FY2024", "ba-10-k", 66517), ("FY2025 6M", "ba-10-q", 42245),
      ("FY2024 6M", "ba-10-q", 33435)], 75327),
    ("Boeing", "operating_cash_flow", 2025, 2,
     [("FY2024", "ba-10-k", -12080), ("FY2025 6M", "ba-10-q", -1389),
      ("FY2024 6M", "ba-10-q", -7285)], -6184),
    ("Boeing", "capex", 2025, 2,
     [("FY2024", "ba-10-k", 2230), ("FY2025 6M", "ba-10-q", 1101),
      ("FY2024 6M", "ba-10-q", 971)], 2360),
]  # fmt: skip


@needs_filings
@pytest.mark.parametrize(("company", "name", "year", "quarter", "inputs", "expected"), TTM)
def test_ttm_joins_the_10k_and_the_later_10q_with_every_input_cited(
    conn, company, name, year, quarter, inputs, expected
) -> None:
    found = _arithmetic(conn, company).ttm(metric(name), Period(year, quarter))
    assert isinstance(found, Derived), found
    assert found.kind == "ttm"
    assert found.value == expected * M
    assert found.formula == f"FY{year - 1} + FY{year} {3 * quarter}M - FY{year - 1} {3 * quarter}M"
    got = [
        (i.term, Path(i.value.fact.document).name[: len(filing)], i.value.value / M)
        for i, (_, filing, _) in zip(found.inputs, inputs, strict=True)
    ]
    assert got == [(term, filing, Decimal(value)) for term, filing, value in inputs]
    assert all(i.value.fact.page for i in found.inputs)  # cited to a page of its filing
    assert [i.sign for i in found.inputs] == [1, 1, -1]
    assert found.end == found.inputs[1].value.fact.period_end  # the 10-Q's quarter end


@needs_filings
def test_ttm_series_lists_the_period_it_cannot_state_with_the_input_missing(conn) -> None:
    series = _arithmetic(conn, "Apple").ttms(metric("revenue"))
    assert [d.period for d in series] == ["TTM to FY2024 Q3", "TTM to FY2025 Q3"]
    gap = series[0]
    assert isinstance(gap, DerivedGap)
    assert [u.period for u in gap.missing] == ["FY2023 9M"]  # the FY2024 10-Q is not stored
    assert "missing FY2023 9M revenue" in gap.detail


@needs_filings
def test_the_fourth_quarter_is_the_year_less_the_nine_months_of_the_later_10q(conn) -> None:
    arithmetic = _arithmetic(conn, "Apple")
    q4 = arithmetic.quarter(metric("revenue"), Period(2024, 4))
    assert isinstance(q4, Derived) and q4.kind == "quarter"
    assert q4.formula == "FY2024 - FY2024 9M"
    assert q4.expression == "391035000000 - 296105000000"
    assert q4.value == 94930 * M
    assert [Path(i.value.fact.document).name for i in q4.inputs] == [
        "aapl-10-k-2024-11-01.html",
        "aapl-10-q-2025-08-01.html",
    ]
    cash = arithmetic.quarter(metric("operating_cash_flow"), Period(2024, 4))
    assert isinstance(cash, Derived) and cash.value == (118254 - 91443) * M
    # A quarter the 10-Q prints is reported as is, not recomputed.
    q3 = arithmetic.quarter(metric("revenue"), Period(2025, 3))
    assert isinstance(q3, Derived) and q3.kind == "reported" and q3.value == 94036 * M


@needs_filings
def test_a_third_quarter_from_nine_month_cash_flows_needs_the_six_months_it_lacks(conn) -> None:
    arithmetic = _arithmetic(conn, "Procter & Gamble")
    cash = arithmetic.quarter(metric("operating_cash_flow"), Period(2025, 3))
    assert isinstance(cash, DerivedGap)
    assert cash.formula == "FY2025 9M - FY2025 6M"
    assert [u.period for u in cash.missing] == ["FY2025 6M"]
    assert "FY2025 Q2 10-Q" in cash.detail
    # Its revenue for the quarter is printed: reported, no arithmetic.
    sales = arithmetic.quarter(metric("revenue"), Period(2025, 3))
    assert isinstance(sales, Derived) and sales.kind == "reported"
    # No 10-K in the store: no TTM, and the gap says the year is what is missing.
    ttm = arithmetic.ttm(metric("revenue"), Period(2025, 3))
    assert isinstance(ttm, DerivedGap) and [u.period for u in ttm.missing] == ["FY2024"]


@needs_filings
def test_quarterly_series_covers_the_quarters_the_filings_close(conn) -> None:
    series = _arithmetic(conn, "Boeing").quarters(metric("capex"))
    by_period = {d.period: d for d in series}
    assert set(by_period) == {"FY2024 Q2", "FY2024 Q4", "FY2025 Q2"}
    assert all(isinstance(d, DerivedGap) for d in series)  # no Q1 and no 9M stored
    assert [u.period for u in by_period["FY2025 Q2"].missing] == ["FY2025 Q1"]
    assert [u.period for u in by_period["FY2024 Q4"].missing] == ["FY2024 9M"]


@needs_filings
def test_balances_have_no_period_arithmetic(conn) -> None:
    with pytest.raises(ValueError, match="balance"):
        _arithmetic(conn, "Apple").ttms(metric("total_assets"))


def _fact(end: date, months: int, value: int) -> MetricValue:
    stored = StoredFact(
        id=months, document="x.html", document_id=1, company="X", source="table",
        concept=None, label="Revenue", parents=[], value=Decimal(value), unit="USD",
        period_start=None, period_end=end, instant=False, months=months, fiscal_year=2025,
        fiscal_quarter=None, dimensions=[], statement="income_statement", page=1,
        chunk_id=None, printed=str(value),
    )  # fmt: skip
    return MetricValue(metric("revenue"), f"{months}m", Decimal(value), stored)


def test_year_to_date_figures_that_do_not_end_a_quarter_apart_are_not_subtracted() -> None:
    nine = ("FY2025 9M", 1, _fact(date(2025, 6, 28), 9, 900))
    six_wrong = ("FY2025 6M", -1, _fact(date(2024, 12, 28), 6, 600))  # half a year apart
    six_right = ("FY2025 6M", -1, _fact(date(2025, 3, 29), 6, 600))
    spans = [(80, 100)]
    refused = _calculated(metric("revenue"), "FY2025 Q3", "quarter", "f", [nine, six_wrong], spans)
    assert isinstance(refused, DerivedGap) and "182 days apart" in refused.detail
    done = _calculated(metric("revenue"), "FY2025 Q3", "quarter", "f", [nine, six_right], spans)
    assert isinstance(done, Derived) and done.value == 300 and done.expression == "900 - 600"
    assert isinstance(done.inputs[0], DerivedInput)


@needs_filings
def test_facts_ttm_on_the_command_line(derived_home: Path) -> None:
    env = clean_env(FINRAG_HOME=str(derived_home), FINRAG_EMBED__BACKEND="hash", COLUMNS="250")
    shown = run_finrag("facts", "Boeing", "--metric", "revenue", "--ttm", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    [value] = data["values"]
    assert (value["period"], value["value"]) == ("TTM to FY2025 Q2", "75327000000")
    assert value["expression"] == "66517000000 + 42245000000 - 33435000000"
    assert [i["document"] for i in value["inputs"]] == [
        "ba-10-k-2025-02-03.html",
        "ba-10-q-2025-07-29.html",
        "ba-10-q-2025-07-29.html",
    ]
    assert [g["period"] for g in data["gaps"]] == ["TTM to FY2024 Q2"]
    rows = run_finrag("facts", "Boeing", "--metric", "capex", "--ttm", "--csv", env=env)
    assert rows.returncode == 0, rows.stderr
    stated = [line.split(",") for line in rows.stdout.splitlines() if "TTM to FY2025 Q2" in line]
    assert [(r[3], r[5], r[6], r[7]) for r in stated] == [
        ("2360000000", "FY2024", "+", "2230000000"),
        ("2360000000", "FY2025 6M", "+", "1101000000"),
        ("2360000000", "FY2024 6M", "-", "971000000"),
    ]
    refused = run_finrag("facts", "Boeing", "--metric", "total_assets", "--ttm", env=env)
    assert refused.returncode == 2 and "flow" in refused.stderr
