"""One `finrag fetch` run: resolve the companies, list their filings, download what is
missing, record each in the manifest as it lands.

Nothing is written before the first document has been downloaded whole: a run that fails
early (offline, an unknown ticker, a refused User-Agent) leaves the folder as it was.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from finrag.config import Settings
from finrag.errors import UsageError
from finrag.fetch import edgar
from finrag.fetch.client import EdgarClient, EdgarRefused
from finrag.fetch.edgar import Company, Filing
from finrag.fetch.folder import Manifest

FETCHED, CACHED, FAILED = "fetched", "cached", "failed"


@dataclass
class FetchResult:
    filing: Filing
    url: str
    path: Path
    status: str  # fetched | cached | failed
    size: int = 0
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        f = self.filing
        return {
            "status": self.status,
            "ticker": f.company.ticker,
            "cik": f.company.cik,
            "company": f.company.name,
            "form": f.form,
            "filing_date": f.filing_date.isoformat(),
            "report_date": f.report_date.isoformat() if f.report_date else None,
            "accession": f.accession,
            "url": self.url,
            "path": str(self.path),
            "size": self.size,
            "reason": self.reason,
        }


@dataclass
class FetchReport:
    dest: Path
    results: list[FetchResult] = field(default_factory=list)
    requests: int = 0
    elapsed_s: float = 0.0

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.results)

    @property
    def paths(self) -> list[Path]:
        """The files this run's selection has in the folder (fetched now or before)."""
        return [r.path for r in self.results if r.status != FAILED]

    def as_dict(self) -> dict[str, Any]:
        return {
            "dest": str(self.dest),
            "filings": [r.as_dict() for r in self.results],
            "summary": {
                FETCHED: self.count(FETCHED),
                CACHED: self.count(CACHED),
                FAILED: self.count(FAILED),
                "bytes": sum(r.size for r in self.results if r.status == FETCHED),
                "requests": self.requests,
                "elapsed_s": round(self.elapsed_s, 2),
            },
        }


@dataclass(frozen=True)
class FetchEvent:
    kind: str  # "planned" (total filings), or "filing" (one result)
    total: int = 0
    result: FetchResult | None = None


def fetch_filings(
    names: Iterable[str],
    settings: Settings,
    *,
    forms: set[str],
    since: date | None,
    dest: Path,
    client: EdgarClient | None = None,
    on_event: Callable[[FetchEvent], None] | None = None,
) -> FetchReport:
    """Download the ``forms`` filed since ``since`` by each ticker (or CIK) in ``names``
    into ``dest``; the ones already there are skipped."""
    started = time.perf_counter()
    notify = on_event or (lambda _event: None)
    config = settings.fetch
    own_client = client is None
    client = client or EdgarClient(config)
    try:
        manifest = Manifest.load(dest)
        plan: list[Filing] = []
        for given, company in _resolve(list(names), manifest, client, config.sec_url):
            plan += _filings(given, company, client, config.data_url, forms, since)
        notify(FetchEvent("planned", total=len(plan)))
        report = FetchReport(dest)
        for filing in plan:
            result = _fetch_one(filing, manifest, client, config.sec_url)
            report.results.append(result)
            notify(FetchEvent("filing", result=result))
        report.requests = client.requests
    finally:
        if own_client:
            client.close()
    report.elapsed_s = time.perf_counter() - started
    return report


def _resolve(
    names: list[str], manifest: Manifest, client: EdgarClient, sec_url: str
) -> list[tuple[str, Company | None]]:
    """Each name with its company (None for a CIK: its submissions say who it is). The SEC's
    ticker list is downloaded only for tickers no earlier run resolved."""
    resolved: list[tuple[str, Company | None]] = []
    table: dict[str, Company] | None = None
    unknown = []
    for given in dict.fromkeys(names):
        if edgar.is_cik(given):
            resolved.append((given, None))
            continue
        ticker = edgar.normal_ticker(given)
        company = manifest.company(ticker)
        if company is None:
            if table is None:
                table = edgar.ticker_table(client.get_json(edgar.tickers_url(sec_url)))
            company = table.get(ticker)
        if company is None:
            unknown.append(given)
        else:
            resolved.append((given, company))
    if unknown:
        raise UsageError(
            f"no SEC registrant has the ticker {', '.join(unknown)}",
            hint="check the spelling, or give the company's CIK (a number) instead; "
            "nothing was fetched",
        )
    return resolved


def _filings(
    given: str,
    company: Company | None,
    client: EdgarClient,
    data_url: str,
    forms: set[str],
    since: date | None,
) -> list[Filing]:
    first = client.get_json(edgar.submissions_url(data_url, company.cik if company else int(given)))
    if company is None:
        company = edgar.company_of(first, given)
    else:  # the ticker as asked; the name as EDGAR now spells it
        company = Company(company.cik, company.ticker, str(first.get("name") or company.name))
    found = edgar.filings_in(first["filings"]["recent"], company)
    for page in edgar.older_pages(first, since):
        found += edgar.filings_in(client.get_json(edgar.submissions_url(data_url, page)), company)
    return edgar.select(found, forms, since)


def _fetch_one(
    filing: Filing, manifest: Manifest, client: EdgarClient, sec_url: str
) -> FetchResult:
    url = edgar.document_url(sec_url, filing)
    cached = manifest.cached(filing)
    if cached is not None:
        return FetchResult(filing, url, cached, CACHED, cached.stat().st_size)
    target = manifest.target(filing)
    if filing.accession not in manifest.filings and target.is_file():
        # Renamed into place, then interrupted before the manifest said so: the rename
        # is the commit, so the file is whole.
        size = target.stat().st_size
        manifest.record(filing, target, size, url)
        manifest.save()
        return FetchResult(filing, url, target, CACHED, size, "in the folder, not in the manifest")
    made = [p for p in (target.parent, *target.parent.parents) if not p.exists()]
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        size = client.download(url, target)
    except BaseException as exc:
        for folder in made:  # the folders this download made, and nothing came of it
            if not any(folder.iterdir()):
                folder.rmdir()
        if isinstance(exc, EdgarRefused):
            return FetchResult(filing, url, target, FAILED, reason=exc.message)
        raise
    manifest.record(filing, target, size, url)
    manifest.save()
    return FetchResult(filing, url, target, FETCHED, size)
