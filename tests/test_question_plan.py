"""Reading a quantitative question without a model: which measures (line items, KPIs, a
formula the question defines), which periods, what to do with them; and every question
this reading cannot complete goes to the text route with its reason."""

from __future__ import annotations

import pytest

from finrag.answer.formula_words import split_words, translate
from finrag.answer.question_plan import NoPlan, QuestionPlan, plan_question
from finrag.retrieve.filters import read_periods


def plan(question: str) -> QuestionPlan | NoPlan:
    periods = read_periods(question)
    return plan_question(question, periods.years, periods.quarter)


def read(question: str) -> tuple:
    p = plan(question)
    assert isinstance(p, QuestionPlan), p
    measures = [(m.kind, m.formula or m.name) for m in p.measures]
    return measures, [x.label for x in p.periods], p.operation, p.yes_no, p.mixed


@pytest.mark.parametrize(
    ("question", "measures", "periods", "operation"),
    [
        # metric synonyms, years written every way
        ("What was 3M's FY2018 capital expenditure?", "capital_expenditure", ["FY2018"], "value"),
        ("3M capex in fiscal 2018", "capital_expenditure", ["FY2018"], "value"),
        ("What were Apple's total net sales in fiscal year 2024?", "revenue", ["FY2024"], "value"),
        ("Apple top line FY24", "revenue", ["FY2024"], "value"),
        (
            "What was Best Buy's revenue in the second quarter of fiscal 2024?",
            "revenue",
            ["FY2024 Q2"],
            "value",
        ),
        ("Best Buy net sales Q2 of fiscal 2024", "revenue", ["FY2024 Q2"], "value"),
        ("Best Buy net sales for 2Q FY2024", "revenue", ["FY2024 Q2"], "value"),
        ("What is the year end FY2018 net PPNE for 3M?", "ppe_net", ["FY2018"], "value"),
        ("What was Apple's diluted EPS in 2023?", "eps_diluted", ["FY2023"], "value"),
        # KPIs by name and alias
        ("What was Apple's gross margin in 2023?", "gross_margin", ["FY2023"], "value"),
        (
            "What is the FY2015 unadjusted EBITDA % margin for Netflix?",
            "ebitda_margin",
            ["FY2015"],
            "value",
        ),
        ("Apple's quick ratio at the end of FY2024", "quick_ratio", ["FY2024"], "value"),
        ("What was Apple's free cash flow in 2023?", "free_cash_flow", ["FY2023"], "value"),
        ("Apple days payable outstanding FY2024", "dpo", ["FY2024"], "value"),
        # changes between periods
        (
            "By how much did Amazon's revenue change year over year from FY2016 to FY2017?",
            "revenue",
            ["FY2016", "FY2017"],
            "change",
        ),
        (
            "How did Apple's net income change FY2019 - FY2020?",
            "net_income",
            ["FY2019", "FY2020"],
            "change",
        ),
        (
            "By how much did the effective tax rate of American Express change between FY2021 "
            "and FY2022?",
            "effective_tax_rate",
            ["FY2021", "FY2022"],
            "change",
        ),
        ("How did Apple's revenue change in 2023?", "revenue", ["FY2022", "FY2023"], "change"),
    ],
)
def test_what_a_question_asks(question: str, measures: str, periods: list, operation: str) -> None:
    found, when, op, _, mixed = read(question)
    assert [name for _, name in found] == [measures]
    assert (when, op, mixed) == (periods, operation, False)


def test_yes_no_questions_answer_by_the_direction_asked() -> None:
    assert read(
        "Did Verizon's debt on balance sheet increase between the 2021 fiscal period and 2022?"
    )[1:4] == (["FY2021", "FY2022"], "change", "up")
    assert read("Did Pfizer's PPNE grow between FY20 and FY21?")[3] == "up"
    assert read("Was there any drop in Apple's revenue in FY2023?")[3] == "down"
    p = read(
        "Is Corning's working capital positive based on FY2022 data? If working capital "
        "is not a relevant metric here, say so."
    )
    assert p[0] == [("kpi", "working_capital")] and p[3] == "positive"
    assert read("Is Adobe's operating margin profile improving as of FY2022?")[1:4] == (
        ["FY2021", "FY2022"],
        "change",
        "up",
    )


def test_cashflow_written_as_one_word() -> None:
    assert read("Is Adobe's Free cashflow conversion improving as of FY2022?")[:4] == (
        [("kpi", "fcf_conversion")],
        ["FY2021", "FY2022"],
        "change",
        "up",
    )


