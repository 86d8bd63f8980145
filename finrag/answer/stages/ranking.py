"""The text route's ranking stage: a superlative question ("which region had the highest
...", "which one had the highest notional value") answered from the rows of a printed
table in the retrieved passages, without the model (finrag.answer.printed_ranking).

Runs before evidence selection, with or without the model. Each row the answer names is
quoted as printed and cited (document · page); each growth rate and share is a
calculation on the printed cells. When no table reads whole, the route goes on to the
quotes and the model, as before.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from finrag.answer.citations import Citation, hit_citation
from finrag.answer.extraction import CalculationOutcome
from finrag.answer.fact_sources import calculate_outcome, number_text
from finrag.answer.printed_ranking import PrintedTable, Ranked, Row, rank, rank_ask, tables_in
from finrag.answer.result import Answer
from finrag.answer.stages import since
from finrag.retrieve import SearchResult
from finrag.retrieve.context import ContextChunk
from finrag.retrieve.hybrid import Hit

MAX_NAMED = 6  # rows the answer lists after the winner
DECIDED = "ranked rows of a printed table"


def ranked_answer(question: str, found: SearchResult, started: float) -> Answer | None:
    """The answer from a printed table's ranking, or None (the quotes and the model read)."""
    names = found.filters.company_words()
    ask = rank_ask(question, names)
    if ask is None:
        return None
    allowed = {c.name for c in found.filters.companies}
    tables: list[PrintedTable] = []
    for order, hit in enumerate(found.hits):
        if allowed and hit.company not in allowed:
            continue  # an answer never rests on a company the question does not name
        tables += tables_in(hit.content, source=hit, order=order)
    year = max(found.filters.years) if found.filters.years else None
    ranked = rank(ask, tables, year)
    if ranked is None:
        return None
    return _answer(question, ranked, ask.lowest, started)


def _answer(question: str, ranked: Ranked, lowest: bool, started: float) -> Answer:
    table, hit = ranked.table, ranked.table.source
    assert isinstance(hit, Hit)
    cited = _Citer(table, hit, ranked)
    (winner, _), *rest = ranked.order[: MAX_NAMED + 1]
    where = _period_words(table, ranked.column)
    title = _title(table)
    calculations: list[CalculationOutcome] = []
    if ranked.prior is None:
        word = "lowest" if lowest else "highest"
        text = (
            f"{winner.label} has the {word} figure in “{title}”, {where}: "
            f"{_amount(table, winner, ranked.column)} {cited.mark(winner)}"
        )
        if ranked.share is not None and ranked.total is not None:
            share = calculate_outcome(
                f"{winner.label}'s share of the total",
                f"{number_text(winner.values[ranked.column])} / "
                f"{number_text(ranked.total.values[ranked.column])} * 100",
                [cited.input(winner, ranked.column), cited.input(ranked.total, ranked.column)],
            )
            calculations.append(share)
            text += (
                f", {_percent(share)} of the total "
                f"{_amount(table, ranked.total, ranked.column)} {cited.mark(ranked.total)}"
            )
        text += "."
        if rest:
            text += " The others: " + "; ".join(
                f"{row.label} {_amount(table, row, ranked.column)} {cited.mark(row)}"
                for row, _ in rest
            )
            text += "."
    else:
        word = "lowest" if lowest else "highest"
        growth = [_growth(cited, row, ranked) for row, _ in ranked.order[: MAX_NAMED + 1]]
        calculations += growth
        before = _period_words(table, ranked.prior)
        text = (
            f"{winner.label} has the {word} growth in “{title}”, {where} against {before}: "
            f"{_percent(growth[0])} ({_amount(table, winner, ranked.column)} against "
            f"{_amount(table, winner, ranked.prior)}) {cited.mark(winner)}."
        )
        if rest:
            text += " The others: " + "; ".join(
                f"{row.label} {_percent(calc)} {cited.mark(row)}"
                for (row, _), calc in zip(rest, growth[1:], strict=False)
            )
            text += "."
    answer = Answer(question=question, answer=text, route="text")
    answer.citations = cited.citations
    answer.calculations = calculations
    answer.chunks = [ContextChunk(c.n, hit) for c in cited.citations]  # each n, its page
    answer.evidence = [
        {"n": c.n, "document": Path(c.path).name, "page": c.page, "quote": c.quote}
        for c in cited.citations
    ]
    answer.retrieval = {"decided": DECIDED}
    answer.timings["total"] = since(started)
    return answer


class _Citer:
    """One citation per row named, in order of first use, its row quoted as printed."""

    def __init__(self, table: PrintedTable, hit: Hit, ranked: Ranked) -> None:
        self.table, self.hit, self.ranked = table, hit, ranked
        self.by_row: dict[int, int] = {}
        self.citations: list[Citation] = []

    def mark(self, row: Row) -> str:
        return f"[{self.number(row)}]"

    def number(self, row: Row) -> int:
        if id(row) not in self.by_row:
            n = len(self.citations) + 1
            self.by_row[id(row)] = n
            citation = hit_citation(n, self.hit, self._quote(row), _title(self.table))
            self.citations.append(citation)
        return self.by_row[id(row)]

    def _quote(self, row: Row) -> str:
        columns = [c for c in (self.ranked.column, self.ranked.prior) if c is not None]
        cells = "; ".join(
            f"{_period_words(self.table, j)} {row.printed[j]}" for j in columns if j in row.printed
        )
        return f"{row.label or 'Total'}: {cells}"

    def input(self, row: Row, column: int) -> dict:
        return {
            "text": f"{row.label or 'Total'}, {_period_words(self.table, column)}",
            "value": float(row.values[column]),
            "sources": [self.number(row)],
        }


def _growth(cited: _Citer, row: Row, ranked: Ranked) -> CalculationOutcome:
    assert ranked.prior is not None
    now, before = row.values[ranked.column], row.values[ranked.prior]
    return calculate_outcome(
        f"{row.label}: change against a year earlier",
        f"({number_text(now)} - {number_text(before)}) / {number_text(before)} * 100",
        [cited.input(row, ranked.column), cited.input(row, ranked.prior)],
    )


def _percent(outcome: CalculationOutcome) -> str:
    if outcome.result is None:
        return "(not computed)"
    signed = "change" in outcome.description
    return f"{outcome.result:+.1f}%" if signed else f"{outcome.result:.1f}%"


def _amount(table: PrintedTable, row: Row, column: int) -> str:
    """A cell in millions when the table's units say its scale, else as printed."""
    value = row.values[column]
    dollars = "$" if any("$" in (r.printed.get(column) or "") for r in table.rows) else ""
    if table.scale in (3, 6, 9):
        millions = value * Decimal(10) ** (table.scale - 6)
        sign = "-" if millions < 0 else ""
        whole = millions == millions.to_integral_value()
        digits = f"{abs(millions):,.0f}" if whole else f"{abs(millions):,.1f}"
        return f"{sign}{dollars}{digits} million"
    return row.printed.get(column) or number_text(value)


def _period_words(table: PrintedTable, column: int) -> str:
    words = " ".join(r[column] for r in table.header_rows if column < len(r) and r[column])
    return " ".join(words.split()) or f"column {column}"


def _title(table: PrintedTable) -> str:
    # A title, not the units note or the section path the chunk carries.
    lines = [t for t in table.title if not (t.startswith("(") and len(t) < 40) and " > " not in t]
    paths = [t.rsplit(" > ", 1)[-1] for t in table.title if " > " in t]
    title = lines[-1] if lines else paths[-1] if paths else "the table"
    return title if len(title) <= 120 else title[:119].rstrip() + "…"
