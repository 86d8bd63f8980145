"""Markdown pages -> section-aware text chunks and one chunk (or more) per table.

Parts and Items (10-K/10-Q) and Markdown headings bound chunks; every chunk knows
its heading path and pages; sentences are never split (a 'sentence' longer than the
model reads is cut at clauses and counted); small sub-sections merge into the next
one; every chunk's embedded text fits the embedder, measured with its tokenizer.
That text opens with a header (finrag.ingest.sections): the document ("3M 10-K FY2022"),
the section's kind in words and the heading path; the chunk's own budget is what the
header leaves, so no chunk loses its tail to the embedder's truncation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from finrag.errors import DocumentParseError
from finrag.ingest.blocks import Block, to_blocks
from finrag.ingest.boilerplate import remove_boilerplate
from finrag.ingest.injection import instruction_like
from finrag.ingest.parse import ParsedDocument
from finrag.ingest.sections import chunk_header, classify_section
from finrag.ingest.sentences import split_clauses, split_sentences
from finrag.ingest.tables import find_units, split_table
from finrag.tables import parse_markdown_table

# 2: chunks carry the instruction-like flag; documents chunked by 1 read as stale, and
# `finrag ingest --rebuild` flags them. 3: the header (document, section kind, path) in
# front of every chunk's embedded text, and the section kind stored.
CHUNKER_VERSION = 3

_MAX_PATH_DEPTH = 4
_TITLE_MAX_CHARS = 160
_SAFETY_TOKENS = 4  # joining units can merge or split a word-piece at the seams
_SPLITS_KEPT = 256  # long paragraphs whose sentences are remembered (a file repeating them)

CountTokens = Callable[[Sequence[str]], list[int]]


@dataclass
class Chunk:
    ordinal: int
    kind: str  # text | table
    page_start: int
    page_end: int
    section_path: list[str]
    content: str
    embed_text: str
    tokens: int
    # The words that read as instructions to a model (finrag.ingest.injection), or None.
    flagged: str | None = None
    section_kind: str = "other"  # finrag.ingest.sections.SECTION_KINDS
    ocr: bool = False  # on a page read by OCR


@dataclass
class ChunkStats:
    text_chunks: int = 0
    table_chunks: int = 0
    dropped: Counter = field(default_factory=Counter)  # boilerplate removed, by kind
    clause_splits: int = 0  # sentences longer than the model reads, cut at clauses
    table_summaries_cut: int = 0  # a single table row longer than the model reads


@dataclass
class _Unit:
    text: str
    tokens: int
    page: int
    paragraph: int  # units of one paragraph join with a space, others with a blank line


class Chunker:
    def __init__(
        self,
        count_tokens: CountTokens,
        *,
        max_tokens: int,
        min_tokens: int = 64,
        overlap_tokens: int = 32,
        max_chunks: int = 0,
    ) -> None:
        """``max_chunks`` (0: no limit): a document that makes more raises
        DocumentParseError as soon as it does, so a runaway file is never chunked whole."""
        self.count = count_tokens
        self.max_tokens = max_tokens
        self.min_tokens = min_tokens
        self.overlap_tokens = overlap_tokens
        self.max_chunks = max_chunks
        # Texts met again (headers of one section, a repeated paragraph or chunk) are
        # counted once: a text's tokens and flags depend on the text alone.
        self._counted: dict[str, int] = {}
        self._flags: dict[tuple[tuple[str, ...], str], str | None] = {}
        self._splits: dict[str, tuple[list[str], list[int]]] = {}  # paragraph: sentences

    def chunk(self, parsed: ParsedDocument, document: str = "") -> tuple[list[Chunk], ChunkStats]:
        """``document`` opens every chunk's embedded text ("3M 10-K FY2022", see
        finrag.ingest.sections.document_context)."""
        stats = ChunkStats()
        blocks, dropped = remove_boilerplate(to_blocks(parsed), len(parsed.pages))
        stats.dropped.update(dropped)
        chunks: list[Chunk] = []
        path: list[tuple[int, str]] = []
        units: list[_Unit] = []
        unit_path: list[str] = []
        paragraph_no = 0

        def emit(
            kind: str,
            content: str,
            embed_text: str,
            tokens: int,
            pages: list[int],
            section: list[str],
            section_kind: str,
        ) -> None:
            if self.max_chunks and len(chunks) >= self.max_chunks:
                raise DocumentParseError(
                    f"more than {self.max_chunks:,} chunks (ingest.max_chunks_per_document): "
                    f"stopped at page {min(pages)}, nothing of it stored",
                    hint="a file this long is usually a runaway export; to ingest it anyway, "
                    "raise FINRAG_INGEST__MAX_CHUNKS_PER_DOCUMENT (0: no limit)",
                )
            chunks.append(
                Chunk(
                    len(chunks),
                    kind,
                    min(pages),
                    max(pages),
                    list(section),
                    content,
                    embed_text,
                    tokens,
                    # The model reads the section path too (in each excerpt's label).
                    self._flagged(section, content),
                    section_kind,
                )
            )
            if kind == "text":
                stats.text_chunks += 1
            else:
                stats.table_chunks += 1

        def measure(run: list[_Unit]) -> tuple[str, str, int]:
            content = _join(run)
            embed_text = _embed_text(self._header(document, unit_path), content)
            return content, embed_text, self._count_one(embed_text)

        def kind() -> str:
            return classify_section(unit_path)

        def flush(keep_overlap: bool) -> None:
            nonlocal units
            if not units:
                return
            content, embed_text, tokens = measure(units)
            while tokens > self.max_tokens and len(units) > 1:  # rare seam effects
                carry = units.pop()
                emit("text", *measure(units), [u.page for u in units], unit_path, kind())
                units = [carry]
                content, embed_text, tokens = measure(units)
            emit("text", content, embed_text, tokens, [u.page for u in units], unit_path, kind())
            if keep_overlap and self.overlap_tokens > 0:
                carried: list[_Unit] = []
                total = 0
                for unit in reversed(units):
                    if total + unit.tokens > self.overlap_tokens:
                        break
                    carried.insert(0, unit)
                    total += unit.tokens
                units = carried
            else:
                units = []

        def used() -> int:
            return sum(u.tokens for u in units)

        for index, block in enumerate(blocks):
            if block.kind == "heading":
                hard = block.level <= 2
                if hard or used() >= self.min_tokens:
                    flush(keep_overlap=False)
                path = [(lvl, t) for lvl, t in path if lvl < block.level][: _MAX_PATH_DEPTH - 1]
                path.append((block.level, block.text))
                section = [t for _, t in path]
                # A small section merging into the next keeps only the path both share.
                unit_path = _common_prefix(unit_path, section) if units else section
                continue
            if block.kind == "table":
                flush(keep_overlap=False)
                unit_path = [t for _, t in path]
                self._emit_table(
                    block, blocks[max(0, index - 2) : index], unit_path, document, emit, stats
                )
                continue
            paragraph_no += 1
            budget = self.max_tokens - self._header_tokens(document, unit_path) - _SAFETY_TOKENS
            for unit in self._units(block, paragraph_no, budget, stats):
                if units and used() + unit.tokens > budget:
                    flush(keep_overlap=True)
                    if used() + unit.tokens > budget:  # no room for overlap beside this one
                        units.clear()
                units.append(unit)
        flush(keep_overlap=False)
        return chunks, stats

    def _header(self, document: str, section: list[str]) -> str:
        return chunk_header(document, classify_section(section), section)

    def _header_tokens(self, document: str, section: list[str]) -> int:
        header = self._header(document, section)
        return self._count_one(header) if header else 0

    def _count_one(self, text: str) -> int:
        if (tokens := self._counted.get(text)) is None:
            tokens = self._counted[text] = self.count([text])[0]
        return tokens

    def _flagged(self, section: list[str], content: str) -> str | None:
        key = (tuple(section), content)
        if key not in self._flags:
            self._flags[key] = instruction_like("\n".join([*section, content]))
        return self._flags[key]

    def _units(self, block: Block, paragraph: int, budget: int, stats: ChunkStats) -> list[_Unit]:
        whole = self._count_one(block.text) - 2
        if whole <= budget:
            return [_Unit(block.text, whole, block.page, paragraph)]
        units: list[_Unit] = []
        for sentence, count in zip(*self._sentences(block.text), strict=True):
            if count - 2 <= budget:
                units.append(_Unit(sentence, count - 2, block.page, paragraph))
                continue
            stats.clause_splits += 1
            pieces = [p for c in split_clauses(sentence) for p in self._words_within(c, budget)]
            counts = self.count(pieces) if pieces else []
            units += [
                _Unit(p, c - 2, block.page, paragraph) for p, c in zip(pieces, counts, strict=True)
            ]
        return units

    def _sentences(self, paragraph: str) -> tuple[list[str], list[int]]:
        """The paragraph's sentences and their tokens. One tokenizer call for all of them:
        one call each cost more than the counting (a 50 MB line is ~500,000 sentences)."""
        if (split := self._splits.get(paragraph)) is None:
            sentences = split_sentences(paragraph)
            split = (sentences, self.count(sentences) if sentences else [])
            if len(self._splits) >= _SPLITS_KEPT:
                self._splits.clear()
            self._splits[paragraph] = split
        return split

    def _words_within(self, text: str, budget: int) -> list[str]:
        """Greedy runs of words under ``budget`` tokens: for clauses still too long.

        Each word is counted once: the tokenizers split at spaces before anything else, so
        a run's count is the sum of its words' (recounting every growing run cost the
        clause's length squared). A word longer than ``budget`` is cut by characters.
        """
        if self.count([text])[0] - 2 <= budget:
            return [text]
        words = text.split()
        out: list[str] = []
        current: list[str] = []
        used = 0
        for word, tokens in zip(words, self.count(words), strict=True):
            tokens -= 2
            if current and used + tokens > budget:
                out.append(" ".join(current))
                current, used = [], 0
            if tokens > budget:
                out.extend(self._cut_word(word, budget))
                continue
            current.append(word)
            used += tokens
        if current:
            out.append(" ".join(current))
        return out

    def _cut_word(self, word: str, budget: int) -> list[str]:
        """Pieces of one long 'word' (digits and commas, a URL) that each fit ``budget``."""
        pieces = []
        while word:
            low, high = 1, len(word)
            while low < high:  # the longest prefix that fits
                mid = (low + high + 1) // 2
                if self.count([word[:mid]])[0] - 2 <= budget:
                    low = mid
                else:
                    high = mid - 1
            pieces.append(word[:low])
            word = word[low:]
        return pieces

    def _emit_table(
        self,
        block: Block,
        before: list[Block],
        section: list[str],
        document: str,
        emit,
        stats: ChunkStats,
    ) -> None:
        table = parse_markdown_table(block.text)
        if table is None:  # malformed: keep it as text rather than lose it, cut to fit
            header = self._header(document, section)
            budget = self.max_tokens - self._header_tokens(document, section) - _SAFETY_TOKENS
            for piece in self._words_within(block.text, budget):
                embed_text = _embed_text(header, piece)
                tokens = self.count([embed_text])[0]
                emit(
                    "text",
                    piece,
                    embed_text,
                    tokens,
                    [block.page],
                    section,
                    classify_section(section),
                )
            return
        titles = [
            b.text
            for b in before
            if b.page == block.page and b.kind != "table" and len(b.text) <= _TITLE_MAX_CHARS
        ]
        # The heading right above a statement is usually its title: say it once.
        title = " ".join(t for t in titles[-2:] if not section or t != section[-1])
        units = find_units(
            title, " ".join(table.header), " ".join(" ".join(r) for r in table.rows[:2])
        )
        context = " > ".join(section)
        # The table's title may name its statement where the headings do not.
        section_kind = classify_section([*section, title])
        lead = chunk_header(document, section_kind, [])
        for part in split_table(
            table,
            title=title,
            units=units,
            context=context,
            lead=lead,
            max_tokens=self.max_tokens,
            count_tokens=self.count,
        ):
            stats.table_summaries_cut += part.summary_cut
            emit(
                "table",
                part.content,
                part.embed_text,
                part.tokens,
                [block.page],
                section,
                section_kind,
            )


def _join(units: list[_Unit]) -> str:
    out: list[str] = []
    for i, unit in enumerate(units):
        if i and unit.paragraph != units[i - 1].paragraph:
            out.append("\n\n")
        elif i:
            out.append(" ")
        out.append(unit.text)
    return "".join(out)


def _embed_text(header: str, content: str) -> str:
    return f"{header}\n{content}" if header else content


def _common_prefix(a: list[str], b: list[str]) -> list[str]:
    out = []
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        out.append(x)
    return out
