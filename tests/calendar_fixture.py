"""A small inline XBRL 10-K of a retailer whose fiscal 2023 is the 53 weeks ended
February 3, 2024 (named for the calendar year it begins in, as its
dei:DocumentFiscalYearFocus says): the calendar that filed balances a year late."""

from __future__ import annotations

HEAD = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:ix="http://www.xbrl.org/2013/inlineXBRL"
 xmlns:xbrli="http://www.xbrl.org/2003/instance" xmlns:xbrldi="http://xbrl.org/2006/xbrldi"
 xmlns:ixt="http://www.xbrl.org/inlineXBRL/transformation/2020-02-12"
 xmlns:us-gaap="http://fasb.org/us-gaap/2023" xmlns:dei="http://xbrl.sec.gov/dei/2023"
 xmlns:iso4217="http://www.xbrl.org/2003/iso4217"><head><title>10-K</title></head><body>
<div style="display:none"><ix:header><ix:hidden>
<ix:nonNumeric name="dei:DocumentFiscalYearFocus" contextRef="fy23">{focus}</ix:nonNumeric>
<ix:nonNumeric name="dei:DocumentFiscalPeriodFocus" contextRef="fy23">FY</ix:nonNumeric>
<ix:nonNumeric name="dei:CurrentFiscalYearEndDate" contextRef="fy23">--02-03</ix:nonNumeric>
</ix:hidden><ix:resources>
{contexts}
<xbrli:unit id="usd"><xbrli:measure>iso4217:USD</xbrli:measure></xbrli:unit>
</ix:resources></ix:header></div>
<p>UNITED STATES SECURITIES AND EXCHANGE COMMISSION</p>
<p>FORM <ix:nonNumeric name="dei:DocumentType" contextRef="fy23">10-K</ix:nonNumeric></p>
<p>ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934</p>
<p>For the fiscal year ended <ix:nonNumeric name="dei:DocumentPeriodEndDate" contextRef="fy23"
>February 3, 2024</ix:nonNumeric></p>
<p><ix:nonNumeric name="dei:EntityRegistrantName" contextRef="fy23">Example Retail Corporation
</ix:nonNumeric></p>
<p>(Exact name of registrant as specified in its charter)</p>
<p>Trading Symbol <ix:nonNumeric name="dei:TradingSymbol" contextRef="fy23">XRTL</ix:nonNumeric>
</p>
<p>Fiscal 2023 was a 53-week year; fiscal 2022 had 52 weeks.</p>
"""

_CONTEXT = """<xbrli:context id="{id}"><xbrli:entity>
<xbrli:identifier scheme="http://www.sec.gov/CIK">0000000001</xbrli:identifier></xbrli:entity>
<xbrli:period>{period}</xbrli:period></xbrli:context>"""
CONTEXTS = {
    "fy23": "<xbrli:startDate>2023-01-29</xbrli:startDate>"
    "<xbrli:endDate>2024-02-03</xbrli:endDate>",
    "fy22": "<xbrli:startDate>2022-01-30</xbrli:startDate>"
    "<xbrli:endDate>2023-01-28</xbrli:endDate>",
    "i24": "<xbrli:instant>2024-02-03</xbrli:instant>",
    "i23": "<xbrli:instant>2023-01-28</xbrli:instant>",
}

# (label, concept or None, this year, last year); in millions
BALANCE = [
    ("Current assets:", None, None, None),
    ("Cash and cash equivalents", "CashAndCashEquivalentsAtCarryingValue", 1_000, 900),
    ("Merchandise inventories", "InventoryNet", 4_000, 3_800),
    ("Total current assets", "AssetsCurrent", 5_000, 4_700),
    ("Property and equipment, net", "PropertyPlantAndEquipmentNet", 3_000, 2_800),
    ("Total assets", "Assets", 8_000, 7_500),
    ("Total current liabilities", "LiabilitiesCurrent", 2_000, 1_900),
    ("Long-term debt", "LongTermDebtNoncurrent", 1_500, 1_600),
    ("Total liabilities", "Liabilities", 3_500, 3_500),
    ("Total shareholders' equity", "StockholdersEquity", 4_500, 4_000),
    (
        "Total liabilities and shareholders' equity",
        "LiabilitiesAndStockholdersEquity",
        8_000,
        7_500,
    ),
]
INCOME = [
    ("Revenue", "Revenues", 20_000, 19_000),
    ("Cost of sales", "CostOfGoodsAndServicesSold", 15_000, 14_400),
    ("Gross profit", "GrossProfit", 5_000, 4_600),
    ("Selling, general and administrative", "SellingGeneralAndAdministrativeExpense", 3_000, 2_900),
    ("Operating income", "OperatingIncomeLoss", 2_000, 1_700),
]


def _cell(concept: str | None, context: str, value: int | None, printed: int | None = None) -> str:
    if value is None:
        return "<td></td>"
    shown = f"{printed if printed is not None else value:,}"
    return (
        f'<td>$ <ix:nonFraction name="us-gaap:{concept}" contextRef="{context}" unitRef="usd" '
        f'decimals="-6" scale="6" format="ixt:num-dot-decimal">{shown}</ix:nonFraction></td>'
    )


def _table(title: str, heads: tuple[str, str], rows, contexts, misprint=None, values=None) -> str:
    out = [f"<p>{title}</p><p>(In millions)</p><table>"]
    out.append(f"<tr><td></td><td>{heads[0]}</td><td>{heads[1]}</td></tr>")
    for label, concept, this, last in rows:
        this = (values or {}).get(label, this)
        printed = misprint.get(label) if misprint else None
        out.append(
            f"<tr><td>{label}</td>{_cell(concept, contexts[0], this, printed)}"
            f"{_cell(concept, contexts[1], last)}</tr>"
        )
    out.append("</table>")
    return "\n".join(out)


def retailer_10k(
    *,
    focus: str = "2023",
    misprint: dict[str, int] | None = None,
    values: dict[str, int] | None = None,
) -> str:
    """The filing; ``misprint``: a label whose current-year cell prints another number
    (its tag says the same wrong number: the statement's arithmetic is what catches it);
    ``values``: current-year figures by label, in place of the usual ones (a restatement
    that still adds up)."""
    contexts = "\n".join(_CONTEXT.format(id=k, period=v) for k, v in CONTEXTS.items())
    body = [
        HEAD.format(focus=focus, contexts=contexts),
        '<div style="page-break-after:always"></div>',
        _table(
            "CONSOLIDATED STATEMENTS OF OPERATIONS",
            ("53 Weeks Ended February 3, 2024", "52 Weeks Ended January 28, 2023"),
            INCOME,
            ("fy23", "fy22"),
            misprint,
            values,
        ),
        '<div style="page-break-after:always"></div>',
        _table(
            "CONSOLIDATED BALANCE SHEETS",
            ("February 3, 2024", "January 28, 2023"),
            BALANCE,
            ("i24", "i23"),
            misprint,
            values,
        ),
        "</body></html>",
    ]
    return "\n".join(body)
