"""Real filings from ../shared: a 10-K PDF's cash-flow table and an EDGAR HTML 10-K's Items."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from finrag.config import load_settings
from finrag.db import open_store
from finrag.embed import get_embedder
from finrag.ingest.pipeline import ingest
from tests.conftest import SHARED

PDFS = SHARED / "financebench-dev" / "pdfs"
EDGAR = SHARED / "edgar-html"
pytestmark = pytest.mark.skipif(
    not (PDFS.is_dir() and EDGAR.is_dir()),
    reason=f"real filings not found at {SHARED} (../shared beside the repository)",
)


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory):
    home = tmp_path_factory.mktemp("filings-home")
    saved = os.environ.get("FINRAG_HOME")
    os.environ["FINRAG_HOME"] = str(home)
    settings = load_settings(embed={"backend": "hash"}, ingest={"workers": 0})
    store = open_store(settings)
    report = ingest(
        [PDFS / "3M_2018_10K.pdf", EDGAR / "aapl-10-k-2024-11-01.html"], settings, store
    )
    yield store, {Path(r.path).name: r for r in report.results}
    store.close()
    if saved is None:
        os.environ.pop("FINRAG_HOME", None)
    else:
        os.environ["FINRAG_HOME"] = saved


def chunks_of(store, name: str):
    with store.connect() as conn:
        return conn.execute(
            "SELECT c.kind, c.page_start, c.page_end, c.section_path, c.content, c.embed_text, "
            "c.tokens FROM chunks c JOIN documents d ON d.id = c.document_id "
            "WHERE d.path LIKE %s ORDER BY c.ordinal",
            ("%" + name,),
        ).fetchall()


def test_3m_cash_flow_statement_is_a_table_chunk_on_its_page(ingested) -> None:
    store, results = ingested
    result = results["3M_2018_10K.pdf"]
    assert result.status == "ingested", result.reason
    assert result.pages == 160
    assert result.metadata["company"] == "3M Company"
    assert (result.metadata["form_type"], result.metadata["fiscal_year"]) == ("10-K", 2018)
    capex = [
        c
        for c in chunks_of(store, "3M_2018_10K.pdf")
        if c[0] == "table"
        and "Purchases of property, plant and equipment" in c[4]
        and "1,577" in c[4]
    ]
    # FinanceBench's evidence for 3M's FY2018 capex is zero-indexed page 59: our page 60.
    pages = {c[1] for c in capex}
    assert 60 in pages, pages
    statement = next(c for c in capex if c[1] == 60)
    assert "Purchases of property, plant and equipment" in statement[5], "summarised for search"
    assert "(1,577)" in statement[5]


def test_apple_10k_html_items_are_sections(ingested) -> None:
    store, results = ingested
    result = results["aapl-10-k-2024-11-01.html"]
    assert result.status == "ingested", result.reason
    assert result.metadata["company"] == "Apple Inc."
    assert result.metadata["ticker"] == "AAPL"
    assert result.metadata["sources"]["ticker"] == "declared"
    chunks = chunks_of(store, "aapl-10-k-2024-11-01.html")
    items = {part.split(".")[0] for c in chunks for part in c[3] if part.startswith("Item ")}
    assert {"Item 1", "Item 1A", "Item 7", "Item 8"} <= items
    text = "\n".join(c[4] for c in chunks)
    assert "RemainingPerformanceObligation" not in text, "hidden ix:header facts stay hidden"
    assert "$391,035" in text, "'$' cells merged into their numbers"
    assert "(2,266)" in text
    assert max(c[6] for c in chunks) <= 256


@pytest.mark.parametrize(
    "name", sorted(p.name for p in EDGAR.glob("*.htm*")) if EDGAR.is_dir() else []
)
def test_every_edgar_filing_parses_with_metadata(name: str) -> None:
    from finrag.ingest.chunk import Chunker
    from finrag.ingest.metadata import resolve_metadata
    from finrag.ingest.parse.html import EdgarHtmlParser

    path = EDGAR / name
    parsed = EdgarHtmlParser().parse(path)
    meta = resolve_metadata(path, EDGAR, parsed)
    assert meta.company and meta.ticker and meta.form_type in ("10-K", "10-Q")
    assert meta.fiscal_year and meta.period_end
    embedder = get_embedder(load_settings(embed={"backend": "sentence-transformers"}).embed)
    chunks, stats = Chunker(embedder.count_tokens, max_tokens=256).chunk(parsed)
    assert stats.table_chunks > 10
    assert all(c.tokens <= 256 for c in chunks), "nothing the model would truncate"
