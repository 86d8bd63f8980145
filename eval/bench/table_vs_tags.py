"""Primary-statement table facts against the same filing's own iXBRL tags.

    flock /tmp/finrag-cpu.lock python eval/bench/table_vs_tags.py [--pdf] [--json OUT]

Each EDGAR filing (default: ../shared/edgar-html/*.html) goes through ingest's own
preparation (parse, metadata, chunk, facts: ``finrag.ingest.prepare``; no embedding and
no database, which the comparison does not read). The truth is the filing's tags:

* A primary statement is the HTML table whose tags make it one, read from the tags
  alone, never from finrag's classifier: the balance sheet holds ``Assets`` and
  ``LiabilitiesAndStockholdersEquity`` (or ``Liabilities``); the cash-flow statement
  two of the three ``NetCashProvidedByUsedIn...Activities``; the income statement
  earnings per share, income tax expense and net income. The largest such table of a
  kind is the statement.
* Its truth facts are the entity-total tags in that table (concept, period, value).

Recall, per statement: a tag is found when a table fact on its page has its value
(either sign: filings tag payments positive and print them in parentheses) and its
period, on a table finrag calls that statement (**cells**); a tag whose concept is one
of the metric dictionary's is found by label when that row's label maps to the same
metric (**concepts**). Misses by cause: statement not recognised, column period wrong,
fiscal year named wrong (the dates agree, the fiscal year the cell is filed under does
not), fiscal year unknown (the filing's calendar left it unplaced), column read as a
qualifier, scale wrong, cell not read, row label not mapped, row label mapped to another
metric.

Precision: every table fact on a statement finrag recognised whose row label maps to
a metric is a claim (metric, period, value). It is right when a tag of one of the
metric's concepts reports that value for that period; wrong when such a tag reports
another value, or when the cell's own tag (same page, value, period) is another
metric's concept; unconfirmed (left out of precision, counted) when no tag of the
metric's concepts covers the period and the cell's own tag, if any, is a concept the
dictionary does not hold. Of the rows of one table that read as one metric for one
period, only the dictionary's preferred label is a claim, as a lookup answers.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from lxml import etree

from finrag.facts import model
from finrag.facts.dictionary import Metric, match_concept, match_label
from finrag.facts.extract import same_period
from finrag.facts.ixbrl import extract_ixbrl_facts
from finrag.facts.model import Fact
from finrag.facts.structure import readings
from finrag.ingest.prepare import prepare_file

REPO = Path(__file__).resolve().parents[2]
IX = "{http://www.xbrl.org/2013/inlineXBRL}"
XHTML = "{http://www.w3.org/1999/xhtml}"
TABLE = f"{XHTML}table"
KINDS = (model.INCOME, model.BALANCE, model.CASH_FLOW)
_EPS = {
    "us-gaap:EarningsPerShareBasic",
    "us-gaap:EarningsPerShareDiluted",
    "us-gaap:EarningsPerShareBasicAndDiluted",
}
_NET_INCOME = {
    "us-gaap:NetIncomeLoss",
    "us-gaap:ProfitLoss",
    "us-gaap:NetIncomeLossAvailableToCommonStockholdersBasic",
}
_CASH = {
    f"us-gaap:NetCashProvidedByUsedIn{part}Activities{tail}"
    for part in ("Operating", "Investing", "Financing")
    for tail in ("", "ContinuingOperations")
}


def statement_of(concepts: set[str]) -> str | None:
    """The primary statement a table is, from its tags' concepts alone."""
    if "us-gaap:Assets" in concepts and (
        "us-gaap:LiabilitiesAndStockholdersEquity" in concepts or "us-gaap:Liabilities" in concepts
    ):
        return model.BALANCE
    if len({c.replace("ContinuingOperations", "") for c in concepts & _CASH}) >= 2:
        return model.CASH_FLOW
    if concepts & _EPS and concepts & _NET_INCOME and "us-gaap:IncomeTaxExpenseBenefit" in concepts:
        return model.INCOME
    return None


