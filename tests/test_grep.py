"""`finrag grep`: every occurrence in the stored text, each once, checked against a
brute-force scan of the same text rebuilt in Python from the stored chunks."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from finrag.config import load_settings
from finrag.db import open_store
from finrag.errors import UsageError
from finrag.retrieve.grep import GrepQuery, GrepScope, grep, overlap, phrase_pattern
from tests.conftest import REPO, clean_env, ingested_home, run_finrag

BESTBUY = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"


@pytest.fixture(scope="module")
def grep_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The Best Buy 10-Q, ingested once for the module (its parse is shared with the other
    modules that ingest it)."""
    with ingested_home(tmp_path_factory.mktemp("grep") / "home", [BESTBUY]) as home:
        yield home


@pytest.fixture
def conn(grep_home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("FINRAG_HOME", str(grep_home))
    with open_store(load_settings()) as store, store.connect() as connection:
        yield connection


# ---- the brute force: each document's text rebuilt once, scanned with Python's re ------


def _rebuilt(conn) -> list[tuple[int, str, list[tuple[int, int]]]]:
    """Segments (document id, text, [(offset where a chunk's text begins, its page)]): a run
    of a section's text chunks glued where one repeats the previous one's last sentences
    (only the new part appended), each table part's rows (a later part without the column
    header it repeats), each heading once where a chunk first opens with it."""
    rows = conn.execute(
        "SELECT document_id, kind, page_start, section_path, content FROM chunks "
        "ORDER BY document_id, ordinal"
    ).fetchall()
    segments: list[tuple[int, str, list[tuple[int, int]]]] = []
    prev = None
    run: list = []  # the open run of text: [doc, text, marks]
    for doc, kind, page, path, content in rows:
        same_doc = prev is not None and prev[0] == doc
        for depth in range(1, len(path) + 1):
            if not same_doc or list(prev[3][:depth]) != list(path[:depth]):
                segments.append((doc, path[depth - 1], [(0, page)]))
        if kind == "text":
            glued = 0
            if same_doc and prev[1] == "text" and list(prev[3]) == list(path):
                before = prev[4]
                for k in range(min(len(content), len(before)), 0, -1):
                    boundary = k == len(content) or content[k].isspace()
                    starts_unit = k == len(before) or before[-k - 1].isspace()
                    if boundary and starts_unit and before.endswith(content[:k]):
                        glued = k
                        break
            if glued and run:
                run[2].append((len(run[1]), page))
                run[1] += content[glued:]
            else:
                run = [doc, content, [(0, page)]]
                segments.append(run)  # a list: the run grows in place
        else:
            lines = content.split("\n")
            first = next(i for i, line in enumerate(lines) if line.startswith("|"))
            body = lines[first:]
            if same_doc and prev[1] == "table":
                before = prev[4].split("\n")
                prev_first = next(i for i, line in enumerate(before) if line.startswith("|"))
                if before[:prev_first] == lines[:first] and before[prev_first:][:2] == body[:2]:
                    body = body[2:]
            segments.append((doc, "\n".join(body), [(0, page)]))
        prev = (doc, kind, page, path, content)
    return [tuple(s) for s in segments]


def _page_at(marks: list[tuple[int, int]], offset: int) -> int:
    return [page for start, page in marks if start <= offset][-1]


def brute_force(conn, pattern: str) -> Counter:
    """(document id, page, matched text) of every match, attributed to the chunk holding
    its last character."""
    found: Counter = Counter()
    for doc, text, marks in _rebuilt(conn):
        for m in re.finditer(pattern, text, re.IGNORECASE):
            found[(doc, _page_at(marks, m.end() - 1), m.group().lower())] += 1
    return found


def found_by_grep(conn, query: GrepQuery) -> Counter:
    return Counter((h.document_id, h.page_start, h.match.lower()) for h in grep(conn, query).hits)


# Each phrase as Python's re spells the same rule: whole words, spaces or hyphens between.
CASES = [
    (GrepQuery("phrase", ("comparable sales",)), r"(?<!\w)comparable[\s-]+sales(?!\w)"),
    (GrepQuery("phrase", ("revenue*",)), r"(?<!\w)revenue\w*(?!\w)"),
    (GrepQuery("phrase", ("best buy",)), r"(?<!\w)best[\s-]+buy(?!\w)"),
    (GrepQuery("regex", (r"\$[0-9]+ million",)), r"\$[0-9]+ million"),
    (GrepQuery("phrase", ("Domestic",)), r"(?<!\w)domestic(?!\w)"),
]


@pytest.mark.parametrize(("query", "python_pattern"), CASES, ids=[c[1] for c in CASES])
def test_grep_finds_what_a_brute_force_scan_finds(conn, query, python_pattern) -> None:
    expected = brute_force(conn, python_pattern)
    assert sum(expected.values()) > 0, "the pattern must occur in the 10-Q"
    assert found_by_grep(conn, query) == expected


def test_a_naive_scan_of_the_chunks_counts_repeats_that_grep_does_not(conn) -> None:
    """The chunks repeat sentences and table headers: summed over chunks, the counts are
    higher; grep's equal the rebuilt text's (above)."""
    naive, deduplicated = 0, 0
    for query, python_pattern in CASES:
        contents = [r[0] for r in conn.execute("SELECT content FROM chunks")]
        naive += sum(len(re.findall(python_pattern, c, re.IGNORECASE)) for c in contents)
        deduplicated += len(grep(conn, query).hits)
    assert naive > deduplicated
    overlapping = sum(
        1
        for prev, content in conn.execute(
            "SELECT lag(content) OVER (PARTITION BY document_id ORDER BY ordinal), content "
            "FROM chunks WHERE kind = 'text'"
        )
        if prev and overlap(prev, content)
    )
    assert overlapping >= 5, "the 10-Q's text chunks carry sentences over"


def test_headings_and_tables_count_once(conn) -> None:
    hits = grep(conn, GrepQuery("phrase", ("Domestic",))).hits
    where = Counter(h.where for h in hits)
    assert where["text"] and where["table"] and where["heading"]
    headings = Counter((h.match, tuple(h.section_path)) for h in hits if h.where == "heading")
    assert max(headings.values()) == 1  # a heading several chunks sit under: counted once


def test_near_pairs_two_phrases_within_words_or_one_sentence(conn) -> None:
    within = GrepQuery("near", ("comparable sales", "decrease*"), within=3)
    hits = grep(conn, within).hits
    assert hits
    for hit in hits:
        words = re.findall(r"\w+", hit.match)
        assert words[0].lower() in {"comparable", "decrease", "decreased", "decreases"}
        assert len(words) <= 2 + 1 + 3  # the two phrases and at most 3 words between
        assert "comparable" in hit.match.lower() and "decrease" in hit.match.lower()
    # brute force: each "comparable sales" with a "decrease..." at most 3 words away
    pattern = r"(?<!\w)comparable[\s-]+sales(?!\w)(?:\W+\w+){0,3}?\W+decrease\w*(?!\w)"
    reverse = r"(?<!\w)decrease\w*(?!\w)(?:\W+\w+){0,3}?\W+comparable[\s-]+sales(?!\w)"
    expected = sum(brute_force(conn, pattern).values()) + sum(brute_force(conn, reverse).values())
    assert len(hits) == expected
    sentence = grep(conn, GrepQuery("near", ("comparable sales", "decrease*"), within=None))
    assert len(sentence.hits) >= len(hits)
    assert all(h.match.lower() in h.sentence.lower() for h in sentence.hits)


def test_filters_counts_and_sentences(conn) -> None:
    query = GrepQuery("phrase", ("comparable sales",))
    result = grep(conn, query)
    (count,) = result.counts
    assert count.company and "Best Buy" in count.company
    assert (count.hits, count.filings) == (len(result.hits), 1)
    assert count.pages == len({h.page_start for h in result.hits})
    assert all("comparable sales" in h.sentence.lower() for h in result.hits)
    year = result.hits[0].fiscal_year
    assert len(grep(conn, query, GrepScope(fiscal_year=year)).hits) == len(result.hits)
    assert grep(conn, query, GrepScope(fiscal_year=year + 5)).hits == []
    assert grep(conn, query, GrepScope(form_type="10-K")).hits == []
    assert len(grep(conn, query, GrepScope(form_type="10-q")).hits) == len(result.hits)


def test_phrases_and_bad_patterns() -> None:
    assert re.fullmatch(r"\(\?<!.*\)going\[.*\]\+concern\(\?!.*\)", phrase_pattern("going concern"))
    assert phrase_pattern("covenant*").endswith("[[:alnum:]_]*(?![[:alnum:]_])")
    assert "\\$" in phrase_pattern("$1.5 billion")
    with pytest.raises(UsageError):
        GrepQuery("near", ("covenant",))


def test_a_phrase_matches_the_typography_filings_print(conn) -> None:
    def matches(text: str, phrase: str) -> bool:
        return conn.execute("SELECT %s ~* %s", (text, phrase_pattern(phrase))).fetchone()[0]

    assert matches("Management\u2019s Discussion and Analysis", "management's discussion")
    assert matches("management's discussion", "management's discussion")
    assert matches("substantial doubt about its ability to continue as a going\u2011concern",
                   "going concern")  # fmt: skip
    assert matches("going\u00adconcern", "going concern")
    assert not matches("managements discussion", "management's discussion")


def test_csv_cells_never_run_as_formulas() -> None:
    from finrag.cli.grep_cmd import _cell

    assert _cell('=HYPERLINK("http://x")') == '\'=HYPERLINK("http://x")'
    assert _cell("-5% decline") == "'-5% decline" and _cell("@SUM(A1)") == "'@SUM(A1)"
    assert _cell("going concern") == "going concern" and _cell(-5) == -5


def test_bad_patterns_are_usage_errors(conn) -> None:
    with pytest.raises(UsageError, match="parentheses"):
        grep(conn, GrepQuery("regex", ("sales (",)))
    with pytest.raises(UsageError, match="empty text"):
        grep(conn, GrepQuery("regex", ("x*",)))
    for zero_width in ("\\m", "(?=x)"):
        with pytest.raises(UsageError, match="empty text"):
            grep(conn, GrepQuery("regex", (zero_width,)))


def test_cli_json_csv_and_exit_codes(grep_home: Path) -> None:
    env = clean_env(FINRAG_HOME=str(grep_home), FINRAG_EMBED__BACKEND="hash")
    shown = run_finrag("grep", "comparable sales", "-c", "Best Buy", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["total"] == len(data["hits"]) == sum(c["hits"] for c in data["counts"])
    assert {h["document_id"] for h in data["hits"]} and data["chunks_scanned"] > 0
    assert 'hits of "comparable sales"' in shown.stderr

    as_csv = run_finrag("grep", "comparable sales", "--csv", "--counts", env=env)
    assert as_csv.returncode == 0, as_csv.stderr
    (row,) = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert int(row["hits"]) == data["total"] and row["form_type"] == "10-Q"

    none = run_finrag("grep", "going concern", "--json", env=env)
    assert none.returncode == 7, none.stderr  # as search: nothing found, JSON still printed
    assert json.loads(none.stdout)["hits"] == [] and "nothing found" in none.stderr
    unknown = run_finrag("grep", "sales", "-c", "Acme Widgets", env=env)
    assert unknown.returncode == 2 and "no company" in unknown.stderr
    two = run_finrag("grep", "sales", "--regex", "sales", env=env)
    assert two.returncode == 2 and "one of PHRASE" in two.stderr
    within = run_finrag("grep", "sales", "--within", "3", env=env)
    assert within.returncode == 2 and "--near" in within.stderr
