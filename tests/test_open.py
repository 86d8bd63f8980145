"""`finrag open`: a citation's page printed from the store, errors that exit 2, the viewer
started without a wait; and one `document` shape (name, path, id) in every --json."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from finrag.answer.citations import Citation
from finrag.cli import open_cmd
from finrag.errors import ExitCode
from finrag.refs import PageRef, document_fields, page_ref, parse_ref
from tests.conftest import run_finrag

GLOBEX = "GLOBEX_2023_10K.pdf"


@pytest.fixture
def env(store_and_settings, database_url, tmp_path: Path) -> dict[str, str]:
    """The CLI on the small corpus (tests.corpus), with a scripted model for `ask`."""
    script = tmp_path / "replies.json"
    script.write_text(
        json.dumps(
            [
                {
                    "answerable": True,
                    "claims": [
                        {"text": "Globex revenue fell 3% to $4.0 billion in 2023", "source": 1}
                    ],
                },
            ]
        )
    )
    return dict(
        os.environ,
        FINRAG_DATABASE_URL=database_url,
        FINRAG_LLM__BACKEND="fake",
        FINRAG_LLM__FAKE_SCRIPT=str(script),
    )


def test_citation_forms_parse_to_a_document_and_a_page() -> None:
    assert parse_ref("BESTBUY_2024Q2_10Q.pdf#page=12") == PageRef("BESTBUY_2024Q2_10Q.pdf", 12)
    assert parse_ref("/f/3M_2018_10K.pdf#page=60") == PageRef("/f/3M_2018_10K.pdf", 60)
    assert parse_ref("3M_2018_10K:p60") == PageRef("3M_2018_10K", 60)
    assert parse_ref("3M_2018_10K:60") == PageRef("3M_2018_10K", 60)
    assert parse_ref("[2] 3M_2018_10K p.60-61") == PageRef("3M_2018_10K", 60)
    assert parse_ref("7") == PageRef("7", None)
    assert page_ref("/f/3M_2018_10K.pdf", 60) == "3M_2018_10K.pdf#page=60"
    assert page_ref("/f/3M_2018_10K.pdf", None) == "3M_2018_10K.pdf"
    assert document_fields("/f/A.pdf", 3) == {
        "document": "A.pdf",
        "document_id": 3,
        "path": "/f/A.pdf",
    }


def test_an_answers_citation_opens_at_its_page(env) -> None:
    asked = run_finrag("ask", "What was Globex revenue in 2023?", "--k", "1", "--json", env=env)
    assert asked.returncode == 0, asked.stderr
    (citation,) = json.loads(asked.stdout)["citations"]
    assert citation["ref"] == f"{GLOBEX}#page=2" and citation["page"] == 2
    assert citation["path"] == f"/filings/{GLOBEX}" and citation["document"] == GLOBEX

    opened = run_finrag("open", citation["ref"], env=env)
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout == "## Item 7. MD&A\n\nGlobex revenue fell 3% to $4.0 billion in 2023.\n"

    # The Sources line as printed, pasted back, and a document id with --page.
    sources = run_finrag("open", "[1] GLOBEX_2023_10K p.2", env=env)
    assert sources.stdout == opened.stdout, sources.stderr
    shown = run_finrag("open", str(citation["document_id"]), "--page", "3", "--json", env=env)
    data = json.loads(shown.stdout)
    assert data["ref"] == f"{GLOBEX}#page=3" and data["page_count"] == 3
    assert "capital expenditures were $95 million" in data["text"]
    assert [c["page_start"] for c in data["chunks"]] == [3]


def test_unknown_documents_and_pages_are_usage_errors(env) -> None:
    beyond = run_finrag("open", GLOBEX, "--page", "9", env=env)
    assert beyond.returncode == ExitCode.USAGE and beyond.stdout == ""
    assert "page 9 is not in GLOBEX_2023_10K.pdf (pages 1-3)" in beyond.stderr
    unknown = run_finrag("open", "INITECH_2023_10K.pdf#page=1", env=env)
    assert unknown.returncode == ExitCode.USAGE and "no document" in unknown.stderr
    no_page = run_finrag("open", GLOBEX, env=env)
    assert no_page.returncode == ExitCode.USAGE and "--page N" in no_page.stderr


def test_document_means_the_same_in_every_json(env) -> None:
    expected = {"document": GLOBEX, "path": f"/filings/{GLOBEX}"}

    def named(item: dict) -> dict:
        return {k: item[k] for k in expected}

    search = json.loads(run_finrag("search", "Globex revenue", "--json", env=env).stdout)
    hit = next(h for h in search["hits"] if h["path"].endswith(GLOBEX))
    assert named(hit) == expected and hit["ref"] == f"{GLOBEX}#page={hit['page']}"
    docs = json.loads(run_finrag("docs", "list", "--json", env=env).stdout)
    doc = next(d for d in docs if d["path"].endswith(GLOBEX))
    assert named(doc) == expected and doc["document_id"] == doc["id"] == hit["document_id"]


def test_the_viewer_starts_detached_at_the_page(tmp_path: Path, monkeypatch) -> None:
    """A PDF viewer that takes a page is preferred to xdg-open; the command returns at once."""
    record = tmp_path / "args"
    viewer = tmp_path / "bin" / "zathura"
    viewer.parent.mkdir()
    viewer.write_text(f'#!/bin/sh\necho "$@" > {record}\n')
    viewer.chmod(0o755)
    pdf = tmp_path / "A.pdf"
    pdf.write_bytes(b"%PDF-1.4\n")
    monkeypatch.setenv("PATH", str(viewer.parent))
    monkeypatch.setenv("DISPLAY", ":0")
    assert open_cmd._open_in_viewer(pdf, 4) is True
    for _ in range(100):  # the viewer runs on its own; wait for its record, not for it
        if record.exists() and record.read_text():
            break
        time.sleep(0.05)
    assert record.read_text().split() == ["-P", "4", str(pdf)]

    monkeypatch.delenv("DISPLAY")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert open_cmd._open_in_viewer(pdf, 4) is False, "no display: the page is printed instead"


def test_a_stored_citation_reads_back_as_it_was() -> None:
    """Chat stores citations as JSON and reads them back (with or without from_dict)."""
    cited = Citation(
        1, "GLOBEX_2023_10K", [2, 2], "Item 7", 5, "q", path=f"/f/{GLOBEX}", document_id=2
    )
    stored = json.loads(json.dumps(cited.as_dict()))
    assert stored["document"] == GLOBEX and stored["ref"] == f"{GLOBEX}#page=2"
    assert Citation.from_dict(stored) == cited
    known = set(Citation.__dataclass_fields__)
    assert Citation(**{k: v for k, v in stored.items() if k in known}).document == "GLOBEX_2023_10K"
