"""Facts from inline XBRL: formats, contexts, units, exact values, pages, fiscal periods."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from finrag.errors import DocumentParseError
from finrag.facts import model
from finrag.facts.ixbrl import IxbrlFacts, extract_ixbrl_facts
from finrag.facts.numwords import parse_number_words
from finrag.ingest.parse.html import EdgarHtmlParser
from tests.conftest import SHARED

EDGAR = SHARED / "edgar-html"
needs_filings = pytest.mark.skipif(
    not EDGAR.is_dir(), reason=f"EDGAR filings not found at {EDGAR} (../shared beside the repo)"
)

# ---- a small inline XBRL document -------------------------------------------------------

NAMESPACES = (
    'xmlns="http://www.w3.org/1999/xhtml" '
    'xmlns:ix="http://www.xbrl.org/2013/inlineXBRL" '
    'xmlns:xbrli="http://www.xbrl.org/2003/instance" '
    'xmlns:xbrldi="http://xbrl.org/2006/xbrldi" '
    'xmlns:iso4217="http://www.xbrl.org/2003/iso4217" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xmlns:ixt="http://www.xbrl.org/inlineXBRL/transformation/2020-02-12" '
    'xmlns:ixt3="http://www.xbrl.org/inlineXBRL/transformation/2015-02-26" '
    'xmlns:ixt1="http://www.xbrl.org/inlineXBRL/transformation/2010-04-20" '
    'xmlns:ixt-sec="http://www.sec.gov/inlineXBRL/transformation/2015-08-31" '
    'xmlns:dei="http://xbrl.sec.gov/dei/2024" '
    'xmlns:us-gaap="http://fasb.org/us-gaap/2024" xmlns:ex="http://example.com/ex"'
)
ENTITY = '<xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">1</xbrli:identifier>'
RESOURCES = f"""
<xbrli:context id="fy">{ENTITY}</xbrli:entity>
  <xbrli:period><xbrli:startDate>2023-10-01</xbrli:startDate><xbrli:endDate>2024-09-28</xbrli:endDate></xbrli:period></xbrli:context>
<xbrli:context id="q4">{ENTITY}</xbrli:entity>
  <xbrli:period><xbrli:startDate>2024-06-30</xbrli:startDate><xbrli:endDate>2024-09-28</xbrli:endDate></xbrli:period></xbrli:context>
<xbrli:context id="end">{ENTITY}</xbrli:entity>
  <xbrli:period><xbrli:instant>2024-09-28</xbrli:instant></xbrli:period></xbrli:context>
<xbrli:context id="seg">{ENTITY}<xbrli:segment>
    <xbrldi:explicitMember dimension="us-gaap:StatementBusinessSegmentsAxis">
      ex:ChinaMember</xbrldi:explicitMember>
    <xbrldi:typedMember dimension="ex:ContractAxis">
      <ex:contract> A-17 </ex:contract></xbrldi:typedMember>
  </xbrli:segment></xbrli:entity>
  <xbrli:period><xbrli:instant>2024-09-28</xbrli:instant></xbrli:period></xbrli:context>
<xbrli:unit id="usd"><xbrli:measure>iso4217:USD</xbrli:measure></xbrli:unit>
<xbrli:unit id="shares"><xbrli:measure>xbrli:shares</xbrli:measure></xbrli:unit>
<xbrli:unit id="pure"><xbrli:measure>xbrli:pure</xbrli:measure></xbrli:unit>
<xbrli:unit id="eps"><xbrli:divide>
  <xbrli:unitNumerator><xbrli:measure>iso4217:USD</xbrli:measure></xbrli:unitNumerator>
  <xbrli:unitDenominator><xbrli:measure>xbrli:shares</xbrli:measure></xbrli:unitDenominator>
