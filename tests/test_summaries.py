"""Summary nodes (sql/008, finrag.ingest.summaries, finrag.retrieve.summaries) on a real
filing: Best Buy's Q2 FY24 10-Q, parsed and ingested into the real embedded Postgres."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from finrag.db.documents import remove_document
from finrag.ingest.summaries import SPLIT_ABOVE, SUMMARY_WORDS
from finrag.retrieve import Retriever, Variant
from finrag.retrieve.hybrid import matching_documents, text_query
from finrag.retrieve.summaries import PER_SUMMARY, summary_chunks
from tests.conftest import REPO, clean_env, ingested_home, run_finrag

BESTBUY = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"


@pytest.fixture(scope="module")
def summaries_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One home for the module: parsing the 10-Q takes ~20 s."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FINRAG_INGEST__SUMMARIES", "true")  # off by default
        with ingested_home(tmp_path_factory.mktemp("summaries") / "home", [BESTBUY]) as home:
            yield home


@pytest.fixture
def opened(summaries_home: Path, monkeypatch: pytest.MonkeyPatch):
    from finrag.config import load_settings
    from finrag.db import open_store

    monkeypatch.setenv("FINRAG_HOME", str(summaries_home))
    settings = load_settings(ingest={"workers": 0, "summaries": True})
    with open_store(settings) as store:
        yield settings, store


@pytest.fixture
def conn(opened) -> Iterator[psycopg.Connection]:
    with opened[1].connect() as connection:
        yield connection


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _rows(conn: psycopg.Connection, level: str) -> list[tuple]:
    return conn.execute(
        "SELECT id, document_id, section_path, chunk_ids, page_start, page_end, text "
        "FROM summaries WHERE level = %s ORDER BY id",
        (level,),
    ).fetchall()


def test_each_section_and_the_document_get_a_summary_spanning_their_pages(conn) -> None:
    (doc_id,) = conn.execute("SELECT id FROM documents").fetchone()
    chunks = {
        cid: (start, end, " ".join(content.split()))
        for cid, start, end, content in conn.execute(
            "SELECT id, page_start, page_end, content FROM chunks WHERE document_id = %s",
            (doc_id,),
        )
    }
    sections = _rows(conn, "section")
    [document] = _rows(conn, "document")
    # Every chunk stands under exactly one section summary.
    members = [cid for row in sections for cid in row[3]]
    assert sorted(members) == sorted(chunks)
    for _, _, path, ids, page_start, page_end, text in sections:
        assert len(ids) <= SPLIT_ABOVE  # a large Item is summarized by runs of sub-sections
        assert page_start == min(chunks[c][0] for c in ids)
        assert page_end == max(chunks[c][1] for c in ids)
        assert len(text.split()) <= SUMMARY_WORDS
        # Extractive: what follows the headings is the filing's own words.
        body = _words(text.split(": ", 1)[1])[:8]
        assert any(" ".join(body) in " ".join(_words(chunks[c][2])) for c in ids), (path, text)
    assert document[3] is None  # the document stands for all its chunks
    assert (document[4], document[5]) == (
        min(v[0] for v in chunks.values()),
        max(v[1] for v in chunks.values()),
    )
    assert document[6].startswith("Best Buy Co., Inc. 10-Q FY2024 Q2")
    headings = [row[6].split(":", 1)[0] for row in sections]
    # Part I Item 1 and Part II Item 1 are different sections of a 10-Q.
    assert any(h.startswith("Item 1. Financial Statements") for h in headings)
    assert "Item 1. Legal Proceedings" in headings
    assert any("9. Repurchase of Common Stock" in h for h in headings)


def test_summaries_go_with_their_document(conn) -> None:
    (doc_id,) = conn.execute("SELECT id FROM documents").fetchone()
    assert conn.execute("SELECT count(*) FROM summaries").fetchone()[0] > 10
    remove_document(conn, doc_id)
    assert conn.execute("SELECT count(*) FROM summaries").fetchone()[0] == 0
    conn.rollback()  # the module's store keeps its document


def test_a_reingest_rebuilds_the_summaries_over_the_new_chunks(opened, conn) -> None:
    from finrag.ingest.pipeline import ingest

    settings, store = opened
    before = {row[0]: row[2:] for row in _rows(conn, "section")}
    conn.rollback()
    report = ingest([BESTBUY], settings, store, rebuild=True)
    assert [r.status for r in report.results] == ["replaced"]
    after = _rows(conn, "section")
    assert not set(before) & {row[0] for row in after}  # new rows
    # The same sections and pages, now over the chunks the re-ingest wrote.
    assert [(r[2], r[4], r[5]) for r in after] == [(v[0], v[2], v[3]) for v in before.values()]
    chunk_ids = {r[0] for r in conn.execute("SELECT id FROM chunks")}
    assert {cid for row in after for cid in row[3]} == chunk_ids


def test_a_summary_hit_contributes_its_sections_best_chunks(opened, conn) -> None:
    settings, _ = opened
    hits = summary_chunks(
        conn,
        text_query("share repurchase program repurchase of common stock"),
        None,  # full text only: the hash embedder's vectors say little
        matching_documents(conn, {}),
        settings.retrieve,
    )
    assert hits and all(h.kind in ("text", "table") for h in hits)
    sections = {
        text: set(ids) for _, _, _, ids, _, _, text in _rows(conn, "section") if ids is not None
    }
    first = {h.chunk_id for h in hits[:PER_SUMMARY]}
    # The first chunks come from one summarized section, and that section is about it.
    owners = [text for text, ids in sections.items() if first <= ids]
    assert owners and "repurchase" in owners[0].lower()
    assert len({h.chunk_id for h in hits}) == len(hits)


def test_the_summaries_variant_returns_chunks(opened, conn) -> None:
    settings, store = opened
    variant = Variant.parse("hybrid+filters+summaries")
    assert variant.summaries and variant.name == "hybrid+filters+summaries"
    assert not Variant.parse("hybrid+filters").summaries
    question = "Does Best Buy have a share repurchase program?"
    result = Retriever(store, settings).retrieve(question, k=5, variant=variant, conn=conn)
    plain = Retriever(store, settings).retrieve(
        question, k=5, variant=Variant.parse("hybrid+filters"), conn=conn
    )
    assert result.variant == "hybrid+filters+summaries" and "summaries" in result.timings_ms
    assert len(result.hits) == 5
    stored = {r[0] for r in conn.execute("SELECT id FROM chunks")}
    assert {h.chunk_id for h in result.hits} <= stored  # chunks, never summary rows
    assert [h.chunk_id for h in result.hits] != [h.chunk_id for h in plain.hits]


def test_db_summarize_builds_what_a_store_lacks(summaries_home: Path, conn) -> None:
    conn.execute("DELETE FROM summaries")
    conn.commit()
    env = clean_env(FINRAG_HOME=str(summaries_home), FINRAG_EMBED__BACKEND="hash")
    done = run_finrag("db", "summarize", "--missing", "--json", env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    count = conn.execute("SELECT count(*) FROM summaries").fetchone()[0]
    assert report["documents"] == 1 and report["summaries"] == count > 10
    again = json.loads(run_finrag("db", "summarize", "--missing", "--json", env=env).stdout)
    assert again["documents"] == 0  # nothing missing any more
