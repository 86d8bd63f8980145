"""A persona's KPIs beside an answer: computed from the facts store (finrag.facts.kpi) for
the company and period the answer is about; every value traced to its stored inputs, a
KPI that cannot be computed says why, and none is made up."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from finrag.facts.kpi import KpiGap, KpiValue, available_periods, kpi, kpi_table
from finrag.facts.kpi_report import CompanyKpis, KpiReport
from finrag.facts.lookup import Period
from finrag.personas import Persona

_LABEL = re.compile(r"^FY(\d{4})(?: Q([1-4]))?$")
MAX_COMPANIES = 4  # a comparison of more shows the first four


@dataclass
class PersonaKpis:
    """The persona's KPIs for each company an answer is about, at the period it asks."""

    persona: Persona
    report: KpiReport
    notes: list[str] = field(default_factory=list)  # why a company or period has none

    @property
    def periods(self) -> list[str]:
        return self.report.periods

    def rows(self) -> list[tuple[CompanyKpis, KpiValue | KpiGap]]:
        return [(c, r) for c in self.report.companies for r in c.results]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: the persona, its periods, and per KPI the value (or the gap's
        reason) with its formula and the stored facts it comes from (document, page)."""
        kpis = []
        for company, result in self.rows():
            row = self.report.row(company, result)
            row["sources"] = list(dict.fromkeys(i["ref"] for i in row["inputs"]))
            row["display_value"] = None if row["value"] is None else format_kpi(result, row["unit"])
            kpis.append(row)
        return {
            **self.persona.as_dict(),
            "companies": [c.name for c in self.report.companies],
            "periods": self.periods,
            "kpis": kpis,
            "notes": self.notes,
        }


def format_kpi(result: KpiValue | KpiGap, unit: str) -> str:
    from finrag.facts.charts import format_value

    return format_value(result.value if isinstance(result, KpiValue) else None, unit)


def persona_kpis(
    conn: psycopg.Connection,
    persona: Persona,
    *,
    company_ids: Sequence[int],
    years: Sequence[int] = (),
    quarter: int | None = None,
    periods_stated: Sequence[str] = (),
) -> PersonaKpis:
    """The persona's KPIs for each company (at most MAX_COMPANIES) at the period in
    question: the period the answer's stored figures are for, else the year (and quarter)
    the question names, else the latest the store holds for the company."""
    chosen = [kpi(name) for name in persona.kpis]
    view = PersonaKpis(persona, KpiReport(chosen, []))
    if not company_ids:
        view.notes.append(f"no company in the question: name one to see the {persona.name} KPIs")
        return view
    for company_id in list(dict.fromkeys(company_ids))[:MAX_COMPANIES]:
        name, ticker = conn.execute(
            "SELECT name, ticker FROM companies WHERE id = %s", (company_id,)
        ).fetchone()
        period = _period(conn, company_id, years, quarter, periods_stated)
        if period is None:
            view.notes.append(f"the store holds no statement figures for {name}")
            continue
        results = kpi_table(conn, company_id, chosen, [period])
        view.report.companies.append(CompanyKpis(name, ticker, [period], results))
    return view


def answer_scope(answer: Any) -> dict[str, Any]:
    """What an answer (finrag.answer.result.Answer) is about, as ``persona_kpis`` takes
    it: the companies and periods its search applied, the periods its stored figures are
    for."""
    applied = answer.retrieval.get("applied") or {}
    return {
        "company_ids": list(applied.get("company_ids") or []),
        "years": list(applied.get("years") or []),
        "quarter": applied.get("quarter"),
        "periods_stated": [v["period"] for v in answer.fact_values if v.get("period")],
    }


def answer_companies(conn: psycopg.Connection, answer: Any) -> list[int]:
    """The companies of the documents an answer cites or reads, when its question named
    none; the one company held when the store holds one."""
    documents = {v["document_id"] for v in answer.fact_values if v.get("document_id")}
    documents |= {c.hit.document_id for c in answer.chunks}
    if documents:
        rows = conn.execute(
            "SELECT DISTINCT company_id FROM documents "
            "WHERE id = ANY(%s) AND company_id IS NOT NULL ORDER BY company_id",
            (sorted(documents),),
        ).fetchall()
        if rows:
            return [r[0] for r in rows]
    rows = conn.execute("SELECT id FROM companies ORDER BY id LIMIT 2").fetchall()
    return [rows[0][0]] if len(rows) == 1 else []


# A question refused before anything was read names no company or period to show KPIs for.
NO_SCOPE = ("unknown-company", "unheld-period", "not-relevant")


def kpis_for_answers(
    conn: psycopg.Connection, persona: Persona, answers: Sequence[Any]
) -> PersonaKpis | None:
    """The persona's KPIs for what the answers (one, or a chat turn's sub-answers) are
    about; None when every one was refused before anything was read."""
    answers = [a for a in answers if a is not None and a.refusal not in NO_SCOPE]
    if not answers:
        return None
    scope: dict[str, Any] = {"company_ids": [], "years": [], "quarter": None, "periods_stated": []}
    for answer in answers:
        one = answer_scope(answer)
        if not one["company_ids"]:
            one["company_ids"] = answer_companies(conn, answer)
        for key in ("company_ids", "years", "periods_stated"):
            scope[key] += [v for v in one[key] if v not in scope[key]]
        scope["quarter"] = scope["quarter"] or one["quarter"]
    return persona_kpis(conn, persona, **scope)


def _period(
    conn: psycopg.Connection,
    company_id: int,
    years: Sequence[int],
    quarter: int | None,
    stated: Sequence[str],
) -> Period | None:
    named = [Period(int(m[1]), int(m[2]) if m[2] else None) for m in map(_LABEL.match, stated) if m]
    if named:  # a change from FY2023 Q2 to FY2024 Q2 is about FY2024 Q2
        return max(named, key=_order)
    annual = available_periods(conn, company_id)
    quarterly = available_periods(conn, company_id, quarterly=True)
    if years:
        year = max(years)
        if quarter:
            return Period(year, quarter)
        if Period(year) in annual:
            return Period(year)
        in_year = [p for p in quarterly if p.fiscal_year == year]
        return in_year[-1] if in_year else Period(year)  # the gaps say what is missing
    held = [*quarterly, *annual]
    if not held:
        return None
    return max(held, key=_order)


def _order(period: Period) -> tuple[int, int, bool]:
    """Later first; a year ends where its Q4 does, and the year wins the tie."""
    return period.fiscal_year, period.fiscal_quarter or 4, period.fiscal_quarter is None
