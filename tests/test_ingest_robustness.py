"""Bad input at ingest (binary files under text names, huge lines, symlink loops) and
parser workers that die with their parent. Real files, real Postgres, hashed embeddings."""

from __future__ import annotations

import codecs
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from finrag.config import EmbedSettings
from finrag.embed import get_embedder
from finrag.errors import ExitCode
from finrag.ingest.chunk import Chunker
from finrag.ingest.discover import discover
from finrag.ingest.metadata import from_content
from finrag.ingest.parse import MAX_PARAGRAPH_CHARS, Page, ParsedDocument, bound_paragraphs
from finrag.ingest.pipeline import ingest
from finrag.ingest.sentences import split_sentences
from finrag.ingest.tables import find_units
from finrag.tables import tighten
from tests.conftest import REPO, run_finrag

SAMPLE = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"
MEMO = "# Memo\n\nACME's guidance for 2024 is unchanged. Revenue grew in every region.\n"


def garbage(size: int = 64 * 1024, seed: int = 12) -> bytes:
    return random.Random(seed).randbytes(size)


def stored_chunks(st) -> list[tuple[str, int]]:
    with st.connect() as conn:
        return conn.execute("SELECT content, tokens FROM chunks ORDER BY ordinal").fetchall()


# ---- 1. files whose content is not what their extension says ---------------------------


def test_binary_files_under_text_names_fail_with_the_reason(store, tmp_path: Path) -> None:
    settings, st = store
    folder = tmp_path / "filings"
    folder.mkdir()
    (folder / "garbage.html").write_bytes(garbage())
    (folder / "garbage.txt").write_bytes(garbage(seed=13))
    (folder / "garbage.md").write_bytes(garbage(seed=14))
    # Text for 20 KB, then a binary tail: the NUL bytes come after the first 4 KB.
    (folder / "tail.txt").write_bytes(b"Revenue grew. " * 1500 + garbage(4096, seed=15))
    (folder / "plain.html").write_text("Revenue grew 5% in 2023. No markup at all.\n" * 20)
    (folder / "latin1.txt").write_bytes("Caf\xe9 sales in Z\xfcrich rose 4%.\n".encode("latin-1"))
    (folder / "utf16.txt").write_bytes(
        codecs.BOM_UTF16_LE + "Net income in M\xfcnchen rose 7%.\n".encode("utf-16-le")
    )
    (folder / "memo.md").write_text(MEMO)

    report = ingest([folder], settings, st)
    by_name = {Path(r.path).name: r for r in report.results}
    for name in ("garbage.html", "garbage.txt", "garbage.md", "tail.txt"):
        assert by_name[name].status == "failed", name
        assert "binary" in by_name[name].reason, (name, by_name[name].reason)
        assert by_name[name].hint, name
    assert by_name["plain.html"].status == "failed"
    assert "no HTML markup" in by_name["plain.html"].reason
    for name in ("memo.md", "latin1.txt", "utf16.txt"):
        assert by_name[name].status == "ingested", (name, by_name[name].reason)
    contents = "\n".join(c for c, _ in stored_chunks(st))
    assert "Café sales in Zürich" in contents and "Net income in München" in contents
    assert all(ch.isprintable() or ch in "\n\t" for ch in contents), "no binary chunk stored"


# ---- 2. huge lines: bounded work, bounded chunks ---------------------------------------


def one_line_filing(size: int) -> str:
    """A 10-K's cover and then short sentences, all on one line."""
    cover = (
        "FORM 10-K For the fiscal year ended December 31, 2023 ACME HOLDINGS INC. "
        "(Exact name of registrant as specified in its charter) "
    )
    sentences = []
    total = len(cover)
    i = 0
    while total < size:
        sentence = f"Store {i} sold {i % 97} units. "
        sentences.append(sentence)
        total += len(sentence)
        i += 1
    return cover + "".join(sentences)


