"""The metric dictionary: the packaged file validates, and labels, concepts and aliases
resolve to the right line item on labels printed in real filings."""

from __future__ import annotations

import re
import subprocess
import sys
from decimal import Decimal
from importlib import resources
from pathlib import Path

import pytest
from lxml import etree
from pydantic import ValidationError

from finrag.errors import ExitCode, UsageError
from finrag.facts import model
from finrag.facts.dictionary import (
    COMPANY,
    METRIC_STATEMENTS,
    explain_label,
    load_dictionary,
    match_concept,
    match_label,
    metric,
    metrics,
)
from tests.conftest import SHARED

EDGAR = SHARED / "edgar-html"
needs_filings = pytest.mark.skipif(
    not EDGAR.is_dir(), reason=f"EDGAR filings not found at {EDGAR} (../shared beside the repo)"
)
INCOME, BALANCE, CASH = model.INCOME, model.BALANCE, model.CASH_FLOW


# ---- the packaged file -------------------------------------------------------------------


def test_the_packaged_dictionary_loads_and_validates():
    text = resources.files("finrag.facts").joinpath("metrics.toml").read_text(encoding="utf-8")
    data = load_dictionary(text)
    assert len(data.metric) >= 60
    assert [m.name for m in metrics()] == [m.name for m in data.metric]


def test_every_metric_belongs_to_a_statement_kind_the_facts_store_uses():
    assert set(METRIC_STATEMENTS) <= set(model.STATEMENT_KINDS)
    for item in metrics():
        assert item.statement in METRIC_STATEMENTS, item.name
        assert set(item.also_in) <= set(METRIC_STATEMENTS), item.name
        if item.statement == BALANCE:
            assert item.period == "instant", item.name


def test_the_line_items_the_issue_names_are_all_there():
    wanted = {
        "revenue": INCOME,
        "cost of revenue": INCOME,
        "gross profit": INCOME,
        "sg&a": INCOME,
        "r&d": INCOME,
        "operating income": INCOME,
        "interest expense": INCOME,
        "pretax income": INCOME,
        "income tax": INCOME,
        "net income": INCOME,
        "eps basic": INCOME,
        "eps diluted": INCOME,
        "d&a": CASH,
        "capex": CASH,
        "operating cash flow": CASH,
        "investing cash flow": CASH,
        "financing cash flow": CASH,
        "dividends paid": CASH,
        "buybacks": CASH,
        "cash": BALANCE,
        "receivables": BALANCE,
        "inventory": BALANCE,
        "current assets": BALANCE,
        "ppe": BALANCE,
        "total assets": BALANCE,
        "payables": BALANCE,
        "current liabilities": BALANCE,
        "short-term debt": BALANCE,
        "long-term debt": BALANCE,
        "total liabilities": BALANCE,
        "shareholders equity": BALANCE,
        "shares outstanding": BALANCE,
    }
    found = {words: metric(words) for words in wanted}
    assert {words: m.statement for words, m in found.items()} == wanted
    assert len({m.name for m in found.values()}) == len(wanted)


def _example(label: str) -> str:
    return label.replace(COMPANY, "Acme Holdings Inc.")


def test_every_label_reads_back_as_its_own_metric():
    for item in metrics():
        for label in item.labels:
            assert match_label(_example(label), item.statement) == item, label
            assert item.label_rank(_example(label)) is not None, label


def test_every_concept_reads_back_as_its_own_metric():
    for item in metrics():
        for concept in item.concepts:
            assert match_concept(concept) == item


def test_the_core_does_not_import_the_cli():
    code = "import sys, finrag.facts.dictionary as d; d.metrics(); print('typer' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


# ---- validation ----------------------------------------------------------------------------

REVENUE = """
[[metric]]
name = "revenue"
display = "Revenue"
statement = "income_statement"
unit = "money"
period = "duration"
concepts = ["us-gaap:Revenues"]
labels = ["Revenue", "Net sales"]
aliases = ["sales"]
"""


def _second(**fields: str) -> str:
    values = {
        "name": '"other"',
        "display": '"Other"',
        "statement": '"income_statement"',
        "unit": '"money"',
        "period": '"duration"',
        "concepts": '["us-gaap:CostOfRevenue"]',
        "labels": '["Cost of revenue"]',
    } | fields
    return "\n[[metric]]\n" + "".join(f"{key} = {value}\n" for key, value in values.items())


