"""Judgements a stated rule decides from the facts store (finrag.answer.verdicts): capital
intensity, liquidity by the quick or current ratio, and whether a margin stays within a
band; and a total debt computed from its lines where the balance sheet prints none. A real
embedded store of two small Markdown 10-Ks, a capital-heavy carrier and a light retailer;
each verdict is checked against the figures the store itself holds."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from finrag.answer.pipeline import Asker
from finrag.answer.verdicts import DEFAULT_BAND, rule_for
from finrag.facts.kpi import KpiValue, compute
from finrag.facts.kpi_definitions import kpi
from finrag.facts.lookup import Period
from tests.conftest import asker_without_model, ingested_home

_STATEMENTS = """\
# {name} Form 10-K for the fiscal year ended December 31, 2024

## Item 8. Financial Statements

### CONSOLIDATED STATEMENTS OF OPERATIONS

(In millions)

||Year ended December 31, 2024|Year ended December 31, 2023|Year ended December 31, 2022|
|---|---|---|---|
|Total revenues|{rev24}|{rev23}|{rev22}|
|Cost of revenues|{cor24}|{cor23}|{cor22}|
|Gross profit|{gp24}|{gp23}|{gp22}|
|Operating income|{op24}|{op23}|{op22}|
|Net income|{ni24}|{ni23}|{ni22}|

### CONSOLIDATED BALANCE SHEETS

(In millions)

||December 31, 2024|December 31, 2023|
|---|---|---|
|Cash and cash equivalents|{cash24}|{cash23}|
|Accounts receivable, net|{ar24}|{ar23}|
|Inventories|{inv24}|{inv23}|
|Total current assets|{ca24}|{ca23}|
|Property, plant and equipment, net|{ppe24}|{ppe23}|
|Total assets|{ta24}|{ta23}|
|Debt maturing within one year|{std24}|{std23}|
|Total current liabilities|{cl24}|{cl23}|
|Long-term debt|{ltd24}|{ltd23}|
|Total liabilities|{tl24}|{tl23}|
|Total shareholders' equity|{eq24}|{eq23}|
|Total liabilities and shareholders' equity|{ta24}|{ta23}|

### CONSOLIDATED STATEMENTS OF CASH FLOWS

(In millions)

||Year ended December 31, 2024|Year ended December 31, 2023|Year ended December 31, 2022|
|---|---|---|---|
|Net cash provided by operating activities|{ocf24}|{ocf23}|{ocf22}|
|Capital expenditures|({capex24})|({capex23})|({capex22})|
|Net cash used in investing activities|({inv_cf24})|({inv_cf23})|({inv_cf22})|
|Cash dividends paid|{div24}|{div23}|{div22}|
|Net cash provided by (used in) financing activities|{fin_cf24}|{fin_cf23}|{fin_cf22}|
"""

# A carrier: capex a fifth of revenue, assets three times revenue, a thin quick ratio, a
# margin that swings; it prints its debt only as two lines, no total.
CARRIER = dict(
    name="Skyline Carriers, Inc.",
    rev24="10,000", rev23="9,500", rev22="9,000",
    cor24="6,000", cor23="5,500", cor22="5,600",
    gp24="4,000", gp23="4,000", gp22="3,400",
    op24="1,500", op23="1,400", op22="1,100",
    ni24="900", ni23="850", ni22="600",
    cash24="1,000", cash23="1,200", ar24="1,200", ar23="1,100", inv24="300", inv23="280",
    ca24="2,500", ca23="2,580", ppe24="24,000", ppe23="23,000",
    ta24="30,000", ta23="29,000", std24="1,500", std23="1,000",
    cl24="4,000", cl23="3,600", ltd24="14,000", ltd23="14,800",
    tl24="20,000", tl23="19,500", eq24="10,000", eq23="9,500",
    ocf24="3,000", ocf23="2,900", ocf22="2,700",
    capex24="2,000", capex23="1,900", capex22="1,800",
    inv_cf24="2,100", inv_cf23="1,950", inv_cf22="1,850",
    fin_cf24="(1,100)", fin_cf23="(700)", fin_cf22="(3,200)",
    div24="—", div23="(300)", div22="(300)",  # it stopped paying in 2024
)  # fmt: skip
# A retailer: capex 2 % of revenue, assets under half of revenue, a steady margin.
RETAILER = dict(
    name="Corner Goods Corp.",
    rev24="50,000", rev23="48,000", rev22="46,000",
    cor24="39,000", cor23="37,500", cor22="35,800",
    gp24="11,000", gp23="10,500", gp22="10,200",
    op24="2,000", op23="1,900", op22="1,850",
    ni24="1,400", ni23="1,300", ni22="1,250",
    cash24="3,000", cash23="2,800", ar24="2,500", ar23="2,400", inv24="5,000", inv23="4,900",
    ca24="11,000", ca23="10,500", ppe24="6,000", ppe23="5,800",
    ta24="20,000", ta23="19,000", std24="500", std23="400",
    cl24="8,000", cl23="7,800", ltd24="3,000", ltd23="3,100",
    tl24="12,000", tl23="11,700", eq24="8,000", eq23="7,300",
    ocf24="2,500", ocf23="2,300", ocf22="2,200",
    capex24="1,000", capex23="950", capex22="900",
    inv_cf24="1,100", inv_cf23="1,000", inv_cf22="950",
    fin_cf24="(1,200)", fin_cf23="(1,500)", fin_cf22="(1,100)",
    div24="(600)", div23="(550)", div22="(500)",
)  # fmt: skip


# A bank: interest and fees, no cost of sales, no gross profit, no operating income.
BANK = """\
# Harbor Trust Bancorp Form 10-K for the fiscal year ended December 31, 2024

