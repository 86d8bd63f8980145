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
from pydantic import SecretStr

from finrag.config import EmbedSettings, load_settings
from finrag.db import open_store
from finrag.embed import HashEmbedder, get_embedder
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


# ---- 5. big inputs: linear chunking, each text embedded once, a limit per document ------

SENTENCE = "Net revenue rose in every region because of higher demand."
CHUNK_ONE_LINE = """
import math, sys
from finrag.embed import HashEmbedder
from finrag.ingest.chunk import Chunker
from finrag.ingest.parse import Page, ParsedDocument, bound_paragraphs
text = sys.stdin.read()
tokens = HashEmbedder().count_tokens
doc = ParsedDocument(pages=[Page(1, bound_paragraphs(text))], parser="text")
chunker = Chunker(tokens, max_tokens=256, overlap_tokens=0)
chunks, _ = chunker.chunk(doc, "ACME 10-K FY2023")
header = chunks[0].embed_text[: -len(chunks[0].content) - 1]
print(len(chunks), tokens([header])[0], max(c.tokens for c in chunks))
"""


def test_a_five_megabyte_line_of_one_sentence_is_chunked_whole() -> None:
    """Liveness, in a subprocess with a generous timeout (no clock in the assertion): the
    50 MB line took 173 s to chunk, this one's tenth of it used to take ~15 s."""
    copies = 5_000_000 // (len(SENTENCE) + 1)
    text = " ".join([SENTENCE] * copies)
    done = subprocess.run(
        [sys.executable, "-c", CHUNK_ONE_LINE],
        input=text,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    chunks, header_tokens, longest = map(int, done.stdout.split())
    # The hash tokenizer counts the sentence's 10 words and its period (+2 specials); a
    # chunk holds as many whole sentences as the budget the header leaves (no overlap).
    per_sentence = HashEmbedder().count_tokens([SENTENCE])[0] - 2
    per_chunk = (256 - header_tokens - 4) // per_sentence
    assert chunks == -(-copies // per_chunk)
    assert longest <= 256


class CountingEmbedder:
    """The hash embedder, recording every call to ``embed``."""

    def __init__(self) -> None:
        self.inner = HashEmbedder()
        self.spec, self.max_tokens = self.inner.spec, self.inner.max_tokens
        self.calls: list[list[str]] = []

    def count_tokens(self, texts):
        return self.inner.count_tokens(texts)

    def embed(self, texts):
        self.calls.append(list(texts))
        return self.inner.embed(texts)


@pytest.fixture
def db_store(database_url: str):
    """(settings, store) on a new database of the shared server, parsing in-process."""
    settings = load_settings(database_url=SecretStr(database_url), ingest={"workers": 0})
    opened = open_store(settings)
    yield settings, opened
    opened.close()


def test_identical_chunk_texts_are_embedded_once_within_and_across_documents(
    db_store, tmp_path: Path
) -> None:
    settings, st = db_store
    first = tmp_path / "q1" / "ACME_2023_10K.txt"
    first.parent.mkdir()
    first.write_text(" ".join([SENTENCE] * 400))
    embedder = CountingEmbedder()
    (result,) = ingest([first], settings, st, embedder=embedder).results
    assert result.status == "ingested", result.reason
    with st.connect() as conn:
        texts = [r[0] for r in conn.execute("SELECT embed_text FROM chunks ORDER BY ordinal")]
    unique = set(texts)
    assert len(texts) == result.chunks > len(unique) >= 1
    # Each distinct text once, in one call (fewer than a batch of them).
    assert len(embedder.calls) == 1 and sorted(embedder.calls[0]) == sorted(unique)
    assert result.vectors_reused == len(texts) - len(unique)

    # Another filing repeating the first one's text, and one new sentence at its end: only
    # the chunk holding that sentence is embedded; the rest come from the store.
    second = tmp_path / "q2" / "ACME_2023_10K.txt"
    second.parent.mkdir()
    second.write_text(first.read_text() + " Backlog fell at the Ohio plant.")
    embedder.calls.clear()
    (result,) = ingest([second], settings, st, embedder=embedder).results
    assert result.status == "ingested", result.reason
    (embedded,) = embedder.calls
    assert embedded and all("Backlog fell" in t for t in embedded)
    assert result.vectors_reused == result.chunks - len(embedded)
    with st.connect() as conn:
        # The same text has the same vector in both documents; every chunk has one.
        assert conn.execute(
            "SELECT count(*) FROM chunks a JOIN chunks b USING (embed_text) "
            "WHERE a.document_id < b.document_id AND a.embedding <> b.embedding"
        ).fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM chunks WHERE embedding IS NULL").fetchone() == (
            0,
        )
    # --rebuild embeds again what the store holds: each distinct text of the file, once.
    embedder.calls.clear()
    (result,) = ingest([first], settings, st, embedder=embedder, rebuild=True).results
    assert result.status == "replaced", result.reason
    assert len(embedder.calls) == 1 and sorted(embedder.calls[0]) == sorted(unique)


def test_a_document_over_the_chunk_limit_fails_with_the_reason_and_stores_nothing(
    db_store, tmp_path: Path
) -> None:
    settings, st = db_store
    settings = settings.model_copy(
        update={"ingest": settings.ingest.model_copy(update={"max_chunks_per_document": 5})}
    )
    folder = tmp_path / "filings"
    folder.mkdir()
    (folder / "ACME_2023_10K.txt").write_text(one_line_filing(200_000))
    (folder / "memo.md").write_text(MEMO)
    report = ingest([folder], settings, st)
    by_name = {Path(r.path).name: r for r in report.results}
    runaway = by_name["ACME_2023_10K.txt"]
    assert runaway.status == "failed"
    assert "more than 5 chunks (ingest.max_chunks_per_document)" in runaway.reason
    assert "FINRAG_INGEST__MAX_CHUNKS_PER_DOCUMENT" in runaway.hint
    assert by_name["memo.md"].status == "ingested"
    with st.connect() as conn:
        paths = [r[0] for r in conn.execute("SELECT path FROM documents")]
        assert paths == [str(folder / "memo.md")], "nothing of the runaway file stored"


def test_the_report_lists_every_file_of_a_folder_with_a_runaway_file(
    home: Path, tmp_path: Path
) -> None:
    """The issue's folder, small: a one-line text over the limit, a garbage .html, a
    symbolic link loop and a good file. Every one is in the report, with its reason."""
    folder = tmp_path / "filings"
    folder.mkdir()
    (folder / "ACME_2023_10K.txt").write_text(" ".join([SENTENCE] * 30_000))  # 1.8 MB
    (folder / "garbage.html").write_bytes(garbage())
    (folder / "a").symlink_to("b")
    (folder / "b").symlink_to("a")
    (folder / "memo.md").write_text(MEMO)
    env = dict(os.environ, FINRAG_INGEST__WORKERS="0", FINRAG_INGEST__MAX_CHUNKS_PER_DOCUMENT="100")
    result = run_finrag("ingest", str(folder), "--json", env=env, timeout=600)
    assert result.returncode == ExitCode.PARTIAL, result.stderr
    files = {Path(f["path"]).name: f for f in json.loads(result.stdout)["files"]}
    assert set(files) == {"ACME_2023_10K.txt", "garbage.html", "a", "b", "memo.md"}
    assert files["ACME_2023_10K.txt"]["status"] == "failed"
    assert "more than 100 chunks" in files["ACME_2023_10K.txt"]["reason"]
    assert files["garbage.html"]["status"] == "failed"
    assert "binary" in files["garbage.html"]["reason"]
    assert files["a"]["status"] == files["b"]["status"] == "skipped"
    assert "symbolic link loop" in files["a"]["reason"]
    assert files["memo.md"]["status"] == "ingested"
    assert f"failed: {folder / 'ACME_2023_10K.txt'}: more than 100 chunks" in result.stderr
