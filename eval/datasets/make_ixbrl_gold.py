"""An iXBRL-gold question set: metric, KPI and defined-formula questions over EDGAR filings.

    python eval/datasets/make_ixbrl_gold.py ../shared/edgar-html > eval/datasets/ixbrl_gold.jsonl

Gold values come from the filings' own inline XBRL tags, read here with plain lxml and
nothing from ``finrag.facts``: a reader of its own is what makes this set a check on the
facts store rather than a copy of it. A tag's value is its text under its ``format``
(num-dot-decimal, fixed-zero), times ten to its ``scale``, negated when ``sign="-"``;
its ``contextref`` names the period (instant or start/end) and whether it is the entity
total (no segment) or a member of some axis; its ``unitref`` the unit. Only entity
totals are used. Fiscal year and quarter are the filing's DEI tags
(DocumentFiscalYearFocus, DocumentFiscalPeriodFocus); quarterly questions ask about the
three months ended on DocumentPeriodEndDate.

A question whose inputs a filing does not tag is left out (listed on stderr), never
guessed. Lines are in finrag's dataset format (finrag/evaluate/dataset.py) with a
``gold`` record: the value, its unit, the concepts and contexts read, and the formula.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from lxml import etree

NS = {
    "ix": "http://www.xbrl.org/2013/inlineXBRL",
    "xbrli": "http://www.xbrl.org/2003/instance",
}
_IX = "{" + NS["ix"] + "}"
_XBRLI = "{" + NS["xbrli"] + "}"
_DEI = (
    "DocumentFiscalYearFocus",
    "DocumentFiscalPeriodFocus",
    "DocumentPeriodEndDate",
    "EntityRegistrantName",
)


# ---- the reader: tags -> facts --------------------------------------------------------


@dataclass(frozen=True)
class Context:
    id: str
    start: date | None  # None for an instant
    end: date  # the instant itself for an instant
    dimensional: bool  # a segment (or scenario) member: not the entity total


@dataclass(frozen=True)
class Fact:
    concept: str  # "us-gaap:Revenues"
    value: float  # base units, signed
    unit: str  # "usd", "shares", "usd/shares", "pure"
    context: Context
    tag_id: str
    decimals: float  # inf for "INF": how precise the tag says it is


@dataclass
class Filing:
    path: Path
    dei: dict[str, str]
    contexts: dict[str, Context]
    facts: list[Fact]
    skipped_formats: dict[str, int] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.name

    def totals(self, concept: str) -> list[Fact]:
        return [f for f in self.facts if f.concept == concept and not f.context.dimensional]


def _local_date(text: str) -> date:
    return date.fromisoformat(text.strip()[:10])


def read_contexts(root: etree._Element) -> dict[str, Context]:
    contexts = {}
    for ctx in root.iter(_XBRLI + "context"):
        period = ctx.find("xbrli:period", NS)
        instant = period.findtext("xbrli:instant", namespaces=NS)
        if instant:
            start, end = None, _local_date(instant)
        else:
            start = _local_date(period.findtext("xbrli:startDate", namespaces=NS))
            # XBRL durations end at the close of their end date, as printed.
            end = _local_date(period.findtext("xbrli:endDate", namespaces=NS))
        dimensional = (
            ctx.find("xbrli:entity/xbrli:segment", NS) is not None
            or ctx.find("xbrli:scenario", NS) is not None
        )
        contexts[ctx.get("id")] = Context(ctx.get("id"), start, end, dimensional)
    return contexts


def read_units(root: etree._Element) -> dict[str, str]:
    units = {}
    for unit in root.iter(_XBRLI + "unit"):
        divide = unit.find("xbrli:divide", NS)
        if divide is not None:
            num = divide.findtext("xbrli:unitNumerator/xbrli:measure", namespaces=NS)
            den = divide.findtext("xbrli:unitDenominator/xbrli:measure", namespaces=NS)
            text = f"{_measure(num)}/{_measure(den)}"
        else:
            text = _measure(unit.findtext("xbrli:measure", namespaces=NS))
        units[unit.get("id")] = text
    return units


def _measure(text: str | None) -> str:
    return (text or "").split(":")[-1].strip().lower()


def tag_number(text: str, fmt: str | None) -> float | None:
    """The number a tag's text stands for under its format; None for a format not read."""
    kind = (fmt or "").split(":")[-1].lower()
    if kind in ("fixed-zero", "fixedzero"):
        return 0.0
    if kind in ("", "num-dot-decimal", "numdotdecimal", "numcommadot"):
        digits = re.sub(r"[\s,\u00a0]", "", text)
        if not re.fullmatch(r"\d+(\.\d+)?|\.\d+", digits):
            return None
        return float(digits)
    return None