</xbrli:divide></xbrli:unit>
"""
DEI = """
<ix:nonNumeric name="dei:DocumentFiscalYearFocus" contextRef="fy">2024</ix:nonNumeric>
<ix:nonNumeric name="dei:DocumentFiscalPeriodFocus" contextRef="fy">FY</ix:nonNumeric>
<ix:nonNumeric name="dei:CurrentFiscalYearEndDate" contextRef="fy">--09-28</ix:nonNumeric>
"""


def ixbrl(body: str, *, hidden: str = DEI, resources: str = RESOURCES) -> str:
    return (
        f'<?xml version="1.0" encoding="utf-8"?>\n<html {NAMESPACES}><head><title>t</title></head>'
        f'<body><div style="display:none"><ix:header><ix:hidden>{hidden}</ix:hidden>'
        f"<ix:resources>{resources}</ix:resources></ix:header></div>{body}</body></html>"
    )


def fact_tag(text: str, attributes: str = "", *, name: str = "us-gaap:Revenues") -> str:
    attributes = attributes or 'contextRef="fy" unitRef="usd" decimals="-6" scale="6"'
    return f'<ix:nonFraction name="{name}" {attributes}>{text}</ix:nonFraction>'


def only_fact(body: str) -> IxbrlFacts:
    result = extract_ixbrl_facts(ixbrl(f"<p>{body}</p>"))
    assert len(result.facts) + len(result.skipped) == 1
    return result


# ---- formats ------------------------------------------------------------------------------

FORMATS = [
    ("ixt:num-dot-decimal", "1,234.5", "1234.5"),
    ("ixt:num-dot-decimal", "1 234", "1234"),
    ("ixt:num-dot-decimal", ".25", "0.25"),
    ("ixt:num-comma-decimal", "1.234,5", "1234.5"),
    ("ixt3:numdotdecimal", "12,345", "12345"),
    ("ixt3:numcommadecimal", "12.345,67", "12345.67"),
    ("ixt:fixed-zero", "—", "0"),
    ("ixt:fixed-zero", "no", "0"),
    ("ixt3:zerodash", "—", "0"),
    ("ixt1:numdash", "-", "0"),
    ("ixt1:numcommadot", "9,876.5", "9876.5"),
    ("ixt1:numspacecomma", "9 876,5", "9876.5"),
    ("ixt:num-unit-decimal", "5 dollars 7 cents", "5.07"),
    ("ixt:num-dot-decimal-apos", "1'234.5", "1234.5"),
    ("ixt3:numdotdecimalin", "1,23,45,678.9", "12345678.9"),
    ("ixt-sec:numwordsen", "twenty-one", "21"),
    ("ixt-sec:numwordsen", "None", "0"),
    ("ixt-sec:numwordsen", "one hundred and five", "105"),
    (None, "1234.50", "1234.50"),
]


@pytest.mark.parametrize(("fmt", "text", "expected"), FORMATS)
def test_formats_read_the_printed_number(fmt: str | None, text: str, expected: str) -> None:
    attributes = 'contextRef="fy" unitRef="usd" decimals="0"'
    if fmt:
        attributes += f' format="{fmt}"'
    result = only_fact(fact_tag(text, attributes))
    assert not result.skipped
    assert result.facts[0].value == Decimal(expected)
    assert result.facts[0].printed == text


UNREADABLE = [
    ("ixt:date-monthname-day-en", "September 28", "not a number format"),
    ("ixt:num-bogus", "12", "not a number format"),
    ("nope:num-dot-decimal", "12", "prefix is not declared"),
    ("ex:num-dot-decimal", "12", "registry http://example.com/ex is not supported"),
    ("ixt:num-dot-decimal", "1,23.4", "does not match"),
    ("ixt:num-dot-decimal", "(5)", "does not match"),
    ("ixt:num-dot-decimal", "", "does not match"),
    ("ixt3:zerodash", "0", "not a dash"),
    ("ixt-sec:numwordsen", "1.5 million", "expected a number word, not '1.5'"),
    (None, "1,234", "not a plain decimal"),
    ("ixt:num-dot-decimal", "1" * 41, "more than 40 digits"),
]


@pytest.mark.parametrize(("fmt", "text", "reason"), UNREADABLE)
def test_unreadable_numbers_are_reported_not_guessed(fmt: str | None, text: str, reason: str):
    attributes = 'contextRef="fy" unitRef="usd" decimals="0" id="f-1"'
    if fmt:
        attributes += f' format="{fmt}"'
    result = only_fact(fact_tag(text, attributes))
    assert result.facts == []
    (skipped,) = result.skipped
    assert (skipped.element_id, skipped.concept, skipped.printed) == (
        "f-1",
        "us-gaap:Revenues",
        text,
    )
    assert reason in skipped.reason


@pytest.mark.parametrize(
    ("attributes", "reason"),
    [
        ('contextRef="nowhere" unitRef="usd"', "context 'nowhere' is not defined"),
        ('contextRef="fy" unitRef="eur"', "unit 'eur' is not defined"),
        ('contextRef="fy" unitRef="usd" scale="1e3"', "scale '1e3' is not an integer"),
        ('contextRef="fy" unitRef="usd" scale="99"', "not an integer within"),
        ('contextRef="fy" unitRef="usd" decimals="two"', "decimals 'two'"),
        ('contextRef="fy" unitRef="usd" sign="+"', "sign '+'"),
    ],
)
def test_broken_facts_are_reported(attributes: str, reason: str) -> None:
    result = only_fact(fact_tag("12", attributes))
    assert result.facts == []
    assert reason in result.skipped[0].reason


# ---- English number words -----------------------------------------------------------------

WORDS = [
    ("no", 0),
    ("zero", 0),
    ("one", 1),
    ("Twelve", 12),
    ("twenty-one", 21),
    ("ninety nine", 99),
    ("one hundred", 100),
    ("twelve hundred", 1200),
    ("three thousand", 3000),
    ("one million and two", 1_000_002),
    ("three million two hundred thousand", 3_200_000),
    ("two billion, five hundred sixty-seven million, eight", 2_567_000_008),
]


@pytest.mark.parametrize(("text", "expected"), WORDS)
def test_number_words(text: str, expected: int) -> None:
    assert parse_number_words(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "1.5 million",
        "one one",
        "hundred",
        "first",
        "one hundred and",
        "two thousand fifteen hundred",
        "one thousand million",
        "a dozen",
    ],
)
def test_not_number_words(text: str) -> None:
    with pytest.raises(ValueError):
        parse_number_words(text)


# ---- values, units, contexts ----------------------------------------------------------------


def test_scale_and_sign_give_base_units_exactly() -> None:
    forty_digits = "1234567890" * 4
    body = (
        fact_tag(
            "1,234",
            'contextRef="fy" unitRef="usd" scale="6" sign="-" decimals="-6"'
            ' format="ixt:num-dot-decimal"',
        )
        + fact_tag(forty_digits, 'contextRef="fy" unitRef="usd" scale="6" sign="-" decimals="0"')
        + fact_tag("15.3", 'contextRef="fy" unitRef="pure" scale="-2" decimals="3"')
        + fact_tag("0", 'contextRef="fy" unitRef="usd" scale="6" sign="-" decimals="-6"')
    )
    facts = extract_ixbrl_facts(ixbrl(f"<p>{body}</p>")).facts
    assert [f.value for f in facts] == [
        Decimal(-1_234_000_000),
        Decimal(-int(forty_digits) * 10**6),  # 46 digits: Decimal.scaleb would round to 28
        Decimal("0.153"),
        Decimal(0),
    ]
    assert str(facts[0].value) == "-1234000000"
    assert not facts[3].value.is_signed()  # no "-0"
    assert [f.unit for f in facts] == ["USD", "USD", "pure", "USD"]
    assert [f.decimals for f in facts] == [-6, 0, 3, -6]


def test_nil_nested_and_excluded() -> None:
    body = (
        '<ix:nonFraction name="us-gaap:CommitmentsAndContingencies" contextRef="end"'
        ' unitRef="usd" xsi:nil="true"/>'
        '<ix:nonFraction name="ex:Outer" contextRef="end" unitRef="shares" decimals="0"'
        ' format="ixt:num-dot-decimal">'
        '<ix:nonFraction name="ex:Inner" contextRef="end" unitRef="shares" decimals="0"'
        ' format="ixt:num-dot-decimal">2,500</ix:nonFraction></ix:nonFraction>'
        '<ix:nonFraction name="ex:Excluding" contextRef="end" unitRef="usd" decimals="0"'
        ' format="ixt:num-dot-decimal">1,2<ix:exclude>99</ix:exclude>34</ix:nonFraction>'
    )
    result = extract_ixbrl_facts(ixbrl(f"<p>{body}</p>"))
    nil, outer, inner, excluding = result.facts
    assert (nil.value, nil.decimals, nil.printed, nil.unit) == (None, None, "", "USD")
    assert (outer.concept, outer.value, inner.concept, inner.value) == (
        "ex:Outer",
        Decimal(2500),
        "ex:Inner",
        Decimal(2500),
    )
    assert (excluding.value, excluding.printed) == (Decimal(1234), "1,234")


def test_units_and_dimensions() -> None:
    body = fact_tag("6.08", 'contextRef="fy" unitRef="eps" decimals="2"') + fact_tag(
        "7", 'contextRef="seg" unitRef="usd" decimals="0"'
    )
    eps, segment = extract_ixbrl_facts(ixbrl(f"<p>{body}</p>")).facts
    assert (eps.unit, eps.dimensions) == ("USD/shares", ())
    assert segment.dimensions == (
        ("ex:ContractAxis", "A-17"),
        ("us-gaap:StatementBusinessSegmentsAxis", "ex:ChinaMember"),
    )
    assert segment.period.instant and segment.period.end == date(2024, 9, 28)


def test_periods_on_the_fiscal_calendar() -> None:
    body = (
        fact_tag("1", 'contextRef="fy" unitRef="usd" decimals="0"')
        + fact_tag("2", 'contextRef="q4" unitRef="usd" decimals="0"')
        + fact_tag("3", 'contextRef="end" unitRef="usd" decimals="0"')
    )
    year, quarter, instant = (f.period for f in extract_ixbrl_facts(ixbrl(body)).facts)
    assert (year.start, year.end, year.months, year.fiscal_year) == (
        date(2023, 10, 1),
        date(2024, 9, 28),
        12,
        2024,
    )
    assert (quarter.months, quarter.fiscal_year, quarter.fiscal_quarter) == (3, 2024, 4)
    assert (instant.instant, instant.months, instant.fiscal_year) == (True, None, 2024)


def test_fiscal_year_named_for_the_year_it_starts_in() -> None:
    # A retailer's "fiscal 2023" ended February 3, 2024 (DocumentFiscalYearFocus 2023).
    resources = RESOURCES.replace("2023-10-01", "2023-01-29").replace("2024-09-28", "2024-02-03")
    hidden = DEI.replace(">2024<", ">2023<").replace("--09-28", "--02-03")
    body = fact_tag("1", 'contextRef="fy" unitRef="usd" decimals="0"')
    (fact,) = extract_ixbrl_facts(ixbrl(body, hidden=hidden, resources=resources)).facts
    assert (fact.period.end, fact.period.months, fact.period.fiscal_year) == (
        date(2024, 2, 3),
        12,
        2023,
    )


@pytest.mark.parametrize(
    ("year_end", "fmt"),
    [
        ("September&#160;28", "ixt:date-monthname-day-en"),
        ("SEPTEMBER 28", "ixt:date-monthname-day-en"),
        ("9/28", "ixt:date-month-day"),
        ("28.09", "ixt:date-day-month"),
        ("--09-28", None),
    ],
)
def test_fiscal_year_end_as_filings_print_it(year_end: str, fmt: str | None) -> None:
    # The quarter ended June 29, 2024: Q2 on a calendar year, Q3 when the year ends in
    # September, and only the year end says which.
    format_attribute = f' format="{fmt}"' if fmt else ""
    declared = (
        f'<ix:nonNumeric name="dei:CurrentFiscalYearEndDate" contextRef="q4"{format_attribute}>'
        f"{year_end}</ix:nonNumeric>"
    )
    named = '<ix:nonNumeric name="dei:DocumentFiscalYearFocus" contextRef="q4">2024</ix:nonNumeric>'
    resources = RESOURCES.replace("2024-06-30", "2024-03-31").replace(
        "2024-09-28</xbrli:endDate>", "2024-06-29</xbrli:endDate>"
    )
    body = fact_tag("1", 'contextRef="q4" unitRef="usd" decimals="0"')
    (fact,) = extract_ixbrl_facts(ixbrl(body, hidden=declared + named, resources=resources)).facts
    assert (fact.period.fiscal_year, fact.period.fiscal_quarter) == (2024, 3)
    # Without DocumentFiscalYearFocus the year's name is not said: a September year is
    # named for the year it ends in by convention, and the calendar says so...
    found = extract_ixbrl_facts(ixbrl(body, hidden=declared, resources=resources))
    assert (found.facts[0].period.fiscal_year, found.facts[0].period.fiscal_quarter) == (2024, 3)
    assert "by convention" in found.calendar.describe()
    # ...while a year ending in January, named both ways by companies, places nothing.
    january = declared.replace(year_end, "--01-31").replace(format_attribute, "")
    found = extract_ixbrl_facts(ixbrl(body, hidden=january, resources=resources))
    assert not found.calendar.placeable and found.facts[0].period.fiscal_year is None


# ---- input handling -------------------------------------------------------------------------


def test_inputs_bytes_str_and_path(tmp_path: Path) -> None:
    document = ixbrl(fact_tag("5", 'contextRef="fy" unitRef="usd" decimals="0"'))
    path = tmp_path / "filing.htm"
    path.write_text(document, encoding="utf-8")
    for source in (document, document.encode(), path):
        assert [f.value for f in extract_ixbrl_facts(source).facts] == [Decimal(5)]


def test_not_xml_is_a_parse_error(tmp_path: Path) -> None:
    for broken in ("<html><body><p>unclosed</body></html>", b"", "plain text"):
        with pytest.raises(DocumentParseError, match="not well-formed inline XBRL"):
            extract_ixbrl_facts(broken)
    with pytest.raises(DocumentParseError, match="cannot read"):
        extract_ixbrl_facts(tmp_path / "missing.htm")


def test_entities_are_not_expanded_or_fetched(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("42")
    doctype = f'<!DOCTYPE html [<!ENTITY ext SYSTEM "file://{secret}"><!ENTITY lol "9999999999">]>'
    document = ixbrl(fact_tag("&ext;&lol;", 'contextRef="fy" unitRef="usd" decimals="0"'))
    result = extract_ixbrl_facts(document.replace("<html ", doctype + "<html ", 1))
    assert result.facts == []
    assert "42" not in result.skipped[0].printed
    assert "9999999999" not in result.skipped[0].printed


# ---- pages: the ones EdgarHtmlParser prints the number on -----------------------------------


def parser_page_of(tmp_path: Path, document: str, marker: str) -> int | None:
    path = tmp_path / "filing.htm"
    path.write_text(document, encoding="utf-8")
    pages = [p.number for p in EdgarHtmlParser().parse(path).pages if marker in p.markdown]
    assert len(pages) <= 1
    return pages[0] if pages else None


PAGE_LAYOUTS = {
    # A break on an inline element is no break to the parser.
    "inline break": '<p>one</p><p>x <span style="page-break-after:always">y</span></p>{fact}',
    # Two breaks with nothing between make one new page, not two.
    "double break": '<p>one</p><div style="page-break-after:always"></div>'
    '<hr style="page-break-before:always"/><p>two</p>{fact}',
    # A break on a table row is no break: the parser reads the table as one block.
    "row break": '<p>one</p><table><tr style="page-break-after:always"><td>a</td><td>1</td></tr>'
    "<tr><td>b</td><td>{fact}</td></tr></table>",
    # Text before a break-before block stays on the page before it.
    "break before": '<div>{fact}<div style="break-before:page">next</div></div>',
    "layout table": "<p>one</p><table><tr><td><table><tr><td>a</td><td>1</td></tr></table></td>"
    '<td><div style="page-break-after:always">b</div><p>{fact}</p></td></tr></table>',
}


@pytest.mark.parametrize("layout", sorted(PAGE_LAYOUTS))
def test_pages_follow_the_html_parser(tmp_path: Path, layout: str) -> None:
    marker = "987,654"
    fact = fact_tag(
        marker, 'contextRef="fy" unitRef="usd" decimals="0" format="ixt:num-dot-decimal"'
    )
    document = ixbrl(PAGE_LAYOUTS[layout].format(fact=f"<span>{fact}</span>"))
    (fact,) = extract_ixbrl_facts(document).facts
    assert fact.page == parser_page_of(tmp_path, document, marker)
    assert fact.page is not None


def test_hidden_facts_take_the_page_that_shows_them(tmp_path: Path) -> None:
    hidden_fact = fact_tag("3", 'contextRef="fy" unitRef="usd" decimals="0" id="f-9"')
    body = (
        '<p>one</p><div style="page-break-after:always"></div>'
        '<table><tr><td><span style="-sec-ix-hidden:f-9">Three lawsuits</span></td>'
        "<td>x</td></tr></table>"
        '<div style="display:none">'
        + fact_tag("4", 'contextRef="fy" unitRef="usd" decimals="0" id="f-10"')
        + "</div>"
    )
    document = ixbrl(body, hidden=DEI + hidden_fact)
    result = extract_ixbrl_facts(document)
    shown, undisplayed = result.by_id("f-9"), result.by_id("f-10")
    assert shown.page == parser_page_of(tmp_path, document, "Three lawsuits") == 2
    assert shown.statement == model.OTHER_TABLE
    assert undisplayed.page is None


def test_facts_in_prose_are_text() -> None:
    body = fact_tag("15.3", 'contextRef="fy" unitRef="pure" scale="-2" decimals="3"')
    (fact,) = extract_ixbrl_facts(ixbrl(f"<p>The rate was {body}%.</p>")).facts
    assert (fact.statement, fact.page, fact.source, fact.label) == (model.TEXT, 1, "ixbrl", None)


# ---- the six EDGAR filings ------------------------------------------------------------------

# Hand-checked against the filings (/tmp/xbrl-eval/expected.json): element id, concept,
# (start, end) or instant, dimensions, the number as the page shows it, the value.
EXPECTED = {
    "aapl-10-k-2024-11-01.html": [
        ("f-66", "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax",
         ("2023-10-01", "2024-09-28"), {}, "391,035", "391035000000"),
        ("f-94", "us-gaap:NonoperatingIncomeExpense",
         ("2022-09-25", "2023-09-30"), {}, "(565)", "-565000000"),
        ("f-1054", "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax",
         ("2023-10-01", "2024-09-28"),
         {"us-gaap:StatementBusinessSegmentsAxis": "aapl:GreaterChinaSegmentMember"},
         "$66,952", "66952000000"),
        ("f-108", "us-gaap:EarningsPerShareDiluted",
         ("2023-10-01", "2024-09-28"), {}, "$6.08", "6.08"),
        ("f-194", "us-gaap:CommonStockParOrStatedValuePerShare",
         "2023-09-30", {}, "$0.00001", "0.00001"),
    ],
    "aapl-10-q-2025-08-01.html": [
        ("f-59", "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax",
         ("2025-03-30", "2025-06-28"), {}, "94,036", "94036000000"),
        ("f-95", "us-gaap:NonoperatingIncomeExpense",
         ("2025-03-30", "2025-06-28"), {}, "(171)", "-171000000"),
        ("f-362", "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax",
         ("2025-03-30", "2025-06-28"), {"srt:ProductOrServiceAxis": "aapl:IPhoneMember"},
         "$44,582", "44582000000"),
        ("f-115", "us-gaap:EarningsPerShareDiluted",
         ("2025-03-30", "2025-06-28"), {}, "$1.57", "1.57"),
    ],
    "ibm-10-k-2025-02-25.html": [
        ("f-112", "dei:EntityPublicFloat", "2024-06-30", {}, "$159.2 billion", "159200000000"),
        ("f-145", "us-gaap:ValuationAllowancesAndReservesChargedToCostAndExpense",
         ("2024-01-01", "2024-12-31"),
         {"us-gaap:ValuationAllowancesAndReservesTypeAxis":
          "ibm:AllowanceForCreditLossesCurrentMember"},
         "$(11)", "-11000000"),
        ("f-161", "us-gaap:ValuationAllowancesAndReservesDeductions",
         ("2023-01-01", "2023-12-31"),
         {"us-gaap:ValuationAllowancesAndReservesTypeAxis":
          "ibm:AllowanceForCreditLossesNoncurrentMember"},
         "$\u2014", "0"),
        ("f-113", "dei:EntityCommonStockSharesOutstanding",
         "2025-02-10", {}, "927,264,332", "927264332"),
    ],
    "nflx-10-k-2025-01-27.html": [
        ("f-120", "us-gaap:Revenues", ("2024-01-01", "2024-12-31"), {},
         "$39,000,966", "39000966000"),
        ("f-142", "us-gaap:NonoperatingIncomeExpense", ("2023-01-01", "2023-12-31"), {},
         "(48,772)", "-48772000"),
        ("f-475", "us-gaap:Revenues", ("2024-01-01", "2024-12-31"),
         {"srt:StatementGeographicalAxis": "us-gaap:EMEAMember",
          "srt:ProductOrServiceAxis": "nflx:StreamingMember"},
         "$12,387,035", "12387035000"),
        ("f-156", "us-gaap:EarningsPerShareDiluted", ("2024-01-01", "2024-12-31"), {},
         "$19.83", "19.83"),
    ],
    "nvda-10-q-2025-08-27.html": [
        ("f-30", "us-gaap:Revenues", ("2025-04-28", "2025-07-27"), {}, "$46,743", "46743000000"),
        ("f-122", "us-gaap:OtherComprehensiveIncomeLossNetOfTaxPortionAttributableToParent",
         ("2025-04-28", "2025-07-27"), {}, "(16)", "-16000000"),
        ("f-853", "us-gaap:Revenues", ("2025-04-28", "2025-07-27"),
         {"srt:ConsolidationItemsAxis": "us-gaap:OperatingSegmentsMember",
          "us-gaap:StatementBusinessSegmentsAxis": "nvda:ComputeAndNetworkingSegmentMember"},
         "$41,331", "41331000000"),
        ("f-90", "us-gaap:EarningsPerShareDiluted", ("2025-04-28", "2025-07-27"), {},
         "$1.08", "1.08"),
        ("f-446", "us-gaap:EffectiveIncomeTaxRateContinuingOperations",
         ("2025-04-28", "2025-07-27"), {}, "15.3%", "0.153"),
    ],
    "tsla-10-q-2025-07-24.html": [
        ("f-140", "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax",
         ("2025-04-01", "2025-06-30"), {}, "22,496", "22496000000"),
        ("f-683", "us-gaap:NetIncomeLoss", ("2024-04-01", "2024-06-30"),
         {"srt:RestatementAxis": "srt:RestatementAdjustmentMember"}, "$(78)", "-78000000"),
        ("f-1129", "us-gaap:Revenues", ("2025-04-01", "2025-06-30"),
         {"us-gaap:StatementBusinessSegmentsAxis": "tsla:AutomotiveSegmentMember"},
         "$19,707", "19707000000"),
        ("f-228", "us-gaap:EarningsPerShareDiluted", ("2025-04-01", "2025-06-30"), {},
         "$0.33", "0.33"),
        ("f-88", "us-gaap:PreferredStockSharesOutstanding", "2024-12-31", {}, "no", "0"),
    ],
}  # fmt: skip


@pytest.fixture(scope="module")
def filings() -> dict[str, tuple[IxbrlFacts, list[str]]]:
    """Each filing's facts, and its pages as EdgarHtmlParser prints them."""
    parsed = {}
    for name in EXPECTED:
        path = EDGAR / name
        pages = [p.markdown for p in EdgarHtmlParser().parse(path).pages]
        parsed[name] = (extract_ixbrl_facts(path), pages)
    return parsed


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


