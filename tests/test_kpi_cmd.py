"""`finrag kpi`: KPIs by period from the facts store, as a table, JSON, CSV, a terminal chart
and a PNG; the rendering (finrag.facts.charts) on its own, then the real CLI over a real
embedded store holding Apple's and Netflix's 10-Ks."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest

from finrag.facts.charts import Series, build_series, format_value, png_chart, terminal_chart

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass
class _Value:  # the fields of a KpiValue a chart reads
    name: str
    display: str
    unit: str
    period: str
    value: Decimal


@dataclass
class _Gap:
    name: str
    period: str


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [
        (Decimal("46.2077"), "percent", "46.2%"),
        (Decimal("-3.04"), "percent", "-3.0%"),
        (Decimal("1.0749"), "ratio", "1.07"),
        (Decimal("34.46"), "days", "34.5 d"),
        (Decimal("12.5"), "times", "12.50x"),
        (Decimal("12345000000"), "money", "$12,345 M"),
        (Decimal("-1577400000"), "money", "-$1,577 M"),
        (0.875, "ratio", "0.88"),
        (None, "percent", "—"),
    ],
)
def test_values_read_by_unit(value, unit: str, shown: str) -> None:
    assert format_value(value, unit) == shown


def test_series_leave_gaps_out_and_count_them() -> None:
    results = [
        _Value("gross_margin", "Gross margin", "percent", "FY2022", Decimal("43.31")),
        _Gap("gross_margin", "FY2023"),
        _Value("gross_margin", "Gross margin", "percent", "FY2024", Decimal("46.21")),
        _Value("free_cash_flow", "Free cash flow", "money", "FY2024", Decimal("108807000000")),
    ]
    series, skipped = build_series("Apple", results)
    assert skipped == 1
    assert [(s.label, s.unit) for s in series] == [
        ("Apple · Gross margin", "percent"),
        ("Apple · Free cash flow", "money"),
    ]
    assert series[0].points == {"FY2022": 43.31, "FY2024": 46.21}
    assert series[1].points == {"FY2024": 108807.0}, "money is charted in millions"


def test_terminal_chart_of_a_three_period_series_fits_the_width() -> None:
    series = [Series("Apple · Gross margin", "percent", {"FY2022": 43.3, "FY2023": 44.1})]
    series[0].points["FY2024"] = 46.2
    text = terminal_chart(series, ["FY2022", "FY2023", "FY2024"], title="Apple KPIs", width=60)
    lines = text.splitlines()
    assert "\x1b[" not in text, "no colour codes unless asked"
    assert max(len(line) for line in lines) <= 60
    assert "Apple KPIs" in lines[0]
    assert all(p in text for p in ("FY2022", "FY2023", "FY2024", "percent"))
    assert lines[-1] == "• Apple · Gross margin", "the legend, under the chart"
    # The y axis spans the values: its top and bottom ticks are the largest and smallest.
    assert lines[2].startswith("46.2") and any(line.startswith("43.3") for line in lines)
    assert sum(line.count("•") for line in lines[:-1]) > 10, "a line is drawn"


def test_terminal_chart_one_panel_per_unit() -> None:
    series = [
        Series("A · Gross margin", "percent", {"FY2023": 40.0, "FY2024": 41.0}),
        Series("B · Gross margin", "percent", {"FY2023": 20.0, "FY2024": 25.0}),
        Series("A · Current ratio", "ratio", {"FY2023": 1.2, "FY2024": 0.9}),
    ]
    text = terminal_chart(series, ["FY2023", "FY2024"], title="t", width=70)
    assert text.count("┌") == 2, "percent and ratio never share an axis"
    assert "• A · Gross margin   + B · Gross margin" in text
    assert "• A · Current ratio" in text
    colored = terminal_chart(series, ["FY2023", "FY2024"], title="t", width=70, color=True)
    assert "\x1b[" in colored


def test_png_chart_is_a_small_real_png(tmp_path: Path) -> None:
    series = [
        Series("Apple · Gross margin", "percent", {"FY2022": 43.3, "FY2024": 46.2}),
        Series("Apple · Free cash flow", "money", {"FY2023": 99584.0, "FY2024": 108807.0}),
    ]
    path = tmp_path / "kpi.png"
    size = png_chart(
        series,
        ["FY2022", "FY2023", "FY2024"],
        path,
        title="Apple",
        sources=["aapl-10-k-2024-11-01.html"],
        note="1 value not computed is not drawn",
    )
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert size == len(data)
    assert 1_000 < size < 200_000