def truth(path: Path) -> dict[str, list[Fact]]:
    """Each primary statement's entity-total tags, by the table that holds them."""
    tagged = extract_ixbrl_facts(path)
    tree = etree.parse(str(path), etree.XMLParser(huge_tree=True, recover=True))
    table_of: dict[str, int] = {}
    held = list(tree.iter(TABLE))  # kept alive: lxml reuses an element's proxy only then
    tables = {t: n for n, t in enumerate(held)}
    for element in tree.iter(f"{IX}nonFraction"):
        element_id = element.get("id")
        table = next(element.iterancestors(TABLE), None)
        if element_id and table is not None and not _in_row_label(element):
            table_of[element_id] = tables[table]
    by_table: dict[int, list[Fact]] = defaultdict(list)
    for fact, element_id in zip(tagged.facts, tagged.element_ids, strict=True):
        if element_id in table_of and not fact.dimensions and fact.value is not None:
            by_table[table_of[element_id]].append(fact)
    best: dict[str, list[Fact]] = {}
    for facts in by_table.values():
        kind = statement_of({f.concept for f in facts if f.concept})
        if kind and len(facts) > len(best.get(kind, [])):
            best[kind] = facts
    return {
        kind: list({(f.concept, f.period, f.value): f for f in facts}.values())
        for kind, facts in best.items()
    }


def _in_row_label(element: etree._Element) -> bool:
    """A tag inside a row's label ("50,400,000 shares authorized") is words, not a cell."""
    cell = next(element.iterancestors(f"{XHTML}td", f"{XHTML}th"), None)
    row = cell.getparent() if cell is not None else None
    if row is None:
        return False
    first = next((c for c in row if "".join(c.itertext()).strip()), None)
    return first is cell


def prepared_facts(path: Path, cache: Path) -> list[Fact]:
    """The facts ingest reads from ``path``: parse (cached in ``cache`` by the file's
    hash, as ingest caches it), metadata, chunks, facts."""
    done = prepare_file(path, cache)
    if done.error:
        raise SystemExit(f"{path.name}: {done.error}")
    return done.facts


def printed_pdf(html: Path, cache: Path) -> Path:
    """The filing printed to PDF by headless Chromium (Debian's ``chromium``), once: the
    PDF a reader would save from a browser, kept in ``cache``, never committed."""
    out = cache / "printed" / (html.stem + ".pdf")
    if out.is_file() and out.stat().st_mtime >= html.stat().st_mtime:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise SystemExit("--pdf needs Chromium: apt-get install -y chromium")
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
            f"--print-to-pdf={out}",
            html.resolve().as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out