def test_a_two_megabyte_line_ingests_in_chunks_within_the_limit(
    store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, st = store
    text = one_line_filing(2_000_000)
    assert "\n" not in text
    path = tmp_path / "ACME_2023_10K.txt"
    path.write_text(text)
    # Punkt runs its patterns under a 5 s limit (nltk.redos): a 50 MB paragraph failed
    # the file. What reaches the splitter is bounded instead.
    longest = []

    def split_sentences_spy(paragraph: str) -> list[str]:
        longest.append(len(paragraph))
        return split_sentences(paragraph)

    monkeypatch.setattr("finrag.ingest.chunk.split_sentences", split_sentences_spy)

    report = ingest([path], settings, st)
    (result,) = report.results
    assert result.status == "ingested", result.reason
    assert result.metadata["fiscal_year"] == 2023, result.metadata
    chunks = stored_chunks(st)
    limit = get_embedder(settings.embed).max_tokens
    assert max(tokens for _, tokens in chunks) <= limit
    assert longest and max(longest) <= MAX_PARAGRAPH_CHARS
    stored = " ".join(content for content, _ in chunks)
    last = text.rstrip().rsplit("Store ", 1)[1]
    for sentence in ("Store 0 sold 0 units.", "Store 50000 sold 45 units.", f"Store {last}"):
        assert sentence in stored, sentence


def test_long_lines_and_paragraphs_are_cut_at_sentence_ends() -> None:
    sentence = "Revenue rose in every region. "
    line = sentence * 1000  # 30,000 characters on one line
    bounded = bound_paragraphs(line, limit=1000)
    paragraphs = bounded.split("\n\n")
    assert len(paragraphs) > 25
    assert all(len(p) <= 1000 for p in paragraphs)
    assert all(p.endswith("region.") for p in paragraphs), "cut where a sentence ends"
    assert " ".join(paragraphs) == line.strip(), "nothing lost"
    # Short lines of one long paragraph (no blank line): cut between lines.
    wrapped = "\n".join([sentence.strip()] * 1000)
    assert all(len(p) <= 1000 for p in bound_paragraphs(wrapped, limit=1000).split("\n\n"))
    # Table rows stay together however long the table.
    table = "|Item|2023|\n|---|---|\n" + "\n".join(f"|Row {i}|{i}|" for i in range(500))
    assert bound_paragraphs(table, limit=1000) == table
    # No whitespace at all: a hard cut.
    assert [len(p) for p in bound_paragraphs("x" * 2500, limit=1000).split("\n\n")] == [
        1000,
        1000,
        500,
    ]


@pytest.fixture(scope="module")
def minilm_tokens():
    """MiniLM's own tokenizer: the one whose limit chunks must respect."""
    return get_embedder(EmbedSettings()).count_tokens


def doc(*pages: str) -> ParsedDocument:
    return ParsedDocument(pages=[Page(i + 1, p) for i, p in enumerate(pages)], parser="test")


def test_a_word_longer_than_the_model_reads_is_cut(minilm_tokens) -> None:
    # A run of figures with no space (a table flattened by a bad export): ~4,000 tokens.
    word = ",".join(str(i) for i in range(1500))
    chunks, _ = Chunker(minilm_tokens, max_tokens=128).chunk(doc(f"Intro text. {word} End."))
    assert all(c.tokens <= 128 for c in chunks)
    assert "".join(c.content.replace(" ", "") for c in chunks).count(word) == 1, "all kept"


def test_a_malformed_pipe_block_is_cut_within_the_limit(minilm_tokens) -> None:
    rows = "\n".join(f"| row {i} | no separator line below the first row |" for i in range(300))
    chunks, _ = Chunker(minilm_tokens, max_tokens=128).chunk(doc(rows))
    assert len(chunks) > 10
    assert all(c.tokens <= 128 for c in chunks)
    assert "row 299" in chunks[-1].content


def test_the_cover_page_is_read_from_the_first_characters_only() -> None:
    caption = "ACME HOLDINGS INC.\n(Exact name of registrant as specified in its charter)"
    near = doc("FORM 10-K\n\n" + caption)
    assert from_content(near)["company"] == "ACME HOLDINGS INC."
    # The same caption after 200 KB of text on the first page is not the cover's.
    far = doc("FORM 10-K\n\n" + "Sales rose. " * 20_000 + "\n" + caption)
    assert "company" not in from_content(far)


def test_bounded_regexes_keep_their_matches() -> None:
    # What the rewritten patterns found before, they still find (these pass either way;
    # the cases after them took seconds to minutes before).
    assert split_sentences("First item.\n- second item\n\nThird. Fourth.") == [
        "First item.",
        "- second item",
        "Third.",
        "Fourth.",
    ]
    assert split_sentences("A.\n \n- b") == ["A.", "- b"]
    assert tighten("$ 8,890 and ( 2,266 ) and 46.2 %") == "$8,890 and (2,266) and 46.2%"
    assert find_units("(Dollars in millions, except per share)") == (
        "Dollars in millions, except per share"
    )
    assert find_units("Amounts in thousands") == "Amounts in thousands"
    assert split_sentences("\n " * 20_000 + "- item") == ["- item"]
    assert tighten("a" + " " * 20_000 + "b") == "a" + " " * 20_000 + "b"
    assert find_units("in " * 3000) is None


# ---- 3. symlink loops and dangling links are reported, not silently left out --------------


def linked_tree(tmp_path: Path) -> Path:
    folder = tmp_path / "filings"
    (folder / "sub").mkdir(parents=True)
    (folder / "memo.md").write_text(MEMO)
    (folder / "a").symlink_to("b")
    (folder / "b").symlink_to("a")
    (folder / "sub" / "up").symlink_to("..")
    (folder / "sub" / "top").symlink_to("../..")  # above the folder given: leads back too
    (folder / "gone.md").symlink_to(tmp_path / "nowhere.md")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "notes.md").write_text("# Notes\n\nACME opened a store in Ohio.\n")
    (folder / "linked").symlink_to(outside)
    return folder


