"""Chunker, tables, sentences and the EDGAR HTML converter on small, known inputs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from finrag.config import EmbedSettings
from finrag.embed import get_embedder
from finrag.ingest.chunk import Chunker
from finrag.ingest.parse import Page, ParsedDocument
from finrag.ingest.parse.html import EdgarHtmlParser
from finrag.ingest.sentences import split_sentences
from finrag.ingest.tables import split_table
from finrag.tables import parse_markdown_table, promote_header_rows


@pytest.fixture(scope="module")
def tokens():
    """MiniLM's own tokenizer: the one whose limit chunks must respect."""
    return get_embedder(EmbedSettings()).count_tokens


def doc(*pages: str) -> ParsedDocument:
    return ParsedDocument(pages=[Page(i + 1, p) for i, p in enumerate(pages)], parser="test")


def test_sentences_keep_finance_abbreviations() -> None:
    text = (
        "Apple Inc. sold $1.5 billion in the U.S. market. Net income rose 2.8% to "
        "$95.2 million. See Note 3. The Co. paid dividends."
    )
    assert split_sentences(text) == [
        "Apple Inc. sold $1.5 billion in the U.S. market.",
        "Net income rose 2.8% to $95.2 million.",
        "See Note 3.",
        "The Co. paid dividends.",
    ]


def test_long_sections_split_at_sentences_within_the_limit(tokens) -> None:
    sentences = [
        f"In fiscal {2000 + i} revenue of segment {i} grew {i}.5% to ${i},100 million "
        f"because demand for product line {i} was strong."
        for i in range(60)
    ]
    parsed = doc("# PART II\n\n## Item 7. Management's Discussion\n\n" + " ".join(sentences))
    chunks, stats = Chunker(tokens, max_tokens=128, overlap_tokens=0).chunk(parsed)
    assert len(chunks) > 5
    assert all(c.tokens <= 128 for c in chunks)
    assert all(tokens([c.embed_text])[0] == c.tokens for c in chunks), "counted exactly"
    for sentence in sentences:  # never split: each sentence lies whole inside one chunk
        assert any(sentence in c.content for c in chunks), sentence
    assert all(c.section_path == ["PART II", "Item 7. Management's Discussion"] for c in chunks)
    assert stats.clause_splits == 0


def test_overlap_repeats_whole_sentences(tokens) -> None:
    sentences = [f"Sentence number {i} talks about store count {i * 7}." for i in range(80)]
    chunks, _ = Chunker(tokens, max_tokens=96, overlap_tokens=24).chunk(doc(" ".join(sentences)))
    first_of = [c.content.split(". ")[0] + "." for c in chunks[1:]]
    assert all(s in chunks[i].content for i, s in enumerate(first_of)), "carried over whole"


def test_items_bound_chunks_and_small_subsections_merge(tokens) -> None:
    parsed = doc(
        "# PART I\n\n## Item 1. Business\n\nWe sell widgets.\n\n### Products\n\nBlue ones."
        "\n\n### Markets\n\nMostly Ohio.",
        "## Item 1A. Risk Factors\n\nWidgets may go out of fashion.",
    )
    chunks, _ = Chunker(tokens, max_tokens=256, min_tokens=64).chunk(parsed)
    assert [c.section_path for c in chunks] == [
        ["PART I", "Item 1. Business"],  # the three small sections merged, common path kept
        ["PART I", "Item 1A. Risk Factors"],  # an Item always starts a new chunk
    ]
    assert "Blue ones." in chunks[0].content and "Mostly Ohio." in chunks[0].content
    assert (chunks[1].page_start, chunks[1].page_end) == (2, 2)


def test_boilerplate_is_dropped_and_counted(tokens) -> None:
    pages = [
        f"ACME Corp | 2023 Form 10-K | {n}\n\nReal text on page {n} about revenue.\n\n{n}"
        for n in range(1, 7)
    ]
    pages[0] = (
        "|Item|Page|\n|---|---|\n|Item 1. Business|3|\n|Item 1A. Risk Factors|5|\n"
        "|Item 7. MD&A|9|\n\n" + pages[0]
    )
    chunks, stats = Chunker(tokens, max_tokens=256).chunk(doc(*pages))
    text = "\n".join(c.content for c in chunks)
    assert "Form 10-K |" not in text and "Item 1A. Risk Factors" not in text
    assert "Real text on page 6 about revenue." in text
    assert stats.dropped == {"running headers/footers": 6, "page numbers": 6, "toc tables": 1}


