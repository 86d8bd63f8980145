"""`finrag search`: ranked chunks for a question, with the filters and scores behind them."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, fields
from pathlib import Path
from typing import Annotated

import typer
from rich.padding import Padding
from rich.text import Text

from finrag.cli.inputs import clean_option, question_text
from finrag.cli.options import CompanyOption, FormOption, QuarterOption, YearOption
from finrag.cli.progress import Activity
from finrag.cli.render import err, out, print_json, print_table, warn
from finrag.cli.report import Report
from finrag.cli.snippets import query_terms, snippet
from finrag.cli.state import app_state, with_options
from finrag.config import Settings
from finrag.db import Store, open_store
from finrag.errors import NothingFound
from finrag.refs import document_fields, page_ref
from finrag.retrieve import Hit, Retriever, SearchResult, Variant
from finrag.retrieve.pages import PageHit


def search_command(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question, in words.")],
    k: Annotated[
        int | None,
        typer.Option("--k", help="How many chunks (default: retrieve.k).", min=1, max=200),
    ] = None,
    company: CompanyOption = None,
    year: YearOption = None,
    quarter: QuarterOption = None,
    form: FormOption = None,
    fusion: Annotated[str | None, typer.Option(help="rrf or minmax.")] = None,
    reranker: Annotated[str | None, typer.Option(help="none, cross-encoder or llm.")] = None,
    variant: Annotated[
        str | None,
        typer.Option(help="Stages to run, e.g. dense, fts, hybrid+filters (default: all)."),
    ] = None,
    strict_filters: Annotated[
        bool,
        typer.Option(
            "--strict-filters",
            help="When no filing matches a filter (company, year, quarter, form), fail with "
            "exit 7 instead of searching without it.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Hybrid (vector + full-text) search with filters read from the question."""
    question = question_text(question)
    settings = app_state(ctx).settings
    with Activity("searching"):
        result, report = search_report(
            settings,
            question,
            opened=open_store,
            k=k,
            company=company,
            year=year,
            quarter=quarter,
            form=form,
            fusion=fusion,
            reranker=reranker,
            variant=variant,
            strict_filters=strict_filters,
        )
    dropped = result.widened_words()
    if dropped and not strict_filters:
        warn(
            f"warning: no filing matches {' and '.join(dropped)}: searched without "
            f"{'that filter' if len(dropped) == 1 else 'those filters'} "
            "(--strict-filters fails instead)"
        )
    if as_json:
        print_json(report.data)
    elif result.hits and report.problem is None:
        _print_result(result, question)
    report.finish()


def search_report(
    settings: Settings,
    question: str,
    *,
    opened: Callable[[Settings], AbstractContextManager[Store]],
    k: int | None = None,
    company: str | None = None,
    year: int | None = None,
    quarter: int | None = None,
    form: str | None = None,
    fusion: str | None = None,
    reranker: str | None = None,
    variant: str | None = None,
    strict_filters: bool = False,
) -> tuple[SearchResult, Report]:
    """`search` apart from its printing, for the CLI and the local API alike: the result,
    and the JSON of --json with how the command ends. The options are the command's."""
    question = question_text(question)
    company, form = clean_option(company), clean_option(form)
    settings = with_options(settings, "retrieve", fusion=fusion, reranker=reranker)
    chosen = Variant.parse(variant) if variant else None
    with opened(settings) as store:
        result = Retriever(store, settings).retrieve(
            question,
            k=k,
            variant=chosen,
            overrides={"company": company, "year": year, "quarter": quarter, "form": form},
        )
    dropped = result.widened_words()
    if dropped and strict_filters:
        return result, Report(
            {"question": question, **result_dict(result), "hits": []},
            NothingFound(
                f"no filing matches {' and '.join(dropped)}, and --strict-filters keeps "
                f"{'that filter' if len(dropped) == 1 else 'those filters'}",
                hint="`finrag docs list` shows what the store holds; without --strict-filters "
                "the search drops the filter and says so",
            ),
        )
    report = Report({"question": question, **result_dict(result)})
    if not result.hits:
        report.problem = NothingFound(
            "no stored passage matches the question",
            hint="`finrag docs list` shows what the store holds; `finrag ingest PATH` adds filings",
        )
    return result, report


def filters_words(result: SearchResult) -> str:
    """The filters the search used, in words ('Best Buy Co., Inc., fiscal 2024, Q2')."""
    f, applied = result.filters, result.applied
    parts = []
    if f.companies and "company_ids" in applied:
        parts.append(" or ".join(c.name for c in f.companies))
    if f.years and "years" in applied:
        parts.append("fiscal " + " or ".join(map(str, f.years)))
    if f.quarter and "quarter" in applied:
        parts.append(f"Q{f.quarter}")
    if f.form_types and "form_types" in applied:
        parts.append(" or ".join(f.form_types))
    return ", ".join(parts) or "none"


