"""Output a script can rely on: tab-separated tables when piped, exit codes for a missing
path and a filter nothing matches, snippets in search, ingest's progress in a log."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from rich.console import Console
from rich.text import Text

from finrag.cli import render
from finrag.db.embedded import EmbeddedServer
from finrag.errors import ExitCode
from tests.conftest import clean_env, run_finrag
from tests.pdfs import good_pdf

BOX = set("│┃━┏┓┗┛┡┩└┘├┤┼╇─")


@pytest.fixture(scope="module")
def filed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], object]]:
    """A home with one small 10-K ingested through the CLI, stderr piped (a log)."""
    folder = tmp_path_factory.mktemp("pipes")
    (folder / "filings").mkdir()
    good_pdf(folder / "filings" / "ACME_2023_10K.pdf", pages=6)
    home = folder / "home"
    env = clean_env(
        FINRAG_HOME=str(home),
        FINRAG_EMBED__BACKEND="hash",
        XDG_CONFIG_HOME=str(folder / "xdg"),
    )
    ingested = run_finrag("ingest", str(folder / "filings"), env=env)
    assert ingested.returncode == 0, ingested.stderr
    try:
        yield env, ingested
    finally:
        EmbeddedServer(home).delete_cluster()


def test_ingest_in_a_log_says_each_stage_with_pages_and_chunks(filed) -> None:
    _, ingested = filed
    log = ingested.stderr
    assert "ingesting 1 file" in log
    assert "ACME_2023_10K.pdf: parsing" in log
    assert "ACME_2023_10K.pdf: 6 pages read in" in log
    assert "chunks embedded in" in log
    assert "ingested ACME_2023_10K.pdf: 6 pages," in log
    assert ingested.stdout == ""


def test_piped_docs_list_is_tab_separated_with_a_header(filed) -> None:
    env, _ = filed
    shown = run_finrag("docs", "list", env=env)
    assert shown.returncode == 0, shown.stderr
    assert not BOX & set(shown.stdout), "no box drawing when piped"
    lines = shown.stdout.splitlines()
    header = lines[0].split("\t")
    assert header == ["id", "company", "ticker", "form", "period", "pages", "chunks", "file"]
    row = dict(zip(header, lines[1].split("\t"), strict=True))
    assert row["file"] == "ACME_2023_10K.pdf" and row["pages"] == "6"
    assert row["form"] == "10-K" and row["period"] == "FY2023"


def test_ingest_of_a_missing_path_is_a_usage_error_before_any_work(filed, tmp_path) -> None:
    env, _ = filed
    other = good_pdf(tmp_path / "OTHER_2022_10K.pdf")
    missing = tmp_path / "nonexistent"
    shown = run_finrag("ingest", str(other), str(missing), env=env)
    assert shown.returncode == ExitCode.USAGE
    assert str(missing) in shown.stderr and shown.stdout == ""
    listed = run_finrag("docs", "list", "--json", env=env)
    assert [d["document"] for d in json.loads(listed.stdout)] == ["ACME_2023_10K.pdf"]


def test_search_says_which_filter_it_widened_even_when_quiet(filed) -> None:
    env, _ = filed
    for quiet in ([], ["--quiet"]):
        shown = run_finrag(*quiet, "search", "revenue", "--year", "1999", env=env)
        assert shown.returncode == 0, shown.stderr
        assert "no filing matches fiscal year 1999" in shown.stderr
        assert "--strict-filters" in shown.stderr
    data = json.loads(run_finrag("search", "revenue", "--year", "1999", "--json", env=env).stdout)
    assert data["widened"] == ["years"] and data["widened_filters"] == ["fiscal year 1999"]
    assert data["hits"], "widened: the other years' hits"


def test_strict_filters_fail_instead_of_widening(filed) -> None:
    env, _ = filed
    shown = run_finrag("search", "revenue", "--year", "1999", "--strict-filters", env=env)
    assert shown.returncode == ExitCode.NO_ANSWER
    assert shown.stdout == ""
    assert "no filing matches fiscal year 1999" in shown.stderr
    kept = run_finrag("search", "revenue", "--year", "2023", "--strict-filters", env=env)
    assert kept.returncode == 0, kept.stderr
    assert "warning" not in kept.stderr


def test_search_shows_each_hit_with_a_snippet(filed) -> None:
    env, _ = filed
    shown = run_finrag("search", "operating income", "--k", "2", env=env)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    header = lines[0].split("\t")
    assert header[0] == "#" and header[-1] == "snippet"
    snippet = lines[1].split("\t")[-1]
    assert "Operating income rose 12%" in snippet


def test_a_table_on_a_narrow_terminal_cuts_no_number(monkeypatch: pytest.MonkeyPatch) -> None:
    console = Console(width=60, force_terminal=True, record=True, color_system=None)
    monkeypatch.setattr(render, "out", console)
    names = ["variant", *[f"hit@{k}" for k in (1, 3, 5, 10)], "MRR@10", "recall@5", "prec@5"]
    names += ["F1@5", "text@5", "p50 ms"]
    rows = [["hybrid+filters+rerank", *["0.333"] * 10, "17"], ["dense", *["1.000"] * 10, "4"]]
    render.print_table(
        [render.Column(n, no_wrap=True) for n in names], rows, title="retrieval on dev.jsonl"
    )
    shown = console.export_text()
    assert "…" not in shown
    assert all(n in shown for n in names) and "hybrid+filters+rerank" in shown
    assert shown.count("0.333") == 10 and shown.count("1.000") == 10
    assert max(len(line) for line in shown.splitlines()) <= 60


def test_piped_table_cells_keep_to_one_field(monkeypatch, capsys) -> None:
    monkeypatch.setattr(render, "out", Console(force_terminal=False))
    render.print_table(
        ["a", "b"], [["x\ty", Text("two\nlines")], [None, 3]], title="t", caption="c"
    )
    assert capsys.readouterr().out == "# t\n# c\na\tb\nx y\ttwo lines\n\t3\n"