def _decimals(text: str | None) -> float:
    if text is None or text.upper() == "INF":
        return float("inf")
    return float(text)


def read_filing(path: Path) -> Filing:
    parser = etree.XMLParser(huge_tree=True, recover=True)
    root = etree.parse(str(path), parser).getroot()
    contexts = read_contexts(root)
    units = read_units(root)
    dei: dict[str, str] = {}
    for el in root.iter(_IX + "nonNumeric"):
        local = el.get("name", "").split(":")[-1]
        if local in _DEI and local not in dei:
            dei[local] = " ".join("".join(el.itertext()).split())
            if local == "DocumentPeriodEndDate":
                dei["PeriodEndContext"] = el.get("contextRef")
    facts: list[Fact] = []
    skipped: dict[str, int] = {}
    for el in root.iter(_IX + "nonFraction"):
        if el.get("{http://www.w3.org/2001/XMLSchema-instance}nil") == "true":
            continue
        fmt = el.get("format")
        number = tag_number("".join(el.itertext()), fmt)
        if number is None:
            skipped[fmt or "none"] = skipped.get(fmt or "none", 0) + 1
            continue
        value = number * 10 ** int(el.get("scale") or 0)
        if el.get("sign") == "-":
            value = -value
        facts.append(
            Fact(
                concept=el.get("name"),
                value=value,
                unit=units.get(el.get("unitRef"), "?"),
                context=contexts[el.get("contextRef")],
                tag_id=el.get("id") or "",
                decimals=_decimals(el.get("decimals")),
            )
        )
    return Filing(path, dei, contexts, facts, skipped)


# ---- periods and values ---------------------------------------------------------------


class Missing(Exception):
    """A needed input is not tagged (or tagged twice with different values)."""


@dataclass(frozen=True)
class Period:
    start: date | None
    end: date

    def label(self) -> str:
        return f"{self.start}/{self.end}" if self.start else str(self.end)


def _durations(filing: Filing) -> set[Period]:
    return {
        Period(c.start, c.end)
        for c in filing.contexts.values()
        if c.start is not None and not c.dimensional
    }


def periods(filing: Filing) -> dict[str, Period]:
    """The filing's own periods by role: ``cur`` is the fiscal year (10-K) or the three
    months (10-Q) ended on DocumentPeriodEndDate, ``prior`` the same span a year earlier;
    ``cur_end`` its closing balance sheet date and ``prior_end`` the balance sheet's
    comparative column (the prior fiscal year end, also in a 10-Q)."""
    dei_ctx = filing.contexts[filing.dei["PeriodEndContext"]]
    end = dei_ctx.end
    quarterly = filing.dei.get("DocumentFiscalPeriodFocus", "FY") != "FY"
    low, high = (80, 100) if quarterly else (350, 380)
    spans = _durations(filing)
    cur = _only(
        [p for p in spans if p.end == end and low <= (p.end - p.start).days <= high], "current"
    )
    prior = _only(
        [
            p
            for p in spans
            if low <= (p.end - p.start).days <= high and 357 <= (end - p.end).days <= 371
        ],
        "prior-year",
    )
    # The DEI context spans the fiscal year to date: the day before it opens closed the
    # prior fiscal year, the balance sheet's comparative column.
    prior_end = dei_ctx.start - timedelta(days=1)
    return {
        "cur": cur,
        "prior": prior,
        "cur_end": Period(None, end),
        "prior_end": Period(None, prior_end),
    }


def _only(found: list[Period], what: str) -> Period:
    if len(found) != 1:
        raise Missing(f"{len(found)} {what} periods: {sorted(p.label() for p in found)}")
    return found[0]