@needs_filings
@pytest.mark.parametrize(
    ("name", "expected"), [(name, e) for name, items in EXPECTED.items() for e in items]
)
def test_hand_checked_facts(filings, name: str, expected: tuple) -> None:
    element_id, concept, period, dimensions, shown, value = expected
    result, pages = filings[name]
    fact = result.by_id(element_id)
    assert (fact.concept, fact.value, dict(fact.dimensions)) == (
        concept,
        Decimal(value),
        dimensions,
    )
    if isinstance(period, tuple):
        assert (str(fact.period.start), str(fact.period.end)) == period
        assert not fact.period.instant
    else:
        assert (str(fact.period.end), fact.period.instant) == (period, True)
    assert fact.source == "ixbrl" and fact.printed and fact.printed in shown
    assert squeeze(shown) in squeeze(pages[fact.page - 1])


@needs_filings
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_fact_is_read_and_on_its_page(filings, name: str) -> None:
    result, pages = filings[name]
    assert len(result.facts) == (EDGAR / name).read_text().count("<ix:nonFraction")
    assert result.skipped == []
    assert result.page_count == len(pages)
    # Each page prints its facts' numbers in document order.
    position = {number: 0 for number in range(1, len(pages) + 1)}
    for fact, element_id in zip(result.facts, result.element_ids, strict=True):
        assert fact.page is not None, element_id
        text = squeeze(pages[fact.page - 1])
        found = text.find(squeeze(fact.printed), position[fact.page])
        assert found >= 0, (element_id, fact.printed, fact.page)
        position[fact.page] = found


@needs_filings
def test_apple_net_sales_on_the_income_statement(filings) -> None:
    result, pages = filings["aapl-10-k-2024-11-01.html"]
    fact = result.by_id("f-66")
    page = pages[fact.page - 1]
    assert "CONSOLIDATED STATEMENTS OF OPERATIONS" in page
    assert re.search(r"\|Total net sales\|\$?391,035\|", page)
    assert (fact.period.fiscal_year, fact.period.months, fact.decimals) == (2024, 12, -6)


@needs_filings
def test_fiscal_periods_of_the_filings(filings) -> None:
    nvda, _ = filings["nvda-10-q-2025-08-27.html"]
    revenue = nvda.by_id("f-30").period  # NVIDIA's fiscal 2026 ends in January 2026
    assert (revenue.fiscal_year, revenue.fiscal_quarter, revenue.months) == (2026, 2, 3)
    apple, _ = filings["aapl-10-q-2025-08-01.html"]
    assert apple.by_id("f-59").period.label() == "FY2025 Q3"