@dataclass
class Score:
    tags: int = 0
    cells: int = 0
    concept_tags: int = 0
    concepts: int = 0
    claims_right: int = 0
    claims_wrong: int = 0
    claims_unconfirmed: int = 0
    misses: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add(self, other: Score) -> None:
        for name in (
            "tags",
            "cells",
            "concept_tags",
            "concepts",
            "claims_right",
            "claims_wrong",
            "claims_unconfirmed",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.misses.update(other.misses)
        for cause, items in other.examples.items():
            self.examples[cause] += items

    def note(self, cause: str, example: str) -> None:
        self.misses[cause] += 1
        if len(self.examples[cause]) < 40:
            self.examples[cause].append(example)

    def as_dict(self) -> dict:
        claims = self.claims_right + self.claims_wrong
        return {
            "tags": self.tags,
            "cell_recall": _ratio(self.cells, self.tags),
            "concept_tags": self.concept_tags,
            "concept_recall": _ratio(self.concepts, self.concept_tags),
            "claims": claims,
            "precision": _ratio(self.claims_right, claims),
            "wrong": self.claims_wrong,
            "unconfirmed": self.claims_unconfirmed,
            "misses": dict(self.misses),
            "examples": dict(self.examples),
        }


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def _same_abs(a: Decimal | None, b: Decimal | None) -> bool:
    return a is not None and b is not None and abs(a) == abs(b)


def _row_metric(fact: Fact, structure: dict[int, Metric | None] | None = None) -> Metric | None:
    """The metric a row reads as: by its statement's structure (``structure``, by the
    fact's id(), from ``table_readings``) where that decides, else by its label."""
    if structure is not None and id(fact) in structure:
        return structure[id(fact)]
    return match_label(fact.label or "", fact.statement, parents=fact.parents, unit=fact.unit)


def table_readings(facts: Sequence[Fact]) -> dict[int, Metric | None]:
    """What the statements' structure says rows are (finrag.facts.structure), as a
    lookup reads them, by each fact's id()."""
    found = readings(
        facts, table=lambda f: (f.statement, f.page, f.period), filing=lambda f: "filing"
    )
    return {id(facts[i]): m for i, m in found.items()}


def compare(
    kind: str, tags: Sequence[Fact], facts: Sequence[Fact], *, any_page: bool = False
) -> Score:
    """``any_page``: the facts come from another rendering of the filing (its printed
    PDF), whose pages are not the HTML's: a cell is looked for on every page."""
    score = Score()
    structure = table_readings(facts)
    on_page: dict[int | None, list[Fact]] = defaultdict(list)
    qualified: dict[int | None, list[Fact]] = defaultdict(list)
    for f in facts:
        if f.source == "table":
            (qualified if f.dimensions else on_page)[f.page].append(f)
    for tag in tags:
        score.tags += 1
        metric = match_concept(tag.concept or "")
        counted = metric is not None and kind in metric.statements
        score.concept_tags += counted
        where = f"{tag.concept} {tag.period.label()} {tag.printed} p.{tag.page}"
        page = [f for fs in on_page.values() for f in fs] if any_page else on_page.get(tag.page, [])
        exact = [f for f in page if _same_abs(f.value, tag.value) and same_period(f, tag)]
        mine = [f for f in exact if f.statement == kind]
        if not mine:
            if exact:
                cause = f"statement not recognised (read as {exact[0].statement})"
            elif any(_same_abs(f.value, tag.value) for f in page):
                cause = "column period wrong"
            elif any(
                _same_abs(f.value, tag.value)
                for f in (
                    [f for fs in qualified.values() for f in fs]
                    if any_page
                    else qualified.get(tag.page, [])
                )
            ):
                cause = "column read as a qualifier (not the entity total)"
            elif any(
                f.value is not None
                and tag.value
                and abs(f.value) != abs(tag.value)
                and any(abs(f.value) == abs(tag.value).scaleb(k) for k in (-9, -6, -3, 3, 6, 9))
                for f in page
            ):
                cause = "scale wrong"
            else:
                cause = "cell not read"
            score.note(cause, where)
            continue
        # Dates agree; the fiscal year the cell was filed under must too (a calendar
        # that names years wrongly shifts every fact a year while its dates stay right).
        named = {f.period.fiscal_year for f in mine}
        if tag.period.fiscal_year is not None and tag.period.fiscal_year not in named:
            cause = (
                "fiscal year unknown (calendar not placed)"
                if named == {None}
                else ("fiscal year named wrong")
            )
            score.note(cause, f"{where}: filed as {sorted(named, key=str)}")
            continue
        score.cells += 1
        if not counted:
            continue
        found = [_row_metric(f, structure) for f in mine]
        if any(m is metric for m in found):
            score.concepts += 1
            continue
        other = next((m for m in found if m is not None), None)
        labels = " | ".join(sorted({f.label or "" for f in mine}))
        if other is None:
            score.note("row label not mapped", f"{where}: {labels!r} -> {metric.name}")
        else:
            score.note(
                "row label mapped to another metric",
                f"{where}: {labels!r} -> {other.name}, tag says {metric.name}",
            )
    return score


def precision(
    kind: str, facts: Sequence[Fact], score: Score, tagged: Sequence[Fact] | None = None
) -> None:
    """``tagged``: the filing's tags when ``facts`` are another rendering's (its PDF)."""
    source = facts if tagged is None else tagged
    tags = [f for f in source if f.source == "ixbrl" and not f.dimensions and f.value is not None]
    any_page = tagged is not None
    # What a lookup would answer: of the rows of one table that read as the same metric
    # for one period, the dictionary's preferred label ("Net income attributable to
    # P&G" over the consolidated "Net earnings" above it).
    claims: dict[tuple, list[tuple[int, Fact, Metric]]] = defaultdict(list)
    structure = table_readings(facts)
    for fact in facts:
        if fact.source != "table" or fact.statement != kind or fact.dimensions:
            continue
        if fact.value is None or not fact.period.known:
            continue
        metric = _row_metric(fact, structure)
        if metric is None:
            continue
        rank = metric.label_rank(fact.label or "")
        key = (fact.page, metric.name, fact.period)
        claims[key].append((99 if rank is None else rank, fact, metric))
    for group in claims.values():
        best = min(rank for rank, _, _ in group)
        for _, fact, metric in (c for c in group if c[0] == best):
            _judge(fact, metric, tags, score, any_page)


def _judge(fact: Fact, metric: Metric, tags: Sequence[Fact], score: Score, any_page: bool) -> None:
    where = f"{fact.label!r} {fact.period.label()} {fact.printed} p.{fact.page} -> {metric.name}"
    same = [t for t in tags if t.concept in metric.concepts and same_period(fact, t)]
    if any(_same_abs(t.value, fact.value) for t in same):
        score.claims_right += 1
        return
    if same:
        score.claims_wrong += 1
        score.note("claim: value differs from the tag", f"{where}; tag {same[0].printed}")
        return
    own = [
        t
        for t in tags
        if (any_page or t.page == fact.page)
        and _same_abs(t.value, fact.value)
        and same_period(fact, t)
    ]
    read = [match_concept(t.concept or "") for t in own]
    other = next((m for m in read if m is not None), None)
    # A printed PDF keeps no tag on its cells: matched on any page by value alone, a cell
    # whose value several tags report (one of a concept no metric names) is not known to
    # be the other metric's; counted unconfirmed, not wrong.
    ambiguous = (
        any_page and len({m.name if m else t.concept for m, t in zip(read, own, strict=True)}) > 1
    )
    if other is not None and other is not metric and not ambiguous:
        score.claims_wrong += 1
        score.note("claim: the cell is tagged another metric", f"{where}; tag {other.name}")
        return
    score.claims_unconfirmed += 1
    tagged = own[0].concept if own else "no tag"
    score.note("claim unconfirmed (no tag of the metric's concepts)", f"{where}; {tagged}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--json", type=Path, help="Write every score and example here.")
    parser.add_argument("--examples", type=int, default=0, help="Print this many misses a cause.")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "finrag-table-vs-tags",
        help="Where parsed filings are kept between runs (never the user's home).",
    )
    parser.add_argument(
        "--pdf",
        action="store_true",
        help="Print each filing to PDF (headless Chromium) and read the PDF's tables with "
        "the PDF pipeline instead, against the same HTML's tags.",
    )
    args = parser.parse_args()
    files = args.files or sorted((REPO.parent / "shared" / "edgar-html").glob("*.html"))
    totals = {kind: Score() for kind in KINDS}
    report: dict[str, dict] = {}
    print(f"{'filing':<28} {'statement':<17} tags  cells  concepts  precision  misses")
    for path in files:
        statements = truth(path)
        tagged = None
        if args.pdf:
            facts = prepared_facts(printed_pdf(path, args.cache), args.cache)
            tagged = extract_ixbrl_facts(path).facts
        else:
            facts = prepared_facts(path, args.cache)
        report[path.name] = {}
        for kind in KINDS:
            tags = statements.get(kind, [])
            score = compare(kind, tags, facts, any_page=args.pdf)
            if not tags:
                score.note("no statement table found by its tags", path.name)
            precision(kind, facts, score, tagged)
            totals[kind].add(score)
            data = score.as_dict()
            report[path.name][kind] = data
            print(
                f"{path.name:<28} {kind:<17} {score.tags:>4}  {_show(data['cell_recall'])}  "
                f"{_show(data['concept_recall'])}     {_show(data['precision'])}  "
                f"{dict(score.misses)}"
            )
    print()
    for kind, score in totals.items():
        data = score.as_dict()
        print(
            f"ALL {kind:<17} tags={score.tags} cell_recall={_show(data['cell_recall'])} "
            f"concept_recall={_show(data['concept_recall'])} "
            f"({score.concepts}/{score.concept_tags})"
            f" precision={_show(data['precision'])} ({score.claims_right}/"
            f"{score.claims_right + score.claims_wrong}, {score.claims_unconfirmed} unconfirmed)"
        )
        for cause, count in score.misses.most_common():
            print(f"    {count:>4}  {cause}")
            for example in score.examples[cause][: args.examples]:
                print(f"            {example}")
    if args.json:
        report["totals"] = {kind: s.as_dict() for kind, s in totals.items()}
        args.json.write_text(json.dumps(report, indent=1))
        print(f"wrote {args.json}", file=sys.stderr)


def _show(value: float | None) -> str:
    return " n/a " if value is None else f"{value:.3f}"


if __name__ == "__main__":
    main()