## Item 8. Financial Statements

### CONSOLIDATED STATEMENTS OF INCOME

(In millions)

||Year ended December 31, 2024|Year ended December 31, 2023|
|---|---|---|
|Total interest income|5,200|4,600|
|Total interest expense|2,100|1,500|
|Net interest income|3,100|3,100|
|Total noninterest revenues|1,400|1,300|
|Total revenues net of interest expense|4,500|4,400|
|Provision for credit losses|300|250|
|Total expenses|2,700|2,600|
|Pretax income|1,500|1,550|
|Income tax provision|330|340|
|Net income|1,170|1,210|
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("verdicts")
    files = []
    for stem, values in (("SKYLINE_2024_10K", CARRIER), ("CORNERGOODS_2024_10K", RETAILER)):
        path = folder / f"{stem}.md"
        path.write_text(_STATEMENTS.format(**values))
        files.append(path)
    files.append(folder / "HARBORTRUST_2024_10K.md")
    files[-1].write_text(BANK)
    with ingested_home(folder / "home", files) as built:
        yield built


@pytest.fixture
def ask(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Asker]:
    yield from asker_without_model(home, monkeypatch)


def _kpi(ask: Asker, company: str, name: str, year: int) -> Decimal:
    with ask.store.connect() as conn:
        company_id = conn.execute(
            "SELECT id FROM companies WHERE name ILIKE %s", (f"{company}%",)
        ).fetchone()[0]
        value = compute(conn, company_id, kpi(name), Period(year, None))
    assert isinstance(value, KpiValue), value
    return Decimal(str(value.value))


@pytest.mark.parametrize(("company", "name"), [("Skyline", "Skyline"), ("Corner", "Corner Goods")])
def test_capital_intensity_is_decided_by_the_stated_rule(ask, company, name) -> None:
    answer = ask.ask(f"Judging by FY2024, is the business of {name} capital intensive?")
    capex = _kpi(ask, company, "capex_to_revenue", 2024)
    heavy = capex > 10
    assert answer.route == "facts", answer.retrieval
    assert answer.answer.startswith("Yes." if heavy else "No."), answer.answer
    assert f"{capex:.1f}%" in answer.answer
    assert "about a tenth of revenue" in answer.answer  # the rule is said, not implied
    assert answer.status != "unsupported"  # the rule's thresholds are words, not figures
    assert answer.citations and not answer.refused


@pytest.mark.parametrize(("company", "ratio"), [("Skyline", "quick"), ("Corner Goods", "current")])
def test_liquidity_is_healthy_when_the_ratio_covers_current_liabilities(
    ask, company, ratio
) -> None:
    answer = ask.ask(f"Is {company}'s liquidity healthy by its {ratio} ratio at the end of FY2024?")
    value = _kpi(ask, company.split()[0], f"{ratio}_ratio", 2024)
    assert answer.route == "facts", answer.retrieval
    assert answer.answer.startswith("Yes." if value >= 1 else "No."), answer.answer
    assert ("of one or more" if value >= 1 else "below one") in answer.answer


@pytest.mark.parametrize(
    ("company", "band"), [("Skyline", None), ("Skyline", 5), ("Corner Goods", None)]
)
def test_a_margin_is_consistent_when_every_yearly_move_stays_in_the_band(
    ask, company, band
) -> None:
    asked = f", within {band}% a year" if band else ""
    answer = ask.ask(f"Have {company}'s gross margins been stable over the years{asked}?")
    margins = [_kpi(ask, company.split()[0], "gross_margin", y) for y in (2022, 2023, 2024)]
    shown = [round(m, 1) for m in margins]  # the rates as the answer states them
    widest = max(abs(b - a) for a, b in itertools.pairwise(shown))
    holds = widest <= (band or DEFAULT_BAND)
    assert answer.route == "facts", answer.retrieval
    assert answer.answer.startswith("Yes." if holds else "No."), answer.answer
    assert f"{widest:.1f} percentage points" in answer.answer
    # each yearly move is a calculation on the margins as stated: nothing unsupported
    assert len([c for c in answer.calculations if "as stated" in c.description]) == 2
    assert answer.status != "unsupported", answer.numbers
    assert "FY2024" in answer.answer  # no year named: the fiscal years the store holds


