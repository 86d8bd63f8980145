"""The knowledge graph (sql/011, finrag.graph): each extraction rule on real filing text,
the tables filled at ingest and emptied with their document, the hybrid+filters+graph
variant, and `finrag graph`; on Best Buy's Q2 FY24 10-Q in the real embedded Postgres."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from finrag.db.documents import remove_document
from finrag.graph.extract import (
    ChunkText,
    auditor_rule,
    executive_rule,
    extract_graph,
    incorporation_rule,
    normalize_name,
    officer_list_rule,
    product_rule,
    segment_rule,
    subsidiary_rule,
)
from finrag.graph.retrieve import asked_predicates, graph_chunks
from finrag.retrieve import Retriever, Variant
from tests.conftest import REPO, clean_env, ingested_home, run_finrag

BESTBUY = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"


def _chunk(content: str, *, kind: str = "text", path: tuple[str, ...] = (), cid: int = 1):
    return ChunkText(cid, kind, 7, path, None, content)


def _found(rule, chunk) -> list[tuple]:
    return [(t.predicate, t.subject, t.object_kind, t.object_name) for t in rule(chunk)]


# ---- rules, on text as the filings print it --------------------------------------------


def test_auditor_from_the_signature_of_its_report() -> None:
    # Best Buy's FY2023 10-K, page 37 (the auditor's report), as parsed.
    text = (
        "and comparing those to the rate selected by management. - /s/ Deloitte & Touche LLP "
        "Minneapolis, Minnesota March 17, 2023 We have served as the Company's auditor since 1994."
    )
    triples = list(auditor_rule(_chunk(text)))
    assert [(t.predicate, t.object_kind, t.object_name) for t in triples] == [
        ("audited_by", "auditor", "Deloitte & Touche LLP")
    ]
    assert "deloitte" in triples[0].object_aliases
    assert "auditor since 1994" in triples[0].evidence
    # A consent in the exhibit index names the same firm; "and" and "&" are one name.
    consent = (
        "|23|Consent of PricewaterhouseCoopers LLP, Independent Registered Public Accounting Firm.|"
    )
    assert _found(auditor_rule, _chunk(consent)) == [
        ("audited_by", None, "auditor", "PricewaterhouseCoopers LLP")
    ]
    assert normalize_name("Deloitte and Touche LLP") == normalize_name("Deloitte & Touche LLP")


def test_segments_from_the_note_sentence_and_the_mdna_headings() -> None:
    sentence = (
        "We have two reportable segments: Domestic and International. The Domestic segment is "
        "comprised of our operations in all states, districts and territories of the U.S."
    )
    assert _found(segment_rule, _chunk(sentence)) == [
        ("has_segment", None, "segment", "Domestic"),
        ("has_segment", None, "segment", "International"),
    ]
    corning = (
        "Corning has five reportable segments: Optical Communications, Display Technologies, "
        "Specialty Materials, Environmental Technologies and Life Sciences."
    )
    assert [t[3] for t in _found(segment_rule, _chunk(corning))] == [
        "Optical Communications",
        "Display Technologies",
        "Specialty Materials",
        "Environmental Technologies",
        "Life Sciences",
    ]
    heading = _chunk("Selected financial data ...", path=("Item 2. MD&A", "Domestic Segment"))
    assert _found(segment_rule, heading) == [("has_segment", None, "segment", "Domestic")]
    # Prose about segments is not a list of them.
    prose = "Our operating segments are evaluated by the chief operating decision maker monthly."
    assert _found(segment_rule, _chunk(prose)) == []
    assert _found(segment_rule, _chunk("x", path=("Reportable Segment",))) == []


def test_products_by_segment_from_a_table_split_over_two_chunks() -> None:
    caption = "Reportable segment and product category revenue information was as follows:"
    head = "|Revenue by reportable segment|Three Months Ended July 29, 2023|\n|---|---|\n"
    first = _chunk(
        f"Item 1 > 11. Segments\n{caption}\n\n{head}|Domestic|$8,890|\n|International|693|\n"
        "|Revenue by product category||\n|Domestic:||\n|Appliances|1,384|",
        kind="table",
        cid=1,
    )
    second = _chunk(
        f"Item 1 > 11. Segments\n{caption}\n\n{head}|Services|550|\n"
        "|Total Domestic revenue|$8,890|\n|International:||\n|Appliances|92|\n|Other|10|",
        kind="table",
        cid=2,
    )
    carry: dict = {}
    found = [
        (t.subject, t.object_name, t.chunk_id)
        for chunk in (first, second)
        for t in product_rule(chunk, carry)
    ]
    assert found == [
        (("segment", "Domestic"), "Appliances", 1),
        (("segment", "Domestic"), "Services", 2),  # the segment carried over the split
        (("segment", "International"), "Appliances", 2),
    ]


def test_officers_from_signatures_and_the_executive_officers_table() -> None:
    signatures = (
        "BEST BUY CO., INC. (Registrant) Date: September 1, 2023 By: /s/ CORIE BARRY Corie Barry "
        "Chief Executive Officer Date: September 1, 2023 By: /s/ MATTHEW BILUNAS Matthew "
        "Bilunas Chief Financial Officer"
    )
    triples = list(executive_rule(_chunk(signatures)))
    assert [(t.predicate, t.object_name, t.object_aliases) for t in triples] == [
        ("has_executive", "Corie Barry", ("ceo",)),
        ("has_executive", "Matthew Bilunas", ("cfo",)),
    ]
    directors = "|/s/ David W. Kenny|Director|March 17, 2023|"
    assert _found(executive_rule, _chunk(directors)) == [
        ("has_director", None, "person", "David W. Kenny")
    ]
    # A signature table read by columns puts the next cell after the name: not a title.
    columns = "/s/ Pamela J. Craig|Capacity Chairman of the Board of Directors, Chief Executive"
    assert _found(executive_rule, _chunk(columns)) == []
    table = _chunk(
        "|Name|Age|Position with the Company|\n|---|---|---|\n|Corie S. Barry|47|Chief "
        "Executive Officer|",
        kind="table",
        path=("Item 4. Mine Safety Disclosures.", "Information about our Executive Officers"),
    )
    (officer,) = officer_list_rule(table)
    assert (officer.object_name, officer.object_aliases) == (
        "Corie S. Barry",
        ("ceo", "Corie Barry"),
    )


def test_subsidiaries_and_places_from_exhibit_21_and_the_laws_they_are_organized_under() -> None:
    exhibit = _chunk(
        "Subsidiaries of the Registrant\n|Corning GmbH|Germany|\n"
        "|Corning Hungary Data Services Limited Liability Company|Hungary|\n|Name|Jurisdiction|",
        kind="table",
    )
    assert _found(subsidiary_rule, exhibit) == [
        ("has_subsidiary", None, "subsidiary", "Corning GmbH"),
        ("located_in", ("subsidiary", "Corning GmbH"), "place", "Germany"),
        (
            "has_subsidiary",
            None,
            "subsidiary",
            "Corning Hungary Data Services Limited Liability Company",
        ),
        (
            "located_in",
            ("subsidiary", "Corning Hungary Data Services Limited Liability Company"),
            "place",
            "Hungary",
        ),
    ]
    prose = _chunk(
        "The notes were issued by Best Buy Canada Ltd., a corporation organized under the laws "
        "of the Province of Ontario, and guaranteed by the Company."
    )
    assert _found(subsidiary_rule, prose) == [
        ("has_subsidiary", None, "subsidiary", "Best Buy Canada Ltd."),
        ("located_in", ("subsidiary", "Best Buy Canada Ltd."), "place", "Ontario"),
    ]
    corning = "The present corporation was incorporated in the State of New York in December 1936."
    assert _found(incorporation_rule, _chunk(corning)) == [
        ("incorporated_in", None, "place", "New York")
    ]


def test_a_heading_repeated_over_a_section_is_one_relation_at_its_first_chunk() -> None:
    path = ("Item 2. MD&A", "International Segment")
    graph = extract_graph([_chunk("a", path=path, cid=1), _chunk("b", path=path, cid=2)])
    assert [(t.object_name, t.chunk_id) for t in graph.triples] == [("International", 1)]
    assert graph.chunks_read == 2


def test_question_words_name_the_relations_asked_for() -> None:
    assert asked_predicates("Who audits Best Buy?") == {"audited_by"}
    assert asked_predicates("Who is Best Buy's CEO?") == {"has_executive"}
    assert asked_predicates("Which segments does Best Buy report?") == {"has_segment"}
    assert asked_predicates("What was Best Buy's revenue in Q2?") == set()


# ---- at ingest, in the store -----------------------------------------------------------


@pytest.fixture(scope="module")
def graph_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with ingested_home(tmp_path_factory.mktemp("graph") / "home", [BESTBUY]) as home:
        yield home


@pytest.fixture
def opened(graph_home: Path, monkeypatch: pytest.MonkeyPatch):
    from finrag.config import load_settings
    from finrag.db import open_store

    monkeypatch.setenv("FINRAG_HOME", str(graph_home))
    settings = load_settings(ingest={"workers": 0})
    with open_store(settings) as store:
        yield settings, store


@pytest.fixture
def conn(opened) -> Iterator[psycopg.Connection]:
    with opened[1].connect() as connection:
        yield connection


def test_ingest_fills_the_graph_from_the_filing(conn) -> None:
    entities = {
        (kind, name): aliases
        for kind, name, aliases in conn.execute("SELECT kind, name, aliases FROM entities")
    }
    assert ("segment", "Domestic") in entities
    assert ("segment", "International") in entities
    assert entities[("person", "Corie Barry")] == ["ceo"]
    assert ("product", "Appliances") in entities
    assert ("company", "Best Buy Co., Inc.") in entities
    assert not any(kind == "auditor" for kind, _ in entities)  # a 10-Q has no auditor's report
    # Every relation points at a chunk of its document, on the page that chunk starts.
    rows = conn.execute(
        "SELECT r.predicate, o.name, r.page, c.page_start, c.content FROM relations r "
        "JOIN entities o ON o.id = r.object_id JOIN chunks c ON c.id = r.chunk_id "
        "WHERE c.document_id = r.document_id"
    ).fetchall()
    assert len(rows) == conn.execute("SELECT count(*) FROM relations").fetchone()[0]
    segments = [r for r in rows if r[0] == "has_segment" and "two reportable segments" in r[4]]
    assert {r[1] for r in segments} == {"Domestic", "International"}
    assert all(r[2] == r[3] == 14 for r in segments)


def test_the_graph_goes_with_its_document(conn) -> None:
    (doc_id,) = conn.execute("SELECT id FROM documents").fetchone()
    assert conn.execute("SELECT count(*) FROM relations").fetchone()[0] > 10
    remove_document(conn, doc_id)  # what `finrag docs rm` does
    assert conn.execute("SELECT count(*) FROM entities").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM relations").fetchone()[0] == 0
    conn.rollback()  # the module's store keeps its document


def test_graph_retrieval_finds_the_chunk_that_states_the_relation(opened, conn) -> None:
    settings, store = opened
    (doc_id,) = conn.execute("SELECT id FROM documents").fetchone()
    match = graph_chunks(
        conn, "Which Best Buy segment sells appliances?", [doc_id], company_named=True
    )
    assert "product:Appliances" in match.linked
    stated = conn.execute(
        "SELECT r.chunk_id FROM relations r JOIN entities o ON o.id = r.object_id "
        "WHERE r.predicate = 'sells' AND o.name = 'Appliances'"
    ).fetchall()
    assert match.chunk_ids[0] in {r[0] for r in stated}
    # A question the graph has no relation for adds nothing.
    assert (
        graph_chunks(conn, "What was Best Buy's revenue?", [doc_id], company_named=True).chunk_ids
        == []
    )
    conn.rollback()
    retriever = Retriever(store, settings)
    result = retriever.retrieve(
        "Which Best Buy segment sells appliances?",
        k=5,
        variant=Variant.parse("hybrid+filters+graph"),
    )
    assert result.variant == "hybrid+filters+graph"
    assert "graph" in result.timings_ms
    assert any(h.chunk_id in {r[0] for r in stated} for h in result.hits)


def test_finrag_graph_json(graph_home: Path) -> None:
    env = clean_env(FINRAG_HOME=str(graph_home), FINRAG_EMBED__BACKEND="hash")
    done = run_finrag("graph", "BBY", "--json", env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["company"] == "Best Buy Co., Inc."
    assert [e["name"] for e in data["entities"]["segment"]] == ["Domestic", "International"]
    ceo = next(
        r
        for r in data["relations"]
        if r["predicate"] == "has_executive" and r["object"] == "Corie Barry"
    )
    assert ceo["document"] == "BESTBUY_2024Q2_10Q.pdf" and ceo["page"] == 26
    missing = run_finrag("graph", "Nobody Inc", env=env)
    assert missing.returncode != 0 and "Nobody Inc" in missing.stderr


def test_finrag_graph_rebuild_extracts_a_store_without_a_graph(graph_home: Path, conn) -> None:
    # A filing ingested before sql/011 has chunks and no graph.
    conn.execute("DELETE FROM entities")
    conn.commit()
    env = clean_env(FINRAG_HOME=str(graph_home), FINRAG_EMBED__BACKEND="hash")
    empty = run_finrag("graph", "BBY", env=env)
    assert empty.returncode == 0 and "--rebuild" in empty.stderr
    done = run_finrag("graph", "BBY", "--rebuild", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert "rebuilt the graph of 1 filing(s)" in done.stderr
    data = json.loads(done.stdout)
    assert [e["name"] for e in data["entities"]["segment"]] == ["Domestic", "International"]
