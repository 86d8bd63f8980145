"""The Section 12(b) table of a printed 10-K cover read as cover facts (finrag.facts.cover
printed_cover_facts) and answered from them (finrag.answer.cover): each class with its
trading symbol and exchange; a question after debt securities answered with the notes
listed, or "None" when the cover lists only stock. Real cover pages, cut from the
FinanceBench dev PDFs, ingested into the embedded Postgres."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from finrag.answer.pipeline import Asker
from tests.conftest import SHARED, asker_without_model, ingested_home

PDFS = SHARED / "financebench-dev" / "pdfs"
pytestmark = pytest.mark.skipif(
    not PDFS.is_dir(), reason=f"FinanceBench dev PDFs not found at {PDFS}"
)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    import pymupdf

    folder = tmp_path_factory.mktemp("covers")
    files = []
    for name in ("3M_2022_10K.pdf", "AMERICANEXPRESS_2022_10K.pdf"):
        with pymupdf.open(PDFS / name) as filing, pymupdf.open() as cover:
            cover.insert_pdf(filing, from_page=0, to_page=0)
            cover.save(folder / name)
        files.append(folder / name)
    with ingested_home(folder / "home", files) as built:
        yield built


@pytest.fixture
def ask(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Asker]:
    yield from asker_without_model(home, monkeypatch)


def test_each_registered_class_is_read_with_its_symbol_and_exchange(ask) -> None:
    answer = ask.ask("What securities does 3M have registered under Section 12(b)?")
    assert answer.route == "facts", answer.retrieval
    text = answer.answer
    assert "Common Stock, Par Value $.01 Per Share" in text and "MMM " in text
    assert "0.950% Notes due 2023" in text and "MMM23" in text
    assert "1.500% Notes due 2031" in text and "MMM31" in text
    assert {c.page for c in answer.citations} == {1}


def test_debt_securities_are_the_notes_listed(ask) -> None:
    answer = ask.ask("Which debt securities does 3M have registered on an exchange?")
    assert answer.answer.startswith("3M's debt securities registered under Section 12(b): ")
    assert "Common Stock" not in answer.answer and "MMM26" in answer.answer


def test_a_cover_listing_only_stock_answers_none_for_debt(ask) -> None:
    answer = ask.ask("What notes or bonds of American Express are listed on a stock exchange?")
    assert answer.route == "facts", answer.retrieval
    assert answer.answer.startswith("None: American Express has no debt securities")
    assert "Common Shares (par value $0.20 per Share)" in answer.answer
    assert "AXP" in answer.answer and answer.citations
