"""Where fetched filings go, and the manifest of what was fetched.

``DEST/AAPL/aapl-10-k-2024-11-01.htm``: a folder per ticker and EDGAR's ticker-form-date
name, the layout finrag ingest reads a ticker and form from (finrag.ingest.metadata). The
manifest, ``DEST/.finrag-fetch.json``, records each accession fetched with its file and
size: a second run skips what is there, an interrupted one resumes. It is written whole
(beside, then renamed) after each filing; dotfiles are never ingested.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from finrag.errors import FinragError
from finrag.fetch.edgar import Company, Filing

MANIFEST = ".finrag-fetch.json"
FORMAT = 1


def file_name(filing: Filing, *, with_accession: bool = False) -> str:
    suffix = Path(filing.primary_document).suffix.lower() or ".htm"
    form = filing.form.lower().replace("/", "-").replace(" ", "-")
    stem = f"{_safe(filing.company.ticker).lower()}-{form}-{filing.filing_date.isoformat()}"
    return f"{stem}-{filing.accession}{suffix}" if with_accession else f"{stem}{suffix}"


def ticker_folder(dest: Path, company: Company) -> Path:
    return dest / _safe(company.ticker)


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)


@dataclass
class Manifest:
    """What earlier runs fetched into ``dest``: accession -> {path (relative), size, ...},
    and the companies they resolved (ticker -> cik, name), so a later run need not
    download the ticker list again."""

    dest: Path
    filings: dict[str, dict[str, Any]] = field(default_factory=dict)
    companies: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, dest: Path) -> Manifest:
        path = dest / MANIFEST
        if not path.is_file():
            return cls(dest)
        try:
            raw = json.loads(path.read_text())
            if raw.get("format") != FORMAT:
                raise ValueError(f"format {raw.get('format')!r}, expected {FORMAT}")
            return cls(dest, dict(raw["filings"]), dict(raw["companies"]))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise FinragError(
                f"cannot read the fetch manifest {path}: {exc}",
                hint="delete it: the next fetch checks every filing again (and downloads "
                "only those whose file is missing)",
            ) from None

    def company(self, ticker: str) -> Company | None:
        known = self.companies.get(ticker)
        return Company(int(known["cik"]), ticker, known["name"]) if known else None

    def cached(self, filing: Filing) -> Path | None:
        """The file an earlier run fetched for ``filing``, if it is still there whole."""
        entry = self.filings.get(filing.accession)
        if entry is None:
            return None
        path = self.dest / entry["path"]
        try:
            return path if path.stat().st_size == entry["size"] else None
        except OSError:
            return None

    def target(self, filing: Filing) -> Path:
        """Where ``filing`` goes: its EDGAR-style name, or with its accession added when
        another filing (same form, same day) already holds that name."""
        entry = self.filings.get(filing.accession)
        if entry is not None:
            return self.dest / entry["path"]
        folder = ticker_folder(self.dest, filing.company)
        path = folder / file_name(filing)
        taken = {e["path"] for a, e in self.filings.items() if a != filing.accession}
        if str(path.relative_to(self.dest)) in taken:
            path = folder / file_name(filing, with_accession=True)
        return path

    def record(self, filing: Filing, path: Path, size: int, url: str) -> None:
        company = filing.company
        self.companies[company.ticker] = {"cik": company.cik, "name": company.name}
        self.filings[filing.accession] = {
            "path": str(path.relative_to(self.dest)),
            "size": size,
            "ticker": company.ticker,
            "cik": company.cik,
            "form": filing.form,
            "filing_date": filing.filing_date.isoformat(),
            "report_date": filing.report_date.isoformat() if filing.report_date else None,
            "url": url,
        }

    def save(self) -> None:
        path = self.dest / MANIFEST
        aside = path.with_name(f"{MANIFEST}.{os.getpid()}.tmp")
        data = {"format": FORMAT, "companies": self.companies, "filings": self.filings}
        aside.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        aside.replace(path)