def test_a_minimal_dictionary_validates():
    data = load_dictionary(REVENUE + _second())
    assert [m.name for m in data.metric] == ["revenue", "other"]


@pytest.mark.parametrize(
    ("extra", "fault"),
    [
        (_second(colour='"red"'), "Extra inputs are not permitted"),
        (_second(statement='"segment"'), "is not one of"),
        (_second(also_in='["income statement"]'), "is not one of"),
        (_second(concepts='["CostOfRevenue"]'), "not a us-gaap or dei QName"),
        (_second(concepts="[]"), "at least 1 item"),
        (_second(unit='"dollars"'), "unit"),
        (_second(name='"Other Metric"'), "String should match pattern"),
        (_second(labels='["Net sales"]'), "label 'net sales' belongs to both revenue and other"),
        (_second(labels='["net sales:"]'), "label 'net sales' belongs to both revenue and other"),
        (_second(concepts='["us-gaap:Revenues"]'), "concept 'us-gaap:Revenues' belongs to both"),
        (_second(aliases='["revenue"]'), "name or alias 'revenue' belongs to both"),
        (_second(name='"sales"'), "name or alias 'sales' belongs to both"),
        (_second(labels='["Cost of sales", "COST OF SALES"]'), "belongs twice to other"),
        (_second(statement='"balance_sheet"'), "a balance sheet item is an instant"),
        (_second(labels='["Total {company} {company}"]'), "only placeholder"),
        (
            _second(labels='["Revenue attributable to {company}"]')
            + _second(
                name='"third"',
                concepts='["us-gaap:Assets"]',
                labels='["Revenue attributable to parent"]',
            ),
            "also reads third's 'revenue attributable to parent'",
        ),
    ],
)
def test_a_dictionary_that_says_one_thing_twice_or_wrongly_is_refused(extra: str, fault: str):
    with pytest.raises(ValidationError, match=re.escape(fault)):
        load_dictionary(REVENUE + extra)


def test_computed_measures_may_not_shadow_a_metric():
    with pytest.raises(ValidationError, match="belongs to both revenue and not_line_items"):
        load_dictionary(REVENUE + '\n[not_line_items]\nsales = "a KPI"\n')


# ---- labels printed in real filings ---------------------------------------------------------
# (label as printed, statement its table is, metric or None). Sources: the FinanceBench dev
# PDFs (3M, Adobe, Amazon, American Express, Best Buy, Corning, Costco, MGM, PepsiCo, Pfizer,
# Verizon) and the inline XBRL filings of Apple, Netflix, NVIDIA and Tesla.

