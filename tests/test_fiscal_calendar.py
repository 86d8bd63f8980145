"""Fiscal calendars as companies name them: learned from each filing (its dei facts, or
its cover, statements and prose), every fact placed on it, instants as well as
durations; a 53-week retailer year ending in February; a calendar the filing does not
state places nothing; a 10-Q named report.pdf read from its content."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest
from lxml import etree

from finrag.answer.pipeline import Asker
from finrag.cli.ask_cmd import failed_check
from finrag.facts.calendar import from_content, from_dei
from finrag.facts.dictionary import metric
from finrag.facts.ixbrl import extract_ixbrl_facts
from finrag.facts.kpi import available_periods
from finrag.facts.lookup import MetricValue, Period, Unresolved, resolve_metric
from finrag.facts.periods import FiscalCalendar
from finrag.facts.periods import Period as Span
from finrag.facts.store import company_calendars, query_facts
from finrag.ingest.metadata import resolve_metadata
from finrag.ingest.parse import Page, ParsedDocument
from finrag.ingest.pipeline import ingest
from finrag.llm.fake import FakeLLM
from tests.calendar_fixture import retailer_10k
from tests.conftest import REPO, SHARED

EDGAR = SHARED / "edgar-html"
SAMPLE = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"
needs_edgar = pytest.mark.skipif(not EDGAR.is_dir(), reason=f"EDGAR filings not found at {EDGAR}")
_IX = "{http://www.xbrl.org/2013/inlineXBRL}"


def _cover(path: Path) -> dict[str, str]:
    """The filing's dei cover facts, read here with plain lxml (not finrag's reader)."""
    root = etree.parse(str(path), etree.XMLParser(huge_tree=True, recover=True)).getroot()
    found: dict[str, str] = {}
    for el in root.iter(_IX + "nonNumeric"):
        local = el.get("name", "").split(":")[-1]
        found.setdefault(local, " ".join("".join(el.itertext()).split()))
    return found


# (file, year-end month, named for the year it ends in?, 52/53 weeks)
CALENDARS = [
    ("aapl-10-k-2024-11-01.html", 9, True),
    ("aapl-10-q-2025-08-01.html", 9, True),
    ("ba-10-k-2025-02-03.html", 12, False),
    ("ba-10-q-2025-07-29.html", 12, False),
    ("crm-10-k-2025-03-05.html", 1, False),
    ("ibm-10-k-2025-02-25.html", 12, False),
    ("nflx-10-k-2025-01-27.html", 12, False),
    ("nvda-10-k-2025-02-26.html", 1, True),
    ("nvda-10-q-2025-08-27.html", 1, True),
    ("pg-10-q-2025-04-24.html", 6, False),
    ("tsla-10-q-2025-07-24.html", 12, False),
    ("wfc-10-k-2025-02-25.html", 12, False),
]


@needs_edgar
@pytest.mark.parametrize(("name", "month", "weeks"), CALENDARS)
def test_every_fact_of_an_edgar_filing_is_placed_as_its_cover_says(name, month, weeks) -> None:
    path = EDGAR / name
    cover = _cover(path)
    found = extract_ixbrl_facts(path)
    calendar = found.calendar
    assert calendar.placeable and calendar.source == "dei", calendar.ambiguous
    assert (calendar.year_end_month, calendar.weeks, calendar.naming) == (month, weeks, 0)
    focus_year = int(cover["DocumentFiscalYearFocus"])
    focus = cover["DocumentFiscalPeriodFocus"]
    quarter = 4 if focus == "FY" else int(focus[1])
    totals = [f for f in found.facts if not f.dimensions and f.period.end is not None]
    at_end = [f for f in totals if _same_day(f.period.end, cover["DocumentPeriodEndDate"])]
    # IBM and Wells Fargo print their statements in an exhibit, not in the 10-K itself.
    assert at_end or name.startswith(("ibm", "wfc")), "facts at the cover's period end"
    for fact in at_end:
        # The cover's own period: its balances and its quarter's (or year's) flows.
        if fact.period.instant or fact.period.months == 3:
            assert (fact.period.fiscal_year, fact.period.fiscal_quarter) == (focus_year, quarter)
        else:
            assert fact.period.fiscal_year == focus_year, fact
    # The balance sheet's comparative column is the prior fiscal year's end, whatever
    # month and weekday it fell on.
    prior = [f for f in totals if f.period.instant and f.concept == "us-gaap:Assets"]
    if prior:  # IBM and Wells Fargo tag their balance sheets otherwise
        years = {(f.period.fiscal_year, f.period.fiscal_quarter) for f in prior}
        assert (focus_year - 1, 4) in years, years


def _same_day(day: date, written: str) -> bool:
    return day.strftime("%B %d, %Y").lower().replace(" 0", " ") == " ".join(
        written.replace(" ,", ",").lower().split()
    )


def test_a_53_week_year_ending_in_february_is_named_as_the_filing_names_it(tmp_path) -> None:
    path = tmp_path / "xrtl-10-k-2024-03-20.html"
    path.write_text(retailer_10k(focus="2023"), encoding="utf-8")
    found = extract_ixbrl_facts(path)
    assert (found.calendar.year_end_month, found.calendar.naming, found.calendar.weeks) == (
        1,
        -1,
        True,
    )
    assets = {f.period.end: f.period for f in found.facts if f.concept == "us-gaap:Assets"}
    # February 3, 2024 closes fiscal 2023 for this retailer: a balance, not just a flow.
    assert (assets[date(2024, 2, 3)].fiscal_year, assets[date(2024, 2, 3)].fiscal_quarter) == (
        2023,
        4,
    )
    assert assets[date(2023, 1, 28)].fiscal_year == 2022
    revenue = [f.period for f in found.facts if f.concept == "us-gaap:Revenues"]
    assert sorted((p.fiscal_year, p.months) for p in revenue) == [(2022, 12), (2023, 12)]
    # Best Buy names the year that ended February 3, 2024 fiscal 2024: the same dates,
    # read by the filing's own DocumentFiscalYearFocus.
    path.write_text(retailer_10k(focus="2024"), encoding="utf-8")
    found = extract_ixbrl_facts(path)
    assets = {f.period.end: f.period for f in found.facts if f.concept == "us-gaap:Assets"}
    assert found.calendar.naming == 0 and assets[date(2024, 2, 3)].fiscal_year == 2024
    # A focus year two off is no naming at all: flagged, and nothing is placed.
    path.write_text(retailer_10k(focus="2021"), encoding="utf-8")
    found = extract_ixbrl_facts(path)
    assert not found.calendar.placeable and "DocumentFiscalYearFocus 2021" in (
        found.calendar.ambiguous or ""
    )
    assert {f.period.fiscal_year for f in found.facts} == {None}


def test_calendar_from_dei_declared_and_from_words() -> None:
    nvidia = from_dei(
        {
            "CurrentFiscalYearEndDate": "1/25",
            "DocumentFiscalYearFocus": "2026",
            "DocumentFiscalPeriodFocus": "Q2",
            "DocumentPeriodEndDate": "July 27, 2025",
        }
    )
    assert (nvidia.fiscal_year, nvidia.fiscal_quarter, nvidia.calendar.year_end_month) == (
        2026,
        2,
        1,
    )
    # A declared year end that disagrees with the period and its quarter is flagged.
    odd = from_dei(
        {
            "CurrentFiscalYearEndDate": "--06-30",
            "DocumentFiscalYearFocus": "2025",
            "DocumentFiscalPeriodFocus": "Q2",
            "DocumentPeriodEndDate": "June 30, 2025",
        }
    )
    assert not odd.placed and "disagree" in (odd.calendar.ambiguous or "")
    cover = "FORM 10-Q For the quarterly period ended July 29, 2023"
    statements = "Six Months Ended July 29, 2023 and July 30, 2022. " * 2
    prose = "Results for the second quarter of fiscal 2024 compare with " * 3
    best_buy = from_content(cover, statements + prose + "the second quarter of fiscal 2023")
    assert (best_buy.fiscal_year, best_buy.fiscal_quarter) == (2024, 2)
    assert best_buy.calendar.year_end_month == 1 and best_buy.calendar.source == "cover"
    # The same retailer's words naming the year for its start.
    other = from_content(cover, statements + prose.replace("2024", "2023"))
    assert (other.fiscal_year, other.calendar.naming) == (2023, -1)
    # No words on the naming and a January year end: flagged, not guessed...
    silent = from_content(cover, statements)
    assert not silent.placed and "named" in (silent.calendar.ambiguous or "")
    # ...unless the file name says it, which the calendar then records as its source.
    hinted = from_content(cover, statements, hint_year=2024)
    assert hinted.fiscal_year == 2024 and hinted.calendar.source == "path"
    # A December year end names itself.
    december = from_content("For the fiscal year ended December 31, 2018", "", form="10-K")
    assert (december.fiscal_year, december.fiscal_quarter) == (2018, 4)


def test_a_10q_that_defines_its_year_names_is_placed_without_saying_fiscal() -> None:
    # Apple's 10-Q says "the third quarter of 2025", never "of fiscal 2025"; it names its
    # years where it defines the 10-K it refers to, and in its page footers.
    cover = "FORM 10-Q For the quarterly period ended June 28, 2025"
    statements = "Three Months Ended June 28, 2025 ... Nine Months Ended June 28, 2025. "
    defined = (
        "read in conjunction with its Annual Report on Form 10-K for the fiscal year ended "
        "September 28, 2024 (the \u201c2024 Form 10-K\u201d). "
    )
    apple = from_content(cover, statements + defined)
    assert (apple.fiscal_year, apple.fiscal_quarter, apple.calendar.naming) == (2025, 3, 0)
    assert apple.calendar.year_end_month == 9 and "stated" in apple.calendar.evidence
    footer = from_content(cover, statements + "Apple Inc. | Q3 2025 Form 10-Q | 18 " * 2)
    assert (footer.fiscal_year, footer.fiscal_quarter) == (2025, 3)
    # Apple's 10-K: its page footers name the year, while its prose says "fiscal years
    # 2024 and 2022 spanned 52 weeks each, whereas fiscal year 2023 spanned 53 weeks".
    annual = from_content(
        "FORM 10-K For the fiscal year ended September 28, 2024",
        "fiscal years 2024 and 2022 spanned 52 weeks each, whereas fiscal year 2023 spanned "
        "53 weeks; fiscal year 2023 ... " + "Apple Inc. | 2024 Form 10-K | 21 " * 3,
        form="10-K",
    )
    assert (annual.fiscal_year, annual.calendar.naming) == (2024, 0)
    # Without either, a September year is named for the year it ends in, by convention,
    # and the calendar says that is how it was named.
    silent = from_content(cover, statements)
    assert (silent.fiscal_year, silent.fiscal_quarter, silent.calendar.naming) == (2025, 3, 0)
    assert "by convention, the filing does not say" in silent.calendar.describe()
    # A retailer defining "fiscal 2023" as the year ended February 3, 2024.
    retailer = from_content(
        "FORM 10-K For the fiscal year ended February 3, 2024",
        "the fiscal year ended February 3, 2024 (\u201cfiscal 2023\u201d) had 53 weeks",
        form="10-K",
    )
    assert (retailer.fiscal_year, retailer.calendar.naming) == (2023, -1)


def _words(path: Path) -> str:
    """A filing's words as a reader sees them: its text without the hidden iXBRL header
    (whose dei facts the calendar must not be read from here)."""
    root = etree.parse(str(path), etree.XMLParser(huge_tree=True, recover=True)).getroot()
    for header in list(root.iter(_IX + "header")):
        header.getparent().remove(header)
    return " ".join(" ".join(root.itertext()).split())


@needs_edgar
def test_each_edgar_filing_read_from_its_words_alone_is_placed_as_its_tags_say() -> None:
    for name, *_ in CALENDARS:
        path = EDGAR / name
        cover, words = _cover(path), _words(path)
        read = from_content(words[:6000], words, form=cover["DocumentType"])
        focus = cover["DocumentFiscalPeriodFocus"]
        expected = (int(cover["DocumentFiscalYearFocus"]), 4 if focus == "FY" else int(focus[1]))
        assert (read.fiscal_year, read.fiscal_quarter) == expected, (name, read.calendar)
        assert read.calendar.naming == 0
    # P&G's 10-Q: a June year end, and nowhere does it say how it names its years (one
    # "fiscal 2024" in its prose, by no date): named for the year it ends in by
    # convention, and its calendar says so.
    words = _words(EDGAR / "pg-10-q-2025-04-24.html")
    pg = from_content(words[:6000], words)
    assert (pg.calendar.year_end_month, pg.period_end) == (6, date(2025, 3, 31))
    assert "by convention, the filing does not say" in pg.calendar.describe()
    # Salesforce (January) says it in one phrase: "fiscal 2025 ... refer to the fiscal
    # year ending January 31, 2025"; without a convention to fall back on, that settles it.
    words = _words(EDGAR / "crm-10-k-2025-03-05.html")
    crm = from_content(words[:6000], words, form="10-K")
    assert "stated" in crm.calendar.evidence and "January 31, 2025" in crm.calendar.evidence
    assert "convention" not in crm.calendar.evidence


def test_a_year_ending_in_january_is_named_only_when_the_filing_says_how() -> None:
    cover = "FORM 10-K For the fiscal year ended February 1, 2025"
    # A bare "fiscal 2024" names no day: a January year end stays ambiguous.
    silent = from_content(cover, "Net sales grew in fiscal 2024 on new stores.", form="10-K")
    assert not silent.placed and silent.fiscal_year is None
    assert "does not say" in (silent.calendar.ambiguous or "")
    # A year's name beside a day inside it settles it, either way.
    begins = from_content(
        cover, "Fiscal 2024 ended February 1, 2025 and had 52 weeks.", form="10-K"
    )
    assert (begins.fiscal_year, begins.calendar.naming) == (2024, -1)
    ends = from_content(
        cover,
        "an investment made on January 31, 2025, the last trading day of fiscal 2025",
        form="10-K",
    )
    assert (ends.fiscal_year, ends.calendar.naming) == (2025, 0)
    assert "stated" in ends.calendar.evidence and "convention" not in ends.calendar.evidence


def test_words_that_contradict_the_convention_or_each_other_flag_the_calendar() -> None:
    cover = "FORM 10-Q For the quarterly period ended March 31, 2025"
    statements = "Three Months Ended March 31, 2025 ... Nine Months Ended March 31, 2025. "
    # A June year whose prose keeps naming this quarter "of fiscal 2024": a year named for
    # its start, against the convention; flagged, not placed either way.
    prose = "Sales in the third quarter of fiscal 2024 rose; " * 3
    against = from_content(cover, statements + prose)
    assert not against.placed and against.fiscal_quarter == 3
    assert "against the convention" in (against.calendar.ambiguous or "")
    # The same words naming it "of fiscal 2025" confirm it.
    agrees = from_content(cover, statements + prose.replace("2024", "2025"))
    assert agrees.fiscal_year == 2025 and "as the convention has it" in agrees.calendar.evidence
    # A filing that defines its years for their start is read as it says...
    defined = "the fiscal year ended June 30, 2024 (\u201cfiscal 2023\u201d). "
    start = from_content(cover, statements + defined)
    assert (start.fiscal_year, start.calendar.naming) == (2024, -1)
    # ...but one that names them both ways is flagged, with both phrases.
    both = from_content(cover, statements + defined + "Fiscal 2025 ends June 30, 2025. ")
    assert not both.placed and "both ways" in (both.calendar.ambiguous or "")
    assert (
        "fiscal 2023" in both.calendar.ambiguous and "Fiscal 2025 ends" in both.calendar.ambiguous
    )


def test_instants_and_quarters_on_52_53_week_calendars() -> None:
    late_sept = FiscalCalendar(9)
    assert late_sept.fiscal_year(date(2022, 10, 1)) == 2022  # a 53-week year's end
    assert late_sept.fiscal_quarter(date(2024, 12, 28)) == 1
    late_nov = FiscalCalendar(11)
    assert late_nov.fiscal_year(date(2023, 12, 2)) == 2023
    assert late_nov.fiscal_quarter(date(2024, 3, 2)) == 1
    begins = FiscalCalendar(1, naming=-1, weeks=True)
    placed = begins.resolve(Span(end=date(2024, 2, 3), instant=True))
    assert (placed.fiscal_year, placed.fiscal_quarter) == (2023, 4)
    unknown = FiscalCalendar(1, ambiguous="not said")
    period = Span(end=date(2024, 2, 3), start=date(2023, 1, 29), months=12)
    assert unknown.resolve(period).fiscal_year is None


def test_the_store_answers_a_retailer_year_by_its_own_name(store) -> None:
    settings, st = store
    folder = store_dir = settings.home / "filings"
    folder.mkdir(parents=True)
    (store_dir / "xrtl-10-k-2024-03-20.html").write_text(retailer_10k(), encoding="utf-8")
    bad = retailer_10k(misprint={"Total current assets": 5_100}).replace("XRTL", "XBAD")
    bad = bad.replace("Example Retail Corporation", "Misprint Retail Inc.")
    (store_dir / "xbad-10-k-2024-03-20.html").write_text(bad, encoding="utf-8")
    report = ingest([folder], settings, st)
    assert {r.status for r in report.results} == {"ingested"}, [r.reason for r in report.results]
    good = next(r for r in report.results if "xrtl" in r.path)
    checks = {c["check"]: c for c in good.checks["checks"]}
    assert good.checks["verified"] == good.checks["facts"] > 0
    assert checks["balance_identity"]["covered"] > 0 and checks["subtotal"]["failed"] == 0
    assert "begins in" in good.metadata["calendar"]
    with st.connect() as conn:
        company = conn.execute("SELECT id FROM companies WHERE ticker = 'XRTL'").fetchone()[0]
        assets = metric("total_assets")
        fy2023 = resolve_metric(conn, company, assets, Period(2023))
        assert isinstance(fy2023, MetricValue) and fy2023.value == 8_000_000_000
        assert fy2023.fact.period_end == date(2024, 2, 3) and fy2023.fact.verified
        assert isinstance(resolve_metric(conn, company, assets, Period(2024)), Unresolved)
        assert [p.label for p in available_periods(conn, company)] == ["FY2022", "FY2023"]
        calendars = company_calendars(conn, company)
        assert "named for the year it begins in" in calendars.describe()
        # The misprinted subtotal: kept, with its reason, and not verified.
        misprinted = conn.execute("SELECT id FROM companies WHERE ticker = 'XBAD'").fetchone()[0]
        [cell] = [
            f
            for f in query_facts(conn, company_id=misprinted, labels=["total current assets"])
            if f.source == "table" and f.fiscal_year == 2023
        ]
        assert not cell.verified and "subtotal" in (cell.unverified_reason or "")
        assert re.search(r"do not add up", cell.unverified_reason or "")


def _best_buy_text() -> ParsedDocument:
    """The Best Buy 10-Q's pages as PyMuPDF reads their text (the cover and statements are
    what the period is read from; finrag's full PDF parse is not needed for that)."""
    import pymupdf

    with pymupdf.open(SAMPLE) as pdf:
        pages = [Page(i + 1, page.get_text()) for i, page in enumerate(pdf)]
    return ParsedDocument(pages=pages, parser="pymupdf")