def test_a_total_debt_the_balance_sheet_does_not_print_is_added_from_its_lines(ask) -> None:
    answer = ask.ask("Did Skyline's total debt rise from 2023 to 2024?")
    assert answer.route == "facts", answer.retrieval
    # 1,500 + 14,000 = 15,500 against 1,000 + 14,800 = 15,800: down 300.
    assert answer.answer.startswith("No."), answer.answer
    assert "15,500" in answer.answer and "15,800" in answer.answer
    # each year's total is shown as the sum of its two printed lines
    sums = [c.description for c in answer.calculations if c.description.startswith("total debt")]
    assert sums == [f"total debt FY{y} = short_term_debt + long_term_debt" for y in (2023, 2024)], (
        sums
    )


def test_a_judgement_no_rule_covers_is_left_to_the_words() -> None:
    from finrag.answer.formula_words import Measure

    revenue = Measure("metric", "revenue", "Revenue")
    assert rule_for("is revenue growth sustainable", [revenue]) is None
    margin = Measure("kpi", "gross_margin", "Gross margin", unit="percent")
    assert rule_for("are gross margins consistent within 3 percent", [margin]).band == 3


@pytest.mark.parametrize(
    ("question", "opens", "order"),
    [
        (
            "Which of Skyline's operating, investing or financing activities brought in the "
            "most cash in FY2024?",
            "operating activities brought in the most cash",
            ["3,000", "-$1,100", "-$2,100"],
        ),
        (
            "Which of operating, investing or financing activities used the most cash at "
            "Skyline in FY2022?",
            "financing activities used the most cash",
            ["-$3,200", "-$1,850", "2,700"],
        ),
    ],
)
def test_cash_flow_activities_are_ranked_from_the_statement(ask, question, opens, order) -> None:
    answer = ask.ask(question)
    assert answer.route == "facts", answer.retrieval
    assert opens in answer.answer, answer.answer
    places = [answer.answer.index(amount) for amount in order]
    assert places == sorted(places), answer.answer  # listed from the end asked for
    assert len(answer.citations) == 3


@pytest.mark.parametrize("measure", ["gross margin", "operating margin"])
def test_a_measure_a_banks_statements_cannot_give_is_said_not_to_apply(ask, measure) -> None:
    allowed = (
        f"How did Harbor Trust's {measure} develop in FY2024? Say so if {measure} is not a "
        "meaningful measure for a bank."
    )
    answer = ask.ask(allowed)
    assert answer.route == "facts", answer.retrieval
    assert f"{measure.capitalize()} is not a useful metric for Harbor" in answer.answer
    assert "4,500" in answer.answer and answer.citations  # what it does report, cited
    # Without the question's leave, a missing measure is no verdict on the company.
    plain = ask.ask(f"How did Harbor Trust's {measure} develop in FY2024?")
    assert "not a useful metric" not in plain.answer


def test_a_question_after_volatility_is_answered_the_other_way_round(ask) -> None:
    margins = [_kpi(ask, "Corner", "gross_margin", y) for y in (2022, 2023, 2024)]
    shown = [round(m, 1) for m in margins]
    within = max(abs(b - a) for a, b in itertools.pairwise(shown)) <= 2
    answer = ask.ask("Did Corner Goods' gross margins fluctuate by more than 2% a year to FY2024?")
    assert answer.route == "facts", answer.retrieval
    assert answer.answer.startswith("No." if within else "Yes."), answer.answer


@pytest.mark.parametrize(
    ("question", "opens"),
    [
        ("Did Skyline pay dividends in FY2024?", "No."),  # printed as a dash
        ("Did Skyline pay any dividends in 2023?", "Yes."),
        ("Has Corner Goods paid dividends in FY2024?", "Yes."),
    ],
)
def test_whether_a_flow_was_paid_is_read_from_the_amount_reported(ask, question, opens) -> None:
    answer = ask.ask(question)
    assert answer.route == "facts", answer.retrieval
    assert answer.answer.startswith(opens), answer.answer
    assert answer.citations and "dividends" in answer.answer.lower()


def test_a_balance_asks_no_existence_rule() -> None:
    from finrag.answer.formula_words import Measure

    debt = Measure("metric", "total_debt", "debt")
    paid = Measure("metric", "dividends_paid", "dividends")
    assert rule_for("did it pay dividends in 2024", [paid]).name == "existence"
    assert rule_for("did it have debt in 2024", [debt]) is None