PRINTED = [
    # 3M 2018 and 2022 10-K
    ("Purchases of property, plant and equipment (PP&E)", CASH, "capital_expenditure"),
    ("Proceeds from sale of PP&E and other assets", CASH, "proceeds_from_sale_of_ppe"),
    ("Net income including noncontrolling interest", CASH, "net_income_including_noncontrolling"),
    ("Net income attributable to 3M", INCOME, "net_income"),
    ("Earnings per share attributable to 3M common shareholders — diluted", INCOME, "eps_diluted"),
    ("Research, development and related expenses", INCOME, "research_and_development"),
    ("Property, plant and equipment — net", BALANCE, "ppe_net"),
    ("Marketable securities — current", BALANCE, "short_term_investments"),
    ("Net cash provided by (used in) investing activities", CASH, "investing_cash_flow"),
    ("Purchases of treasury stock", CASH, "share_repurchases"),
    ("Dividends paid to shareholders", CASH, "dividends_paid"),
    # Amazon 2017 10-K
    (
        "Purchases of property and equipment, including internal-use software and website "
        "development",
        CASH,
        "capital_expenditure",
    ),
    ("Total net sales", INCOME, "revenue"),
    ("CASH AND CASH EQUIVALENTS, END OF PERIOD", CASH, "cash_and_restricted_cash"),
    ("Net cash provided by (used in) operating activities", CASH, "operating_cash_flow"),
    # Apple 10-K 2024
    ("Payments for acquisition of property, plant and equipment", CASH, "capital_expenditure"),
    ("Gross margin", INCOME, "gross_profit"),
    ("Cash generated by/(used in) investing activities", CASH, "investing_cash_flow"),
    ("Payments for dividends and dividend equivalents", CASH, "dividends_paid"),
    ("Total shareholders’ equity", BALANCE, "stockholders_equity"),
    ("Total shareholders’ equity, ending balances", model.EQUITY, "stockholders_equity"),
    # Tesla 10-Q 2025
    (
        "Purchases of property and equipment excluding finance leases, net of sales",
        CASH,
        "capital_expenditure",
    ),
    ("Net decrease in cash and cash equivalents and restricted cash", CASH, "change_in_cash"),
    ("Depreciation, amortization and impairment", CASH, "depreciation_and_amortization"),
    # NVIDIA 10-Q 2025
    (
        "Purchases related to property and equipment and intangible assets",
        CASH,
        "capital_expenditure",
    ),
    ("Sales, general and administrative", INCOME, "selling_general_administrative"),
    ("Income before income tax", INCOME, "pretax_income"),
    ("Total other income (expense), net", INCOME, "nonoperating_income"),
    # Netflix 10-K 2024 and 2015
    ("Technology and development", INCOME, "research_and_development"),
    ("Cost of revenues", INCOME, "cost_of_revenue"),
    (
        "Depreciation and amortization of property, equipment and intangibles",
        CASH,
        "depreciation_and_amortization",
    ),
    ("Net cash (used in) provided by operating activities", CASH, "operating_cash_flow"),
    # PepsiCo 2022 10-K
    ("Net Revenue", INCOME, "revenue"),
    ("Operating Profit", INCOME, "operating_income"),
    ("Net Income Attributable to PepsiCo", INCOME, "net_income"),
    ("Total PepsiCo Common Shareholders’ Equity", BALANCE, "stockholders_equity"),
    # Costco 2021 10-K
    ("Merchandise costs", INCOME, "cost_of_revenue"),
    ("NET INCOME ATTRIBUTABLE TO COSTCO", INCOME, "net_income"),
    ("Total revenue", INCOME, "revenue"),
    (
        "Net income including noncontrolling interests",
        INCOME,
        "net_income_including_noncontrolling",
    ),
    # Pfizer 2021 10-K
    (
        "Income from continuing operations before provision/(benefit) for taxes on income",
        INCOME,
        "pretax_income",
    ),
    ("Provision/(benefit) for taxes on income", INCOME, "income_tax_expense"),
    (
        "Selling, informational and administrative expenses",
        INCOME,
        "selling_general_administrative",
    ),
    ("Total Pfizer Inc. shareholders’ equity", BALANCE, "stockholders_equity"),
    (
        "Net income before allocation to noncontrolling interests",
        INCOME,
        "net_income_including_noncontrolling",
    ),
    (
        "Less: Net income attributable to noncontrolling interests",
        INCOME,
        "net_income_noncontrolling",
    ),
    ("Net income attributable to Pfizer Inc. common shareholders", INCOME, "net_income"),
    # Verizon 2022 10-K
    ("Total Operating Revenues", INCOME, "revenue"),
    ("Debt maturing within one year", BALANCE, "short_term_debt"),
    ("Depreciation and amortization expense", INCOME, "depreciation_and_amortization"),
    ("Income Before Provision For Income Taxes", INCOME, "pretax_income"),
    ("Net income attributable to Verizon", INCOME, "net_income"),
    # MGM Resorts 2022 Q4 earnings release
    ("Interest expense, net of amounts capitalized", INCOME, "interest_expense"),
    ("Net income attributable to MGM Resorts International", INCOME, "net_income"),
    ("Total MGM Resorts International stockholders' equity", BALANCE, "stockholders_equity"),
    ("Long-term debt, net", BALANCE, "long_term_debt"),
    ("Net income (loss)", INCOME, "net_income"),
    # American Express 2022 10-K
    ("Total revenues net of interest expense", INCOME, "revenue"),
    ("Pretax income", INCOME, "pretax_income"),
    ("Income tax provision", INCOME, "income_tax_expense"),
    ("Repurchase of American Express common shares and other", CASH, "share_repurchases"),
    ("Total cash and cash equivalents", BALANCE, "cash_and_equivalents"),
    # Best Buy 2023 10-K
    ("Merchandise inventories", BALANCE, "inventory"),
    ("Receivables, net", BALANCE, "accounts_receivable"),
    ("Net earnings", INCOME, "net_income"),
    ("Total cash provided by operating activities", CASH, "operating_cash_flow"),
    ("Borrowings of debt", CASH, "debt_issued"),
    ("Net property and equipment", BALANCE, "ppe_net"),
    ("Total long-term debt", BALANCE, "total_debt"),
    # Corning 2022 10-K
    ("Capital expenditures", CASH, "capital_expenditure"),
    ("Net income attributable to non-controlling interest", INCOME, "net_income_noncontrolling"),
    ("Research, development and engineering expenses", INCOME, "research_and_development"),
    ("Amortization of purchased intangibles", INCOME, "amortization_of_intangibles"),
    # Adobe 2022 10-K
    ("Capital expenditures (including capitalized software)", CASH, "capital_expenditure"),
    ("Net cash used for investing activities", CASH, "investing_cash_flow"),
    ("Depreciation, amortization and accretion", CASH, "depreciation_and_amortization"),
    ("Provision for (benefit from) income taxes", INCOME, "income_tax_expense"),
    ("Cost of sales", INCOME, "cost_of_revenue"),
]

