"""The companies an analysis is about, resolved in the store, each with the fiscal year
its questions ask about (the latest the store holds statement figures for) and the one
before, so every company is read over the same kind of span."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from finrag.db.companies import require_company
from finrag.db.company_names import base_name
from finrag.errors import UsageError
from finrag.facts.kpi import available_periods

MAX_SUBJECTS = 4  # each company costs every persona's questions


@dataclass(frozen=True)
class Subject:
    id: int
    name: str  # as the store holds it: "Apple Inc."
    short: str  # as a question names it: "Apple"
    ticker: str | None
    year: str | None  # "FY2024": the latest period with statement figures; None: none held
    prior: str | None  # "FY2023"

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ticker": self.ticker, "year": self.year, "prior": self.prior}


def resolve_subjects(conn: psycopg.Connection, names: Sequence[str]) -> list[Subject]:
    """Each named company (a name, ticker or alias the store knows), once; a name the store
    does not hold is a UsageError listing those it does."""
    if not names:
        raise UsageError("name at least one company", hint="e.g. finrag analyze AAPL NFLX")
    found: dict[int, Subject] = {}
    for text in names:
        company_id, name, ticker = require_company(conn, text)
        if company_id not in found:
            found[company_id] = _subject(conn, company_id, name, ticker)
    if len(found) > MAX_SUBJECTS:
        raise UsageError(f"at most {MAX_SUBJECTS} companies at once ({len(found)} named)")
    return list(found.values())


def _subject(conn: psycopg.Connection, company_id: int, name: str, ticker: str | None) -> Subject:
    # A year the annual statements cover is compared with the year before (a 10-K prints
    # both); a company held only through 10-Qs is read at its latest quarter, against the
    # same quarter a year before (a 10-Q prints both).
    held = available_periods(conn, company_id) or available_periods(
        conn, company_id, quarterly=True
    )
    latest = held[-1] if held else None
    prior = latest.previous_year() if latest else None
    return Subject(
        company_id,
        name,
        base_name(name),
        ticker,
        latest.label if latest else None,
        prior.label if prior else None,
    )