def test_reasons_and_judgements_take_the_mixed_route() -> None:
    assert read("What drove operating margin change as of FY2022 for 3M?")[4] is True
    # A judgement no stated rule decides: the verdict is read from the excerpts.
    assert read("Is 3M's FY2022 operating margin sustainable?")[4] is True


def test_judgements_a_stated_rule_decides_stay_on_the_facts_route() -> None:
    intensive = plan("Judging by FY2022, is 3M a capital-intensive business?")
    assert isinstance(intensive, QuestionPlan) and not intensive.mixed
    assert intensive.rule is not None and intensive.rule.name == "capital_intensity"
    # the rule also reads total assets over revenue, beside the capex ratio asked for
    assert [(m.kind, m.formula or m.name) for m in intensive.measures] == [
        ("kpi", "capex_to_revenue"),
        ("formula", "total_assets / revenue"),
    ]
    quick = plan(
        "Based on its quick ratio for FY 2022, is Verizon's liquidity profile reasonably healthy?"
    )
    assert isinstance(quick, QuestionPlan) and not quick.mixed
    assert quick.rule is not None and quick.rule.name == "liquidity"
    steady = plan("Were Acme's gross margins stable, within 3 percent a year, to FY2024?")
    assert isinstance(steady, QuestionPlan) and steady.rule is not None
    assert [p.label for p in steady.periods] == ["FY2022", "FY2023", "FY2024"]
    assert steady.rule.band == 3


def test_a_formula_the_question_defines_is_used_instead_of_the_dictionary() -> None:
    question = (
        "Work out Amazon's FY2017 days payable outstanding (DPO). DPO is defined as: 365 * "
        "(average accounts payable between FY2016 and FY2017) / (FY2017 COGS + change in "
        "inventory between FY2016 and FY2017). Round the result to two decimal places."
    )
    p = plan(question)
    assert isinstance(p, QuestionPlan)
    (measure,) = p.measures
    assert measure.kind == "formula"
    assert measure.formula == (
        "365 * (avg(accounts_payable)) / (cost_of_revenue + (inventory - prev(inventory)))"
    )
    assert [x.label for x in p.periods] == ["FY2017"] and p.decimals == 2
    q = "What was Apple's FY2024 revenue / average PP&E between FY2023 and FY2024?"
    assert [m.formula for m in plan(q).measures] == ["revenue / avg(ppe_net)"]


def test_arithmetic_between_measures_is_one_formula() -> None:
    question = (
        "For PepsiCo, what was FY2022 unadjusted EBITDA less capex? Define unadjusted EBITDA "
        "as unadjusted operating income + depreciation and amortization [from the cash "
        "flow statement]. Give it in USD millions."
    )
    p = plan(question)
    assert isinstance(p, QuestionPlan)
    assert [m.formula for m in p.measures] == [
        "(operating_income + depreciation_and_amortization) - capital_expenditure"
    ]
    assert p.scale == "millions"


@pytest.mark.parametrize(
    ("words", "formula"),
    [
        ("net income divided by FY2018 total assets", "net_income / total_assets"),
        ("FY2019 revenue / average PP&E between FY2018 and FY2019", "revenue / avg(ppe_net)"),
        ("FY2019 net income divided by FY2018 total assets", "net_income / prev(total_assets)"),
        ("100 * (gross profit / revenue)", "100 * (gross_profit / revenue)"),
        ("FY2019 revenue less FY2016 revenue", "revenue - ago(revenue, 3)"),
        ("revenue and net income", None),  # two measures side by side, no arithmetic
        ("revenue / employees", None),  # a word that is no measure
        ("revenue / (net income", None),
    ],
)
def test_translating_formula_words(words: str, formula: str | None) -> None:
    assert translate(split_words(words), {}) == formula


@pytest.mark.parametrize(
    ("question", "why"),
    [
        ("Which region had the worst topline performance for MGM in FY2022?", "ranking"),
        ("Which debt securities are registered under American Express' name in 2022?", "names"),
        ("Which major acquisitions did Best Buy make in FY2023?", "ranking"),
        (
            "Were there any events that substantially increased Pfizer's net income in 2019?",
            "line item",
        ),
        ("What was Best Buy's domestic segment revenue in Q2 FY2024?", "line item"),
        ("Using FY2022 Adjusted EBIT, what was MGM's interest coverage ratio?", "adjusted"),
        ("Which Best Buy product category performed best in Q2 of FY2024?", "ranking"),
        ("Who is Apple's chief executive?", "names"),
        ("What was the FY2023 dividend yield of Apple?", "names no line item"),
        ("What was Apple's revenue?", "names no fiscal year"),
        ("What was Apple's cash flow from investing in 2023?", "cash flow"),
        # a year's flow against a quarter's does not compare (a balance does: below)
        ("Did revenue fall from fiscal 2023 to Q2 of FY2024?", "mixes"),
        ("What was Apple's revenue / employees in 2023?", "line item"),
    ],
)
def test_questions_without_a_plan_say_why(question: str, why: str) -> None:
    found = plan(question)
    assert isinstance(found, NoPlan), found
    assert why in found.reason


