"""The ingest pipeline end to end: real parsers, real Postgres, hashed embeddings (fast)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from finrag.config import load_settings
from finrag.db import open_store
from finrag.db.companies import lookup_company
from finrag.errors import ExitCode
from finrag.ingest.pipeline import ingest
from tests import pdfs
from tests.conftest import REPO, SHARED, run_finrag

SAMPLE = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"


def count_rows(store, table: str) -> int:
    with store.connect() as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_good_and_bad_files_together(store, tmp_path: Path) -> None:
    settings, st = store
    folder = tmp_path / "filings"
    folder.mkdir()
    pdfs.good_pdf(folder / "ACME_2023_10K.pdf")
    pdfs.password_pdf(folder / "locked.pdf")
    pdfs.image_only_pdf(folder / "scanned.pdf")
    pdfs.corrupt_pdf(folder / "corrupt.pdf")
    pdfs.truncated_pdf(folder / "truncated.pdf", SAMPLE)
    (folder / "empty.pdf").write_bytes(b"")
    shutil.copy(folder / "ACME_2023_10K.pdf", folder / "really_a_pdf.txt")
    (folder / "notes.docx").write_bytes(b"PK\x03\x04")
    (folder / "memo.md").write_text("# Memo\n\nACME's guidance for 2024 is unchanged.\n")

    report = ingest([folder], settings, st)
    by_name = {Path(r.path).name: r for r in report.results}
    assert by_name["ACME_2023_10K.pdf"].status == "ingested"
    assert by_name["memo.md"].status == "ingested"
    expected = {
        "locked.pdf": "password-protected",
        "scanned.pdf": "no text layer",
        "corrupt.pdf": "not a readable PDF",
        "truncated.pdf": "truncated",
        "empty.pdf": "empty file",
        "really_a_pdf.txt": "PDF with a .txt extension",
    }
    for name, reason in expected.items():
        assert by_name[name].status == "failed", name
        assert reason in by_name[name].reason, (name, by_name[name].reason)
    assert by_name["notes.docx"].status == "skipped"
    assert count_rows(st, "documents") == 2, "only the good files, nothing partial"

    meta = by_name["ACME_2023_10K.pdf"].metadata
    assert (meta["company"], meta["fiscal_year"], meta["form_type"]) == ("ACME", 2023, "10-K")
    assert meta["sources"]["fiscal_year"] == "path"


def test_reingest_is_a_no_op_and_changes_replace_whole(store, tmp_path: Path) -> None:
    settings, st = store
    folder = tmp_path / "f"
    folder.mkdir()
    target = pdfs.good_pdf(folder / "ACME_2023_10K.pdf")
    first = ingest([folder], settings, st)
    assert first.count("ingested") == 1
    chunks_before = count_rows(st, "chunks")

    again = ingest([folder], settings, st)
    assert again.count("unchanged") == 1
    # Skipped by its hash: nothing was parsed or embedded (no timings, no stage time).
    assert again.results[0].timings == {}
    assert again.stage_s["parse"] == again.stage_s["embed"] == 0.0

    pdfs.good_pdf(target, pages=5, text="Revenue fell to $900 million. " * 20)
    changed = ingest([folder], settings, st)
    assert changed.count("replaced") == 1
    with st.connect() as conn:
        assert conn.execute("SELECT count(*) FROM documents").fetchone()[0] == 1
        text = " ".join(r[0] for r in conn.execute("SELECT content FROM chunks").fetchall())
    assert "$900 million" in text and "$1,234 million" not in text, "old rows are gone"
    assert count_rows(st, "chunks") != chunks_before

    copy = shutil.copy(target, folder / "copy_of_it.pdf")
    dup = ingest([copy], settings, st)
    assert dup.results[0].status == "duplicate"


def test_changed_chunker_settings_are_reported_not_mixed(store, tmp_path: Path) -> None:
    settings, st = store
    target = pdfs.good_pdf(tmp_path / "ACME_2023_10K.pdf")
    ingest([target], settings, st)
    other = settings.model_copy(
        update={"ingest": settings.ingest.model_copy(update={"overlap_tokens": 0})}
    )
    stale = ingest([target], other, st)
    assert stale.results[0].status == "stale"
    assert "--rebuild" in stale.results[0].reason
    rebuilt = ingest([target], other, st, rebuild=True)
    assert rebuilt.results[0].status == "replaced"
    assert rebuilt.results[0].parse_cached, "the parsed Markdown came from the cache"


def test_sample_10q_metadata_chunks_and_company(store) -> None:
    settings, st = store
    report = ingest([SAMPLE], settings, st)
    result = report.results[0]
    assert result.status == "ingested", result.reason
    assert result.pages == 30
    assert result.metadata["company"] == "Best Buy Co., Inc."
    assert result.metadata["form_type"] == "10-Q"
    assert result.metadata["ticker"] == "BBY", "read from the cover page's trading-symbol table"
    assert (result.metadata["fiscal_year"], result.metadata["fiscal_quarter"]) == (2024, 2)
    assert result.dropped, "boilerplate is removed and counted"
    with st.connect() as conn:
        rows = conn.execute(
            "SELECT kind, page_start, page_end, section_path, content, tokens FROM chunks"
        ).fetchall()
        assert lookup_company(conn, "BESTBUY")[1] == "Best Buy Co., Inc."
        assert lookup_company(conn, "Best Buy")[1] == "Best Buy Co., Inc."
    assert all(1 <= r[1] <= r[2] <= 30 for r in rows)
    assert max(r[5] for r in rows) <= 256
    tables = [r for r in rows if r[0] == "table"]
    revenue = [r for r in tables if "Total revenue" in r[4] and "$9,583" in r[4]]
    assert revenue, "the segment revenue table is a table chunk with its numbers"
    assert any("Item 1" in " ".join(r[3]) for r in revenue)
    assert any(
        r[4].count("|---") == 1 and r[4].lstrip().startswith(("PART", "Item")) for r in tables
    ), "table chunks carry their heading path"


def test_docs_commands_and_rm_leaves_nothing(home: Path, tmp_path: Path) -> None:
    env = dict(os.environ, FINRAG_INGEST__WORKERS="0")
    target = pdfs.good_pdf(tmp_path / "ACME_2023_10K.pdf")
    result = run_finrag("ingest", str(target), "--json", env=env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["summary"]["ingested"] == 1
    doc_id = report["files"][0]["document_id"]

    listed = json.loads(run_finrag("docs", "list", "--json", env=env).stdout)
    assert [d["id"] for d in listed] == [doc_id]
    shown = json.loads(run_finrag("docs", "show", "ACME_2023_10K.pdf", "--json", env=env).stdout)
    assert shown["metadata_source"]["fiscal_year"] == "path"
    assert shown["chunks"] >= 1

    script = tmp_path / "replies.json"  # a checked answer, which the answer cache keeps
    quote = {"source": 1, "quote": "declared a dividend of $0.50 per share", "value": "0.50"}
    reply = "The board declared a dividend of $0.50 per share [1]."
    extraction = {"answerable": True, "facts": [quote], "calculations": []}
    script.write_text(json.dumps([extraction, reply]))
    question = "What did the ACME board declare in 2023?"
    model = {"FINRAG_LLM__BACKEND": "fake", "FINRAG_LLM__FAKE_SCRIPT": str(script)}
    model["FINRAG_ANSWER__TEXT_MODE"] = "extract"  # the scripted replies are the extraction's
    # (hashed embeddings score low: the excerpt is let through)
    model["FINRAG_ANSWER__MIN_RELEVANCE"] = "0"
    asked = run_finrag("ask", question, env=env | model)
    assert asked.returncode == 0 and asked.stdout.startswith(reply), asked.stderr
    parsed = list((home / "cache" / "parsed").glob("*.json"))
    assert parsed

    # Every table that holds rows of a document, the companies, and the answers cache.
    tables = [
        "documents",
        "chunks",
        "facts",
        "summaries",
        "entities",
        "relations",
        "graph_runs",
        "companies",
        "answer_cache",
    ]

    def counts() -> dict[str, int]:
        sql = "; ".join(f"SELECT count(*) FROM {t}" for t in tables)
        shown = run_finrag("db", "psql", "-tA", "-c", sql, env=env).stdout.split()
        return dict(zip(tables, map(int, shown), strict=True))

    before = counts()
    assert before["chunks"] and before["companies"] == 1 and before["answer_cache"] == 1, before
    refused = run_finrag("docs", "rm", str(doc_id), env=env)  # stdin is not a terminal
    assert refused.returncode == ExitCode.USAGE and "pass --yes" in refused.stderr
    removed = run_finrag("docs", "rm", str(doc_id), "--yes", "--json", env=env)
    assert removed.returncode == 0, removed.stderr
    assert json.loads(removed.stdout)["companies"] == ["ACME"]
    assert counts() == dict.fromkeys(tables, 0)
    assert not [p for p in parsed if p.exists()], "the parsed-Markdown cache goes too"
    after = run_finrag("ask", question, env=env | model)
    assert after.returncode == ExitCode.NO_ANSWER, after.stderr
    assert "no filings yet" in after.stdout and "holds ." not in after.stdout


def test_cli_exit_codes_for_partial_failure(home: Path, tmp_path: Path) -> None:
    env = dict(os.environ, FINRAG_INGEST__WORKERS="0")
    pdfs.good_pdf(tmp_path / "ACME_2023_10K.pdf")
    pdfs.corrupt_pdf(tmp_path / "broken.pdf")
    partial = run_finrag("ingest", str(tmp_path), env=env)
    assert partial.returncode == ExitCode.PARTIAL
    assert "1 ingested" in partial.stderr and "1 failed" in partial.stderr
    assert "broken.pdf" in partial.stderr
    only_bad = run_finrag("ingest", str(tmp_path / "broken.pdf"), env=env)
    assert only_bad.returncode == ExitCode.FAILED


def test_interrupted_ingest_leaves_whole_documents_and_resumes(home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(4):
        pdfs.good_pdf(
            folder / f"CO{i}_2023_10K.pdf", pages=12, text=f"Company {i} sold widgets. " * 60
        )
    env = dict(os.environ, FINRAG_INGEST__WORKERS="0")
    proc = subprocess.Popen(
        [sys.executable, "-m", "finrag", "ingest", str(folder)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    settings = load_settings()
    deadline = time.monotonic() + 120
    store = None
    while time.monotonic() < deadline:  # wait until at least one document is stored
        time.sleep(0.2)
        if (home / "pgdata" / "postmaster.pid").exists():
            store = store or open_store(settings)
            if count_rows(store, "documents") >= 1:
                break
    proc.send_signal(signal.SIGINT)
    proc.wait(60)
    assert proc.returncode == ExitCode.INTERRUPTED, proc.stderr.read()
    assert "run the same command again to continue" in proc.stderr.read()
    with store.connect() as conn:
        per_doc = conn.execute(
            "SELECT d.id, count(c.id) FROM documents d LEFT JOIN chunks c ON c.document_id = d.id "
            "GROUP BY d.id"
        ).fetchall()
    done = len(per_doc)
    assert 1 <= done < 4, "interrupted midway"
    assert all(n > 0 for _, n in per_doc), "no document without its chunks"

    resumed = ingest([folder], load_settings(ingest={"workers": 0}), store)
    assert resumed.count("unchanged") == done
    assert resumed.count("ingested") == 4 - done
    store.close()


BIG_PDF = SHARED / "financebench-dev" / "pdfs" / "3M_2018_10K.pdf"  # 160 pages


def _parser_workers(pid: int) -> set[int]:
    """The parser processes ``pid`` started (Linux), not its server watchdog."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            for child in (task / "children").read_text().split():
                if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                    found.add(int(child))
    return found


