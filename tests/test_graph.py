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
from finrag.errors import ExitCode
from finrag.graph.extract import (
    ChunkText,
    auditor_rule,
    executive_rule,
    extract_graph,
    incorporation_rule,
    normalize_name,
    officer_list_rule,
    officer_prose_rule,
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


def test_officers_as_edgar_filings_print_them() -> None:
    # Netflix's FY2024 10-K signatures: "/ S /" and small capitals split by the HTML.
    netflix = (
        "/ S / T ED S ARANDOS|Co-Chief Executive Officer and Director (principal executive "
        "officer)|January 27, 2025| |Ted Sarandos||| |/ S / S PENCER N EUMANN|Chief Financial "
        "Officer (principal financial officer)|January 27, 2025| |Spencer Neumann|||"
    )
    assert [
        (t.object_name, t.object_aliases) for t in executive_rule(_chunk(netflix, kind="table"))
    ] == [("Ted Sarandos", ("ceo",)), ("Spencer Neumann", ("cfo",))]
    # Wells Fargo's: the name, a separator row, the name again, then the title.
    wells = (
        "|By:|/s/ CHARLES W. SCHARF|\n|---|---|\n||Charles W. Scharf|\n||President and Chief "
        "Executive Officer|"
    )
    assert [t.object_name for t in executive_rule(_chunk(wells, kind="table"))] == [
        "Charles W. Scharf"
    ]
    # Its officer list in prose, and Procter & Gamble's 10-Q naming its officers in Item 4.
    prose = (
        "Charles W. Scharf (age 59) Chief Executive Officer and President since October 2019. "
        "Mr. Scharf has served with the Company for 5 years."
    )
    (ceo,) = officer_prose_rule(_chunk(prose))
    assert (ceo.predicate, ceo.object_name, ceo.object_aliases) == (
        "has_executive",
        "Charles W. Scharf",
        ("ceo", "Charles Scharf"),
    )
    item4 = (
        "The Company’s Chairman of the Board, President and Chief Executive Officer, Jon R. "
        "Moeller, and the Company’s Chief Financial Officer, Andre Schulten, performed an "
        "evaluation of the Company’s disclosure controls and procedures."
    )
    assert [(t.object_name, t.object_aliases) for t in officer_prose_rule(_chunk(item4))] == [
        ("Jon R. Moeller", ("ceo", "Jon Moeller")),
        ("Andre Schulten", ("cfo",)),
    ]
    # A director's other employer is not a title at the filer.
    assert list(officer_prose_rule(_chunk("Jane Q. Doe (age 61) Retired President of Acme."))) == []


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
    # Money lines that name a party's word without asking for a party.
    for money in (
        "What was Apple's revenue from contracts with customers in fiscal 2024?",
        "How much did Boeing spend on purchases of property, plant and equipment?",
        "How many of its own shares did Apple buy back?",
        "What assets do NVIDIA's variable interest entities hold?",
    ):
        assert asked_predicates(money) == set(), money
    assert asked_predicates("Who are NVIDIA's largest customers?") == {"has_customer"}
    assert asked_predicates("Which subsidiaries does Apple own?") == {"has_subsidiary"}
    assert asked_predicates("Which companies did Salesforce acquire?") == {"acquired"}
    # Across filers only when the words ask for it: not a stock's shares.
    from finrag.graph.retrieve import _SHARED

    assert _SHARED.search("Which other companies share Apple's auditor?")
    assert _SHARED.search("Do Apple and Netflix share an auditor?")
    assert not _SHARED.search("Who audits Apple's diluted earnings per share?")
    assert not _SHARED.search("How many shares did Apple repurchase, and who audits it?")


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
    assert empty.returncode == ExitCode.NO_ANSWER and "--rebuild" in empty.stderr
    assert "nothing found: no graph for" in empty.stderr
    done = run_finrag("graph", "BBY", "--rebuild", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert "rebuilt the graph of 1 filing(s)" in done.stderr
    data = json.loads(done.stdout)
    assert [e["name"] for e in data["entities"]["segment"]] == ["Domestic", "International"]


# ---- the model's reading (ingest --graph llm), with a scripted model --------------------

CORNING_DISPLAY = ChunkText(
    9,
    "text",
    6,
    ("PART I", "Item 1. Business", "Display Technologies Segment"),
    "business",
    # Corning's FY2022 10-K, page 6, as parsed.
    "Corning Gorilla Glass is sold in China. "  # (a made-up sentence, for the test)
    "We are the largest worldwide producer of glass substrates for flat panel displays. "
    "Our principal competitors include AGC Inc. and Nippon Electric Glass Co.",
)


def _reading(*relations: tuple[str, str, str]):
    from finrag.graph.llm_pass import PassageReading, ReadRelation

    # Built, not validated: more relations than one reply may hold, to test them all at once.
    return PassageReading.model_construct(
        relations=[ReadRelation(subject=s, relation=r, object=o) for s, r, o in relations]
    )


def test_a_read_relation_is_kept_only_when_the_passage_states_it() -> None:
    from finrag.graph.llm_pass import ground

    reading = _reading(
        ("Corning", "competes_with", "AGC Inc."),
        ("Corning", "competes_with", "Schott AG"),  # named on the next passage, not this one
        ("we", "has_customer", "customers"),  # no name
        ("Corning Incorporated", "has_customer", "Corning"),  # the filer itself
        ("Specialty Materials", "competes_with", "AGC Inc."),  # a segment not printed here
        ("Corning", "sells", "glass substrates"),  # printed, but no proper name
        ("Corning", "has_customer", "China"),  # printed, but no word says it buys
        ("Corning", "sells", "Corning Gorilla Glass"),  # "is sold", in its sentence
        ("Display Technologies", "competes_with", "Nippon Electric Glass Co."),  # a heading
        # A small model's labels: the sentence says competitors, so competitors they are.
        ("Corning", "has_customer", "AGC Inc."),  # the same relation again: kept once
        ("Corning", "acquired", "Nippon Electric Glass Co."),
        ("Corning", "has_subsidiary", "Nippon Electric Glass Co."),
        ("Corning", "located_in", "Nippon Electric Glass Co."),  # not between companies
    )
    filer = {"corning", "corning incorporated", "glw"}
    kept, dropped = ground(reading, CORNING_DISPLAY, filer, frozenset({"display technologies"}))
    nippon = "Nippon Electric Glass Co."
    assert [(t.subject, t.predicate, t.object_kind, t.object_name) for t in kept] == [
        (None, "competes_with", "competitor", "AGC Inc."),
        (None, "sells", "product", "Corning Gorilla Glass"),
        (("segment", "Display Technologies"), "competes_with", "competitor", nippon),
        (None, "competes_with", "competitor", nippon),
    ]
    assert dropped == 7
    assert all(t.extractor == "llm" and t.page == 6 and t.chunk_id == 9 for t in kept)
    assert "AGC Inc." in kept[0].evidence
    # A segment the rules did not find is no subject: the relation is dropped.
    assert ground(reading, CORNING_DISPLAY, filer)[1] == 8
    # A country is no customer, though the sentence says "customers" (Corning, page 4).
    plants = _chunk(
        "We have display glass manufacturing operations in China, South Korea, Japan and "
        "Taiwan, and serve customers worldwide."
    )
    assert ground(_reading(("Corning", "has_customer", "Japan")), plants, filer) == ([], 1)
    # One the list lacks, known to the rules from Exhibit 21, likewise.
    as_customer = _reading(("Corning", "has_customer", "Taiwan Province"))
    plants = _chunk("Operations in Taiwan Province serve customers.")
    assert len(ground(as_customer, plants, filer)[0]) == 1
    known = frozenset({"taiwan province"})
    assert ground(as_customer, plants, filer, places=known) == ([], 1)


def test_the_passages_read_first_are_the_ones_that_name_competitors_and_customers() -> None:
    from finrag.graph.llm_pass import choose_passages

    chunks = [
        _chunk("Net revenue was $9.6 billion, down 8%.", cid=1),
        CORNING_DISPLAY,
        _chunk("|Customer|Revenue|\n|---|---|\n|A|1|", kind="table", cid=3),
        _chunk("We have two reportable segments: Domestic and International.", cid=4),
        _chunk(  # a biography names former employers: no relation of the filer's
            "Ms. Seetharam joined Corning in November 2022. Prior to joining Corning, she "
            "served at General Electric, a customer and competitor of Baker Hughes Company.",
            path=("Item 1. Business", "Soumya Seetharam Senior Vice President"),
            cid=5,
        ),
    ]
    assert [c.id for c in choose_passages(chunks, 5)] == [9]  # one weak cue is not enough
    assert choose_passages(chunks, 0) == []


def test_the_reading_stops_at_its_budget_and_after_failing_calls() -> None:
    import time

    from finrag.errors import ModelNotAvailable
    from finrag.graph.llm_pass import read_passages
    from finrag.llm.fake import FakeLLM

    passages = [
        ChunkText(i, "text", i, ("Competition",), "business", CORNING_DISPLAY.content)
        for i in range(6)
    ]
    names = {"corning"}

    def slow(_messages):
        time.sleep(0.2)
        return {"relations": [{"subject": "we", "relation": "competes_with", "object": "AGC Inc."}]}

    cut = read_passages(
        passages, FakeLLM([slow] * 6), company="Corning", filer_names=names, budget_s=0.3,
        max_chunks=6,
    )  # fmt: skip
    assert 1 <= cut.chunks_read <= 2 and not cut.complete
    assert cut.relations == cut.chunks_read and cut.candidates == 6
    failing = read_passages(
        passages, FakeLLM([{"__error__": "no JSON"}] * 6), company="Corning",
        filer_names=names, budget_s=60, max_chunks=6,
    )  # fmt: skip
    assert (failing.chunks_read, failing.failed, failing.complete) == (3, 3, False)
    assert len(failing.errors) == 3 and "no JSON" in failing.errors[0]

    def gone(_messages):
        raise ModelNotAvailable("no model")

    with pytest.raises(ModelNotAvailable):
        read_passages(
            passages, FakeLLM([gone]), company="Corning", filer_names=names, budget_s=60,
            max_chunks=6,
        )  # fmt: skip


def _health_reader(messages) -> dict:
    """A model that names Best Buy Health where the passage prints it, and always invents
    a competitor the 10-Q never names."""
    passage = messages[-1]["content"]
    relations = [{"subject": "Best Buy", "relation": "competes_with", "object": "Amazon"}]
    if "Best Buy Health" in passage:
        relations.append({"subject": "Domestic", "relation": "sells", "object": "Best Buy Health"})
    return {"relations": relations}


def test_ingest_graph_llm_reads_a_stored_filing_once_per_model(
    opened, conn, monkeypatch: pytest.MonkeyPatch
) -> None:
    from finrag.config import load_settings
    from finrag.errors import ModelNotAvailable
    from finrag.ingest.pipeline import ingest
    from finrag.llm.fake import FakeLLM

    monkeypatch.setenv("FINRAG_EMBED__BACKEND", "hash")  # as the module's store was ingested
    settings = load_settings(ingest={"workers": 0, "graph": "llm"})
    store = opened[1]
    model = FakeLLM([_health_reader] * 50)
    report = ingest([BESTBUY], settings, store, llm=model)
    (result,) = report.results
    assert result.status == "unchanged"  # the file is not parsed again: only read for the graph
    graph = result.graph
    assert graph["model"] == "fake:scripted" and graph["complete"]
    assert graph["chunks_read"] == graph["candidates"] == len(model.calls) >= 1
    assert graph["dropped"] == graph["chunks_read"]  # Amazon, every time
    assert graph["relations"] >= 1
    read = conn.execute(
        "SELECT s.kind, s.name, r.predicate, o.kind, o.name, r.page FROM relations r "
        "JOIN entities s ON s.id = r.subject_id JOIN entities o ON o.id = r.object_id "
        "WHERE r.extractor = 'llm'"
    ).fetchall()
    assert ("segment", "Domestic", "sells", "product", "Best Buy Health", 14) in read
    assert not conn.execute("SELECT 1 FROM entities WHERE name = 'Amazon'").fetchone()
    rules = conn.execute(
        "SELECT count(*) FROM relations WHERE extractor = 'rules' AND predicate = 'has_segment'"
    ).fetchone()[0]
    assert rules >= 2  # the rules' graph is written with it, not replaced by it
    assert conn.execute("SELECT model, complete FROM graph_runs").fetchall() == [
        ("fake:scripted", True)
    ]
    conn.rollback()
    # The graph retriever links the name the model read to the passage that prints it.
    (doc_id,) = conn.execute("SELECT id FROM documents").fetchone()
    match = graph_chunks(
        conn, "Which Best Buy segment holds Best Buy Health?", [doc_id], company_named=True
    )
    assert "product:Best Buy Health" in match.linked
    assert conn.execute(
        "SELECT page_start FROM chunks WHERE id = %s", (match.chunk_ids[0],)
    ).fetchone() == (14,)
    conn.rollback()
    # Ingested again with the same model: nothing is read; another model reads it again.
    again = ingest([BESTBUY], settings, store, llm=FakeLLM([]))
    assert again.results[0].graph["skipped"] == "read before by the same model"
    other = FakeLLM([_health_reader] * 50, model="another")
    assert ingest([BESTBUY], settings, store, llm=other).results[0].graph["chunks_read"] >= 1
    assert conn.execute("SELECT model FROM graph_runs").fetchall() == [("fake:another",)]
    conn.rollback()
    # No model at all: the error says the files are stored and how to finish.

    def gone(_messages):
        raise ModelNotAvailable("llama.cpp could not load the model")

    with pytest.raises(ModelNotAvailable, match="every file is stored") as raised:
        ingest([BESTBUY], settings, store, llm=FakeLLM([gone], model="third"))
    assert "run the same ingest again" in raised.value.hint
    assert conn.execute("SELECT model FROM graph_runs").fetchall() == [("fake:another",)]
    conn.rollback()


def test_finrag_ingest_graph_llm_and_finrag_graph_show_what_the_model_read(
    graph_home: Path, tmp_path: Path
) -> None:
    reply = {
        "relations": [
            {"subject": "Domestic", "relation": "sells", "object": "Best Buy Health"},
            {"subject": "we", "relation": "competes_with", "object": "Amazon"},
        ]
    }
    script = tmp_path / "graph-replies.json"
    script.write_text(json.dumps([reply] * 50))
    env = clean_env(
        FINRAG_HOME=str(graph_home),
        FINRAG_EMBED__BACKEND="hash",
        FINRAG_LLM__BACKEND="fake",
        FINRAG_LLM__FAKE_SCRIPT=str(script),
        FINRAG_INGEST__WORKERS="0",
    )
    refused = run_finrag("graph", "BBY", "--llm", env=env)
    assert refused.returncode == 2 and "--rebuild" in refused.stderr
    done = run_finrag("graph", "BBY", "--rebuild", "--llm", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert "fake:graph-replies.json read" in done.stderr
    data = json.loads(done.stdout)
    by = {(r["predicate"], r["object"]): r["extractor"] for r in data["relations"]}
    assert by[("sells", "Best Buy Health")] == "llm"
    assert by[("has_segment", "Domestic")] == "rules"
    assert ("competes_with", "Amazon") not in by
    # The same model again at ingest: skipped; the report says so.
    again = run_finrag("ingest", str(BESTBUY), "--graph", "llm", "--json", env=env)
    assert again.returncode == 0, again.stderr
    (file,) = json.loads(again.stdout)["files"]
    assert file["graph"]["skipped"] == "read before by the same model"
