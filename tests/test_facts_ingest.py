"""Facts through `ingest`: extracted with their document, skipped with it when unchanged,
re-extracted by --rebuild, removed with it; EDGAR filings bring their iXBRL tags."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from finrag.db.documents import remove_document
from finrag.facts import model
from finrag.facts.store import count_facts, query_facts
from finrag.ingest import pipeline
from finrag.ingest.pipeline import ingest
from tests.conftest import SHARED
from tests.test_facts_tables import APPLE_OPERATIONS

EDGAR = SHARED / "edgar-html"


def _filing(folder: Path) -> Path:
    """A small 10-K in Markdown whose statement of operations is Apple's."""
    body = "\n".join(APPLE_OPERATIONS.splitlines()[1:])
    path = folder / "APPLE_2024_10K.md"
    path.write_text(
        "# Apple Inc. Form 10-K for the fiscal year ended September 28, 2024\n\n"
        "## Item 8. Financial Statements\n\n"
        "### CONSOLIDATED STATEMENTS OF OPERATIONS\n\n" + body
    )
    return path


def test_facts_are_extracted_kept_and_rebuilt_with_their_document(
    store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, st = store
    path = _filing(tmp_path)
    first = ingest([path], settings, st)
    assert first.results[0].status == "ingested", first.results[0].reason
    assert first.results[0].facts == 24
    doc_id = first.results[0].document_id
    with st.connect() as conn:
        [sales] = query_facts(
            conn, document_id=doc_id, labels=["total net sales"], fiscal_year=2023
        )
    assert sales.value == Decimal("383285000000")
    assert sales.statement == model.INCOME

    again = ingest([path], settings, st)
    assert again.results[0].status == "unchanged"
    with st.connect() as conn:
        assert count_facts(conn, doc_id) == {"table": 24}, "an unchanged file keeps its facts"

    # A new extraction version: the document reads as stale until --rebuild redoes it.
    monkeypatch.setattr(pipeline, "FACTS_VERSION", pipeline.FACTS_VERSION + 1)
    stale = ingest([path], settings, st)
    assert stale.results[0].status == "stale"
    rebuilt = ingest([path], settings, st, rebuild=True)
    assert rebuilt.results[0].status == "replaced"
    assert rebuilt.results[0].facts == 24
    new_id = rebuilt.results[0].document_id
    with st.connect() as conn:
        assert count_facts(conn, doc_id) == {}
        assert count_facts(conn, new_id) == {"table": 24}
        with conn.transaction():
            remove_document(conn, new_id)
        assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0


@pytest.mark.skipif(not EDGAR.is_dir(), reason=f"EDGAR filings not found at {EDGAR}")
def test_an_edgar_filing_brings_its_tags_and_names_its_cells(store) -> None:
    settings, st = store
    report = ingest([EDGAR / "aapl-10-q-2025-08-01.html"], settings, st)
    result = report.results[0]
    assert result.status == "ingested", result.reason
    with st.connect() as conn:
        counts = count_facts(conn, result.document_id)
        assert counts["ixbrl"] == 685 + 31, "every ix:nonFraction, and the cover's text facts"
        cover = conn.execute(
            "SELECT count(*) FROM facts WHERE document_id = %s AND concept LIKE 'dei:%%' "
            "AND value IS NULL",
            (result.document_id,),
        ).fetchone()[0]
        assert cover == 31, "symbols, exchanges, 12(b) titles, filer category..."
        tagged = query_facts(
            conn,
            document_id=result.document_id,
            concepts=["us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax"],
            fiscal_year=2025,
            fiscal_quarter=3,
            entity_total=True,
        )
    # f-59, 94,036 for the quarter ended June 28, 2025, is tagged on the income statement
    # (and again in a note); the statement's printed cell takes the tag's concept.
    [cell] = [f for f in tagged if f.source == "table" and f.statement == model.INCOME]
    assert cell.label == "Total net sales"
    assert cell.value == Decimal("94036000000")
    [tag] = [f for f in tagged if f.source == "ixbrl" and f.page == cell.page]
    assert tag.value == cell.value
    assert (tag.statement, tag.label) == (model.INCOME, "Total net sales"), "named by its row"
    assert cell.chunk_id is not None and tag.chunk_id is not None
    assert {f.page for f in tagged if f.source == "ixbrl"} == {f.page for f in tagged}