@pytest.mark.skipif(not BIG_PDF.is_file(), reason=f"no large PDF at {BIG_PDF}")
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")
def test_sigterm_while_a_large_pdf_is_parsed_ends_the_worker_and_the_run(
    home: Path, tmp_path: Path
) -> None:
    """SIGTERM to the main process alone (as `timeout`, systemd and `docker stop` send
    it) while the parser process reads a 160-page 10-K: the run used to wait for the
    parse to finish (over a minute)."""
    folder = tmp_path / "filings"
    folder.mkdir()
    for name in ("A", "B"):  # parsed and stored first: discovery goes by name
        pdfs.good_pdf(folder / f"{name}CO_2023_10K.pdf", text=f"{name} Corp sold widgets. " * 40)
    shutil.copy(BIG_PDF, folder / "MMM_2018_10K.pdf")
    proc = subprocess.Popen(
        [sys.executable, "-m", "finrag", "ingest", str(folder)],
        env=dict(os.environ, FINRAG_INGEST__WORKERS="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    store = None
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # both small filings stored: the 10-K is parsing
            time.sleep(0.2)
            if (home / "pgdata" / "postmaster.pid").exists():
                store = store or open_store(load_settings())
                if count_rows(store, "documents") == 2:
                    break
        workers = _parser_workers(proc.pid)
        assert store is not None and workers, proc.stderr.read() if proc.poll() else ""
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)  # the parse alone takes over a minute
        stderr = proc.stderr.read()
        assert proc.returncode == 143, stderr
        assert "run the same command again to continue" in stderr
        assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()], "worker left"
        with store.connect() as conn:
            stored = conn.execute(
                "SELECT d.path, count(c.id) FROM documents d JOIN chunks c "
                "ON c.document_id = d.id GROUP BY d.path ORDER BY d.path"
            ).fetchall()
        assert [Path(p).name for p, _ in stored] == ["ACO_2023_10K.pdf", "BCO_2023_10K.pdf"]
        parsed = list((home / "cache" / "parsed").iterdir())
        assert len(parsed) == 2 and not [p for p in parsed if p.suffix == ".tmp"], parsed

        (folder / "MMM_2018_10K.pdf").unlink()  # (its parse is what costs a minute)
        pdfs.good_pdf(folder / "CCO_2023_10K.pdf", text="C Corp sold gadgets. " * 40)
        resumed = ingest([folder], load_settings(ingest={"workers": 0}), store)
        assert resumed.count("unchanged") == 2 and resumed.count("ingested") == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if store is not None:
            store.close()


@pytest.mark.parametrize("parser", ["marker", "llamaparse"])
def test_optional_parsers_fail_fast_with_the_reason(
    parser: str, home: Path, tmp_path: Path
) -> None:
    env = dict(os.environ, FINRAG_INGEST__WORKERS="0")
    env.pop("LLAMA_CLOUD_API_KEY", None)
    target = pdfs.good_pdf(tmp_path / "ACME_2023_10K.pdf")
    started = time.monotonic()
    result = run_finrag("ingest", str(target), "--parser", parser, env=env)
    assert time.monotonic() - started < 30
    assert result.returncode == ExitCode.MODEL
    assert f"the {parser} parser is not installed" in result.stderr
    assert "hint:" in result.stderr
