"""Pages, not fragments: the fused candidates of both halves grouped by page, on Best Buy's
Q2 FY24 10-Q ingested into the real embedded Postgres; the +pages variant, `finrag search
--json`, an answer context built from pages, and retrieval metrics counted over pages."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from finrag.config import load_settings
from finrag.db import open_store
from finrag.errors import UsageError
from finrag.evaluate.dataset import Evidence, load_dataset
from finrag.evaluate.metrics import Retrieved, relevance
from finrag.evaluate.retrieval import evaluate_retrieval
from finrag.retrieve import Hit, Retriever, Variant
from finrag.retrieve.context import build_context
from finrag.retrieve.hybrid import SearchResult, fuse_results
from finrag.retrieve.pages import PageHit, group_by_page, page_score
from tests.conftest import REPO, ingested_home, run_finrag

BESTBUY = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"
QUESTION = "What were Best Buy's Domestic segment revenue and comparable sales this quarter?"
CHUNKS, PAGES = Variant.parse("hybrid+filters"), Variant.parse("hybrid+filters+pages")


@pytest.fixture(scope="module")
def pages_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One home for the module: parsing the 10-Q takes ~20 s."""
    with ingested_home(tmp_path_factory.mktemp("pages") / "home", [BESTBUY]) as home:
        yield home


@pytest.fixture
def retriever(pages_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Retriever]:
    monkeypatch.setenv("FINRAG_HOME", str(pages_home))
    settings = load_settings()
    with open_store(settings) as store:
        yield Retriever(store, settings)


def _candidates(retriever: Retriever, question: str = QUESTION) -> list[Hit]:
    """The fused chunks the +pages variant groups: the same search, candidates deep."""
    k = retriever.settings.retrieve.candidates
    return retriever.retrieve(question, k=k, variant=CHUNKS).hits


def test_pages_are_the_candidates_grouped_by_page_and_scored_from_their_best_chunks(
    retriever: Retriever,
) -> None:
    candidates = _candidates(retriever)
    found = retriever.retrieve(QUESTION, k=5, variant=PAGES)
    assert found.variant == "hybrid+filters+pages"
    assert len(found.hits) == 5 and all(isinstance(h, PageHit) for h in found.hits)

    on_page: dict[tuple[int, int | None], list[Hit]] = {}
    for chunk in candidates:
        on_page.setdefault((chunk.document_id, chunk.page_start), []).append(chunk)
    assert len(on_page) < len(candidates), "some page holds several candidates"
    for page in found.hits:
        members = on_page[(page.document_id, page.page)]
        assert page.page_start == page.page_end == page.page
        assert page.chunk_ids == sorted(c.chunk_id for c in members), "all, in document order"
        assert page.chunk_id == max(members, key=lambda c: c.score).chunk_id
        assert page.score == pytest.approx(page_score([c.score for c in members]))
        assert page.content == "\n\n".join(
            c.content.strip() for c in sorted(members, key=lambda c: c.chunk_id)
        )
    several = [p for p in found.hits if len(p.chunks) > 1]
    assert several, "a top page gathers more than one chunk"
    best_two = sorted((c.score for c in several[0].chunks), reverse=True)[:2]
    assert several[0].score == pytest.approx(best_two[0] + 0.5 * best_two[1])
    # The k best pages of all the candidates' pages, strongest first.
    every_page = sorted((page_score([c.score for c in m]) for m in on_page.values()), reverse=True)
    assert [p.score for p in found.hits] == pytest.approx(every_page[:5])


def test_a_chunk_spanning_pages_stands_for_the_page_it_starts_on(retriever: Retriever) -> None:
    with retriever.store.connect() as conn:
        chunk_id, content = conn.execute(
            "SELECT id, content FROM chunks WHERE page_end > page_start AND kind = 'text' "
            "ORDER BY id LIMIT 1"
        ).fetchone()
    candidates = _candidates(retriever, " ".join(content.split()[:40]))
    spanning = [c for c in candidates if c.page_end > c.page_start]
    assert chunk_id in {c.chunk_id for c in spanning}, "its own words find the spanning chunk"
    pages = group_by_page(candidates, len(candidates))
    for chunk in spanning:
        holders = [p.page for p in pages if chunk.chunk_id in p.chunk_ids]
        assert holders == [chunk.page_start]