def test_several_measures_side_by_side() -> None:
    found, when, op, _, _ = read("What were Apple's revenue and net income in 2023?")
    assert [name for _, name in found] == ["revenue", "net_income"]
    assert (when, op) == (["FY2023"], "value")


def test_a_formula_defined_inside_the_question() -> None:
    found = read(
        "What was Apple's asset turnover in fiscal 2024, defined as FY2024 net sales / average "
        "total assets between FY2023 and FY2024?"
    )
    assert found[0] == [("formula", "revenue / avg(total_assets)")]
    assert found[1] == ["FY2024"]
    p = plan(
        "What was Netflix's buyback payout in 2024, defined as repurchases of common stock "
        "divided by net income?"
    )
    assert [(m.formula, m.words) for m in p.measures] == [
        ("share_repurchases / net_income", "buyback payout")
    ]
    # "using ..." says how; the KPI's own definition already says it.
    assert read(
        "What was Apple's return on equity in fiscal 2024, using average shareholders' equity?"
    )[0] == [("kpi", "roe")]


def test_percentage_of_and_cash_flow_wording() -> None:
    assert read("What was Apple's capex as a percentage of revenue in FY2024?")[0] == [
        ("formula", "100 * (capital_expenditure / revenue)")
    ]
    assert read("How much cash did Apple generate from operating activities in fiscal 2024?")[
        0
    ] == [("metric", "operating_cash_flow")]
    assert read("What was Apple's non-current term debt at the end of FY2024?")[0] == [
        ("metric", "long_term_debt")
    ]


def test_a_growth_kpi_holds_its_own_comparison() -> None:
    found, when, op, _, _ = read("What was Tesla's year-over-year revenue growth in Q2 2025?")
    assert (found, when, op) == ([("kpi", "revenue_growth")], ["FY2025 Q2"], "value")


def test_a_period_named_by_its_end_date_is_read_on_the_company_calendar() -> None:
    from datetime import date

    from finrag.facts.periods import FiscalCalendar

    # NVIDIA's fiscal year ends in late January: July 27, 2025 closes Q2 of fiscal 2026.
    nvidia = FiscalCalendar.from_document(date(2025, 7, 27), 2)
    for question in (
        "What was NVIDIA's operating margin for the three months ended July 27, 2025?",
        "What was NVIDIA's current ratio as of July 27, 2025?",
    ):
        periods = read_periods(question)
        p = plan_question(question, periods.years, periods.quarter, nvidia)
        assert [x.label for x in p.periods] == ["FY2026 Q2"], question
    # A year-end balance date is the fiscal year.
    apple = FiscalCalendar.from_document(date(2024, 9, 28), None)
    question = "What were Apple's total assets as of September 28, 2024?"
    p = plan_question(question, [2024], None, apple)
    assert [x.label for x in p.periods] == ["FY2024"]


def test_a_company_named_like_a_measure_is_the_company() -> None:
    question = "What was GM's revenue in 2023?"
    p = plan_question(question, [2023], None, company_words=["GM"])
    assert [m.name for m in p.measures] == ["revenue"]
    # Without the company's words, "GM" reads as the gross margin KPI's alias.
    unnamed = plan_question(question, [2023], None)
    assert [m.name for m in unnamed.measures] == ["gross_margin", "revenue"]


def test_a_balance_compares_a_year_end_with_a_later_quarter_end() -> None:
    found = plan("Did cash fall from the end of fiscal 2023 to Q2 of FY2024?")
    assert isinstance(found, QuestionPlan), found
    assert [p.label for p in found.periods] == ["FY2023", "FY2024 Q2"]
    assert (found.operation, found.yes_no) == ("change", "down")


def test_the_same_quarter_a_year_apart() -> None:
    found = plan("Did Acme's revenue rise from Q3 FY2024 to Q3 FY2025?")
    assert isinstance(found, QuestionPlan), found
    assert [p.label for p in found.periods] == ["FY2024 Q3", "FY2025 Q3"]
    assert (found.operation, found.yes_no) == ("change", "up")