def test_a_10q_named_report_pdf_is_read_from_its_cover_and_statements() -> None:
    parsed = _best_buy_text()
    meta = resolve_metadata(Path("/in/report.pdf"), Path("/in"), parsed)
    assert (meta.form_type, meta.fiscal_year, meta.fiscal_quarter) == ("10-Q", 2024, 2)
    assert meta.period_end == date(2023, 7, 29)
    assert meta.sources["fiscal_quarter"] == meta.sources["fiscal_year"] == "filing"
    assert meta.calendar is not None and meta.calendar.year_end_month == 1
    assert "6 months ended 2023-07-29" in meta.calendar.evidence
    assert meta.conflicts == []
    # A file name that says otherwise is a hint the filing overrules, and a conflict.
    misnamed = resolve_metadata(Path("/in/10K-Q3-2023.pdf"), Path("/in"), parsed)
    assert (misnamed.form_type, misnamed.fiscal_year, misnamed.fiscal_quarter) == (
        "10-Q",
        2024,
        2,
    )
    assert misnamed.conflicts == [
        "form type: the file name says 10-K, the filing 10-Q",
        "fiscal year: the file name says FY2023, the filing FY2024",
        "fiscal quarter: the file name says Q3, the filing Q2",
    ]


def test_restated_and_unverified_figures_are_said_in_the_answer(store) -> None:
    settings, st = store
    folder = settings.home / "filings"
    folder.mkdir(parents=True)
    (folder / "xrtl-10-k-2024-03-20.html").write_text(retailer_10k(), encoding="utf-8")
    # A later filing restates fiscal 2023's revenue (and the lines it adds up to).
    restated = {"Revenue": 20_100, "Gross profit": 5_100, "Operating income": 2_100}
    (folder / "xrtl-10-k-2024-06-28.html").write_text(
        retailer_10k(values=restated), encoding="utf-8"
    )
    bad = retailer_10k(misprint={"Total current assets": 5_100}).replace("XRTL", "XBAD")
    bad = bad.replace("Example Retail Corporation", "Misprint Retail Inc.")
    (folder / "xbad-10-k-2024-03-20.html").write_text(bad, encoding="utf-8")
    report = ingest([folder], settings, st)
    assert {r.status for r in report.results} == {"ingested"}, [r.reason for r in report.results]
    with st.connect() as conn:
        company = conn.execute("SELECT id FROM companies WHERE ticker = 'XRTL'").fetchone()[0]
        revenue = resolve_metric(conn, company, metric("revenue"), Period(2023))
        assert isinstance(revenue, MetricValue) and revenue.value == 20_100_000_000
        assert revenue.fact.document.endswith("xrtl-10-k-2024-06-28.html")
        [earlier] = revenue.restated_from
        assert earlier.value == 20_000_000_000 and earlier.document.endswith("03-20.html")
    no_llm = settings.model_copy(
        update={"answer": settings.answer.model_copy(update={"use_llm": False})}
    )
    asker = Asker(st, no_llm, llm=FakeLLM([]))  # `ask --no-llm`: the facts route
    answer = asker.ask("What was Example Retail's revenue in fiscal 2023?", use_cache=False)
    assert answer.route == "facts" and "20,100" in answer.answer, answer.answer
    assert answer.status == "verified"
    [said] = [w for w in answer.warnings if w.startswith("restated")]
    assert "xrtl-10-k-2024-06-28.html" in said and "restated from" in said
    assert "xrtl-10-k-2024-03-20.html" in said
    # A date in the question is placed on the company's calendar: fiscal 2023's end.
    dated = asker.ask("What were Example Retail's total assets as of February 3, 2024?")
    assert "8,000" in dated.answer and dated.as_dict()["verified"] is True, dated.answer
    # A figure whose statement does not add up is stated, flagged, and not verified:
    # exit 0, and 8 with --strict.
    answer = asker.ask(
        "What were Misprint Retail's total current assets at the end of fiscal 2023?",
        use_cache=False,
    )
    assert answer.route == "facts" and "5,100" in answer.answer, answer.answer
    assert answer.status == "found_in_source" and answer.as_dict()["verified"] is False
    assert any("not verified" in w and "do not add up" in w for w in answer.warnings)
    assert not failed_check(answer) and failed_check(answer, strict=True)


def test_a_cover_line_the_layout_reader_dropped_is_read_from_the_text_layer(tmp_path) -> None:
    import pymupdf

    # The real Best Buy 10-Q's first pages, but its parsed Markdown without the cover's
    # period line (American Express's 10-K lost "For the fiscal year ended ..." that way).
    parsed = _best_buy_text()
    line = re.compile(r"for the quarterly period ended[^\n]*", re.I)
    assert line.search(parsed.pages[0].markdown)
    parsed.pages[0].markdown = line.sub("", parsed.pages[0].markdown)
    path = tmp_path / "report.pdf"
    with pymupdf.open(SAMPLE) as pdf, pymupdf.open() as out:
        out.insert_pdf(pdf, from_page=0, to_page=1)
        out.save(path)
    meta = resolve_metadata(path, tmp_path, parsed)
    assert (meta.form_type, meta.fiscal_year, meta.fiscal_quarter) == ("10-Q", 2024, 2)
    assert meta.period_end == date(2023, 7, 29)
    # Without the file's text layer (a path that is no PDF) the cover says nothing.
    blind = resolve_metadata(tmp_path / "missing.pdf", tmp_path, parsed)
    assert blind.calendar is not None and blind.calendar.ambiguous
