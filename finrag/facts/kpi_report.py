"""KPIs by period for one or more companies: the report `finrag kpi` and chat's `/kpi`
show, with each value's inputs and each gap's reason; no rendering."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from finrag.db.companies import require_company
from finrag.facts.kpi import Kpi, KpiGap, KpiValue, available_periods, kpi, kpi_table, kpis
from finrag.facts.lookup import Period
from finrag.facts.store import CompanyCalendar, company_calendars

# A short set that reads a company at a glance; `--kpi all` shows every KPI defined.
DEFAULT_KPIS = (
    "gross_margin",
    "operating_margin",
    "net_margin",
    "ebitda_margin",
    "current_ratio",
    "debt_to_equity",
    "roe",
    "fcf_margin",
    "revenue_growth",
)


@dataclass
class CompanyKpis:
    name: str
    ticker: str | None
    periods: list[Period]
    results: list[KpiValue | KpiGap] = field(default_factory=list)
    held: list[Period] = field(default_factory=list)  # every period held, asked for or not
    calendar: CompanyCalendar | None = None  # its fiscal calendar, and what it left unplaced

    @property
    def short(self) -> str:
        return self.ticker or self.name


@dataclass
class KpiReport:
    """KPIs by period for each company asked about, in the order asked."""

    kpis: list[Kpi]
    companies: list[CompanyKpis]

    @property
    def periods(self) -> list[str]:
        """Every company's periods, oldest first: the table's columns."""
        held = {p for c in self.companies for p in c.periods}
        return [p.label for p in sorted(held, key=lambda p: (p.fiscal_year, p.fiscal_quarter or 0))]

    @property
    def computed(self) -> int:
        return sum(isinstance(r, KpiValue) for c in self.companies for r in c.results)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: companies, periods, and one row per company, KPI and period."""
        return {
            "companies": [c.name for c in self.companies],
            "periods": self.periods,
            "kpis": [self.row(c, r) for c in self.companies for r in c.results],
            "calendars": {c.name: c.calendar.as_dict() for c in self.companies if c.calendar},
        }

    def row(self, company: CompanyKpis, result: KpiValue | KpiGap) -> dict[str, Any]:
        """One value with its formula, expression and inputs (each with its document,
        page and row), or the gap with its reason."""
        chosen = next(k for k in self.kpis if k.name == result.name)
        row: dict[str, Any] = {
            "company": company.name,
            "kpi": result.name,
            "display": chosen.display,
            "period": result.period,
            "unit": chosen.unit,
        }
        if isinstance(result, KpiGap):
            gap = {"reason": result.reason, "detail": result.detail}
            empty = {"value": None, "formula": None, "expression": None, "inputs": []}
            return row | empty | {"gap": gap}
        return row | {
            "value": float(result.value),
            "formula": result.formula,
            "expression": result.expression,
            "inputs": [i.as_dict() for i in result.inputs],
            "gap": None,
        }


def choose_kpis(names: Sequence[str] | None) -> list[Kpi]:
    """The KPIs named (names or aliases, comma-separated or repeated), 'all', or the
    default set; an unknown name is a usage error with close matches."""
    wanted = [n.strip() for given in names or () for n in given.split(",") if n.strip()]
    if not wanted:
        return [kpi(name) for name in DEFAULT_KPIS]
    if any(n.lower() == "all" for n in wanted):
        return kpis()
    chosen: dict[str, Kpi] = {}
    for name in wanted:
        found = kpi(name)
        chosen.setdefault(found.name, found)
    return list(chosen.values())


def kpi_report(
    conn: psycopg.Connection,
    companies: Sequence[str],
    chosen: Sequence[Kpi],
    years: tuple[int, int] | None,
    *,
    quarterly: bool = False,
) -> KpiReport:
    """Each company's KPIs over the periods the store holds for it (within ``years``)."""
    report = KpiReport(list(chosen), [])
    seen: set[int] = set()
    for text in companies:
        company_id, name, ticker = require_company(conn, text)
        if company_id in seen:  # "Apple" and "AAPL": one company, shown once
            continue
        seen.add(company_id)
        held = available_periods(conn, company_id, quarterly=quarterly)
        periods = held
        if years is not None:
            periods = [p for p in held if years[0] <= p.fiscal_year <= years[1]]
        results = kpi_table(conn, company_id, chosen, periods) if periods else []
        calendar = company_calendars(conn, company_id)
        report.companies.append(CompanyKpis(name, ticker, periods, results, held, calendar))
    return report


def why_none(report: KpiReport) -> str:
    """A sentence saying why nothing was computed: no periods, or the gaps' reasons."""
    if all(not c.periods for c in report.companies):
        return "; ".join(
            f"the store holds no statement figures for {c.name} in the periods asked"
            + (f" (it holds {c.held[0].label} to {c.held[-1].label})" if c.held else "")
            for c in report.companies
        )
    reasons = Counter(r.reason for c in report.companies for r in c.results)
    return ", ".join(f"{n} {reason}" for reason, n in reasons.most_common()) + " (see the notes)"


def gap_note(gap: KpiGap) -> str:
    """Why a KPI has no value, short enough to share: the line items missing, period by
    period ("no current_assets, current_liabilities for FY2022 in the store"), or the
    conflict or failed calculation as the engine words it."""
    if gap.reason != "missing" or not gap.unresolved:
        return f"{gap.period}: {gap.reason}: {gap.detail}"
    by_period: dict[str, list[str]] = {}
    for item in gap.unresolved:
        by_period.setdefault(item.period, []).append(item.metric)
    by_names: dict[tuple[str, ...], list[str]] = {}
    for period, names in by_period.items():
        by_names.setdefault(tuple(dict.fromkeys(names)), []).append(period)
    return "; ".join(
        f"no {', '.join(names)} for {', '.join(sorted(periods))} in the store"
        for names, periods in by_names.items()
    )