FALSE_FRIENDS = [
    # A segment or product line is not the total (the issue's example; Apple; Amazon).
    ("Net sales by segment: Americas", INCOME),
    ("Products", INCOME),
    ("Services", INCOME),
    ("Net product sales", INCOME),
    ("Cost of services (exclusive of items shown below)", INCOME),  # Verizon: one cost line
    # The cash flow prints working-capital changes under balance sheet labels (3M).
    ("Accounts receivable", CASH),
    ("Inventories", CASH),
    ("Depreciation and amortization", BALANCE),
    # A tail that changes what is measured.
    ("Deferred revenue, net of current portion", BALANCE),  # Tesla: the non-current part
    ("Total revenues net of interest expense after provisions for credit losses", INCOME),
    ("Net cash provided by/(used in) operating activities from discontinued operations", CASH),
    (
        "Less: Comprehensive income attributable to noncontrolling interests and redeemable "
        "noncontrolling interests in subsidiaries",
        model.COMPREHENSIVE,
    ),
    # Labels that mean different line items in different filings.
    ("Property, plant and equipment", BALANCE),  # net at Pfizer, gross at Verizon
    ("Other expense (income), net", INCOME),  # 3M prints expense positive
    ("Acquisitions", CASH),  # also a goodwill roll-forward row
    # Rows no dictionary could place on their own.
    ("Proceeds from property and equipment incentives", CASH),  # Amazon
    ("Property and equipment acquired under capital leases", CASH),  # Amazon
    ("Basic", INCOME),
    ("Total", INCOME),
    ("Commitments and contingencies (Note 10)", BALANCE),
]


@pytest.mark.parametrize(("label", "statement", "name"), PRINTED)
def test_a_printed_label_reads_as_its_line_item(label: str, statement: str, name: str):
    assert match_label(label, statement) == metric(name)


@pytest.mark.parametrize(("label", "statement"), FALSE_FRIENDS)
def test_a_false_friend_reads_as_nothing(label: str, statement: str):
    assert match_label(label, statement) is None


def test_a_label_matches_only_in_the_statements_that_print_it():
    assert match_label("Net income", CASH) == metric("net_income")  # the cash flow opens with it
    assert match_label("Net income", BALANCE) is None
    assert match_label("Accounts payable", BALANCE) == metric("accounts_payable")
    assert match_label("Accounts payable", CASH) is None
    # Segment notes break line items down; their totals restate the statement's.
    assert match_label("Total net sales", model.SEGMENT) is None
    # Other tables and unknown tables admit every metric: the caller ranks them.
    assert match_label("Total net sales", model.OTHER_TABLE) == metric("revenue")
    assert match_label("Total net sales") == metric("revenue")
    with pytest.raises(ValueError, match="unknown statement kind"):
        match_label("Total net sales", "income")


