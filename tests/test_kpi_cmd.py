"""`finrag kpi`: KPIs by period from the facts store, as a table, JSON, CSV, a terminal chart
and a PNG; the rendering (finrag.facts.charts) on its own, then the real CLI over a real
embedded store holding Apple's and Netflix's 10-Ks."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest

from finrag.cli.kpi_cmd import parse_years
from finrag.config import load_settings
from finrag.db import open_store
from finrag.db.companies import require_company
from finrag.errors import ExitCode, UsageError
from finrag.evaluate.fundamentals import fundamentals_questions
from finrag.facts.charts import Series, build_series, format_value, png_chart, terminal_chart
from finrag.facts.dictionary import metric
from finrag.facts.kpi import KpiGap, kpi, kpi_table
from finrag.facts.kpi_report import DEFAULT_KPIS, choose_kpis, gap_note
from finrag.facts.lookup import Period, Unresolved, metric_values
from tests.conftest import SHARED, clean_env, ingested_home, run_finrag

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


@pytest.mark.parametrize(
    ("text", "span"),
    [("2023", (2023, 2023)), ("2019-2023", (2019, 2023)), ("FY2019 - FY2023", (2019, 2023))],
)
def test_years_as_written(text: str, span: tuple[int, int]) -> None:
    assert parse_years(text) == span


@pytest.mark.parametrize("text", ["2023-2019", "last year", "23", "2019-"])
def test_years_that_are_not_a_range(text: str) -> None:
    with pytest.raises(UsageError):
        parse_years(text)


def test_kpis_by_name_alias_list_or_all() -> None:
    assert [k.name for k in choose_kpis(None)] == list(DEFAULT_KPIS)
    chosen = choose_kpis(["gross profit margin, dpo", "roe", "gross_margin"])
    assert [k.name for k in chosen] == ["gross_margin", "dpo", "roe"], "aliases, once each"
    assert len(choose_kpis(["all"])) >= 25
    with pytest.raises(UsageError) as raised:
        choose_kpis(["opertaing margin"])
    assert "operating_margin" in (raised.value.hint or "")


def test_a_gap_note_names_what_is_missing_once_for_all_periods() -> None:
    gap = KpiGap(
        "roa",
        "FY2022",
        "missing",
        "long engine detail",
        (
            Unresolved("total_assets", "FY2021", "missing", "no total_assets for FY2021"),
            Unresolved("total_assets", "FY2022", "missing", "no total_assets for FY2022"),
            Unresolved("net_income", "FY2022", "missing", "no net_income for FY2022"),
        ),
    )
    assert gap_note(gap) == (
        "no total_assets for FY2021 in the store; "
        "no total_assets, net_income for FY2022 in the store"
    )
    conflict = KpiGap("net_margin", "FY2022", "ambiguous", "two values for revenue FY2022")
    assert gap_note(conflict) == "FY2022: ambiguous: two values for revenue FY2022"


# --- the real command over a real store ------------------------------------------------

EDGAR = SHARED / "edgar-html"
APPLE = EDGAR / "aapl-10-k-2024-11-01.html"
NETFLIX = EDGAR / "nflx-10-k-2025-01-27.html"
needs_filings = pytest.mark.skipif(
    not (APPLE.is_file() and NETFLIX.is_file()),
    reason=f"the EDGAR filings are not at {EDGAR} (../shared is absent)",
)


@pytest.fixture(scope="module")
def kpi_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment of a home holding Apple's FY2024 and Netflix's FY2024 10-Ks
    (ingested once for the module), for `finrag kpi` in a subprocess; every test using it
    is marked @needs_filings."""

    home = tmp_path_factory.mktemp("kpi") / "home"
    with ingested_home(home, [APPLE, NETFLIX]):
        yield clean_env(FINRAG_HOME=str(home), FINRAG_EMBED__BACKEND="hash", COLUMNS="200")