def test_discover_reports_symlink_loops_and_dangling_links(tmp_path: Path) -> None:
    folder = linked_tree(tmp_path)
    files, skipped = discover([folder])
    assert [f.path for f in files] == [folder / "linked" / "notes.md", folder / "memo.md"]
    reasons = {s.path: s.reason for s in skipped}
    assert "symbolic link loop" in reasons[folder / "a"]
    assert "symbolic link loop" in reasons[folder / "b"]
    assert "symbolic link loop" in reasons[folder / "sub" / "up"]
    assert str(folder) in reasons[folder / "sub" / "up"], "says where it points"
    assert "symbolic link loop" in reasons[folder / "sub" / "top"]
    assert "broken symbolic link" in reasons[folder / "gone.md"]
    assert str(tmp_path / "nowhere.md") in reasons[folder / "gone.md"]
    # Given directly, a loop is reported the same way (resolving it used to raise).
    _, direct = discover([folder / "a"])
    assert [s.path for s in direct] == [folder / "a"]
    assert "symbolic link loop" in direct[0].reason


def test_cli_reports_skipped_links_and_rejected_files(home: Path, tmp_path: Path) -> None:
    folder = linked_tree(tmp_path)
    (folder / "garbage.html").write_bytes(garbage())
    env = dict(os.environ, FINRAG_INGEST__WORKERS="0")
    result = run_finrag("ingest", str(folder), "--json", env=env)
    assert result.returncode == ExitCode.PARTIAL, result.stderr
    files = {Path(f["path"]).name: f for f in json.loads(result.stdout)["files"]}
    assert files["garbage.html"]["status"] == "failed"
    assert "binary" in files["garbage.html"]["reason"]
    for name in ("a", "b", "up", "top", "gone.md"):
        assert files[name]["status"] == "skipped", name
    assert "symbolic link loop" in files["up"]["reason"]
    assert "broken symbolic link" in files["gone.md"]["reason"]
    assert {files["memo.md"]["status"], files["notes.md"]["status"]} == {"ingested"}
    assert f"skipped: {folder / 'sub' / 'up'}: symbolic link loop" in result.stderr
    assert f"skipped: {folder / 'gone.md'}: broken symbolic link" in result.stderr
    assert f"failed: {folder / 'garbage.html'}: binary" in result.stderr


# ---- 4. parser workers die with their parent ---------------------------------------------


def _kind(proc: psutil.Process) -> str | None:
    try:
        cmdline = " ".join(proc.cmdline())
    except psutil.Error:
        return None
    if "multiprocessing.spawn" in cmdline:
        return "worker"
    if "multiprocessing.resource_tracker" in cmdline:
        return "resource tracker"
    return None


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_parser_worker_and_resource_tracker_die_with_a_killed_parent(
    home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "filings"
    folder.mkdir()
    (folder / SAMPLE.name).symlink_to(SAMPLE)  # 30 pages: the worker parses for seconds
    env = dict(os.environ, FINRAG_INGEST__WORKERS="1")
    parent = subprocess.Popen(
        [sys.executable, "-m", "finrag", "ingest", str(folder)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    helpers: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and "worker" not in helpers.values():
            assert parent.poll() is None, parent.stderr.read().decode()
            for child in psutil.Process(parent.pid).children(recursive=True):
                if kind := _kind(child):
                    helpers[child.pid] = kind
            time.sleep(0.1)
        assert "worker" in helpers.values(), "the parser worker never started"
        assert "resource tracker" in helpers.values(), "the pool's queues start one"
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(pid) for pid in helpers):
            time.sleep(0.2)
        left = {f"{kind} {pid}" for pid, kind in helpers.items() if _alive(pid)}
        assert not left, f"still running after their parent was killed: {left}"
    finally:
        parent.kill()
        parent.wait(10)
        for pid in helpers:  # only the processes this test started
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