@pytest.mark.parametrize(
    ("heading", "label", "name"),
    [
        ("Earnings per share:", "Basic", "eps_basic"),  # Apple, Netflix
        (
            "Shares used in computing earnings per share:",
            "Diluted",
            "weighted_average_shares_diluted",
        ),
        ("Net income per share:", "Basic (1)", "eps_basic"),  # NVIDIA
        (
            "Weighted average shares used in per share computation:",
            "Diluted",
            "weighted_average_shares_diluted",
        ),
        (
            "Net income per share of common stock attributable to common stockholders",
            "Basic",
            "eps_basic",
        ),
        (
            "Weighted average shares used in computing net income per share of common stock",
            "Diluted",
            "weighted_average_shares_diluted",
        ),
        (
            "Weighted-average shares of common stock outstanding:",
            "Basic",
            "weighted_average_shares_basic",
        ),
        ("Net Income Attributable to PepsiCo per Common Share", "Diluted", "eps_diluted"),
        ("Weighted-average common shares outstanding", "Basic", "weighted_average_shares_basic"),
        ("NET INCOME PER COMMON SHARE ATTRIBUTABLE TO COSTCO:", "Basic", "eps_basic"),
        ("Current liabilities:", "Term debt", "long_term_debt_current"),  # Apple
        ("Non-current liabilities:", "Term debt", "long_term_debt"),
    ],
)
def test_a_row_under_a_heading_reads_with_it(heading: str, label: str, name: str):
    statement = metric(name).statement
    assert match_label(label, statement) is None
    assert match_label(label, statement, parents=["Consolidated", heading]) == metric(name)


def test_the_unit_keeps_a_per_share_row_from_reading_as_money():
    # Pfizer prints EPS rows under an "Earnings per common share, basic" heading with the labels
    # of the income statement's net income rows.
    label = "Net income attributable to Pfizer Inc. common shareholders"
    heading = ["Earnings per common share––basic:"]
    assert match_label(label, INCOME, parents=heading, unit="USD/shares") is None
    assert match_label(label, INCOME, unit="USD") == metric("net_income")
    assert match_label("Basic earnings per share", INCOME, unit="shares") is None
    assert match_label("Basic earnings per share", INCOME, unit="USD/shares") == metric("eps_basic")


def test_labels_come_in_order_of_preference():
    # Costco prints "Net sales" (without membership fees) above "Total revenue".
    revenue = metric("revenue")
    assert revenue.label_rank("Total revenue") < revenue.label_rank("Net sales")
    # PepsiCo prints "Net income" (with noncontrolling interests) above its own share.
    net_income = metric("net_income")
    assert net_income.label_rank("Net Income Attributable to PepsiCo") < net_income.label_rank(
        "Net income"
    )
    assert revenue.label_rank("Products") is None


def test_a_metric_knows_its_natural_sign():
    # 3M prints capex as (1,577): the store keeps -1577, a lookup reports 1,577.
    assert metric("capex").natural_value(Decimal("-1577")) == Decimal("1577")
    assert metric("net income").natural_value(Decimal("-5")) == Decimal("-5")
    assert metric("buybacks").sign == "magnitude"
    assert metric("operating cash flow").sign == "as_printed"


def test_normalized_labels_are_the_facts_store_keys():
    capex = metric("capital_expenditure")
    assert model.normalize_label("Purchases of property, plant and equipment (PP&E)") in (
        capex.normalized_labels
    )
    assert all(COMPANY not in label for label in metric("net_income").normalized_labels)


# ---- concepts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("qname", "name"),
    [
        ("us-gaap:PaymentsToAcquirePropertyPlantAndEquipment", "capital_expenditure"),
        ("us-gaap:PaymentsToAcquireProductiveAssets", "capital_expenditure"),  # NVIDIA
        ("us-gaap:Revenues", "revenue"),
        ("us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax", "revenue"),
        ("us-gaap:CostOfGoodsAndServicesSold", "cost_of_revenue"),
        ("us-gaap:NetIncomeLoss", "net_income"),
        ("us-gaap:ProfitLoss", "net_income_including_noncontrolling"),
        ("us-gaap:EarningsPerShareDiluted", "eps_diluted"),
        ("us-gaap:AccountsReceivableNetCurrent", "accounts_receivable"),
        ("dei:EntityCommonStockSharesOutstanding", "shares_outstanding"),
        (" us-gaap:Assets ", "total_assets"),
    ],
)
def test_a_concept_reads_as_its_line_item(qname: str, name: str):
    assert match_concept(qname) == metric(name)