# Each input names its concepts in order of preference; the first one the filing tags
# as an entity total for the period is used.
CONCEPTS: dict[str, list[str]] = {
    "revenue": ["us-gaap:Revenues", "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax"],
    "cost_of_revenue": ["us-gaap:CostOfRevenue", "us-gaap:CostOfGoodsAndServicesSold"],
    "gross_profit": ["us-gaap:GrossProfit"],
    "rnd": ["us-gaap:ResearchAndDevelopmentExpense"],
    "opex": ["us-gaap:OperatingExpenses"],
    "operating_income": ["us-gaap:OperatingIncomeLoss"],
    "pretax_income": [
        "us-gaap:IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest"
    ],
    "income_tax": ["us-gaap:IncomeTaxExpenseBenefit"],
    "net_income": ["us-gaap:NetIncomeLoss"],
    "eps_diluted": ["us-gaap:EarningsPerShareDiluted"],
    "diluted_shares": ["us-gaap:WeightedAverageNumberOfDilutedSharesOutstanding"],
    "total_assets": ["us-gaap:Assets"],
    "current_assets": ["us-gaap:AssetsCurrent"],
    "current_liabilities": ["us-gaap:LiabilitiesCurrent"],
    "total_liabilities": ["us-gaap:Liabilities"],
    "equity": ["us-gaap:StockholdersEquity"],
    "cash": ["us-gaap:CashAndCashEquivalentsAtCarryingValue"],
    "inventory": ["us-gaap:InventoryNet"],
    "commercial_paper": ["us-gaap:CommercialPaper"],
    "long_term_debt_current": ["us-gaap:LongTermDebtCurrent"],
    "long_term_debt": ["us-gaap:LongTermDebtNoncurrent"],
    "operating_cash_flow": ["us-gaap:NetCashProvidedByUsedInOperatingActivities"],
    "capex": [
        "us-gaap:PaymentsToAcquirePropertyPlantAndEquipment",
        "us-gaap:PaymentsToAcquireProductiveAssets",
    ],
    "depreciation_and_amortization": ["us-gaap:DepreciationDepletionAndAmortization"],
    "share_repurchases": ["us-gaap:PaymentsForRepurchaseOfCommonStock"],
    "shares_outstanding": ["dei:EntityCommonStockSharesOutstanding"],
}


@dataclass(frozen=True)
class Read:
    name: str
    fact: Fact

    def as_dict(self) -> dict[str, object]:
        c = self.fact.context
        return {
            "input": self.name,
            "concept": self.fact.concept,
            "context": c.id,
            "period": Period(c.start, c.end).label(),
            "value": self.fact.value,
            "unit": self.fact.unit,
            "tag": self.fact.tag_id,
        }


def read_value(filing: Filing, name: str, period: Period | None) -> Read:
    """The entity total of ``name`` for ``period`` (None: the concept's only total, as
    for cover-page share counts dated after the period). Tags repeating a value at a
    lower precision (a rounded "$4.8 billion" in MD&A) yield to the most precise one;
    two different values at the same precision are a conflict, not a choice."""
    for concept in CONCEPTS[name]:
        found = [
            f
            for f in filing.totals(concept)
            if period is None or (f.context.start == period.start and f.context.end == period.end)
        ]
        if not found:
            continue
        best = max(f.decimals for f in found)
        values = {f.value for f in found if f.decimals == best}
        if len(values) > 1:
            raise Missing(f"{concept} {period and period.label()}: conflicting {sorted(values)}")
        return Read(name, next(f for f in found if f.decimals == best))
    raise Missing(
        f"{name} ({', '.join(CONCEPTS[name])}) not tagged for {period and period.label()}"
    )


# ---- questions ------------------------------------------------------------------------


def state(value: float, style: str) -> str:
    """The gold answer as an analyst writes it (and finrag's correctness check reads)."""
    if style == "money":
        return f"${value / 1e6:,.0f} million"
    if style == "per_share":
        return f"${value:.2f}"
    if style == "shares":
        return f"{value / 1e6:,.0f} million shares"
    if style == "percent":
        return f"{value:.1f}%"
    if style == "ratio":
        return f"{value:.2f}"
    raise ValueError(style)


_UNITS = {
    "money": "USD",
    "per_share": "USD/share",
    "shares": "shares",
    "percent": "percent",
    "ratio": "ratio",
}


@dataclass(frozen=True)
class Spec:
    """One question: a formula over inputs written ``name[role]`` (a metric is the
    formula of its one input), evaluated as written; ``role`` is a key of periods()."""

    id: str
    type: str  # metric | kpi | defined-formula
    style: str  # how the gold answer is written: money, per_share, shares, percent, ratio
    formula: str
    question: str

    def inputs(self) -> list[tuple[str, str, str | None]]:
        """(variable, input name, period role) for each input; role None: its only total."""
        found = []
        for name, role in _INPUT.findall(self.formula):
            var = f"{name}__{role}"
            if var not in [v for v, _, _ in found]:
                found.append((var, name, None if role == "cover" else role))
        return found

    def expression(self) -> str:
        return _INPUT.sub(lambda mt: f"{mt.group(1)}__{mt.group(2)}", self.formula)