def _engine_value(env: dict[str, str], company: str, name: str, period: Period):
    """What the KPI engine itself computes, read from the same store in this process."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FINRAG_HOME", env["FINRAG_HOME"])
        with open_store(load_settings()) as store, store.connect() as conn:
            company_id, _, _ = require_company(conn, company)
            [result] = kpi_table(conn, company_id, [kpi(name)], [period])
    return result


@needs_filings
def test_json_values_carry_their_inputs(kpi_env) -> None:
    shown = run_finrag("kpi", "AAPL", "--json", env=kpi_env)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["companies"] == ["Apple Inc."]
    assert "FY2024" in data["periods"]
    rows = {(r["kpi"], r["period"]): r for r in data["kpis"]}
    assert {k for k, _ in rows} == set(DEFAULT_KPIS), "the default set, each KPI by period"
    margin = rows[("gross_margin", "FY2024")]
    # Apple's FY2024 statement of operations (p.28): gross margin 180,683 / net sales 391,035.
    assert margin["value"] == pytest.approx(46.21, abs=0.01)
    assert margin["unit"] == "percent" and margin["gap"] is None
    engine = _engine_value(kpi_env, "AAPL", "gross_margin", Period(2024))
    assert margin["value"] == pytest.approx(float(engine.value))
    assert margin["formula"] == engine.formula and margin["expression"] == engine.expression
    assert margin["inputs"], "a value names the facts it was computed from"
    for item in margin["inputs"]:
        assert item["document"].endswith(APPLE.name)
        assert isinstance(item["page"], int) and item["page"] > 0
        assert item["label"] or item["concept"]
        assert item["fact_id"] and item["term"]
    gaps = [r for r in data["kpis"] if r["gap"] is not None]
    for gap in gaps:
        assert gap["value"] is None and gap["gap"]["reason"] in (
            "missing",
            "ambiguous",
            "calculation",
        )
        assert gap["gap"]["detail"]


@needs_filings
def test_csv_one_row_per_company_kpi_and_period(kpi_env) -> None:
    shown = run_finrag(
        "kpi",
        "Apple",
        "--kpi",
        "gross margin,current_ratio",
        "--years",
        "2023-2024",
        "--csv",
        env=kpi_env,
    )
    assert shown.returncode == 0, shown.stderr
    rows = list(csv.DictReader(io.StringIO(shown.stdout)))
    assert list(rows[0]) == [
        "company",
        "kpi",
        "period",
        "value",
        "unit",
        "formula",
        "expression",
        "inputs",
        "gap",
    ]
    assert {(r["kpi"], r["period"]) for r in rows} == {
        (k, p) for k in ("gross_margin", "current_ratio") for p in ("FY2023", "FY2024")
    }
    margin = next(r for r in rows if (r["kpi"], r["period"]) == ("gross_margin", "FY2024"))
    assert float(margin["value"]) == pytest.approx(46.21, abs=0.01)
    assert f"{APPLE.name} p." in margin["inputs"]


@needs_filings
def test_table_chart_and_png(kpi_env, tmp_path: Path) -> None:
    png = tmp_path / "apple.png"
    shown = run_finrag(
        "kpi",
        "AAPL",
        "--kpi",
        "gross_margin",
        "--kpi",
        "roe",
        "--chart",
        "--png",
        str(png),
        env=kpi_env | {"COLUMNS": "100"},
    )
    assert shown.returncode == 0, shown.stderr
    assert "Gross margin" in shown.stdout and "46.2%" in shown.stdout, "the table"
    assert "\x1b[" not in shown.stdout, "piped: no colour codes"
    chart = shown.stdout[shown.stdout.index("┌") :]
    assert "AAPL · Gross margin" in chart, "the chart's legend names company and KPI"
    assert max(len(line) for line in chart.splitlines()) <= 100, "the terminal's width"
    data = png.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 1_000
    assert f"wrote {png}" in shown.stderr


@needs_filings
def test_two_companies_side_by_side(kpi_env) -> None:
    shown = run_finrag("kpi", "AAPL", "Netflix", "--kpi", "operating_margin", env=kpi_env)
    assert shown.returncode == 0, shown.stderr
    # Piped, the table is tab-separated rows: KPI, company, then one cell per period.
    rows = [line.split("\t") for line in shown.stdout.splitlines() if "\t" in line]
    row = {cells[1]: "\t".join(cells) for cells in rows}
    assert {"AAPL", "NFLX"} <= set(row), "one row per company under the KPI"
    apple = _engine_value(kpi_env, "AAPL", "operating_margin", Period(2024))
    netflix = _engine_value(kpi_env, "NFLX", "operating_margin", Period(2024))
    assert format_value(apple.value, "percent") in row["AAPL"]
    assert format_value(netflix.value, "percent") in row["NFLX"]

    shown = run_finrag("kpi", "AAPL", "NFLX", "--kpi", "operating_margin", "--json", env=kpi_env)
    data = json.loads(shown.stdout)
    assert len(data["companies"]) == 2 and data["companies"][0] == "Apple Inc."
    assert {r["company"] for r in data["kpis"]} == set(data["companies"])


@needs_filings
def test_unknown_kpi_or_company_is_a_usage_error(kpi_env) -> None:
    shown = run_finrag("kpi", "AAPL", "--kpi", "gross margn", env=kpi_env)
    assert shown.returncode == ExitCode.USAGE
    assert "gross margn" in shown.stderr and "gross_margin" in shown.stderr, "close matches"
    shown = run_finrag("kpi", "Tesla", env=kpi_env)
    assert shown.returncode == ExitCode.USAGE
    assert "no company 'Tesla'" in shown.stderr and "Apple Inc." in shown.stderr
    shown = run_finrag("kpi", "AAPL", "--years", "2024-2020", env=kpi_env)
    assert shown.returncode == ExitCode.USAGE and "backwards" in shown.stderr


@needs_filings
def test_nothing_computed_says_why_and_exits_not_found(kpi_env) -> None:
    shown = run_finrag("kpi", "AAPL", "--years", "2010-2012", "--json", env=kpi_env)
    assert shown.returncode == ExitCode.NO_ANSWER
    assert json.loads(shown.stdout)["kpis"] == []
    assert "no KPI computed" in shown.stderr and "Apple Inc." in shown.stderr
    assert "it holds FY2022 to FY2024" in shown.stderr, "what the store does hold"
    shown = run_finrag("kpi", "AAPL", "--kpi", "interest_coverage", env=kpi_env)
    # Apple's statement of operations prints no interest expense: every cell is a gap.
    assert shown.returncode == ExitCode.NO_ANSWER
    assert "no interest_expense for FY2024 in the store" in shown.stdout
    assert "3 missing" in shown.stderr


@needs_filings
def test_chat_kpi_command(kpi_env) -> None:
    lines = "/kpi AAPL --kpi gross_margin --years 2024\n/kpi AAPL --kpi nonsense_kpi\n/help\n"
    shown = subprocess.run(
        [sys.executable, "-m", "finrag", "chat", "--input", "-", "--json"],
        input=lines,
        env=kpi_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    replies = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [r["command"] for r in replies] == ["/kpi", "/help"], "the bad /kpi printed an error"
    [row] = replies[0]["result"]["kpis"]
    assert row["value"] == pytest.approx(46.21, abs=0.01)
    assert "nonsense_kpi" in shown.stderr
    assert "/kpi" in replies[1]["result"]


def test_terminal_chart_legend_wraps_at_the_width() -> None:
    series = [
        Series(f"Company {n} · Operating margin", "percent", {"FY2023": n, "FY2024": n + 1.0})
        for n in range(5)
    ]
    text = terminal_chart(series, ["FY2023", "FY2024"], title="t", width=70)
    assert max(len(line) for line in text.splitlines()) <= 70
    legend = text[text.index("• Company 0") :]
    assert all(f"Company {n} ·" in legend for n in range(5))


# --- insights and series charts, checked against the stored facts ---------------------


def _annual(env: dict[str, str], company: str, name: str) -> dict[str, Decimal]:
    """The company's line item by fiscal year, read from the facts store as `finrag facts
    --metric` reads it: what the test computes the KPIs from itself."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FINRAG_HOME", env["FINRAG_HOME"])
        with open_store(load_settings()) as store, store.connect() as conn:
            company_id, _, _ = require_company(conn, company)
            values = metric_values(conn, company_id, metric(name))
    return {v.period: v.value for v in values if v.fact.months == 12 and v.period.startswith("FY")}


def _points_way(a: Decimal, b: Decimal) -> str:
    return "up" if b > a else "down"


@needs_filings
def test_insights_state_what_the_facts_show(kpi_env) -> None:
    shown = run_finrag(
        "kpi", "AAPL", "NFLX", "--kpi", "operating_margin,revenue_growth", "--json", env=kpi_env
    )
    assert shown.returncode == 0, shown.stderr
    insights = json.loads(shown.stdout)["insights"]
    margins: dict[str, dict[str, Decimal]] = {}
    for company in ("AAPL", "NFLX"):
        revenue = _annual(kpi_env, company, "revenue")
        income = _annual(kpi_env, company, "operating_income")
        margins[company] = {
            year: 100 * income[year] / revenue[year] for year in ("FY2022", "FY2023", "FY2024")
        }
    mine = [i for i in insights if i["metric"] == "operating_margin"]
    for company, by_year in margins.items():
        first, middle, last = by_year["FY2022"], by_year["FY2023"], by_year["FY2024"]
        rose = "rose" if last > first else "fell"
        expected = (
            f"{company}'s operating margin {rose} from {first:.1f}% in FY2022 to {last:.1f}% "
            f"in FY2024, {_points_way(first, last)} {abs(last - first):.1f} percentage points"
        )
        [direction] = [
            i for i in mine if i["kind"] == "direction" and i["text"].startswith(company)
        ]
        assert direction["text"].startswith(expected), direction["text"]
        steps = [("FY2022", "FY2023", middle - first), ("FY2023", "FY2024", last - middle)]
        a, b, size = max(steps, key=lambda s: abs(s[2]))
        [largest] = [
            i for i in mine if i["kind"] == "largest_change" and f"{company}'s" in i["text"]
        ]
        assert (
            f"from {a} to {b}: {'up' if size > 0 else 'down'} {abs(size):.1f} percentage points"
            in largest["text"]
        )
        reversed_ = (middle - first) * (last - middle) < 0 and min(
            map(abs, (middle - first, last - middle))
        ) >= Decimal("0.05")
        breaks = [i for i in mine if i["kind"] == "break" and f"{company}'s" in i["text"]]
        assert bool(breaks) == reversed_, "a break exactly when the steps turn"
        for point in direction["inputs"]:  # every value the statement rests on, as computed
            assert point["value"] == pytest.approx(float(by_year[point["period"]]), rel=1e-9)
            assert point["sources"] and all(s["fact_id"] and s["page"] for s in point["sources"])
    leader = max(margins, key=lambda c: margins[c]["FY2024"])
    [level] = [i for i in mine if i["kind"] == "peers_level"]
    assert level["text"].startswith(
        f"In FY2024, {leader} had the highest operating margin: {margins[leader]['FY2024']:.1f}%"
    )
    [change] = [i for i in mine if i["kind"] == "peers_change"]
    faster = max(margins, key=lambda c: margins[c]["FY2024"] - margins[c]["FY2023"])
    assert change["text"].startswith(f"From FY2023 to FY2024, {faster}'s operating margin")
    # Apple's revenue fell in FY2023 and rose in FY2024: its growth changed sign.
    revenue = _annual(kpi_env, "AAPL", "revenue")
    growth = [
        100 * (revenue[y] - revenue[p]) / revenue[p]
        for p, y in (("FY2022", "FY2023"), ("FY2023", "FY2024"))
    ]
    turned = [i for i in insights if i["metric"] == "revenue_growth" and "turned" in i["text"]]
    if growth[0] * growth[1] < 0:
        way = "positive" if growth[1] > 0 else "negative"
        [sign] = [i for i in turned if i["text"].startswith("Break in trend: AAPL's")]
        assert (
            f"turned {way} in FY2024 ({growth[1]:.1f}%, from {growth[0]:.1f}% in FY2023)"
            in sign["text"]
        )
    else:
        assert not [i for i in turned if "AAPL's" in i["text"]]
    # As text, under the table; --no-insights leaves them out.
    shown = run_finrag("kpi", "AAPL", "--kpi", "operating_margin", env=kpi_env)
    assert "# insights\n- AAPL's operating margin " in shown.stdout
    shown = run_finrag("kpi", "AAPL", "--kpi", "operating_margin", "--no-insights", env=kpi_env)
    assert shown.returncode == 0 and "# insights" not in shown.stdout
    seen = _on_a_terminal(["kpi", "AAPL", "--kpi", "operating_margin"], kpi_env)
    assert "What the series show\nOperating margin\n  AAPL's operating margin " in seen.replace(
        "\r", ""
    )


def _on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """What `finrag ARGS` prints with stdout on a pseudo-terminal (as a person sees it)."""
    import os
    import pty

    main, child = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "finrag", *args],
        stdout=child,
        stderr=subprocess.DEVNULL,
        env=env | {"TERM": "dumb", "NO_COLOR": "1"},
    ) as process:
        os.close(child)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=120)
    os.close(main)
    return b"".join(chunks).decode("utf-8", "replace")


@needs_filings
def test_an_answer_over_several_periods_is_charted_on_a_terminal(kpi_env, tmp_path: Path) -> None:
    question = "What was Apple's net income in FY2022, FY2023 and FY2024?"
    png = tmp_path / "income.png"
    shown = run_finrag("ask", question, "--no-llm", "--json", "--png", str(png), env=kpi_env)
    assert shown.returncode == 0, shown.stderr
    [series] = json.loads(shown.stdout)["series"]
    stored = _annual(kpi_env, "AAPL", "net_income")
    assert series["unit"] == "money" and series["company"] == "Apple"
    assert {p["period"]: Decimal(str(p["value"])) for p in series["points"]} == {
        y: stored[y] for y in ("FY2022", "FY2023", "FY2024")
    }
    assert png.read_bytes().startswith(PNG_MAGIC), "--png writes the chart even with --json"
    piped = run_finrag("ask", question, "--no-llm", env=kpi_env)
    assert piped.returncode == 0 and "┌" not in piped.stdout, "no chart into a pipe"
    seen = _on_a_terminal(["ask", question, "--no-llm"], kpi_env | {"COLUMNS": "90"})
    chart = seen[seen.index("┌") :]
    assert "FY2022" in chart and "FY2024" in chart and "Apple · net income" in chart
    assert "USD millions" in chart
    one = _on_a_terminal(["ask", "What was Apple's net income in FY2024?", "--no-llm"], kpi_env)
    assert "$93,736 million" in one and "┌" not in one, "one period: nothing to chart"


# --- fundamentals questions (finrag eval fundamentals), from the same store -----------


@needs_filings
def test_fundamentals_questions_gold_from_verified_facts(kpi_env, tmp_path: Path) -> None:
    path = tmp_path / "fund.jsonl"
    shown = run_finrag("eval", "fundamentals", str(path), "--json", env=kpi_env)
    assert shown.returncode == 0, shown.stderr
    summary = json.loads(shown.stdout)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert summary["questions"] == len(lines) and summary["skipped"]["unverified"] == 0
    expected = 0
    for company, ticker in (("Apple", "AAPL"), ("Netflix", "NFLX")):
        for name in ("revenue", "net_income", "eps_diluted", "operating_income"):
            by_year = _annual(kpi_env, ticker, name)
            for earlier, later in (("FY2022", "FY2023"), ("FY2023", "FY2024")):
                if earlier not in by_year or later not in by_year:
                    continue
                expected += 1
                [line] = [
                    q
                    for q in lines
                    if q["company"].startswith(company)
                    and q["fundamentals"]["metric"] == name
                    and q["fundamentals"]["periods"] == [earlier, later]
                ]
                rose = by_year[later] > by_year[earlier]
                direction = line["fundamentals"]["direction"]
                assert line["question"].endswith(f"{direction} from {earlier} to {later}?")
                gold = "Yes" if rose == (direction == "rise") else "No"
                assert line["answer"].startswith(f"{gold}. "), line
                assert [Decimal(v) for v in line["fundamentals"]["values"]] == [
                    by_year[earlier],
                    by_year[later],
                ]
                assert line["type"] == "fundamentals-annual"
    assert expected >= 12, "three years of four line items for two companies"
    assert sum(q["fundamentals"]["metric"] != "operating_cash_flow" for q in lines) == expected
    assert {q["answer"].split(".")[0] for q in lines} == {"Yes", "No"}, "both golds occur"

    # A pair with a fact that failed (or had no) cross-check gives no question: the fact
    # marked unverified inside a transaction that is rolled back.
    first = lines[0]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FINRAG_HOME", kpi_env["FINRAG_HOME"])
        with open_store(load_settings()) as store, store.connect() as conn:
            conn.execute(
                "UPDATE facts SET verified = false WHERE id = %s",
                (first["fundamentals"]["fact_ids"][1],),
            )
            found = fundamentals_questions(conn)
            conn.rollback()
    assert found.skipped["unverified"] >= 1
    assert first["id"] not in {q["id"] for q in found.questions}
    assert len(found.questions) == len(lines) - found.skipped["unverified"]

    # Scored as any answer set: ask's facts route reaches each gold's yes/no.
    shown = run_finrag("eval", "answers", str(path), "--no-llm", "--json", env=kpi_env)
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    assert report["summary"]["by_question_type"]["fundamentals-annual"]["n"] == len(lines)
    wrong = [r["id"] for r in report["results"] if r["polarity_correct"] is not True]
    assert not wrong, f"the facts route's yes/no differs from the gold: {wrong}"


@needs_filings
def test_a_chat_turn_over_several_periods_is_charted_on_a_terminal(kpi_env, tmp_path: Path) -> None:
    lines = tmp_path / "turns.txt"
    lines.write_text("What was Apple's net income in FY2022, FY2023 and FY2024?\n")
    no_model = kpi_env | {"FINRAG_ANSWER__USE_LLM": "false", "COLUMNS": "90"}
    seen = _on_a_terminal(["chat", "--input", str(lines)], no_model)
    stored = _annual(kpi_env, "AAPL", "net_income")
    for year in ("FY2022", "FY2023", "FY2024"):  # the answer, then its chart
        assert f"${stored[year] / 1_000_000:,.0f} million" in seen
    chart = seen[seen.index("┌") :]
    assert "Apple · net income" in chart and "FY2022" in chart and "FY2024" in chart