@pytest.mark.parametrize(
    "qname",
    [
        "us-gaap:IncreaseDecreaseInAccountsReceivable",  # a change, not the balance
        "us-gaap:AllocatedShareBasedCompensationExpense",
        "us-gaap:revenues",  # QNames are case-sensitive
        "Revenues",
    ],
)
def test_other_concepts_read_as_nothing(qname: str):
    assert match_concept(qname) is None


# ---- what users type -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "name"),
    [
        ("capex", "capital_expenditure"),
        ("Capital_Expenditure", "capital_expenditure"),
        ("Capital expenditure", "capital_expenditure"),  # the display name
        ("sales", "revenue"),
        ("top line", "revenue"),
        ("EPS", "eps_diluted"),
        ("R&D", "research_and_development"),
        ("SG&A", "selling_general_administrative"),
        ("buybacks", "share_repurchases"),
        ("D&A", "depreciation_and_amortization"),
        ("pp&e", "ppe_net"),
        ("cfo", "operating_cash_flow"),
    ],
)
def test_a_name_or_alias_finds_its_metric(typed: str, name: str):
    assert metric(typed).name == name


def test_an_unknown_metric_is_a_usage_error_naming_close_matches():
    with pytest.raises(UsageError) as caught:
        metric("capx")
    assert caught.value.exit_code == ExitCode.USAGE
    assert "capx" in caught.value.message
    assert "capital_expenditure" in caught.value.hint
    with pytest.raises(UsageError) as caught:
        metric("net incme")
    assert caught.value.hint.startswith("did you mean net_income")
    with pytest.raises(UsageError) as caught:
        metric("zzzz")
    assert "did you mean" not in caught.value.hint


def test_a_kpi_is_named_as_computed_not_unknown():
    with pytest.raises(UsageError) as caught:
        metric("FCF")
    assert "operating cash flow less capital expenditure" in caught.value.message


# ---- agreement with real inline XBRL ---------------------------------------------------------

XHTML = "{http://www.w3.org/1999/xhtml}"
IX = "{http://www.xbrl.org/2013/inlineXBRL}"
XBRLI = "{http://www.xbrl.org/2003/instance}"
XBRLDI = "{http://xbrl.org/2006/xbrldi}"


def _tagged_rows(path: Path):
    """(row label, heading above it, concept, unit) of every tagged number outside a
    dimension: the consolidated figures, as the statements and notes print them."""
    root = etree.parse(str(path), etree.XMLParser(huge_tree=True, recover=True)).getroot()
    dimensioned = {
        context.get("id")
        for context in root.iter(f"{XBRLI}context")
        if context.find(f".//{XBRLDI}explicitMember") is not None
        or context.find(f".//{XBRLDI}typedMember") is not None
    }
    units = {
        unit.get("id"): "/".join(m.text.split(":")[-1] for m in unit.iter(f"{XBRLI}measure"))
        for unit in root.iter(f"{XBRLI}unit")
    }
    for table in root.iter(f"{XHTML}table"):
        heading = None
        for row in table.iter(f"{XHTML}tr"):
            cells = [" ".join("".join(td.itertext()).split()) for td in row.iter(f"{XHTML}td")]
            cells = [cell for cell in cells if cell]
            if not cells:
                continue
            tagged = [
                fact
                for fact in row.iter(f"{IX}nonFraction")
                if fact.get("contextRef") not in dimensioned
            ]
            if not tagged:
                if not any(re.search(r"\d", cell) for cell in cells[1:]):
                    heading = cells[0]
                continue
            for fact in tagged:
                yield cells[0], heading, fact.get("name"), units.get(fact.get("unitRef"))


# Where a filing's tag and its printed label disagree, on purpose.
KNOWN_DISAGREEMENTS = {
    # Apple's only non-operating line is tagged as the total; others print both lines.
    ("Other income/(expense), net", "us-gaap:NonoperatingIncomeExpense"),
    # Tesla prints "Net income" for the figure with noncontrolling interests: the
    # dictionary prefers the parent's share, the tag says which Tesla meant.
    ("Net income", "us-gaap:ProfitLoss"),
    # A debt note's column for the current portion.
    ("Total debt", "us-gaap:DebtCurrent"),
}
STATEMENT_FILINGS = [
    "aapl-10-k-2024-11-01.html",
    "aapl-10-q-2025-08-01.html",
    "nflx-10-k-2025-01-27.html",
    "nvda-10-q-2025-08-27.html",
    "tsla-10-q-2025-07-24.html",
]