_INPUT = re.compile(r"([a-z_]+)\[(\w+)\]")

# filing key, then: id | type | style | formula | question. Roles: cur (the fiscal year,
# or the three months of a 10-Q), prior (the same span a year before), cur_end and
# prior_end (the balance sheet's two dates), cover (a cover-page count).
SPECS_TABLE = """
[aapl-10-k]
aapl-fy24-revenue | metric | money | revenue[cur] | What were Apple's total net sales in fiscal 2024?
aapl-fy24-net-income | metric | money | net_income[cur] | How much net income did Apple report for FY2024?
aapl-fy24-total-assets | metric | money | total_assets[cur_end] | What were Apple's total assets as of September 28, 2024?
aapl-fy23-capex | metric | money | capex[prior] | What was Apple's capital expenditure in FY23?
aapl-fy24-ocf | metric | money | operating_cash_flow[cur] | How much cash did Apple generate from operating activities in fiscal year 2024?
aapl-fy23-rnd | metric | money | rnd[prior] | What did Apple spend on research and development in fiscal 2023?
aapl-fy24-eps | metric | per_share | eps_diluted[cur] | What was Apple's diluted earnings per share for fiscal 2024?
aapl-fy23-cash | metric | money | cash[prior_end] | How much cash and cash equivalents did Apple hold at the end of fiscal 2023?
aapl-fy24-ltd | metric | money | long_term_debt[cur_end] | What was Apple's non-current term debt at the end of FY2024?
aapl-fy24-diluted-shares | metric | shares | diluted_shares[cur] | How many diluted shares did Apple use to compute EPS in fiscal 2024?
aapl-fy24-gross-margin | kpi | percent | gross_profit[cur] / revenue[cur] * 100 | What was Apple's gross margin in fiscal 2024?
aapl-fy23-operating-margin | kpi | percent | operating_income[prior] / revenue[prior] * 100 | What was Apple's operating margin for FY2023?
aapl-fy24-net-margin | kpi | percent | net_income[cur] / revenue[cur] * 100 | What was Apple's net profit margin in FY24?
aapl-fy24-current-ratio | kpi | ratio | current_assets[cur_end] / current_liabilities[cur_end] | What was Apple's current ratio at the end of fiscal 2024?
aapl-fy24-debt-to-equity | kpi | ratio | (commercial_paper[cur_end] + long_term_debt_current[cur_end] + long_term_debt[cur_end]) / equity[cur_end] | What was Apple's debt-to-equity ratio at the end of fiscal 2024?
aapl-fy24-etr | kpi | percent | income_tax[cur] / pretax_income[cur] * 100 | What was Apple's effective tax rate for fiscal 2024?
aapl-fy24-fcf | kpi | money | operating_cash_flow[cur] - capex[cur] | What was Apple's free cash flow in fiscal 2024?
aapl-fy24-revenue-growth | kpi | percent | (revenue[cur] / revenue[prior] - 1) * 100 | By how much did Apple's net sales grow year over year in fiscal 2024?
aapl-fy24-roe | kpi | percent | net_income[cur] / ((equity[cur_end] + equity[prior_end]) / 2) * 100 | What was Apple's return on equity in fiscal 2024, using average shareholders' equity?
aapl-fy24-capex-to-revenue | kpi | percent | capex[cur] / revenue[cur] * 100 | What was Apple's capex as a percentage of revenue in FY2024?
aapl-fy24-asset-turnover | defined-formula | ratio | revenue[cur] / ((total_assets[cur_end] + total_assets[prior_end]) / 2) | What was Apple's asset turnover in fiscal 2024, defined as FY2024 net sales / average total assets between FY2023 and FY2024?
aapl-fy24-cash-conversion | defined-formula | ratio | operating_cash_flow[cur] / net_income[cur] | What was Apple's cash conversion in FY2024, defined as cash from operating activities divided by net income?
aapl-fy24-capex-to-da | defined-formula | ratio | capex[cur] / depreciation_and_amortization[cur] | For fiscal 2024, what was Apple's reinvestment ratio, defined as capital expenditures / depreciation and amortization?

[aapl-10-q]
aapl-q3fy25-revenue | metric | money | revenue[cur] | What were Apple's net sales for the quarter ended June 28, 2025?
aapl-q3fy24-net-income | metric | money | net_income[prior] | What was Apple's net income in the three months ended June 29, 2024?
aapl-q3fy25-rnd | metric | money | rnd[cur] | How much did Apple spend on R&D in Q3 of fiscal 2025?
aapl-q3fy25-eps | metric | per_share | eps_diluted[cur] | What was Apple's diluted EPS in the third quarter of fiscal 2025?
aapl-q3fy25-total-assets | metric | money | total_assets[cur_end] | What were Apple's total assets as of June 28, 2025?
aapl-q3fy25-gross-margin | kpi | percent | gross_profit[cur] / revenue[cur] * 100 | What was Apple's gross margin for the quarter ended June 28, 2025?
aapl-q3fy25-revenue-growth | kpi | percent | (revenue[cur] / revenue[prior] - 1) * 100 | How much did Apple's net sales grow year over year in Q3 FY25?

[ibm-10-k]
ibm-shares-outstanding | metric | shares | shares_outstanding[cover] | How many shares of IBM common stock were outstanding according to the cover of its 2024 10-K?

[nflx-10-k]
nflx-2024-revenue | metric | money | revenue[cur] | What were Netflix's revenues in 2024?
nflx-2023-net-income | metric | money | net_income[prior] | What was Netflix's net income in fiscal year 2023?
nflx-2024-operating-income | metric | money | operating_income[cur] | What was Netflix's operating income for FY2024?
nflx-2024-capex | metric | money | capex[cur] | How much did Netflix spend on purchases of property and equipment in 2024?
nflx-2024-cash | metric | money | cash[cur_end] | How much cash and cash equivalents did Netflix have at December 31, 2024?
nflx-2024-eps | metric | per_share | eps_diluted[cur] | What were Netflix's diluted earnings per share in fiscal 2024?
nflx-2023-ocf | metric | money | operating_cash_flow[prior] | What was Netflix's net cash provided by operating activities in FY23?
nflx-2024-operating-margin | kpi | percent | operating_income[cur] / revenue[cur] * 100 | What was Netflix's operating margin in 2024?
nflx-2024-fcf | kpi | money | operating_cash_flow[cur] - capex[cur] | What was Netflix's free cash flow for fiscal 2024?
nflx-2023-net-margin | kpi | percent | net_income[prior] / revenue[prior] * 100 | What was Netflix's net margin in FY2023?
nflx-2024-etr | kpi | percent | income_tax[cur] / pretax_income[cur] * 100 | What was Netflix's effective tax rate in 2024?
nflx-2024-revenue-growth | kpi | percent | (revenue[cur] / revenue[prior] - 1) * 100 | What was Netflix's revenue growth from FY2023 - FY2024?
nflx-2024-current-ratio | kpi | ratio | current_assets[cur_end] / current_liabilities[cur_end] | What was Netflix's current ratio at the end of 2024?
nflx-2024-roa | defined-formula | percent | net_income[cur] / ((total_assets[cur_end] + total_assets[prior_end]) / 2) * 100 | What was Netflix's return on assets in 2024, defined as 2024 net income / average total assets between FY2023 and FY2024?
nflx-2024-buyback-payout | defined-formula | percent | share_repurchases[cur] / net_income[cur] * 100 | What was Netflix's buyback payout in 2024, defined as repurchases of common stock divided by net income?

[nvda-10-q]
nvda-q2fy26-revenue | metric | money | revenue[cur] | What was NVIDIA's revenue in Q2 of fiscal 2026?
nvda-q2fy26-net-income | metric | money | net_income[cur] | What was NVIDIA's net income for the quarter ended July 27, 2025?
nvda-q2fy25-revenue | metric | money | revenue[prior] | What was NVIDIA's revenue in the second quarter of fiscal 2025?
nvda-q2fy26-eps | metric | per_share | eps_diluted[cur] | What were NVIDIA's diluted earnings per share in Q2 FY26?
nvda-q2fy26-inventory | metric | money | inventory[cur_end] | How much inventory did NVIDIA carry as of July 27, 2025?
nvda-q2fy26-gross-margin | kpi | percent | gross_profit[cur] / revenue[cur] * 100 | What was NVIDIA's gross margin in Q2 of fiscal 2026?
nvda-q2fy26-operating-margin | kpi | percent | operating_income[cur] / revenue[cur] * 100 | What was NVIDIA's operating margin for the three months ended July 27, 2025?
nvda-q2fy26-revenue-growth | kpi | percent | (revenue[cur] / revenue[prior] - 1) * 100 | How much did NVIDIA's revenue grow year over year in the second quarter of fiscal 2026?
nvda-q2fy26-current-ratio | kpi | ratio | current_assets[cur_end] / current_liabilities[cur_end] | What was NVIDIA's current ratio as of July 27, 2025?
nvda-q2fy26-etr | kpi | percent | income_tax[cur] / pretax_income[cur] * 100 | What was NVIDIA's effective tax rate in Q2 FY2026?
nvda-q2fy26-rnd-intensity | defined-formula | percent | rnd[cur] / revenue[cur] * 100 | What was NVIDIA's R&D intensity in Q2 of fiscal 2026, defined as research and development expense / revenue?

[tsla-10-q]
tsla-q2-2025-revenue | metric | money | revenue[cur] | What were Tesla's total revenues in Q2 2025?
tsla-q2-2025-net-income | metric | money | net_income[cur] | What was Tesla's net income attributable to common stockholders for the quarter ended June 30, 2025?
tsla-q2-2024-rnd | metric | money | rnd[prior] | How much did Tesla spend on research and development in the second quarter of 2024?
tsla-q2-2025-cash | metric | money | cash[cur_end] | What were Tesla's cash and cash equivalents as of June 30, 2025?
tsla-q2-2025-gross-profit | metric | money | gross_profit[cur] | What was Tesla's gross profit in the three months ended June 30, 2025?
tsla-q2-2025-gross-margin | kpi | percent | gross_profit[cur] / revenue[cur] * 100 | What was Tesla's gross margin in the second quarter of 2025?
tsla-q2-2025-operating-margin | kpi | percent | operating_income[cur] / revenue[cur] * 100 | What was Tesla's operating margin in Q2 2025?
tsla-q2-2025-revenue-growth | kpi | percent | (revenue[cur] / revenue[prior] - 1) * 100 | What was Tesla's year-over-year revenue growth in Q2 2025?
tsla-q2-2025-opex-ratio | defined-formula | percent | opex[cur] / revenue[cur] * 100 | What was Tesla's operating expense ratio in Q2 2025, defined as total operating expenses / total revenues?
[ba-10-k]
ba-fy24-revenue | metric | money | revenue[cur] | What were Boeing's total revenues in 2024?
ba-fy23-revenue | metric | money | revenue[prior] | How much revenue did Boeing report for fiscal year 2023?
ba-fy24-total-assets | metric | money | total_assets[cur_end] | What were Boeing's total assets at December 31, 2024?
ba-fy23-total-assets | metric | money | total_assets[prior_end] | What were Boeing's total assets at the end of 2023?
ba-fy24-total-liabilities | metric | money | total_liabilities[cur_end] | What were Boeing's total liabilities at the end of fiscal 2024?
ba-fy24-cash | metric | money | cash[cur_end] | How much cash and cash equivalents did Boeing hold at the end of 2024?
ba-fy24-capex | metric | money | capex[cur] | What were Boeing's property, plant and equipment additions in 2024?
ba-fy24-rnd | metric | money | rnd[cur] | How much did Boeing spend on research and development in FY2024?
ba-fy24-current-ratio | kpi | ratio | current_assets[cur_end] / current_liabilities[cur_end] | What was Boeing's current ratio at the end of 2024?
ba-fy24-capex-to-da | defined-formula | ratio | capex[cur] / depreciation_and_amortization[cur] | What was Boeing's reinvestment ratio in 2024, defined as capital expenditures / depreciation and amortization?

[ba-10-q]
ba-q2-2025-revenue | metric | money | revenue[cur] | What were Boeing's revenues in the second quarter of 2025?
ba-q2-2024-revenue | metric | money | revenue[prior] | What were Boeing's revenues for the three months ended June 30, 2024?
ba-q2-2025-total-assets | metric | money | total_assets[cur_end] | What were Boeing's total assets as of June 30, 2025?
ba-q2-2025-cash | metric | money | cash[cur_end] | How much cash and cash equivalents did Boeing have at June 30, 2025?
ba-q2-2025-gross-margin | kpi | percent | gross_profit[cur] / revenue[cur] * 100 | What was Boeing's gross margin in Q2 2025?
ba-q2-2025-current-ratio | kpi | ratio | current_assets[cur_end] / current_liabilities[cur_end] | What was Boeing's current ratio as of June 30, 2025?
ba-q2-2025-revenue-growth | kpi | percent | (revenue[cur] / revenue[prior] - 1) * 100 | How much did Boeing's revenues grow year over year in the second quarter of 2025?

[crm-10-k]
crm-fy25-revenue | metric | money | revenue[cur] | What were Salesforce's total revenues in fiscal 2025?
crm-fy24-revenue | metric | money | revenue[prior] | What were Salesforce's total revenues in fiscal 2024?
crm-fy25-net-income | metric | money | net_income[cur] | What was Salesforce's net income for fiscal year 2025?
crm-fy25-total-assets | metric | money | total_assets[cur_end] | What were Salesforce's total assets at the end of fiscal 2025?
crm-fy24-total-assets | metric | money | total_assets[prior_end] | What were Salesforce's total assets at the end of fiscal 2024?
crm-fy25-cash | metric | money | cash[cur_end] | How much cash and cash equivalents did Salesforce hold at January 31, 2025?
crm-fy25-ocf | metric | money | operating_cash_flow[cur] | How much cash did Salesforce generate from operating activities in FY2025?
crm-fy25-operating-margin | kpi | percent | operating_income[cur] / revenue[cur] * 100 | What was Salesforce's operating margin in fiscal 2025?
crm-fy25-fcf | kpi | money | operating_cash_flow[cur] - capex[cur] | What was Salesforce's free cash flow in fiscal 2025?
crm-fy25-current-ratio | kpi | ratio | current_assets[cur_end] / current_liabilities[cur_end] | What was Salesforce's current ratio at the end of fiscal 2025?
crm-fy25-buyback-payout | defined-formula | percent | share_repurchases[cur] / net_income[cur] * 100 | What was Salesforce's buyback payout in fiscal 2025, defined as repurchases of common stock divided by net income?

[nvda-10-k]
nvda-fy25-revenue | metric | money | revenue[cur] | What was NVIDIA's revenue in fiscal 2025?
nvda-fy24-net-income | metric | money | net_income[prior] | What was NVIDIA's net income for fiscal year 2024?
nvda-fy25-total-assets | metric | money | total_assets[cur_end] | What were NVIDIA's total assets at the end of fiscal 2025?
nvda-fy24-total-assets | metric | money | total_assets[prior_end] | What were NVIDIA's total assets at the end of fiscal 2024?
nvda-fy25-inventory | metric | money | inventory[cur_end] | How much inventory did NVIDIA hold at January 26, 2025?
nvda-fy25-capex | metric | money | capex[cur] | What were NVIDIA's purchases of property and equipment in FY2025?
nvda-fy25-gross-margin | kpi | percent | gross_profit[cur] / revenue[cur] * 100 | What was NVIDIA's gross margin in fiscal 2025?
nvda-fy25-net-margin | kpi | percent | net_income[cur] / revenue[cur] * 100 | What was NVIDIA's net margin in fiscal year 2025?
nvda-fy25-current-ratio | kpi | ratio | current_assets[cur_end] / current_liabilities[cur_end] | What was NVIDIA's current ratio at the end of fiscal 2025?
nvda-fy25-asset-turnover | defined-formula | ratio | revenue[cur] / ((total_assets[cur_end] + total_assets[prior_end]) / 2) | What was NVIDIA's asset turnover in fiscal 2025, defined as FY2025 revenue / average total assets between FY2024 and FY2025?

[pg-10-q]
pg-q3fy25-revenue | metric | money | revenue[cur] | What were Procter & Gamble's net sales in the third quarter of fiscal 2025?
pg-q3fy24-revenue | metric | money | revenue[prior] | What were Procter & Gamble's net sales in Q3 of fiscal 2024?
pg-q3fy25-net-income | metric | money | net_income[cur] | What was Procter & Gamble's net earnings attributable to the company for the quarter ended March 31, 2025?
pg-q3fy25-total-assets | metric | money | total_assets[cur_end] | What were Procter & Gamble's total assets as of March 31, 2025?
pg-fy24-total-assets | metric | money | total_assets[prior_end] | What were Procter & Gamble's total assets at the end of fiscal 2024?
pg-q3fy25-inventory | metric | money | inventory[cur_end] | How much inventory did Procter & Gamble carry at March 31, 2025?
pg-q3fy25-operating-margin | kpi | percent | operating_income[cur] / revenue[cur] * 100 | What was Procter & Gamble's operating margin in the third quarter of fiscal 2025?
pg-q3fy25-current-ratio | kpi | ratio | current_assets[cur_end] / current_liabilities[cur_end] | What was Procter & Gamble's current ratio as of March 31, 2025?

[wfc-10-k]
wfc-shares-outstanding | metric | shares | shares_outstanding[cover] | How many shares of Wells Fargo common stock were outstanding according to the cover of its 2024 10-K?
"""  # noqa: E501 - one question a line reads better than wrapped