def result_dict(result: SearchResult) -> dict:
    """A search result as plain data (the shape of `finrag search --json`)."""
    return {
        "variant": result.variant,
        "query": result.query,
        "reranker": result.reranker,
        "filters": result.filters.as_dict(),
        "applied": result.applied,
        "widened": result.widened,
        "widened_filters": result.widened_words(),
        "not_in_store": result.filters.unknown_companies,
        "timings_ms": result.timings_ms,
        "unit": "page" if any(isinstance(h, PageHit) for h in result.hits) else "chunk",
        "hits": [hit_dict(h) for h in result.hits],
    }


def hit_dict(hit: Hit) -> dict:
    """One hit as plain data, with the page it stands for and the chunks grouped under it
    (a chunk stands for the page it starts on, and only itself)."""
    if not isinstance(hit, PageHit):
        return {
            **asdict(hit),
            **document_fields(hit.document, hit.document_id),
            "page": hit.page_start,
            "ref": page_ref(hit.document, hit.page_start),
            "chunk_ids": [hit.chunk_id],
        }
    data = {f.name: getattr(hit, f.name) for f in fields(Hit)}
    return {
        **data,
        **document_fields(hit.document, hit.document_id),
        "page": hit.page,
        "ref": page_ref(hit.document, hit.page),
        "ocr": hit.ocr,
        "chunk_ids": hit.chunk_ids,
        "chunks": [
            {
                "chunk_id": c.chunk_id,
                "page_start": c.page_start,
                "page_end": c.page_end,
                "kind": c.kind,
                "section_path": c.section_path,
                "score": c.score,
                "rerank_score": c.rerank_score,
                "flagged": c.flagged,
                "ocr": c.ocr,
                "content": c.content,
            }
            for c in hit.chunks
        ],
    }


def _print_result(result: SearchResult, question: str) -> None:
    note = f"filters: {filters_words(result)}"
    note += f"; {result.variant}" + (f" ({result.reranker})" if result.reranker else "")
    err.print(Text(note))
    if unknown := result.filters.unknown_companies:
        warn(
            f"not in the store: {', '.join(unknown)} — these results come from the "
            "filings it holds (`finrag docs list`)"
        )
    terms = query_terms(question)
    reranked = any(h.rerank_score is not None for h in result.hits)
    rows = []
    for rank, hit in enumerate(result.hits, 1):
        pages = f"{hit.page_start}" + (f"-{hit.page_end}" if hit.page_end != hit.page_start else "")
        if isinstance(hit, PageHit):  # the page it stands for, and how many chunks on it
            pages = f"p.{hit.page} ({len(hit.chunks)} chunk{'s' if len(hit.chunks) > 1 else ''})"
        contents = [c.content for c in hit.chunks] if isinstance(hit, PageHit) else []
        rows.append(
            {
                "#": str(rank),
                "document": Path(hit.document).name,
                "pages": pages,
                "section": " > ".join(hit.section_path[-2:]),
                "kind": hit.kind + (" FLAGGED" if hit.flagged else ""),
                "score": f"{hit.score:.4f}",
                "dense": f"#{hit.dense_rank} {hit.dense_score:.3f}" if hit.dense_rank else "-",
                "text": f"#{hit.text_rank} {hit.text_score:.3f}" if hit.text_rank else "-",
                "rerank": "-" if hit.rerank_score is None else f"{hit.rerank_score:.3f}",
                "snippet": snippet([hit.content, *contents], terms),
            }
        )
    if out.is_terminal:
        _print_hits(rows, reranked)
    else:  # one tab-separated row a hit, the snippet last
        names = ["#", "document", "pages", "section", "kind", "score", "dense", "text"]
        names += ["rerank"] if reranked else []
        print_table(
            [*names, "snippet"], ([r[n] for n in names] + [r["snippet"].plain] for r in rows)
        )
    if any(h.flagged for h in result.hits):
        warn(
            "FLAGGED: holds instruction-like text (possible prompt injection), e.g. "
            f"{next(h.flagged for h in result.hits if h.flagged)!r}; answers leave it out "
            "unless answer.include_flagged is set"
        )


def _print_hits(rows: list[dict], reranked: bool) -> None:
    """On a terminal: a block per hit, where it is and how it scored, then its snippet
    with the question's words highlighted."""
    for r in rows:
        scores = f"score {r['score']} (dense {r['dense']}, text {r['text']}"
        scores += f", rerank {r['rerank']})" if reranked else ")"
        head = Text.assemble(
            (f"{r['#']:>2}. ", "bold"),
            (r["document"], "bold cyan"),
            f" {r['pages']} · {r['kind']} · ",
            (scores, "dim"),
        )
        out.print(head, soft_wrap=False)
        if r["section"]:
            out.print(Padding(Text(r["section"], style="dim"), (0, 0, 0, 4)), soft_wrap=False)
        out.print(Padding(r["snippet"], (0, 0, 1, 4)), soft_wrap=False)
