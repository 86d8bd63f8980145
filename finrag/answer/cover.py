"""Questions the cover page answers: the trading symbol, the exchanges and securities
registered under Section 12(b), the fiscal year end, the filer category. From the
cover's ``dei:`` facts (finrag.facts.cover), each cited by document and page; a question
the cover does not answer, or a company whose filings have no tagged cover, is left to
the other routes."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg

from finrag.answer.citations import Citation
from finrag.answer.extraction import CheckedFact
from finrag.answer.fact_words import short_name
from finrag.answer.facts_route import FLAG, Company, FactsOutcome
from finrag.answer.result import Answer
from finrag.facts.store import _SELECT, StoredFact

_SYMBOL = re.compile(r"\b(?:trading symbols?|ticker(?: symbols?)?|symbols?)\b")
_SECURITIES = re.compile(
    # "exchange" as a market, not foreign exchange: "which exchange", "stock exchange".
    r"\b(?:which|what|stock|securities) exchanges?\b|\bexchanges? (?:is|are|does|do)\b|"
    r"\b(?:listed|listing|registered securities|traded on)\b|\b12\s*\(b\)|"
    r"\bsecurities\b.{0,40}\bregistered\b"
)
_YEAR_END = re.compile(
    r"\bfiscal year[- ]end\b|\bfiscal year ends?\b|\bend of (?:its|the) fiscal year\b"
)
_FILER = re.compile(r"\bfiler (?:category|status)\b|\baccelerated filer\b|\bfiler\b")


def answer_cover(conn: psycopg.Connection, question: str, company: Company) -> FactsOutcome | None:
    key = question.lower()
    if _SECURITIES.search(key):
        wanted = ("Security12bTitle", "TradingSymbol", "SecurityExchangeName")
    elif _SYMBOL.search(key):
        wanted = ("TradingSymbol", "SecurityExchangeName")
    elif _YEAR_END.search(key) and not re.search(r"\b(?:revenue|sales|cash|assets|debt)\b", key):
        wanted = ("CurrentFiscalYearEndDate",)
    elif _FILER.search(key):
        wanted = ("EntityFilerCategory",)
    else:
        return None
    facts = _latest_cover(conn, company.id, wanted)
    if not facts:
        return None
    citations: list[Citation] = []
    checked: list[CheckedFact] = []

    def cite(fact: StoredFact) -> int:
        n = len(citations) + 1
        quote = fact.printed
        citations.append(
            Citation(
                n=n,
                document=Path(fact.document).stem,
                pages=[fact.page, fact.page],
                section=f"cover page · {fact.concept}",
                chunk_id=fact.chunk_id or 0,
                quote=quote,
                path=fact.document,
                document_id=fact.document_id,
            )
        )
        checked.append(CheckedFact(source=n, quote=quote, value=quote, ok=True))
        return n

    owner = short_name(company.name)
    if "Security12bTitle" in wanted or "TradingSymbol" in wanted:
        by_class: dict[str, dict[str, StoredFact]] = {}
        for fact in facts:
            member = fact.dimensions[0][1] if fact.dimensions else ""
            by_class.setdefault(member, {})[fact.concept.split(":")[1]] = fact
        debt_asked = "Security12bTitle" in wanted and bool(_DEBT_ASKED.search(key))
        debt = {m: f for m, f in by_class.items() if _is_debt(f)}
        if debt_asked and debt:
            by_class = debt
        parts = []
        for fields in by_class.values():
            symbol = fields.get("TradingSymbol")
            if "Security12bTitle" not in wanted and symbol is None:
                continue
            bits = []
            if (title := fields.get("Security12bTitle")) is not None:
                bits.append(f"{title.printed} [{cite(title)}]")
            if symbol is not None:
                named = "trading symbol " if "Security12bTitle" in wanted else ""
                bits.append(f"{named}{symbol.printed} [{cite(symbol)}]")
            if (exchange := fields.get("SecurityExchangeName")) is not None:
                bits.append(f"on {exchange.printed} [{cite(exchange)}]")
            parts.append(", ".join(bits) if "Security12bTitle" in wanted else " ".join(bits))
        if not parts:
            return None
        lead = (
            f"{owner}'s securities registered under Section 12(b): "
            if "Security12bTitle" in wanted
            else f"{owner}'s trading symbol is "
        )
        if debt_asked and not debt:  # the cover lists every class: no note among them
            lead = (
                f"None: {owner} has no debt securities registered under Section 12(b). "
                "The cover lists only "
            )
        elif debt_asked:
            lead = f"{owner}'s debt securities registered under Section 12(b): "
        text = lead + "; ".join(parts) + "."
    elif "CurrentFiscalYearEndDate" in wanted:
        fact = facts[0]
        text = f"{owner}'s fiscal year ends on {_month_day(fact.printed)} [{cite(fact)}]."
    else:
        fact = facts[0]
        text = f"{owner}'s filer category is {fact.printed} [{cite(fact)}]."
    answer = Answer(
        question=question,
        answer=text,
        route="facts",
        citations=citations,
        facts=checked,
        flags=[FLAG, "from the cover page's dei: facts"],
    )
    return FactsOutcome(answer, f"facts store: cover page ({', '.join(wanted)})")


_DEBT_ASKED = re.compile(r"\b(?:debt|notes?|bonds?|debentures?)\b")
_DEBT_TITLE = re.compile(r"\b(?:notes?|bonds?|debentures?|due\s+(?:19|20)\d\d)\b", re.I)


def _is_debt(fields: dict[str, StoredFact]) -> bool:
    title = fields.get("Security12bTitle")
    return title is not None and bool(_DEBT_TITLE.search(title.printed))


def _month_day(printed: str) -> str:
    """'--09-28' (the XBRL form) or 'September 28' as printed."""
    if m := re.fullmatch(r"--(\d\d)-(\d\d)", printed.strip()):
        import calendar

        return f"{calendar.month_name[int(m[1])]} {int(m[2])}"
    return printed


def _latest_cover(conn, company_id: int, wanted: tuple[str, ...]) -> list[StoredFact]:
    """The cover facts of the company's latest filing that has them."""
    rows = conn.execute(
        _SELECT + " WHERE f.company_id = %s AND f.concept = ANY(%s) "
        "ORDER BY d.period_end DESC NULLS LAST, f.document_id DESC, f.id",
        (company_id, [f"dei:{w}" for w in wanted]),
    ).fetchall()
    facts = [StoredFact(*row) for row in rows]
    if not facts:
        return []
    latest = facts[0].document_id
    return [f for f in facts if f.document_id == latest]
