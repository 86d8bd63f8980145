"""KPIs: the definitions file and its formula language, and values computed from a real
embedded store holding Apple's FY2024 10-K (iXBRL) against hand-computed figures, plus a
small Markdown 10-K whose income statement prints two different revenues for one year."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest
from pydantic import ValidationError

from finrag.answer.calculator import calculate
from finrag.db.companies import require_company
from finrag.errors import UsageError
from finrag.facts.dictionary import metric, metrics, not_line_items
from finrag.facts.kpi import (
    KpiGap,
    KpiValue,
    available_periods,
    compute,
    evaluate,
    find_kpi,
    kpi,
    kpi_table,
    kpis,
    load_kpis,
)
from finrag.facts.kpi_formula import FormulaError, formula_names, parse_formula
from finrag.facts.lookup import MetricValue, Period, Unresolved, resolve_metric
from tests.conftest import SHARED, ingested_home

AAPL_10K = SHARED / "edgar-html" / "aapl-10-k-2024-11-01.html"
NVDA_10Q = SHARED / "edgar-html" / "nvda-10-q-2025-08-27.html"
needs_edgar = pytest.mark.skipif(
    not (AAPL_10K.is_file() and NVDA_10Q.is_file()), reason=f"EDGAR filings not found at {SHARED}"
)

REQUIRED = {
    "gross_margin", "operating_margin", "net_margin", "ebitda", "ebitda_margin",
    "current_ratio", "quick_ratio", "cash_ratio", "debt_to_equity", "debt_to_ebitda",
    "interest_coverage", "roa", "roe", "asset_turnover", "fixed_asset_turnover",
    "inventory_turnover", "dso", "dio", "dpo", "cash_conversion_cycle", "capex_to_revenue",
    "free_cash_flow", "fcf_margin", "fcf_conversion", "effective_tax_rate",
    "dividend_payout_ratio", "working_capital", "net_debt", "revenue_growth",
    "net_income_growth", "eps_growth", "revenue_cagr_3y", "revenue_avg_3y",
}  # fmt: skip


# ---------------------------------------------------------------- definitions


def test_the_shipped_kpis_load_with_known_names_and_one_owner_per_alias() -> None:
    shipped = kpis()
    assert len(shipped) >= 25
    names = {item.name for item in shipped}
    assert names >= REQUIRED, REQUIRED - names
    known = names | {m.name for m in metrics()}
    for item in shipped:
        for formula in item.formulas:
            assert set(formula_names(formula)) <= known, (item.name, formula)
    words = [w.lower() for item in shipped for w in (item.name, *item.aliases)]
    assert len(words) == len(set(words))
    assert all(item.definition for item in shipped)


def test_every_measure_the_metric_dictionary_calls_computed_is_a_kpi() -> None:
    # metrics.toml's [not_line_items] describe these in words; kpis.toml defines them.
    assert not_line_items()
    assert [word for word in not_line_items() if find_kpi(word) is None] == []


@pytest.mark.parametrize(
    ("typed", "name"),
    [
        ("GM%", "gross_margin"),
        ("gross profit margin", "gross_margin"),
        ("Days Payable Outstanding", "dpo"),
        ("capital intensity", "capex_to_revenue"),
        ("EBITDA margin", "ebitda_margin"),
        ("fcf", "free_cash_flow"),
        ("revenue", None),  # a line item, not a KPI
    ],
)
def test_what_people_type_finds_the_kpi(typed: str, name: str | None) -> None:
    found = find_kpi(typed)
    assert (found.name if found else None) == name


def test_an_unknown_kpi_is_a_usage_error_with_close_matches() -> None:
    with pytest.raises(UsageError, match="no KPI") as caught:
        kpi("gross margn")
    assert "gross_margin" in (caught.value.hint or "")


def _file(*entries: str) -> str:
    return "\n".join(
        f'[[kpi]]\nname = "{name}"\ndisplay = "{name} shown"\naliases = [{aliases}]\n'
        f'unit = "ratio"\ndefinition = "d"\nformulas = [{formulas}]\n'
        for name, aliases, formulas in (entry.split("|") for entry in entries)
    )


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        (_file('a|"x"|"revenue / revenu"'), "a: formula 'revenue / revenu' uses unknown name"),
        (_file('a||"b + revenue"', 'b||"100 * a"'), "a: formulas refer to each other: a -> b -> a"),
        (_file('a|"same"|"revenue"', 'b|"Same"|"net_income"'), "b: name or alias 'same'"),
        (_file('a|"capex"|"revenue"'), "a: name or alias 'capex' is already metric"),
        (_file("a||\"__import__('os')\""), "a: formula .*function '__import__' is not allowed"),
        (_file('a||"revenue.real"'), "a: formula .*Attribute is not allowed"),
        (_file('a||"revenue **"'), "a: formula .*not an expression"),
        (_file('a||"revenue ** revenue"'), "a: formula .*exponent must be a number"),
    ],
)
def test_a_malformed_file_is_refused_naming_the_entry(text: str, fault: str) -> None:
    with pytest.raises(ValidationError, match=fault):
        load_kpis(text)


@pytest.mark.parametrize(
    "formula",
    ["ago(revenue, 0)", "ago(revenue, n)", "prev(revenue, 2)", "avg(x=revenue)", "'text'", "a < b"],
)
def test_the_formula_language_refuses_what_it_does_not_define(formula: str) -> None:
    with pytest.raises(FormulaError):
        parse_formula(formula)


def test_periods_step_back_on_the_fiscal_calendar() -> None:
    assert Period(2018).label == "FY2018"
    assert Period(2024, 2).label == "FY2024 Q2"
    assert Period(2024, 2).previous_year() == Period(2023, 2)
    assert Period(2018).opening() == Period(2017)
    assert Period(2024, 1).opening() == Period(2023, 4)
    assert Period(2024, 3).opening() == Period(2024, 2)


# ---------------------------------------------------------------- a real store

NORTHWIND = """\
# Northwind Widgets, Inc. Form 10-K for the fiscal year ended December 31, 2024