def test_chunks_without_a_page_number_are_pages_of_their_own(retriever: Retriever) -> None:
    candidates = _candidates(retriever)[:4]
    unnumbered = [replace(c, page_start=None, page_end=None) for c in candidates]
    pages = group_by_page(unnumbered, 10)
    assert sorted(p.chunk_ids for p in pages) == sorted([c.chunk_id] for c in candidates)


def test_variant_names_with_pages() -> None:
    variant = Variant.parse("hybrid+filters+pages")
    assert variant.pages and variant.filters and not variant.rerank
    assert Variant.parse("hybrid+pages+filters").name == "hybrid+filters+pages"
    assert not Variant.parse("hybrid+filters").pages
    assert Variant.parse("fts+pages").name == "fts+pages"
    with pytest.raises(UsageError, match="unknown retrieval variant"):
        Variant.parse("hybrid+page")


def test_group_by_page_setting_makes_pages_the_default(
    pages_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FINRAG_HOME", str(pages_home))
    monkeypatch.setenv("FINRAG_RETRIEVE__GROUP_BY_PAGE", "true")
    settings = load_settings()
    with open_store(settings) as store:
        found = Retriever(store, settings).retrieve(QUESTION, k=3)
    assert found.variant == "hybrid+filters+pages+graph:entity"  # retrieve.graph_kinds
    assert all(isinstance(h, PageHit) for h in found.hits)


def test_context_from_pages_gives_each_page_its_best_chunk_within_the_budget(
    retriever: Retriever,
) -> None:
    pages = retriever.retrieve(QUESTION, k=4, variant=PAGES).hits
    context = build_context(pages)
    assert len(context) == len(pages), "the budget: as many chunks as pages asked for"
    assert {c.hit.chunk_id for c in context} == {p.chunk_id for p in pages}
    assert all(type(c.hit) is Hit for c in context), "the model reads chunks, labelled by chunk"

    wider = build_context(pages, budget=len(pages) + 3)
    ids = [c.hit.chunk_id for c in wider]
    assert len(ids) == len(set(ids)) == min(len(pages) + 3, sum(len(p.chunks) for p in pages))
    assert {p.chunk_id for p in pages} <= set(ids), "every page's best chunk comes first"
    for page in pages:  # a page's chunks read together, in document order
        places = [n for n, c in enumerate(wider) if c.hit.chunk_id in page.chunk_ids]
        assert places == list(range(places[0], places[0] + len(places)))
        assert [wider[n].hit.chunk_id for n in places] == sorted(
            wider[n].hit.chunk_id for n in places
        )
    assert [c.n for c in wider] == list(range(1, len(wider) + 1))


def test_search_json_says_which_page_each_hit_stands_for(
    pages_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FINRAG_HOME", str(pages_home))
    env = dict(os.environ)
    result = run_finrag(
        "search", QUESTION, "--variant", "hybrid+filters+pages", "--k", "3", "--json", env=env
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["unit"] == "page" and data["variant"] == "hybrid+filters+pages"
    assert len(data["hits"]) == 3
    for hit in data["hits"]:
        assert Path(hit["document"]).name == BESTBUY.name
        assert hit["page_start"] == hit["page_end"] == hit["page"]
        assert hit["chunk_ids"] == [c["chunk_id"] for c in hit["chunks"]]
        assert hit["chunk_id"] in hit["chunk_ids"]
        assert {c["page_start"] for c in hit["chunks"]} == {hit["page"]}
    assert len({h["page"] for h in data["hits"]}) == 3

    chunks = run_finrag("search", QUESTION, "--variant", "hybrid+filters", "--json", env=env)
    data = json.loads(chunks.stdout)
    assert data["unit"] == "chunk"
    assert all(h["chunk_ids"] == [h["chunk_id"]] for h in data["hits"])
    assert all(h["page"] == h["page_start"] for h in data["hits"])

    shown = run_finrag(
        "search",
        QUESTION,
        "--variant",
        "hybrid+filters+pages",
        "--k",
        "2",
        env=env | {"COLUMNS": "200"},
    )
    assert shown.returncode == 0, shown.stderr
    assert "chunk" in shown.stdout and "p." in shown.stdout


def test_metrics_count_pages_as_the_units(retriever: Retriever, tmp_path: Path) -> None:
    top = retriever.retrieve(QUESTION, k=5, variant=PAGES).hits[0]
    dataset = tmp_path / "q.jsonl"
    dataset.write_text(
        json.dumps(
            {
                "id": "bby",
                "question": QUESTION,
                "answer": "-",
                "evidence": [{"document": BESTBUY.name, "page": top.page}],
            }
        )
        + "\n"
    )
    report = evaluate_retrieval(
        retriever.store,
        retriever.settings,
        load_dataset(dataset),
        dataset=dataset,
        ks=[1, 5],
        variants=[CHUNKS, PAGES],
        retriever=retriever,
    )
    by = {r.variant: r for r in report.results}
    pages = by["hybrid+filters+pages"]
    assert pages.first_relevant_rank == 1 and pages.scores[1]["hit"] == 1.0
    # One gold page is one unit among five pages: precision 1/5, however many chunks it has.
    assert pages.scores[5]["precision"] == pytest.approx(1 / 5)
    assert pages.scores[5]["recall"] == 1.0
    assert pages.top[0]["chunk_ids"] == top.chunk_ids
    assert pages.top[0]["pages"] == [top.page, top.page]
    chunk_level = by["hybrid+filters"]
    assert all(len(t["chunk_ids"]) == 1 for t in chunk_level.top)
    relevant_chunks = sum(t["relevant"] for t in chunk_level.top[:5])
    assert chunk_level.scores[5]["precision"] == pytest.approx(relevant_chunks / 5)


def test_a_page_matches_evidence_text_by_its_chunks(retriever: Retriever) -> None:
    """Evidence quoting a whole page reads whole in none of the candidate chunks joined (a
    chunk missing between them): each chunk is matched on its own, as at chunk level."""
    with retriever.store.connect() as conn:
        first, middle, last = conn.execute(
            "SELECT array_agg(content ORDER BY ordinal) FROM chunks WHERE kind = 'text' "
            "GROUP BY document_id, page_start HAVING count(*) >= 3 "
            "ORDER BY min(id) LIMIT 1"
        ).fetchone()[0][:3]
    evidence = [Evidence("bby", 2, " ".join([first, middle, last]))]
    joined = "\n\n".join([first, last])
    as_page = Retrieved("bby", 2, 2, joined, (first, last))
    assert relevance([as_page], evidence)[1] == [True]
    assert relevance([Retrieved("bby", 2, 2, joined)], evidence)[1] == [False]


def test_fused_rankings_of_pages_count_a_page_once(retriever: Retriever) -> None:
    found = retriever.retrieve(QUESTION, k=5, variant=PAGES)
    page = next(h for h in found.hits if len(h.chunks) > 1)
    other = next(c.chunk_id for c in page.chunks if c.chunk_id != page.chunk_id)
    # The other ranking names the same page by another of its chunks (its best there).
    second = SearchResult(
        hits=[replace(page, chunk_id=other)], filters=found.filters, applied=found.applied
    )
    merged = fuse_results(found, second, k=10)
    assert [(h.document_id, h.page) for h in merged.hits].count((page.document_id, page.page)) == 1
    assert len(merged.hits) == len(found.hits)
    assert merged.hits[0].page == page.page  # named by both rankings: first
