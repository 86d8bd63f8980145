"""One entity across filings (sql/018, issue 30): the canonical key as the store computes
it, the auditor two filers share, and graph retrieval chosen by question kind; on Apple's
FY2024 and Netflix's FY2024 10-Ks (both audited by Ernst & Young LLP) in the real
embedded Postgres."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from finrag.graph.retrieve import graph_chunks, question_kind
from finrag.retrieve import Retriever, Variant
from finrag.retrieve.retriever import uses_graph
from tests.conftest import SHARED, ingested_home

EDGAR = SHARED / "edgar-html"
APPLE = EDGAR / "aapl-10-k-2024-11-01.html"
NETFLIX = EDGAR / "nflx-10-k-2025-01-27.html"
pytestmark = pytest.mark.skipif(
    not (APPLE.is_file() and NETFLIX.is_file()),
    reason=f"the EDGAR filings are not at {EDGAR} (../shared is absent)",
)


@pytest.fixture(scope="module")
def merge_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    # The same two filings as test_kpi_cmd's store: parsed once per run (conftest).
    with ingested_home(tmp_path_factory.mktemp("graph-merge") / "home", [APPLE, NETFLIX]) as home:
        yield home


@pytest.fixture(scope="module")
def opened(merge_home: Path) -> Iterator[tuple]:
    from finrag.config import load_settings
    from finrag.db import open_store

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FINRAG_HOME", str(merge_home))
        mp.setenv("FINRAG_EMBED__BACKEND", "hash")
        settings = load_settings(ingest={"workers": 0})
        with open_store(settings) as store:
            yield settings, store


@pytest.fixture
def conn(opened) -> Iterator[psycopg.Connection]:
    with opened[1].connect() as connection:
        yield connection
        connection.rollback()


def _key(conn: psycopg.Connection, kind: str, name: str) -> str:
    from finrag.graph.extract import normalize_name

    return conn.execute(
        "SELECT entity_key(%s, %s, %s)", (kind, name, normalize_name(name))
    ).fetchone()[0]


def test_the_key_merges_the_forms_filings_print_one_name_in(conn) -> None:
    # Best Buy's 10-K signs "Corie S. Barry", its 10-Q "Corie Barry".
    assert _key(conn, "person", "Corie S. Barry") == _key(conn, "person", "Corie Barry")
    assert _key(conn, "person", "CORIE S. BARRY") == "corie barry"
    assert _key(conn, "person", "Robert K. Ortberg Jr.") == "robert ortberg"
    assert _key(conn, "person", "A. Brooke Seawell") == "brooke seawell"
    # The legal forms of organizations, as EDGAR and the filings print them.
    for a, b in (
        ("Best Buy Co., Inc.", "Best Buy"),
        ("Ernst & Young LLP", "Ernst and Young"),
        ("The Procter & Gamble Company", "Procter & Gamble"),
        ("Wells Fargo & Company/MN", "Wells Fargo"),
        ("Corning Incorporated", "Corning"),
        ("Samsung Electronics Co., Ltd.", "Samsung Electronics"),
        ("Nvidia Corp", "NVIDIA Corporation"),
    ):
        assert _key(conn, "company", a) == _key(conn, "auditor", b), (a, b)
    # Different names stay apart: a person's first name, an auditor's other firm.
    assert _key(conn, "person", "Corie Barry") != _key(conn, "person", "Carrie Barry")
    assert _key(conn, "auditor", "Deloitte & Touche LLP") != _key(conn, "auditor", "Deloitte")
    # Segments and places are kept as printed (normalized): "International" is a word.
    assert _key(conn, "segment", "International Inc") == "international inc"
    assert _key(conn, "company", "Company") == "company"  # nothing left: the name stays


def test_the_auditor_of_two_filers_is_one_entity(conn) -> None:
    rows = conn.execute(
        "SELECT e.canonical, count(DISTINCT e.document_id), count(DISTINCT e.company_id), "
        "array_agg(DISTINCT e.name) FROM entities e WHERE e.kind = 'auditor' GROUP BY 1"
    ).fetchall()
    assert rows == [("ernst & young", 2, 2, ["Ernst & Young LLP"])]
    filers = dict(
        conn.execute(
            "SELECT canonical, count(*) FROM entities WHERE kind = 'company' GROUP BY 1"
        ).fetchall()
    )
    assert filers == {"apple": 1, "netflix": 1}


def _stated_by(conn, chunk_ids: list[int]) -> set[str]:
    """The filers whose audited_by relations the chunks state."""
    return {
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT s.canonical FROM relations r JOIN entities s ON s.id = r.subject_id "
            "WHERE r.predicate = 'audited_by' AND r.chunk_id = ANY(%s)",
            (chunk_ids,),
        )
    }


def test_a_shared_auditor_question_reaches_the_other_filers_report(conn) -> None:
    apple = conn.execute(
        "SELECT d.id FROM documents d JOIN companies c ON c.id = d.company_id "
        "WHERE c.name ILIKE 'apple%'"
    ).fetchone()[0]
    # The question names Apple: its filter allows Apple's 10-K only, and the graph goes
    # through the auditor's canonical key to Netflix's report.
    shared = graph_chunks(
        conn, "Which other companies share Apple's auditor?", [apple], company_named=True
    )
    assert _stated_by(conn, shared.chunk_ids) == {"apple", "netflix"}
    assert _stated_by(conn, shared.chunk_ids[:1]) == {"apple"}  # the company asked first
    # Asked about Apple alone, the graph stays in Apple's filing.
    own = graph_chunks(conn, "Who audits Apple?", [apple], company_named=True)
    assert own.chunk_ids and _stated_by(conn, own.chunk_ids) == {"apple"}
    # A question that names only the company links nothing through its key.
    assert graph_chunks(conn, "What was Apple's revenue?", None, company_named=True).chunk_ids == []


def test_the_question_kind_picks_graph_retrieval(opened) -> None:
    settings, store = opened
    assert question_kind("Who audits Apple?") == "entity"
    assert question_kind("Who is Netflix's chief financial officer?") == "entity"
    assert question_kind("Which segments does Apple report?") == "structure"
    assert question_kind("What was Apple's revenue in fiscal 2024?") == "other"
    variant = Variant.parse("hybrid+filters+pages+graph:entity")
    assert variant.name == "hybrid+filters+pages+graph:entity"
    assert uses_graph(variant, "Who audits Apple?")
    assert not uses_graph(variant, "What was Apple's revenue in fiscal 2024?")
    assert Variant.parse("hybrid+graph:structure+graph:entity").graph_kinds == (
        "entity",
        "structure",
    )
    # The default (retrieve.graph_kinds) is what `ask` and `chat` search with.
    retriever = Retriever(store, settings)
    assert retriever.default_variant().graph_kinds == tuple(settings.retrieve.graph_kinds)
    asked = retriever.retrieve("Who audits Apple?", k=5, variant=variant)
    assert "graph" in asked.timings_ms
    with store.connect() as c:
        hit_chunks = [cid for h in asked.hits for cid in h.chunk_ids]
        assert _stated_by(c, hit_chunks) == {"apple"}
    other = retriever.retrieve("What was Apple's revenue in fiscal 2024?", k=5, variant=variant)
    assert "graph" not in other.timings_ms


def test_ask_searches_with_the_graph_for_the_kinds_the_settings_name(opened) -> None:
    from finrag.answer.pipeline import Asker

    settings, store = opened
    chosen = settings.model_copy(
        update={"retrieve": settings.retrieve.model_copy(update={"graph_kinds": ["entity"]})}
    )
    asker = Asker(store, chosen)
    found, _ = asker.search("Who audits Netflix?")
    assert found.variant.endswith("+graph:entity") and "graph" in found.timings_ms
    with store.connect() as c:
        assert _stated_by(c, [cid for h in found.hits for cid in h.chunk_ids]) == {"netflix"}
    found, _ = asker.search("What was Netflix's revenue in 2024?")
    assert "graph" not in found.timings_ms
    off = settings.model_copy(
        update={"retrieve": settings.retrieve.model_copy(update={"graph_kinds": []})}
    )
    found, _ = Asker(store, off).search("Who audits Netflix?")
    assert "graph" not in found.timings_ms
