"""Hybrid search against the real embedded Postgres on a few ingested documents."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from finrag.config import load_settings
from finrag.db import open_store
from finrag.ingest.pipeline import ingest
from finrag.retrieve import retrieve
from finrag.retrieve.hybrid import TextQuery, text_query
from tests import pdfs
from tests.conftest import run_finrag


@pytest.fixture
def store(home: Path, tmp_path: Path):
    settings = load_settings(ingest={"workers": 0})
    opened = open_store(settings)
    folder = tmp_path / "f"
    folder.mkdir()
    pdfs.good_pdf(
        folder / "ACME_2023_10K.pdf",
        pages=8,
        text="ACME capital expenditures were $310 million in 2023. " * 12,
    )
    pdfs.good_pdf(
        folder / "GLOBEX_2023_10K.pdf",
        text="Globex capital expenditures were $95 million in 2023. " * 5,
    )
    pdfs.good_pdf(
        folder / "GLOBEX_2022_10K.pdf",
        text="Globex paid a dividend of $1.10 per share in 2022. " * 5,
    )
    report = ingest([folder], settings, opened)
    assert report.count("ingested") == 3
    yield settings, opened
    opened.close()


def test_filters_from_the_question_restrict_both_halves(store) -> None:
    settings, st = store
    result = retrieve(st, settings, "What were Globex capital expenditures in 2023?", k=5)
    assert [c.name for c in result.filters.companies] == ["Globex"]
    assert result.applied == {"company_ids": [result.filters.companies[0].id], "years": [2023]}
    assert result.hits
    assert {Path(h.document).name for h in result.hits} == {"GLOBEX_2023_10K.pdf"}
    top = result.hits[0]
    assert top.dense_rank == 1 and top.text_rank == 1, "both halves agree on the best chunk"
    assert "$95 million" in top.content


def test_no_match_widens_and_says_so(store) -> None:
    settings, st = store
    result = retrieve(st, settings, "Globex dividend per share in 2019", k=3)
    assert result.widened == ["years"]
    assert "GLOBEX_2022_10K.pdf" in {Path(h.document).name for h in result.hits}


def test_flags_override_the_question(store) -> None:
    settings, st = store
    result = retrieve(
        st, settings, "capital expenditures", k=3, overrides={"company": "ACME", "year": 2023}
    )
    assert {Path(h.document).name for h in result.hits} == {"ACME_2023_10K.pdf"}
    assert result.filters.matched["company"] == ["--company"]


def test_text_query_ors_the_content_words_and_glues_acronyms() -> None:
    query = text_query("What was 3M's FY2018 capital expenditure?")
    assert query == TextQuery("3M FY2018 capital expenditure")
    query = text_query("PP&E and SG&A in the 10-K, after COVID-19; R&D?")
    assert query.words == "after", "acronyms go to the exact half only"
    assert query.exact == ("ppe", "sga", "10k", "covid19", "rd")
    # Dates, year ranges and lower-case hyphenated words are words, not acronyms.
    query = text_query("year-over-year growth 2021-2022 as of 12/31/2022")
    assert query.exact == ()


def test_search_cli_json(store) -> None:
    result = run_finrag(
        "search", "ACME capital expenditures 2023", "--k", "2", "--json", env=dict(os.environ)
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["filters"]["companies"] == ["ACME"]
    assert len(data["hits"]) == 2
    assert {
        "dense_rank",
        "dense_score",
        "text_rank",
        "text_score",
        "page_start",
        "section_path",
    } <= set(data["hits"][0])
