"""What EDGAR's JSON says: tickers to CIKs, a company's filings, and where each one is.

- ``{sec_url}/files/company_tickers.json``: ``{"0": {"cik_str": 320193, "ticker": "AAPL",
  "title": "Apple Inc."}, ...}``;
- ``{data_url}/submissions/CIK##########.json``: the company, and its filings as parallel
  columns (``accessionNumber``, ``form``, ``filingDate``, ``reportDate``,
  ``primaryDocument``, ...) under ``filings.recent``; older filings in further pages named
  under ``filings.files`` (each with its ``filingFrom``/``filingTo`` dates);
- ``{sec_url}/Archives/edgar/data/{cik}/{accession without dashes}/{primaryDocument}``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any

from finrag.errors import UsageError


@dataclass(frozen=True)
class Company:
    cik: int
    ticker: str
    name: str


@dataclass(frozen=True)
class Filing:
    company: Company
    accession: str  # 0000320193-24-000123
    form: str
    filing_date: date
    report_date: date | None
    primary_document: str


def tickers_url(sec_url: str) -> str:
    return f"{sec_url.rstrip('/')}/files/company_tickers.json"


def submissions_url(data_url: str, cik: int | str) -> str:
    """The first page (``cik`` an int) or a named older page (``cik`` its file name)."""
    name = cik if isinstance(cik, str) else f"CIK{cik:010d}.json"
    return f"{data_url.rstrip('/')}/submissions/{name}"


def document_url(sec_url: str, filing: Filing) -> str:
    folder = filing.accession.replace("-", "")
    return (
        f"{sec_url.rstrip('/')}/Archives/edgar/data/{filing.company.cik}/{folder}/"
        f"{filing.primary_document}"
    )


def normal_ticker(text: str) -> str:
    # EDGAR writes share classes with a dash (BRK-B); people often write a dot.
    return text.strip().upper().replace(".", "-")


def ticker_table(raw: dict[str, Any]) -> dict[str, Company]:
    """company_tickers.json as ticker -> Company."""
    table: dict[str, Company] = {}
    for row in raw.values():
        ticker = normal_ticker(str(row["ticker"]))
        table.setdefault(ticker, Company(int(row["cik_str"]), ticker, str(row["title"])))
    return table


def is_cik(text: str) -> bool:
    return text.strip().isdigit()


def company_of(submissions: dict[str, Any], given: str) -> Company:
    """The company a submissions JSON describes; ``given`` (a ticker or CIK as typed)
    stands in for a ticker when EDGAR lists none."""
    tickers = submissions.get("tickers") or []
    ticker = normal_ticker(tickers[0]) if tickers else normal_ticker(given)
    return Company(int(submissions["cik"]), ticker, str(submissions.get("name") or ticker))


def older_pages(submissions: dict[str, Any], since: date | None) -> list[str]:
    """The names of the older pages that hold filings on or after ``since`` (all of them
    when ``since`` is None)."""
    pages = submissions.get("filings", {}).get("files") or []
    return [
        page["name"]
        for page in pages
        if since is None or date.fromisoformat(page.get("filingTo", "9999-12-31")) >= since
    ]


def filings_in(columns: dict[str, Any], company: Company) -> list[Filing]:
    """The filings of one page's parallel columns; those without a primary document (paper
    filings) are left out."""
    accessions = columns.get("accessionNumber") or []
    reports = columns.get("reportDate") or [""] * len(accessions)
    found = []
    for accession, form, filed, report, primary in zip(
        accessions,
        columns["form"],
        columns["filingDate"],
        reports,
        columns["primaryDocument"],
        strict=False,
    ):
        if not primary:
            continue
        found.append(
            Filing(
                company,
                accession,
                form,
                date.fromisoformat(filed),
                date.fromisoformat(report) if report else None,
                primary,
            )
        )
    return found


def select(filings: Iterable[Filing], forms: set[str], since: date | None) -> list[Filing]:
    """The filings of ``forms`` filed on or after ``since``, oldest first, each once."""
    chosen = {
        f.accession: f
        for f in filings
        if f.form.upper() in forms and (since is None or f.filing_date >= since)
    }
    return sorted(chosen.values(), key=lambda f: (f.filing_date, f.accession))


def parse_forms(text: str) -> set[str]:
    forms = {part.strip().upper() for part in text.split(",") if part.strip()}
    if not forms:
        raise UsageError("--forms names no form", hint="e.g. --forms 10-K,10-Q")
    return forms


def parse_since(text: str | None) -> date | None:
    """``2022`` (from 1 January) or ``2022-06-30``."""
    if text is None:
        return None
    text = text.strip()
    try:
        if re.fullmatch(r"\d{4}", text):
            return date(int(text), 1, 1)
        return date.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"--since {text!r} is neither a year nor a date",
            hint="a year (2022) or a date (2022-06-30): filings filed on or after it",
        ) from None