@needs_filings
@pytest.mark.parametrize("filing", STATEMENT_FILINGS)
def test_labels_and_tags_agree_in_real_filings(filing: str):
    agreeing: set[str] = set()
    disagreeing: set[tuple[str, str]] = set()
    for label, heading, concept, unit in _tagged_rows(EDGAR / filing):
        tagged = match_concept(concept)
        printed = match_label(label, parents=[heading] if heading else [], unit=unit)
        if tagged is None or printed is None:
            continue
        if printed == tagged:
            agreeing.add(tagged.name)
        else:
            disagreeing.add((label, concept))
    assert disagreeing <= KNOWN_DISAGREEMENTS
    # The statements' main lines are read from their labels alone.
    assert {
        "revenue",
        "net_income",
        "eps_diluted",
        "weighted_average_shares_diluted",
        "total_assets",
        "stockholders_equity",
        "operating_cash_flow",
        "capital_expenditure",
    } <= agreeing


# Variants no list holds word for word, read through synonyms and patterns; each match
# says which label it read as and through which synonyms.
@pytest.mark.parametrize(
    ("label", "statement", "unit", "name", "because"),
    [
        ("Earnings before income tax expense and equity in income (loss) of affiliates",
         INCOME, "USD", "pretax_income", "equity in income of affiliates"),
        ("Income before income taxes and equity in (loss) income of affiliates",
         INCOME, "USD", "pretax_income", "equity in income of affiliates"),
        ("Net loss attributable to Boeing shareholders", INCOME, "USD", "net_income",
         "loss = income"),
        ("Net earnings attributable to Acme Holdings", INCOME, "USD", "net_income", "label"),
        ("Payments to acquire property, plant and equipment", CASH, "USD",
         "capital_expenditure", "purchases of"),
        ("Additions to property", CASH, "USD", "capital_expenditure", "purchases of property"),
        ("Capital expenditures", CASH, "USD", "capital_expenditure", "label"),
        ("Proceeds from disposals of property, plant and equipment", CASH, "USD",
         "proceeds_from_sale_of_ppe", "disposals of = sale of"),
        ("Net cash (used)/provided by operating activities", CASH, "USD",
         "operating_cash_flow", "label"),
        ("TOTAL FINANCING ACTIVITIES", CASH, "USD", "financing_cash_flow", "label"),
        ("Income tax (expense)/benefit", INCOME, "USD", "income_tax_expense", "label"),
        ("Total shareholders’ deficit", BALANCE, "USD", "stockholders_equity",
         "deficit = equity"),
        ("Research and development expense, net", INCOME, "USD", "research_and_development",
         "', net' tail"),
        ("Basic loss per share", INCOME, "USD/shares", "eps_basic", "loss = income"),
        ("Property, plant and equipment, net of accumulated depreciation of $23,208 and $22,925",
         BALANCE, "USD", "ppe_net", "net of accumulated depreciation"),
    ],
)  # fmt: skip
def test_label_variants_resolve_by_synonyms_with_the_reason(
    label: str, statement: str, unit: str, name: str, because: str
) -> None:
    found = explain_label(label, statement, unit=unit)
    assert found is not None and found.metric == metric(name), found
    assert because in found.reason


@pytest.mark.parametrize(
    ("label", "statement"),
    [
        ("Loss on disposal of property, plant and equipment", CASH),  # a gain or loss, no cash
        ("Net loss on extinguishment of debt", INCOME),
        ("Payments to acquire businesses, net of cash acquired", CASH),
        ("Proceeds from sale of businesses", CASH),
    ],
)
def test_synonyms_do_not_make_false_friends(label: str, statement: str) -> None:
    found = explain_label(label, statement, unit="USD")
    assert found is None or found.metric.name not in (
        "capital_expenditure",
        "net_income",
        "proceeds_from_sale_of_ppe",
    ), found
