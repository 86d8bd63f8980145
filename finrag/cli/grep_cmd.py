"""`finrag grep`: every filing and page that says a phrase, with counts; exact, not ranked."""

from __future__ import annotations

import csv
import sys
from dataclasses import asdict, fields
from typing import Annotated

import typer
from rich.text import Text

from finrag.cli.conventions import nothing_found
from finrag.cli.inputs import clean_option
from finrag.cli.options import CompanyOption, FormOption, QuarterOption, YearOption
from finrag.cli.render import Column, err, out, print_json, print_table
from finrag.cli.state import app_state
from finrag.db import open_store
from finrag.db.companies import require_company
from finrag.errors import UsageError
from finrag.refs import document_name
from finrag.retrieve.grep import GrepCount, GrepHit, GrepQuery, GrepResult, GrepScope, grep

_HINT = (
    "`finrag docs list` shows the filings stored; a looser phrase (word* for any ending) may match"
)


def grep_command(
    ctx: typer.Context,
    phrase: Annotated[
        str | None,
        typer.Argument(
            help="Words to find, in order, as whole words, any case; spaces and hyphens "
            "between them match either; word* matches any ending.",
            show_default=False,
        ),
    ] = None,
    regex: Annotated[
        str | None,
        typer.Option(
            "--regex",
            metavar="PATTERN",
            help="A Postgres regular expression instead (case-insensitive; \\m and \\M "
            "are word boundaries).",
        ),
    ] = None,
    near: Annotated[
        tuple[str, str] | None,
        typer.Option(
            "--near",
            metavar="PHRASE",
            help="Two phrases (give both: --near A B) near each other, either order, as "
            "--within says.",
        ),
    ] = None,
    within: Annotated[
        str | None,
        typer.Option(
            "--within",
            metavar="N|SENTENCE",
            help="With --near: at most N words between the two, or 'sentence': in one "
            "sentence (a table row, a heading). Default: 10.",
        ),
    ] = None,
    company: CompanyOption = None,
    year: YearOption = None,
    quarter: QuarterOption = None,
    form: FormOption = None,
    case_sensitive: Annotated[
        bool, typer.Option("--case-sensitive", help="Match letter case too.")
    ] = False,
    counts_only: Annotated[
        bool,
        typer.Option("--counts", help="Only the counts by company, period and form."),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON: counts, then every hit.")
    ] = False,
    as_csv: Annotated[
        bool, typer.Option("--csv", help="Print CSV: one hit a row (with --counts: one count).")
    ] = False,
) -> None:
    """Every filing and page whose stored text holds a phrase, a regular expression or two
    phrases near each other, with the sentence around each hit and counts by company,
    fiscal year and form. Exact: every occurrence, each counted once (chunks' repeated
    sentences and tables' repeated headers are not counted twice)."""
    if as_json and as_csv:
        raise UsageError("--json and --csv are two formats: choose one")
    query = _query(phrase, regex, near, within, case_sensitive)
    form = clean_option(form)
    with open_store(app_state(ctx).settings) as store, store.connect() as conn:
        company_id = require_company(conn, company)[0] if clean_option(company) else None
        result = grep(conn, query, GrepScope(company_id, year, quarter, form))
    if as_json:
        print_json(result.as_dict())
    elif as_csv:
        _write_csv(result, counts_only)
    elif counts_only and result.hits:
        _print_counts(result.counts)
    elif result.hits:
        _print_hits(result)
        if out.is_terminal:
            _print_counts(result.counts)
    pages = len({(h.document_id, h.page_start) for h in result.hits})
    filings = len({h.document_id for h in result.hits})
    err.print(
        f"{len(result.hits):,} hit{'s' if len(result.hits) != 1 else ''} of "
        f"{query.describe()} on {pages:,} page{'s' if pages != 1 else ''} of {filings:,} "
        f"filing{'s' if filings != 1 else ''}; scanned {result.chunks_scanned:,} chunks of "
        f"{result.documents_scanned:,} filings in {result.elapsed_ms:,.0f} ms",
        style="dim",
    )
    if not result.hits:
        nothing_found(f"no stored filing holds {query.describe()}", hint=_HINT)