def parse_specs(table: str) -> dict[str, list[Spec]]:
    specs: dict[str, list[Spec]] = {}
    key = ""
    for line in table.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("["):
            key = line.strip("[]")
            continue
        qid, qtype, style, formula, question = (part.strip() for part in line.split("|"))
        specs.setdefault(key, []).append(Spec(qid, qtype, style, formula, question))
    return specs


SPECS = parse_specs(SPECS_TABLE)


def filing_key(path: Path) -> str:
    """'aapl-10-k-2024-11-01.html' -> 'aapl-10-k'."""
    return "-".join(path.stem.split("-")[:3])


def _fiscal(filing: Filing, spec: Spec) -> tuple[int, int | None]:
    """The question's fiscal year and quarter as the filing's DEI tags put them: a year
    earlier when every input is the comparative column."""
    year = int(filing.dei["DocumentFiscalYearFocus"])
    roles = {role for _, _, role in spec.inputs()}
    if roles and roles <= {"prior", "prior_end"}:
        year -= 1
    focus = filing.dei.get("DocumentFiscalPeriodFocus", "FY")
    quarter = int(focus[1]) if re.fullmatch(r"Q[1-4]", focus) else None
    if roles == {"prior_end"}:
        quarter = None  # a 10-Q's comparative balance is the prior fiscal year's end
    return year, quarter


