"""Marker and LlamaParse adapters, offline: their real output shapes (fixtures written by
the libraries' own code, eval/datasets/make_parser_fixtures.py) become finrag's pages, and
those pages go through the same chunks, tables and facts as PyMuPDF's; each adapter's
fail-fast checks refuse within seconds, saying why."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import socket
from pathlib import Path

import pytest

from finrag.errors import DocumentParseError, ParserUnavailable
from finrag.ingest.parse import optional
from finrag.ingest.parse.optional import (
    LlamaParseParser,
    MarkerParser,
    llamaparse_document,
    marker_document,
)
from finrag.ingest.pipeline import ingest
from tests import pdfs
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "parsers"
MARKER_MD = (FIXTURES / "marker_paginated.md").read_text(encoding="utf-8")
LLAMA_JOB = json.loads((FIXTURES / "llamaparse_job.json").read_text(encoding="utf-8"))


# ---- output shapes -> pages -------------------------------------------------------------


def test_marker_pages_come_back_under_their_pdf_page_numbers() -> None:
    parsed = marker_document(MARKER_MD)
    assert [p.number for p in parsed.pages] == [3, 4]  # marker's {2} and {3}: indices from 0
    balance, earnings = parsed.pages
    assert balance.markdown.startswith("# PART I — FINANCIAL INFORMATION")
    assert "Statements of Earnings" in earnings.markdown
    assert "Statements of Earnings" not in balance.markdown
    # Marker's escapes are undone: figures and names read as printed.
    assert "| Revenue" in earnings.markdown and "$ 9,583" in earnings.markdown
    assert "\\$" not in earnings.markdown and "BESTBUY_2023_10K" in balance.markdown
    assert parsed.parser == "marker" and parsed.skipped_pages == []


def test_marker_output_without_pages_is_refused_not_filed_as_page_one() -> None:
    flat = MARKER_MD.replace("{2}" + "-" * 48, "").replace("{3}" + "-" * 48, "")
    with pytest.raises(DocumentParseError, match="no page markers"):
        marker_document(flat)
    with pytest.raises(DocumentParseError, match="no text"):
        marker_document("\n\n{0}" + "-" * 48 + "\n\n")


def test_llamaparse_pages_come_back_with_their_numbers_and_empty_ones_are_named() -> None:
    parsed = llamaparse_document(LLAMA_JOB)
    assert [p.number for p in parsed.pages] == [1, 2, 3]
    assert "FORM 10-Q" in parsed.pages[0].markdown
    assert "|Revenue|$ 9,583|$ 10,329|" in parsed.pages[1].markdown
    assert parsed.skipped_pages == [3]
    assert parsed.warnings == ["LlamaParse found no text on page(s) 3"]


def test_llamaparse_errors_and_empty_results_are_refused() -> None:
    with pytest.raises(DocumentParseError, match="LlamaParse failed: quota"):
        llamaparse_document([{"pages": [], "error": "quota exceeded"}])
    with pytest.raises(DocumentParseError, match="rejected API key"):
        llamaparse_document([])


def test_the_llamaparse_fixture_is_what_the_library_reads() -> None:
    if importlib.util.find_spec("llama_cloud_services") is None:
        pytest.skip("llama-cloud-services is not installed (pip install 'finrag-cli[llamaparse]')")
    from llama_cloud_services.parse.types import JobResult

    raw = {k: v for k, v in LLAMA_JOB[0].items() if k not in ("job_id", "file_path")}
    result = JobResult(job_id=LLAMA_JOB[0]["job_id"], file_name="x.pdf", job_result=raw)
    assert [p.md for p in result.pages] == [p["md"] for p in LLAMA_JOB[0]["pages"]]


# ---- the same pipeline as PyMuPDF's pages -----------------------------------------------


class _RecordedMarker:
    """MarkerParser with its model run replaced by the recorded output."""

    name = "marker"

    def parse(self, path: Path):
        return marker_document(MARKER_MD)


class _RecordedLlamaParse:
    name = "llamaparse"

    def parse(self, path: Path):
        return llamaparse_document(LLAMA_JOB)


def test_marker_and_llamaparse_pages_feed_chunks_tables_and_facts(
    store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, st = store
    monkeypatch.setattr(optional, "MarkerParser", _RecordedMarker)
    monkeypatch.setattr(optional, "LlamaParseParser", _RecordedLlamaParse)
    (tmp_path / "marker").mkdir()
    (tmp_path / "llama").mkdir()
    by_marker = pdfs.good_pdf(tmp_path / "marker" / "BESTBUY_2024Q2_10Q.pdf")
    by_llama = pdfs.good_pdf(tmp_path / "llama" / "BESTBUY_2024Q2_10Q.pdf", text="other")
    for path, parser in ((by_marker, "marker"), (by_llama, "llamaparse")):
        chosen = settings.model_copy(
            update={"ingest": settings.ingest.model_copy(update={"parser": parser})}
        )
        report = ingest([path], chosen, st)
        assert [r.status for r in report.results] == ["ingested"], report.results[0].reason
        assert report.results[0].parser == parser
    with st.connect() as conn:
        rows = conn.execute(
            """
            SELECT d.parser, d.skipped_pages, c.kind, c.page_start, c.page_end, c.content
            FROM chunks c JOIN documents d ON d.id = c.document_id ORDER BY d.id, c.ordinal
            """
        ).fetchall()
        facts = conn.execute(
            """
            SELECT d.parser, f.page, f.value FROM facts f JOIN documents d ON d.id = f.document_id
            WHERE f.label ILIKE 'revenue%%' ORDER BY d.id, f.page, f.value
            """
        ).fetchall()
    marker_rows = [r for r in rows if r[0] == "marker"]
    llama_rows = [r for r in rows if r[0] == "llamaparse"]
    # Every chunk keeps the pages it came from: citations point at pages 3-4 and 1-2.
    assert {r[3] for r in marker_rows} | {r[4] for r in marker_rows} == {3, 4}
    assert all(r[3] == r[4] for r in marker_rows if r[2] == "table")
    assert {r[3] for r in llama_rows} == {1, 2}
    assert llama_rows[0][1] == [3]  # LlamaParse's empty page is recorded as skipped
    # Their Markdown tables are table chunks, on the page that prints them.
    earnings = [r for r in marker_rows if r[2] == "table" and "9,583" in r[5]]
    assert earnings and earnings[0][3] == 4
    assert [r[3] for r in llama_rows if r[2] == "table" and "9,583" in r[5]] == [2]
    # ... and the table path reads their figures as facts, in dollars ("$ in millions"),
    # with the page.
    read = [(p, page, float(v)) for p, page, v in facts]
    assert ("marker", 4, 9_583e6) in read and ("llamaparse", 2, 9_583e6) in read


# ---- fail fast --------------------------------------------------------------------------


def _find_spec_without(name: str):
    real = importlib.util.find_spec

    def find_spec(module: str, *args):
        return None if module == name else real(module, *args)

    return find_spec


def _find_spec_with(name: str):
    real = importlib.util.find_spec

    def find_spec(module: str, *args):
        return importlib.machinery.ModuleSpec(name, None) if module == name else real(module, *args)

    return find_spec


def test_marker_not_installed_says_how(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", _find_spec_without("marker"))
    with pytest.raises(ParserUnavailable, match="not installed") as caught:
        MarkerParser()
    assert "finrag-cli[marker]" in caught.value.hint and "licence" in caught.value.hint


def test_marker_without_its_weights_refuses_rather_than_download(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", _find_spec_with("marker"))
    monkeypatch.setenv("MODEL_CACHE_DIR", str(tmp_path / "datalab"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(ParserUnavailable, match="would download them"):
        MarkerParser()
    # Weights in surya's cache (as a first run with network leaves them) let it through.
    (tmp_path / "datalab" / "layout" / "2025_01").mkdir(parents=True)
    assert MarkerParser().name == "marker"


def test_llamaparse_not_installed_no_key_and_unreachable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", _find_spec_without("llama_parse"))
    with pytest.raises(ParserUnavailable, match="not installed") as caught:
        LlamaParseParser()
    assert "finrag-cli[llamaparse]" in caught.value.hint

    monkeypatch.setattr(importlib.util, "find_spec", _find_spec_with("llama_parse"))
    monkeypatch.delenv("LLAMA_CLOUD_API_KEY", raising=False)
    with pytest.raises(ParserUnavailable, match="API key"):
        LlamaParseParser()

    monkeypatch.setenv("LLAMA_CLOUD_API_KEY", "llx-test")
    probes = []

    def create_connection(address, timeout):
        probes.append((address, timeout))
        raise TimeoutError("timed out")

    monkeypatch.setattr(socket, "create_connection", create_connection)
    with pytest.raises(ParserUnavailable, match="not reachable"):
        LlamaParseParser()
    assert probes == [(("api.cloud.llamaindex.ai", 443), 3.0)]  # one probe, bounded at 3 s


def test_an_unreachable_llamaparse_fails_on_a_real_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", _find_spec_with("llama_parse"))
    monkeypatch.setenv("LLAMA_CLOUD_API_KEY", "llx-test")
    monkeypatch.setattr(optional, "_LLAMAPARSE_HOST", ("127.0.0.1", 9))  # nothing listens
    with pytest.raises(ParserUnavailable, match=r"127\.0\.0\.1"):
        LlamaParseParser()


def test_ingest_with_an_optional_parser_that_cannot_run_fails_before_any_work(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import run_finrag

    pdfs.good_pdf(tmp_path / "ACME_2023_10K.pdf")
    monkeypatch.delenv("LLAMA_CLOUD_API_KEY", raising=False)
    result = run_finrag("ingest", "--parser", "llamaparse", str(tmp_path))
    assert result.returncode == 5, result.stderr  # ExitCode.MODEL, as for the LLM
    assert "llamaparse parser is not installed" in result.stderr
    assert "finrag-cli[llamaparse]" in result.stderr
    with_nothing_stored = run_finrag("docs", "list", "--json")
    assert json.loads(with_nothing_stored.stdout) == []