## Item 8. Financial Statements

### CONSOLIDATED STATEMENTS OF OPERATIONS

(In millions)

|Revenue:|Year ended December 31, 2024|Year ended December 31, 2023|
|---|---|---|
|Total revenues|1,250|1,100|
|Cost of revenues|700|640|
|Gross profit|550|460|
|Net income|120|95|

### CONSOLIDATED STATEMENTS OF OPERATIONS (AS RESTATED)

(In millions)

|Revenue:|Year ended December 31, 2024|Year ended December 31, 2023|
|---|---|---|
|Total revenues|1,310|1,100|
|Cost of revenues|700|640|
|Gross profit|610|460|
|Net income|120|95|
"""


# Tax printed two ways: as a subtraction, "(411)" between pretax income and net income
# (Corning's and Verizon's statements), and as a benefit in a "Provision for (benefit
# from)" row that adds to pretax income (Adobe's fiscal 2020).
SOUTHWIND = """\
# Southwind Glass, Inc. Form 10-K for the fiscal year ended December 31, 2024

## Item 8. Financial Statements

### CONSOLIDATED STATEMENTS OF INCOME

(In millions)

|(In millions)|Year ended December 31, 2024|Year ended December 31, 2023|
|---|---|---|
|Net sales|14,189|14,082|
|Income before income taxes|1,797|2,426|
|Provision for (benefit from) income taxes|(411)|(491)|
|Net income|1,386|1,935|
"""
EASTWIND = """\
# Eastwind Software, Inc. Form 10-K for the fiscal year ended December 31, 2024

## Item 8. Financial Statements

### CONSOLIDATED STATEMENTS OF INCOME

(In millions)

|(In millions)|Year ended December 31, 2024|Year ended December 31, 2023|
|---|---|---|
|Total revenue|12,868|11,171|
|Income before income taxes|4,176|3,205|
|Provision for (benefit from) income taxes|(1,084)|254|
|Net income|5,260|2,951|
"""


@pytest.fixture(scope="module")
def kpi_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One store for the module: Apple's 10-K and NVIDIA's 10-Q (when ../shared holds
    them) and Northwind."""

    folder = tmp_path_factory.mktemp("kpi")
    home = folder / "home"
    northwind = folder / "NORTHWIND_2024_10K.md"
    northwind.write_text(NORTHWIND)
    others = []
    for name, text in (("SOUTHWIND_2024_10K.md", SOUTHWIND), ("EASTWIND_2024_10K.md", EASTWIND)):
        others.append(folder / name)
        others[-1].write_text(text)
    paths = [northwind, *others, *(path for path in (AAPL_10K, NVDA_10Q) if path.is_file())]
    with ingested_home(home, paths):
        yield home