def evaluate(expression: str, values: dict[str, float]) -> float:
    """The formula as written in the record, over the inputs' values (nothing else)."""
    code = compile(expression, "<formula>", "eval")
    unknown = set(code.co_names) - set(values)
    if unknown:
        raise ValueError(f"{expression}: unknown names {sorted(unknown)}")
    return float(eval(code, {"__builtins__": {}}, values))


def build(filing: Filing, spec: Spec) -> dict[str, object]:
    roles = periods(filing)
    reads = {
        var: (role, read_value(filing, name, roles[role] if role else None))
        for var, name, role in spec.inputs()
    }
    value = evaluate(spec.expression(), {var: r.fact.value for var, (_, r) in reads.items()})
    year, quarter = _fiscal(filing, spec)
    return {
        "id": spec.id,
        "question": spec.question,
        "answer": state(value, spec.style),
        "company": filing.dei.get("EntityRegistrantName"),
        "type": spec.type,
        "evidence": [{"document": filing.name, "page": None}],
        "fiscal_year": year,
        "fiscal_quarter": quarter,
        "gold": {
            "value": round(value, 6),
            "unit": _UNITS[spec.style],
            "concepts": sorted({r.fact.concept for _, r in reads.values()}),
            "contexts": [{"role": role or "cover", **r.as_dict()} for role, r in reads.values()],
            "formula": spec.formula,
        },
    }


def questions(filing: Filing) -> Iterator[dict[str, object] | Missing]:
    """Every question of the filing's specs; an input it lacks yields the reason instead."""
    for spec in SPECS.get(filing_key(filing.path), []):
        try:
            yield build(filing, spec)
        except Missing as exc:
            yield Missing(f"{spec.id}: {exc}")


def main(argv: list[str]) -> int:
    folder = Path(argv[1]) if len(argv) > 1 else Path("../shared/edgar-html")
    files = sorted(folder.glob("*.htm*"))
    if not files:
        print(f"no .html filings in {folder}", file=sys.stderr)
        return 2
    written = 0
    for path in files:
        filing = read_filing(path)
        for record in questions(filing):
            if isinstance(record, Missing):
                print(f"left out {record}", file=sys.stderr)
                continue
            print(json.dumps(record, ensure_ascii=False))
            written += 1
    print(f"{written} questions from {len(files)} filings", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
