"""How right are facts read from printed tables? Checked against the filings' own iXBRL tags.

    python eval/bench/facts_accuracy.py [DIR]   (default: ../shared/edgar-html)

Each EDGAR filing is parsed and chunked as `finrag ingest` does; its tables become facts
by the table path alone (the tags ignored), and every table fact with a known period is
looked up among the tag facts on the same page: same value (base units), same period.
Precision: table facts a tag confirms / table facts with a known period. A tag confirms
a cell whose number it reports up to sign: tables print a payment or an increase in
receivables in parentheses (stored negative, as printed) where XBRL gives the concept's
own positive amount; how many confirmations are of that kind is shown, and the strict
precision beside it. Recall: tag facts printed as a whole cell of a table of that kind
(primary: a cell of an income statement, balance sheet or cash-flow statement; figures
in a row label, such as a par value, are not cells) that some table fact matches / all
of them. Reported for the primary statements
(income, balance sheet, cash flows) and for all tables, with what failed by category.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from finrag.config import load_settings
from finrag.facts import model
from finrag.facts.extract import same_period, same_value, table_facts
from finrag.facts.ixbrl import extract_ixbrl_facts
from finrag.facts.periods import FiscalCalendar
from finrag.ingest.chunk import Chunker
from finrag.ingest.metadata import resolve_metadata
from finrag.ingest.parse.html import EdgarHtmlParser
from finrag.ingest.prepare import _token_counter

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Tally:
    table_facts: int = 0
    confirmed: int = 0
    sign_as_printed: int = 0
    tags: int = 0
    tags_found: int = 0
    failures: Counter = field(default_factory=Counter)

    def add(self, other: Tally) -> None:
        self.table_facts += other.table_facts
        self.confirmed += other.confirmed
        self.sign_as_printed += other.sign_as_printed
        self.tags += other.tags
        self.tags_found += other.tags_found
        self.failures.update(other.failures)

    def row(self, name: str) -> str:
        precision = self.confirmed / self.table_facts if self.table_facts else float("nan")
        strict = (
            (self.confirmed - self.sign_as_printed) / self.table_facts
            if self.table_facts
            else float("nan")
        )
        recall = self.tags_found / self.tags if self.tags else float("nan")
        return (
            f"| {name} | {self.table_facts} | {precision:.3f} | {strict:.3f} | "
            f"{self.sign_as_printed} | {self.tags} | {recall:.3f} | "
            + ", ".join(f"{k} {v}" for k, v in self.failures.most_common())
            + " |"
        )


def _why(fact: model.Fact, tags: list[model.Fact]) -> str:
    """The category of a table fact no tag confirms."""
    if not tags:
        return "page has no tags"
    if any(same_value(fact, t) or same_value(_negated(fact), t) for t in tags):
        return "period header"
    if fact.value is not None and any(
        t.value is not None
        and t.value != 0
        and fact.value / t.value in (1000, 10**6, 10**-3, 10**-6)
        for t in tags
    ):
        return "units"
    return "value not tagged"


def _bare(text: str) -> str:
    return "".join(ch for ch in text if ch not in "$()% \u00a0")


def _negated(fact: model.Fact) -> model.Fact:
    return replace(fact, value=None if fact.value is None else -fact.value)


def _confirms(fact: model.Fact, tag: model.Fact) -> bool:
    return same_period(fact, tag) and (same_value(fact, tag) or same_value(_negated(fact), tag))


def measure(path: Path, chunker: Chunker) -> tuple[dict[str, Tally], dict[str, float]]:
    started = time.perf_counter()
    parsed = EdgarHtmlParser().parse(path)
    chunks, _ = chunker.chunk(parsed)
    chunked = time.perf_counter()
    tags = extract_ixbrl_facts(path).facts
    tagged = time.perf_counter()
    # The filing's own calendar, from its metadata as ingest resolves it.
    meta = resolve_metadata(path, path.parent, parsed, {})
    period_end = meta.period_end if isinstance(meta.period_end, date) else None
    facts = table_facts(chunks, FiscalCalendar.from_document(period_end, meta.fiscal_quarter))
    tabled = time.perf_counter()

    tags_by_page: dict[int | None, list[model.Fact]] = {}
    for tag in tags:
        tags_by_page.setdefault(tag.page, []).append(tag)
    # The cells each page prints in tables of a primary statement, as printed.
    kind_of_chunk = {f.chunk_ordinal: f.statement for f in facts}
    primary_cells: dict[int | None, set[str]] = {}
    for chunk in chunks:
        if kind_of_chunk.get(chunk.ordinal) in model.PRIMARY_STATEMENTS:
            grid = [ln for ln in chunk.content.splitlines() if ln.lstrip().startswith("|")]
            cells = {_bare(c) for ln in grid for c in ln.strip("|").split("|")}
            primary_cells.setdefault(chunk.page_start, set()).update(cells)

    tallies = {"primary": Tally(), "all tables": Tally()}
    for fact in facts:
        if not fact.period.known:
            continue
        groups = ["all tables"] + (
            ["primary"] if fact.statement in model.PRIMARY_STATEMENTS else []
        )
        on_page = tags_by_page.get(fact.page, [])
        ok = any(_confirms(fact, t) for t in on_page)
        exact = any(same_value(fact, t) and same_period(fact, t) for t in on_page)
        for group in groups:
            tallies[group].table_facts += 1
            tallies[group].confirmed += ok
            tallies[group].sign_as_printed += ok and not exact
            if not ok:
                tallies[group].failures[_why(fact, on_page)] += 1
    for tag in tags:
        if tag.statement == model.TEXT or tag.value is None:
            continue  # numbers in sentences, nil facts: no table cell to read them from
        found = any(_confirms(f, tag) for f in facts if f.page == tag.page and f.period.known)
        in_statement = _bare(tag.printed) in primary_cells.get(tag.page, set())
        groups = ["all tables"] + (["primary"] if in_statement else [])
        for group in groups:
            tallies[group].tags += 1
            tallies[group].tags_found += found
    timings = {
        "parse+chunk": chunked - started,
        "ixbrl": tagged - chunked,
        "tables": tabled - tagged,
    }
    return tallies, timings


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else REPO.parent / "shared" / "edgar-html"
    files = sorted(folder.glob("*.htm*"))
    if not files:
        print(f"no EDGAR HTML files in {folder}")
        return 1
    settings = load_settings()
    counter = _token_counter(settings.embed)
    chunker = Chunker(counter.count_tokens, max_tokens=counter.max_tokens)
    print(
        "| filing | table facts (known period) | precision | strict precision | "
        "sign as printed | tags in tables | recall | unconfirmed, by cause |"
    )
    print("|---|---|---|---|---|---|---|---|")
    totals = {"primary": Tally(), "all tables": Tally()}
    spent: Counter = Counter()
    for path in files:
        tallies, timings = measure(path, chunker)
        spent.update(timings)
        for group, tally in tallies.items():
            print(tallies[group].row(f"{path.stem} ({group})"))
            totals[group].add(tally)
    for group, tally in totals.items():
        print(tally.row(f"**all six ({group})**"))
    print()
    print("seconds, all files: " + ", ".join(f"{k} {v:.2f}" for k, v in spent.items()))
    print(
        f"facts extraction / (parse + chunk): "
        f"{(spent['ixbrl'] + spent['tables']) / spent['parse+chunk']:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