@pytest.fixture
def conn(kpi_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[psycopg.Connection]:
    from finrag.config import load_settings
    from finrag.db import open_store

    monkeypatch.setenv("FINRAG_HOME", str(kpi_home))
    with open_store(load_settings()) as store, store.connect() as connection:
        yield connection


def _company(conn: psycopg.Connection, name: str) -> int:
    return require_company(conn, name)[0]


def _value(conn: psycopg.Connection, name: str, period: Period) -> KpiValue:
    found = compute(conn, _company(conn, "Apple"), kpi(name), period)
    assert isinstance(found, KpiValue), found
    # The calculation shown to a reader gives the same number through the calculator.
    assert calculate(found.expression).value == pytest.approx(float(found.value), rel=1e-12)
    return found


FY2024 = Period(2024)


# Apple's FY2024 10-K, as printed: statement of operations p.31 (net sales 391,035 / 383,285 /
# 394,328; cost of sales 210,352; gross margin 180,683; net income 93,736), balance sheet
# (current assets 152,987; current liabilities 176,392; accounts payable 68,960 and 62,611;
# inventories 7,286 and 6,331; shareholders' equity 56,950 and 62,146), cash flows p.35
# (operating cash 118,254; payments for PP&E (9,447)). In millions; the store keeps USD.
M = Decimal(1_000_000)


@needs_edgar
def test_margins_and_balance_ratios_match_the_printed_statements(conn) -> None:
    gross = _value(conn, "gross margin", FY2024)
    assert gross.value == 100 * Decimal(180_683) / Decimal(391_035)
    assert round(gross.value, 2) == Decimal("46.21")
    assert gross.formula == "100 * gross_profit / revenue"
    assert gross.expression == "100 * 180683000000 / 391035000000"
    assert [i.term for i in gross.inputs] == ["gross_profit@FY2024", "revenue@FY2024"]
    assert gross.inputs[1].value.fact.label == "Total net sales"
    assert gross.as_dict()["inputs"][1]["page"] == gross.inputs[1].value.fact.page

    current = _value(conn, "current_ratio", FY2024)
    assert current.value == Decimal(152_987) / Decimal(176_392)


@needs_edgar
def test_averages_growth_and_cash_flow_kpis_match_hand_computed_values(conn) -> None:
    roe = _value(conn, "roe", FY2024)  # average equity: FY2023 and FY2024 closing balances
    assert roe.value == 100 * Decimal(93_736) / ((Decimal(62_146) + Decimal(56_950)) / 2)
    assert [i.term for i in roe.inputs] == [
        "net_income@FY2024",
        "stockholders_equity@FY2023",
        "stockholders_equity@FY2024",
    ]
    growth = _value(conn, "revenue growth", FY2024)
    assert growth.value == 100 * (Decimal(391_035) - 383_285) / Decimal(383_285)
    fcf = _value(conn, "free_cash_flow", FY2024)
    assert fcf.value == (118_254 - 9_447) * M
    dpo = _value(conn, "dpo", FY2024)
    assert dpo.value == 365 * ((Decimal(62_611) + Decimal(68_960)) / 2) / Decimal(210_352)
    average = _value(conn, "revenue_avg_3y", FY2024)
    assert average.value == (Decimal(391_035) + 383_285 + 394_328) * M / 3
    ccc = _value(conn, "cash_conversion_cycle", FY2024)  # a KPI of KPIs, inlined
    parts = [_value(conn, name, FY2024).value for name in ("dso", "dio", "dpo")]
    assert ccc.value == parts[0] + parts[1] - parts[2]


@needs_edgar
def test_a_question_defined_formula_is_computed_as_written(conn) -> None:
    found = evaluate(
        conn,
        _company(conn, "Apple"),
        "365 * avg(accounts_payable) / (cost_of_revenue + inventory - prev(inventory))",
        FY2024,
        unit="days",
    )
    assert isinstance(found, KpiValue), found
    cogs_plus_change = Decimal(210_352) + Decimal(7_286) - Decimal(6_331)
    assert found.value == 365 * ((Decimal(62_611) + Decimal(68_960)) / 2) / cogs_plus_change
    assert calculate(found.expression).value == pytest.approx(float(found.value))
    assert {i.term for i in found.inputs} >= {"inventory@FY2023", "inventory@FY2024"}


@needs_edgar
def test_negative_inputs_and_a_zero_denominator(conn) -> None:
    apple = _company(conn, "Apple")
    # Balance sheet: accumulated deficit (19,154) at the end of FY2024.
    deficit = evaluate(conn, apple, "retained_earnings - 1", FY2024, unit="money")
    assert isinstance(deficit, KpiValue)
    assert deficit.expression == "-19154000000 - 1"
    assert calculate(deficit.expression).value == float(deficit.value) == -19_154_000_001
    # Cash flows, FY2024: proceeds from issuance of term debt, net, printed as "—".
    zero = evaluate(conn, apple, "revenue / debt_issued", FY2024)
    assert isinstance(zero, KpiGap)
    assert zero.reason == "calculation"
    assert zero.detail == "division by zero in revenue / debt_issued for FY2024"


@needs_edgar
def test_a_formula_naming_no_metric_is_a_usage_error(conn) -> None:
    apple = _company(conn, "Apple")
    with pytest.raises(UsageError, match="write capital_expenditure"):
        evaluate(conn, apple, "capex / revenue", FY2024)
    with pytest.raises(UsageError, match="no metric 'revnue'"):
        evaluate(conn, apple, "gross_profit / revnue", FY2024)
    with pytest.raises(UsageError, match="only numbers are allowed"):
        evaluate(conn, apple, "open('/etc/passwd')", FY2024)


@needs_edgar
def test_a_missing_input_is_a_gap_naming_the_metric_and_period(conn) -> None:
    apple = _company(conn, "Apple")
    roa = compute(conn, apple, kpi("roa"), Period(2023))  # the 10-K prints no FY2022 assets
    assert isinstance(roa, KpiGap)
    assert roa.reason == "missing"
    assert roa.detail == "no total_assets for FY2022 in the store"
    assert [(u.metric, u.period) for u in roa.unresolved] == [("total_assets", "FY2022")]
    coverage = compute(conn, apple, kpi("interest_coverage"), FY2024)
    assert isinstance(coverage, KpiGap) and "interest_expense" in coverage.detail


@needs_edgar
def test_one_metric_resolves_to_its_period_or_says_why_not(conn) -> None:
    apple = _company(conn, "Apple")
    assets = resolve_metric(conn, apple, metric("total_assets"), Period(2023))
    assert isinstance(assets, MetricValue)
    assert assets.value == 352_583 * M
    sales = resolve_metric(conn, apple, metric("revenue"), Period(2022))
    assert isinstance(sales, MetricValue) and sales.value == 394_328 * M
    gone = resolve_metric(conn, apple, metric("total_assets"), Period(2017))
    assert gone == Unresolved("total_assets", "FY2017", "missing", gone.detail)
    assert gone.detail == "no total_assets for FY2017 in the store"


@needs_edgar
def test_a_table_of_kpis_over_the_periods_the_store_holds(conn) -> None:
    apple = _company(conn, "Apple")
    periods = available_periods(conn, apple)
    assert [p.label for p in periods] == ["FY2022", "FY2023", "FY2024"]
    chosen = [kpi("gross_margin"), kpi("roa")]
    table = kpi_table(conn, apple, chosen, periods)
    assert [(row.name, row.period) for row in table] == [
        (k.name, p.label) for k in chosen for p in periods
    ]
    kinds = [type(row).__name__ for row in table]
    assert kinds == ["KpiValue"] * 3 + ["KpiGap", "KpiGap", "KpiValue"]
    everything = kpi_table(conn, apple, kpis(), [FY2024])
    assert sum(isinstance(row, KpiValue) for row in everything) >= 30


def test_two_revenues_printed_for_one_year_are_ambiguous_not_guessed(conn) -> None:
    northwind = _company(conn, "Northwind")
    revenue = resolve_metric(conn, northwind, metric("revenue"), Period(2024))
    assert isinstance(revenue, Unresolved), revenue
    assert revenue.reason == "ambiguous"
    assert "1,250" in revenue.detail and "1,310" in revenue.detail
    assert revenue.detail.startswith("two values for revenue FY2024 on the income statement of")
    assert {c.value for c in revenue.candidates} == {1_250 * M, 1_310 * M}

    margin = compute(conn, northwind, kpi("gross_margin"), Period(2024))
    assert isinstance(margin, KpiGap)
    assert margin.reason == "ambiguous"
    assert "revenue" in margin.detail
    # The year both statements print alike is one value.
    earlier = compute(conn, northwind, kpi("gross_margin"), Period(2023))
    assert isinstance(earlier, KpiValue)
    assert earlier.value == 100 * Decimal(460) / Decimal(1_100)


@needs_edgar
def test_quarters_use_their_own_three_months_and_the_quarter_before(conn) -> None:
    nvidia = _company(conn, "Nvidia")
    q2 = Period(2026, 2)  # NVIDIA's 10-Q for the quarter ended July 27, 2025
    # Statement of income, three months ended Jul 27, 2025 / Jul 28, 2024: revenue 46,743 /
    # 30,040, gross profit 33,853 (MD&A prints the margin as 72.4 %).
    margin = compute(conn, nvidia, kpi("gross_margin"), q2)
    assert isinstance(margin, KpiValue) and round(margin.value, 1) == Decimal("72.4")
    assert margin.value == 100 * Decimal(33_853) / Decimal(46_743)
    growth = compute(conn, nvidia, kpi("revenue_growth"), q2)
    assert isinstance(growth, KpiValue)
    assert growth.value == 100 * (Decimal(46_743) - 30_040) / Decimal(30_040)
    # The quarter opens at Q1's end, a balance this 10-Q does not print.
    dso = compute(conn, nvidia, kpi("dso"), q2)
    assert isinstance(dso, KpiGap)
    assert dso.detail == "no accounts_receivable for FY2026 Q1 in the store"
    # A quarter counts 91 days; balance sheet at Jul 27, 2025: accounts receivable 27,808.
    closing = evaluate(conn, nvidia, "days * accounts_receivable / revenue", q2, unit="days")
    assert isinstance(closing, KpiValue)
    assert closing.expression == "91 * 27808000000 / 46743000000"
    # Current and non-current deferred revenue share a row label in a note (980 and 1,055):
    # the tag of the metric's own concept is the line item, not a conflict.
    deferred = resolve_metric(conn, nvidia, metric("deferred_revenue"), q2)
    assert isinstance(deferred, MetricValue), deferred
    assert deferred.value == 980 * M


def test_a_cell_tagged_with_the_metrics_own_concept_outranks_an_untagged_statement_row() -> None:
    """Tesla's 10-Q: the income statement (p.5, title not recognised) tags R&D 1,074; the
    stock-based compensation note (p.20, read as an income statement) prints an untagged
    'Research and development 169'. The tag is the filer's word for the line item."""
    from datetime import date

    from finrag.facts.lookup import _rank
    from finrag.facts.store import StoredFact

    def fact(value: int, concept: str | None, statement: str, page: int) -> StoredFact:
        return StoredFact(
            id=page,
            document="tsla.html",
            document_id=1,
            company="Tesla",
            source="table",
            concept=concept,
            label="Research and development",
            parents=[],
            value=Decimal(value),
            unit="USD",
            period_start=date(2024, 4, 1),
            period_end=date(2024, 6, 30),
            instant=False,
            months=3,
            fiscal_year=2024,
            fiscal_quarter=2,
            dimensions=[],
            statement=statement,
            page=page,
            chunk_id=None,
            printed=f"{value:,}",
        )

    rnd = metric("research_and_development")
    tagged = fact(1_074_000_000, "us-gaap:ResearchAndDevelopmentExpense", "other_table", 5)
    note = fact(169_000_000, None, "income_statement", 20)
    assert min([note, tagged], key=lambda f: _rank(f, rnd)) is tagged
    # Without tags (a PDF) the statement row still wins over any other table.
    untagged = fact(1_074_000_000, None, "other_table", 5)
    assert min([untagged, note], key=lambda f: _rank(f, rnd)) is note


# ---------------------------------------------------------------- segments and regions


@pytest.fixture
def segment_asker(kpi_home: Path, monkeypatch: pytest.MonkeyPatch):
    from finrag.answer.pipeline import Asker
    from finrag.config import load_settings
    from finrag.db import open_store
    from finrag.llm.fake import FakeLLM

    monkeypatch.setenv("FINRAG_HOME", str(kpi_home))
    settings = load_settings(answer={"use_llm": False})
    with open_store(settings) as store:
        yield Asker(store, settings, llm=FakeLLM([]))


def test_member_names_read_from_the_tags() -> None:
    from finrag.answer.segments import member_words

    assert member_words("aapl:GreaterChinaSegmentMember") == "Greater China"
    assert member_words("aapl:RestOfAsiaPacificSegmentMember") == "Rest Of Asia Pacific"
    assert member_words("aapl:IPhoneMember") == "iPhone"
    assert member_words("srt:AmericasMember") == "Americas"


@needs_edgar
def test_which_region_grew_fastest_is_computed_from_cited_segment_facts(segment_asker) -> None:
    # Apple's FY2024 10-K segment note (p.49 of the parse): net sales by reportable segment,
    # FY2023 -> FY2024: Americas 162,560 -> 167,045; Europe 94,294 -> 101,328; Greater
    # China 72,559 -> 66,952; Japan 24,257 -> 25,052; Rest of Asia Pacific 29,615 -> 30,658.
    answer = segment_asker.ask("Which of Apple's geographic segments grew fastest in fiscal 2024?")
    assert answer.route == "facts", answer.retrieval["route_reason"]
    assert answer.answer.startswith("Of Apple's segments, Europe grew fastest in FY2024.")
    assert "Greater China fell 7.7%" in answer.answer
    assert len(answer.calculations) == 5 and len(answer.citations) == 10
    europe = next(c for c in answer.calculations if c.description.startswith("Europe"))
    assert europe.expression == "percent_change(94294, 101328)"
    assert europe.result == pytest.approx(7.4596, rel=1e-3)
    assert all(c.document == "aapl-10-k-2024-11-01" for c in answer.citations)
    assert {len(i["sources"]) for c in answer.calculations for i in c.inputs} == {1}


@needs_edgar
def test_two_regions_compared_and_a_share_of_revenue(segment_asker) -> None:
    faster = segment_asker.ask("Did Apple's Americas grow faster than Europe in fiscal 2024?")
    assert faster.answer.startswith("No. "), faster.answer
    share = segment_asker.ask("What share of Apple's net sales came from Greater China in 2024?")
    assert share.route == "facts"
    (calc,) = share.calculations
    assert calc.expression == "100 * 66952 / 391035"
    assert "17.1%" in share.answer
    # A product named by the filing's own member: iPhone, not total net sales.
    iphone = segment_asker.ask("What was Apple's iPhone revenue in fiscal 2024?")
    assert "iPhone $201,183 million [1]" in iphone.answer and "391,035" not in iphone.answer
    # What a filing says about a region is read from its text, not a bare figure.
    said = segment_asker.ask("What did Apple say about Greater China in fiscal 2024?")
    assert said.retrieval["route"] != "facts"


@needs_edgar
def test_the_cover_page_answers_symbol_exchange_and_filer_category(segment_asker) -> None:
    symbol = segment_asker.ask("What is Apple's trading symbol?")
    assert symbol.route == "facts"
    assert symbol.answer == "Apple's trading symbol is AAPL [1] on The Nasdaq Stock Market LLC [2]."
    assert symbol.citations[0].document == "aapl-10-k-2024-11-01" and symbol.citations[0].pages == [
        1,
        1,
    ]
    listed = segment_asker.ask("Which securities has Apple registered under Section 12(b)?")
    assert (
        "Common Stock, $0.00001 par value per share [1], trading symbol AAPL [2]" in listed.answer
    )
    assert "1.625% Notes due 2026" in listed.answer
    year_end = segment_asker.ask("When does Apple's fiscal year end?")
    assert year_end.answer.startswith("Apple's fiscal year ends on September 28 [1]")
    filer = segment_asker.ask("What is Apple's filer category?")
    assert filer.answer == "Apple's filer category is Large accelerated filer [1]."


def test_a_tax_printed_as_a_subtraction_is_an_expense_and_a_benefit_stays_one(conn) -> None:
    southwind = compute(conn, _company(conn, "Southwind"), kpi("effective_tax_rate"), FY2024)
    assert isinstance(southwind, KpiValue), southwind
    assert southwind.expression == "100 * 411000000 / 1797000000"  # 22.9 %, not -22.9 %
    eastwind = compute(conn, _company(conn, "Eastwind"), kpi("effective_tax_rate"), FY2024)
    assert isinstance(eastwind, KpiValue), eastwind
    assert eastwind.expression == "100 * -1084000000 / 4176000000"  # a benefit: -26.0 %
    prior = compute(conn, _company(conn, "Eastwind"), kpi("effective_tax_rate"), Period(2023))
    assert isinstance(prior, KpiValue) and prior.expression == "100 * 254000000 / 3205000000"