def test_a_long_table_splits_by_rows_with_its_header(tokens) -> None:
    rows = "\n".join(f"|Line item number {i}|{i},000|{i},500|" for i in range(80))
    table = f"|(Millions)|2018|2017|\n|---|---|---|\n{rows}"
    parsed = doc(
        f"## Item 8. Financial Statements\n\nConsolidated Statement of Cash Flows\n\n{table}"
    )
    chunks, stats = Chunker(tokens, max_tokens=256).chunk(parsed)
    tables = [c for c in chunks if c.kind == "table"]
    assert len(tables) > 3
    assert all(c.content.count("|(Millions)|2018|2017|") == 1 for c in tables), "header each"
    assert all("Consolidated Statement of Cash Flows" in c.content for c in tables)
    assert all(c.tokens <= 256 for c in tables)
    body = "\n".join(c.content for c in tables)
    assert all(f"|Line item number {i}|" in body for i in range(80)), "no row lost"
    assert "Line item number 7: 2018 7,000; 2017 7,500" in tables[0].embed_text
    assert stats.table_chunks == len(tables)


def test_header_rows_fold_into_the_header() -> None:
    table = parse_markdown_table(
        "|Years Ended December 31|||\n|---|---|---|\n|(Millions)|2018|2017|\n"
        "|Net income|$5,363|$4,869|"
    )
    folded = promote_header_rows(table)
    assert folded.header == ["Years Ended December 31 (Millions)", "2018", "2017"]
    assert folded.rows == [["Net income", "$5,363", "$4,869"]]


def test_long_headers_are_named_once(tokens) -> None:
    table = parse_markdown_table(
        "||Three Months Ended July 29, 2023|Six Months Ended July 29, 2023|\n|---|---|---|\n"
        "|Revenue|$ 9,583|$ 19,050|"
    )
    (part,) = split_table(
        table,
        title="Segments",
        units="$ in millions",
        context="",
        max_tokens=256,
        count_tokens=tokens,
    )
    assert "Columns: Three Months Ended July 29, 2023 | Six Months Ended July 29, 2023." in (
        part.embed_text
    )
    assert "Revenue: $9,583 | $19,050" in part.embed_text


HTML = """<html><body>
<div style="display:none"><ix:header><ix:nonNumeric name="dei:DocumentType">10-K</ix:nonNumeric>
<ix:nonNumeric name="dei:EntityRegistrantName">Example Corp</ix:nonNumeric>
<ix:nonNumeric name="dei:SecretHiddenFact">hidden-value</ix:nonNumeric></ix:header></div>
<div><span style="font-weight:700">PART II</span></div>
<div><span style="font-weight:700">Item 7. Management's Discussion and Analysis</span></div>
<p>Revenue grew.</p>
<table>
<tr><td></td><td colspan="5">Years ended</td></tr>
<tr><td></td><td colspan="2">2024</td><td></td><td colspan="2">2023</td></tr>
<tr><td>Net sales</td><td>$</td><td>391,035</td><td></td><td>$</td><td>383,285</td></tr>
<tr><td>Other</td><td></td><td>(2,266</td><td>)</td><td></td><td>1,006</td></tr>
<tr><td>Margin</td><td></td><td>46.2</td><td>%</td><td></td><td>44.1 %</td></tr>
</table>
<hr style="page-break-after:always"/>
<table><tr><td><table><tr><td><p>Text inside a layout table.</p></td></tr></table></td></tr></table>
</body></html>"""


def test_edgar_html_conversion(tmp_path: Path) -> None:
    path = tmp_path / "exmp-10-k-2024-11-01.html"
    path.write_text(HTML)
    parsed = EdgarHtmlParser().parse(path)
    assert parsed.declared["DocumentType"] == "10-K"
    assert parsed.declared["EntityRegistrantName"] == "Example Corp"
    assert len(parsed.pages) == 2, "split at the page break"
    first = parsed.pages[0].markdown
    assert "hidden-value" not in parsed.text
    assert "# PART II" in first
    assert "## Item 7. Management's Discussion and Analysis" in first
    table = parse_markdown_table(next(b for b in first.split("\n\n") if b.startswith("|")))
    assert table.header == ["", "Years ended 2024", "Years ended 2023"]
    assert table.rows == [
        ["Net sales", "$391,035", "$383,285"],
        ["Other", "(2,266)", "1,006"],
        ["Margin", "46.2%", "44.1%"],
    ]
    assert parsed.pages[1].markdown == "Text inside a layout table."
    assert not re.search(r"\|\s*\$\s*\|", parsed.text), "no '$' left alone in a cell"