def _query(
    phrase: str | None,
    regex: str | None,
    near: tuple[str, str] | None,
    within: str | None,
    case_sensitive: bool,
) -> GrepQuery:
    given = [
        name for name, value in (("PHRASE", phrase), ("--regex", regex), ("--near", near)) if value
    ]
    if len(given) != 1:
        raise UsageError(
            "give one of PHRASE, --regex PATTERN or --near PHRASE PHRASE"
            + (f" (got {' and '.join(given)})" if given else ""),
            hint='e.g. finrag grep "going concern"',
        )
    if within is not None and not near:
        raise UsageError("--within goes with --near A B", hint="a phrase is matched as written")
    within = "10" if within is None else within
    words: int | None
    if within.strip().lower() == "sentence":
        words = None
    elif within.strip().isascii() and within.strip().isdigit():
        words = int(within)
    else:
        raise UsageError(f"--within {within!r}: give a number of words or 'sentence'")
    if near:
        return GrepQuery("near", near, within=words, case_sensitive=case_sensitive)
    if regex:
        return GrepQuery("regex", (regex,), case_sensitive=case_sensitive)
    return GrepQuery("phrase", (phrase or "",), case_sensitive=case_sensitive)


def _period(year: int | None, quarter: int | None) -> str:
    if year is None:
        return ""
    return f"FY{year}" + (f" Q{quarter}" if quarter else "")


def _pages(hit: GrepHit) -> str:
    if hit.page_start is None:
        return ""
    if hit.page_end is not None and hit.page_end != hit.page_start:
        return f"p.{hit.page_start}-{hit.page_end}"
    return f"p.{hit.page_start}"


def _print_hits(result: GrepResult) -> None:
    if not out.is_terminal:  # one tab-separated row a hit, the sentence last
        print_table(
            ["company", "period", "form", "document", "page", "where", "match", "sentence"],
            (
                [
                    h.company,
                    _period(h.fiscal_year, h.fiscal_quarter),
                    h.form_type,
                    document_name(h.path),
                    _pages(h).removeprefix("p."),
                    h.where,
                    h.match,
                    h.sentence,
                ]
                for h in result.hits
            ),
        )
        return
    current = None
    for hit in result.hits:
        if hit.document_id != current:
            current = hit.document_id
            count = sum(1 for h in result.hits if h.document_id == current)
            about = ", ".join(
                p
                for p in (hit.company, _period(hit.fiscal_year, hit.fiscal_quarter), hit.form_type)
                if p
            )
            out.print(
                Text.assemble(
                    (document_name(hit.path), "bold cyan"),
                    f" ({about})" if about else "",
                    (f": {count} hit{'s' if count != 1 else ''}", "dim"),
                ),
                soft_wrap=False,
            )
        line = Text(f"  {_pages(hit):<9} ")
        if hit.where != "text":
            line.append(f"[{hit.where}] ", style="dim")
        line.append_text(_highlighted(hit.sentence, hit.match))
        out.print(line)


def _highlighted(sentence: str, match: str) -> Text:
    text = Text(sentence)
    at = " ".join(sentence.split()).lower().find(" ".join(match.split()).lower())
    if at >= 0:
        text.stylize("bold yellow", at, at + len(" ".join(match.split())))
    return text


def _print_counts(counts: list[GrepCount]) -> None:
    print_table(
        [
            "company",
            Column("period", no_wrap=True),
            Column("form", no_wrap=True),
            Column("filings", justify="right"),
            Column("pages", justify="right"),
            Column("hits", justify="right"),
        ],
        (
            [
                c.company or "(unknown)",
                _period(c.fiscal_year, c.fiscal_quarter),
                c.form_type,
                c.filings,
                c.pages,
                c.hits,
            ]
            for c in counts
        ),
        title="hits by company, period and form" if out.is_terminal else None,
    )


def _write_csv(result: GrepResult, counts_only: bool) -> None:
    if counts_only:
        names = [f.name for f in fields(GrepCount)]
        rows = [asdict(c) for c in result.counts]
    else:
        names = ["document", *(f.name for f in fields(GrepHit))]
        rows = [
            {
                "document": document_name(h.path),
                **asdict(h),
                "section_path": " > ".join(h.section_path),
            }
            for h in result.hits
        ]
    writer = csv.DictWriter(sys.stdout, fieldnames=names)
    writer.writeheader()
    writer.writerows({k: _cell(v) for k, v in row.items()} for row in rows)


def _cell(value: object) -> object:
    """A filing's text as a spreadsheet shows it, never as a formula it runs ("=HYPERLINK(…",
    "+1", "@SUM"): a leading apostrophe, as spreadsheets take it."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
