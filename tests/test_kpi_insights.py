"""KPI insights (finrag.facts.kpi_insights) on series built here: each statement's words
and the values it rests on. The real store's series are tested in test_kpi_cmd.py."""

from __future__ import annotations

from decimal import Decimal

from finrag.facts.kpi_insights import OUTSIZE, Point, peer_insights, series_insights


def _series(company: str, unit: str, values: list[str], first_year: int = 2019) -> list[Point]:
    return [
        Point(company, "k", f"FY{first_year + i}", Decimal(v), unit) for i, v in enumerate(values)
    ]


def _kinds(found) -> list[str]:
    return [i.kind for i in found]


def test_a_steady_rise_in_percentage_points_with_its_largest_step() -> None:
    points = _series("AAA", "percent", ["40.00", "41.00", "44.50"])
    found = series_insights(points, "gross margin")
    assert _kinds(found) == ["direction", "largest_change"], "no break in a steady rise"
    direction, largest = found
    assert direction.text == (
        "AAA's gross margin rose from 40.0% in FY2019 to 44.5% in FY2021, "
        "up 4.5 percentage points, rising in every step."
    )
    assert [p.period for p in direction.inputs] == ["FY2019", "FY2020", "FY2021"]
    assert "FY2020 to FY2021: up 3.5 percentage points (41.0% to 44.5%)" in largest.text
    assert [p.value for p in largest.inputs] == [Decimal("41.00"), Decimal("44.50")]
    assert "%)" not in direction.text.replace("% in", ""), "a rate changes in points, not %"


def test_a_reversal_is_a_break_and_a_flat_step_is_passed_over() -> None:
    # Up, unchanged (0.02 points is under the 0.05 shown as a change), then down.
    points = _series("AAA", "percent", ["20.00", "22.00", "22.02", "21.00"])
    found = series_insights(points, "net margin")
    [reversal] = [i for i in found if i.kind == "break"]
    assert reversal.text == (
        "Break in trend: AAA's net margin fell from FY2021 to FY2022 (down 1.0 percentage "
        "points) after it rose from FY2019 to FY2020 (up 2.0 percentage points)."
    )
    direction = found[0]
    assert "not in every step: it was unchanged from FY2020 to FY2021" in direction.text
    assert "fell from FY2021 to FY2022" in direction.text


def test_a_sign_change_is_a_break() -> None:
    points = _series("AAA", "percent", ["4.0", "-2.8", "2.0"])
    found = series_insights(points, "revenue growth (YoY)")
    texts = [i.text for i in found if i.kind == "break"]
    who = "Break in trend: AAA's revenue growth (YoY)"
    assert f"{who} turned negative in FY2020 (-2.8%, from 4.0% in FY2019)." in texts
    assert f"{who} turned positive in FY2021 (2.0%, from -2.8% in FY2020)." in texts


def test_an_outsize_step_needs_three_others_to_compare_with() -> None:
    steady = ["10", "11", "12", "13"]
    jump = _series("AAA", "ratio", [*steady, "16.5"])  # 3.5 against steps of 1: 3.5x
    found = series_insights(jump, "current ratio")
    [outsize] = [i for i in found if "times the median" in i.text]
    assert "rose from FY2022 to FY2023 by 3.50, 3.5 times the median size" in outsize.text
    assert outsize.calculation.endswith(f"= 3.50 ≥ {OUTSIZE}")
    small = _series("AAA", "ratio", [*steady, "15.5"])  # 2.5x the median: usual enough
    assert not [i for i in series_insights(small, "x") if "times the median" in i.text]
    three_steps = _series("AAA", "ratio", ["10", "11", "12", "40"])  # two others: no median
    assert not [i for i in series_insights(three_steps, "x") if "times the median" in i.text]


def test_money_changes_by_amount_and_per_cent_only_from_a_positive_base() -> None:
    up = _series("AAA", "money", ["1000000000", "1500000000"])
    [direction] = series_insights(up, "EBITDA")
    assert direction.text.endswith("up $500 M, or 50.0%.")
    from_loss = _series("AAA", "money", ["-200000000", "300000000"])
    direction = series_insights(from_loss, "EBITDA")[0]
    assert direction.text.endswith("up $500 M.") and "%" not in direction.text.split("M,")[-1]


def test_one_value_states_no_trend() -> None:
    [single] = series_insights(_series("AAA", "percent", ["12.0"]), "ROE")
    assert single.kind == "single" and "no trend" in single.text


def test_peers_by_level_in_the_latest_common_period_and_by_change_into_it() -> None:
    series = {
        "AAA": _series("AAA", "money", ["1000000000", "1100000000", "1200000000"]),
        "BBB": _series("BBB", "money", ["500000000", "600000000"], first_year=2020),
    }
    found = peer_insights(series, "revenue", "revenue", ["FY2019", "FY2020", "FY2021"])
    level, change = found
    assert level.text.startswith("In FY2021, AAA had the highest revenue: $1,200 M, against BBB")
    # BBB grew 20%, AAA 9.1%: per cent decides for money, not the larger dollar gain.
    assert change.text.startswith("From FY2020 to FY2021, BBB's revenue rose the most: +20.0%")
    assert "AAA +9.1%" in change.text and "ranked by per cent change" in change.text


def test_peers_that_share_no_period_are_not_compared() -> None:
    series = {
        "AAA": _series("AAA", "percent", ["1", "2"], first_year=2019),
        "BBB": _series("BBB", "percent", ["1", "2"], first_year=2022),
    }
    [none] = peer_insights(series, "x", "x", ["FY2019", "FY2020", "FY2022", "FY2023"])
    assert none.text.startswith("No period has a x for every company: not compared")
    assert none.inputs == ()
