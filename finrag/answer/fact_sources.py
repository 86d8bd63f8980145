"""The facts route's sources: one citation per stored fact, in order of first use, with
the printed row quoted and the chunk that prints it kept as an excerpt; and the
calculator's outcome for a computation on them. Shared by every answer built from facts
(the facts route, segments and regions, the cover page)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import psycopg

from finrag.answer.calculator import CalculationError, calculate
from finrag.answer.citations import Citation
from finrag.answer.extraction import CalculationOutcome, CheckedFact
from finrag.answer.figure import Figure
from finrag.answer.result import Answer
from finrag.facts.lookup import MetricValue
from finrag.facts.model import normalize_label
from finrag.facts.table_facts import header_rows_of, split_table_chunk
from finrag.retrieve.context import ContextChunk
from finrag.retrieve.hybrid import Hit
from finrag.tables import parse_markdown_table


class Sources:
    """Citation numbers for facts, in order of first use: one per stored fact."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn
        self.by_fact: dict[int, int] = {}
        self.citations: list[Citation] = []
        self.checked: list[CheckedFact] = []
        self.chunks: list[ContextChunk] = []
        self.values: list[dict] = []

    def answer(self, question: str, text: str, calculations: list, flags: list[str]) -> Answer:
        """The facts route's answer, citing these sources."""
        return Answer(
            question=question,
            answer=text,
            route="facts",
            citations=self.citations,
            calculations=calculations,
            facts=self.checked,
            fact_values=self.values,
            flags=flags,
            chunks=self.chunks,
        )

    def cite(self, value: MetricValue) -> int:
        fact = value.fact
        if fact.id in self.by_fact:
            return self.by_fact[fact.id]
        n = len(self.citations) + 1
        self.by_fact[fact.id] = n
        chunk = fact_chunk(self.conn, fact.chunk_id, n) if fact.chunk_id is not None else None
        where = chunk.section if chunk and chunk.section else fact.statement.replace("_", " ")
        row = fact.label or (f"tagged {fact.concept}" if fact.concept else None)
        if row and fact.dimensions:  # a segment's, a region's: which one
            # A printed segment row is labelled by its member: "Americas", not twice.
            members = [m.split(":")[-1] for _, m in fact.dimensions if m != fact.label]
            row += " · " + ", ".join(members) if members else ""
        heading = column_heading(chunk.hit.content, fact.label, fact.printed) if chunk else None
        label = f"{fact.label} ({heading})" if fact.label and heading else fact.label
        quote = f"{label}: {fact.printed}" if label else fact.printed
        self.citations.append(
            Citation(
                n=n,
                document=Path(fact.document).stem,
                pages=[fact.page, fact.page],
                section=" · ".join(p for p in (where, row, value.period) if p),
                chunk_id=fact.chunk_id if fact.chunk_id is not None else 0,
                quote=quote,
                flagged=chunk.hit.flagged if chunk else None,
                path=fact.document,
                document_id=fact.document_id,
                ocr=chunk.hit.ocr if chunk else False,
            )
        )
        self.checked.append(CheckedFact(source=n, quote=quote, value=fact.printed, ok=True))
        ocr = chunk.hit.ocr if chunk else False
        self.values.append({"n": n, **value.as_dict(), **({"ocr": True} if ocr else {})})
        if chunk is not None:
            self.chunks.append(chunk)
        return n

    def marks(self, figure: Figure) -> str:
        numbers = sorted({self.cite(v) for v in figure.inputs})
        return f"[{', '.join(map(str, numbers))}]"


def column_heading(content: str, label: str | None, printed: str) -> str | None:
    """The heading of the column a cell is printed in ("Three Months Ended July 29, 2023"),
    read from the table that prints it: the row named ``label`` holding ``printed`` once.
    A quote that says its column says which period the figure is."""
    if not label or not printed:
        return None
    found = split_table_chunk(content)
    table = parse_markdown_table(found.grid) if found else None
    if table is None:
        return None
    header_rows = header_rows_of(content)
    want = normalize_label(label)
    columns = {
        j
        for row in table.rows
        if row and normalize_label(row[0]) == want
        for j, cell in enumerate(row[1:], 1)
        if cell.strip() == printed.strip()
    }
    if len(columns) != 1:
        return None
    j = columns.pop()
    words = " ".join(r[j] for r in header_rows if j < len(r) and r[j].strip())
    return " ".join(words.split()) or None


def calculate_outcome(description: str, expression: str, inputs: list[dict]) -> CalculationOutcome:
    outcome = CalculationOutcome(description, expression, inputs=inputs)
    try:
        outcome.result = calculate(expression).value
    except CalculationError as exc:
        outcome.error = str(exc)
    return outcome


def number_text(value: Decimal) -> str:
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def currency_of(value: MetricValue) -> str | None:
    unit = value.fact.unit or ""
    return unit.split("/")[0] if unit and unit not in ("shares", "pure", "%") else None


def fact_chunk(conn: psycopg.Connection, chunk_id: int, n: int) -> ContextChunk | None:
    """The chunk that prints the fact, as excerpt [n] (the chat's checks read it)."""
    row = conn.execute(
        """
        SELECT c.id, c.document_id, d.path, co.name, d.fiscal_year, d.fiscal_quarter,
               d.form_type, c.kind, c.page_start, c.page_end, c.section_path, c.content,
               1.0, NULL, NULL, NULL, NULL, c.flagged, c.ocr
        FROM chunks c JOIN documents d ON d.id = c.document_id
        LEFT JOIN companies co ON co.id = d.company_id
        WHERE c.id = %s
        """,
        (chunk_id,),
    ).fetchone()
    return ContextChunk(n, Hit(*row)) if row else None
