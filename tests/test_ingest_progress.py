"""Ingest's progress events: pages read as the parser reads them (from a parser process,
through its queue), chunks as they are embedded, each file's stages in order."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from finrag.config import load_settings
from finrag.db import open_store
from finrag.db.embedded import EmbeddedServer
from finrag.embed.hashed import HashEmbedder
from finrag.ingest.pipeline import _EMBED_STEP, IngestEvent, _embed_reporting, _ProgressFeed, ingest
from tests.conftest import DEAD_OLLAMA
from tests.pdfs import good_pdf

PAGES = 6  # pymupdf4llm reports pages one by one from 5 pages on


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    folder = tmp_path_factory.mktemp("progress")
    (folder / "filings").mkdir()
    pdf = good_pdf(folder / "filings" / "ACME_2023_10K.pdf", pages=PAGES)
    home = folder / "home"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FINRAG_HOME", str(home))
        mp.setenv("FINRAG_EMBED__BACKEND", "hash")
        mp.setenv("OLLAMA_HOST", DEAD_OLLAMA)
        mp.setenv("XDG_CONFIG_HOME", str(folder / "xdg"))
        settings = load_settings(ingest={"workers": 1})  # the default: a parser process
        events: list[IngestEvent] = []
        with open_store(settings) as store:
            report = ingest([pdf], settings, store, on_event=events.append)
    try:
        yield pdf, report, events
    finally:
        EmbeddedServer(home).delete_cluster()


def _progress(events: list[IngestEvent], stage: str) -> list[tuple[int, int]]:
    return [(e.done, e.total) for e in events if e.kind == "progress" and e.stage == stage]


def test_pages_are_reported_as_the_parser_process_reads_them(ingested) -> None:
    pdf, report, events = ingested
    assert report.results[0].status == "ingested"
    assert all(e.path == str(pdf) for e in events if e.kind == "progress")
    parse = _progress(events, "parse")
    assert parse[0] == (0, 0), "the stage starts before the page count is known"
    reads = [done for done, total in parse[1:] if total == PAGES]
    assert reads[:PAGES] == list(range(1, PAGES + 1)), "one event a page, in order"
    assert parse[-1] == (PAGES, PAGES)


def test_chunks_are_reported_as_they_are_embedded_then_stored(ingested) -> None:
    _, report, events = ingested
    chunks = report.results[0].chunks
    embed = _progress(events, "embed")
    assert embed[0] == (0, chunks) and embed[-1] == (chunks, chunks)
    assert all(total == chunks for _, total in embed)
    assert [d for d, _ in embed] == sorted(d for d, _ in embed)
    assert _progress(events, "store") == [(chunks, chunks)]


def test_each_file_moves_through_the_stages_in_order(ingested) -> None:
    _, _, events = ingested
    kinds = [e.kind if e.kind != "progress" else e.stage for e in events]
    assert kinds[0] == "planned" and kinds[-1] == "file"
    firsts = [kinds.index(s) for s in ("parse", "chunk", "embed", "store", "file")]
    assert firsts == sorted(firsts)
    last_parse = max(i for i, k in enumerate(kinds) if k == "parse")
    assert last_parse < kinds.index("embed"), "pages all read before embedding"


def test_embedding_in_slices_keeps_each_chunk_its_vector() -> None:
    class Chunk:
        def __init__(self, text: str) -> None:
            self.embed_text = text

    texts = [f"chunk {i} " + "word " * (i * 7 % 23) for i in range(2 * _EMBED_STEP + 5)]
    embedder = HashEmbedder()
    heard: list[tuple] = []
    feed = _ProgressFeed(lambda *event: heard.append(event))
    vectors, reused = _embed_reporting(embedder, [Chunk(t) for t in texts], "f.pdf", feed)
    assert np.allclose(vectors, embedder.embed(texts)) and reused == 0
    assert [e[2] for e in heard] == [0, _EMBED_STEP, 2 * _EMBED_STEP, len(texts)]


def test_a_cached_parse_still_reports_its_pages(ingested, tmp_path: Path) -> None:
    from finrag.ingest.prepare import PrepareJob, prepare

    pdf, _, _ = ingested
    settings = load_settings()
    job = PrepareJob(
        path=pdf,
        kind="pdf",
        root=pdf.parent,
        sha256="x" * 64,
        parser="pymupdf",
        cache_dir=tmp_path,
        embed_settings=settings.embed,
        max_tokens=None,
        min_tokens=64,
        overlap_tokens=32,
    )
    for _ in range(2):  # parsed, then from the cache
        heard: list[tuple] = []
        prepared = prepare(job, lambda *event, heard=heard: heard.append(event))
        assert prepared.error is None
        assert (str(pdf), "parse", PAGES, PAGES) in heard
        assert heard[-1] == (str(pdf), "chunk", 0, PAGES)
