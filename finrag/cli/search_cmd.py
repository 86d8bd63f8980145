"""`finrag search`: ranked chunks for a question, with the filters and scores behind them."""

from __future__ import annotations

from dataclasses import asdict, fields
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from finrag.cli.inputs import clean_option, question_text
from finrag.cli.render import err, out, print_json
from finrag.cli.state import app_state, with_options
from finrag.db import open_store
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
    company: Annotated[str | None, typer.Option(help="Only this company.")] = None,
    year: Annotated[
        int | None, typer.Option(help="Only this fiscal year.", min=1900, max=2200)
    ] = None,
    quarter: Annotated[int | None, typer.Option(help="Only this quarter.", min=1, max=4)] = None,
    form: Annotated[str | None, typer.Option(help="Only this form (10-K, 10-Q...).")] = None,
    fusion: Annotated[str | None, typer.Option(help="rrf or minmax.")] = None,
    reranker: Annotated[str | None, typer.Option(help="none, cross-encoder or llm.")] = None,
    variant: Annotated[
        str | None,
        typer.Option(help="Stages to run, e.g. dense, fts, hybrid+filters (default: all)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Hybrid (vector + full-text) search with filters read from the question."""
    question = question_text(question)
    company, form = clean_option(company), clean_option(form)
    settings = with_options(app_state(ctx).settings, "retrieve", fusion=fusion, reranker=reranker)
    store = open_store(settings)
    try:
        retriever = Retriever(store, settings)
        chosen = Variant.parse(variant) if variant else None
        result = retriever.retrieve(
            question,
            k=k,
            variant=chosen,
            overrides={"company": company, "year": year, "quarter": quarter, "form": form},
        )
    finally:
        store.close()
    if as_json:
        print_json({"question": question, **result_dict(result)})
        return
    _print_result(result)


def result_dict(result: SearchResult) -> dict:
    """A search result as plain data (the shape of `finrag search --json`)."""
    return {
        "variant": result.variant,
        "query": result.query,
        "reranker": result.reranker,
        "filters": result.filters.as_dict(),
        "applied": result.applied,
        "widened": result.widened,
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
                "content": c.content,
            }
            for c in hit.chunks
        ],
    }


def _print_result(result: SearchResult) -> None:
    note = f"filters: {result.filters.matched or 'none'}"
    if result.widened:
        note += f"; widened (nothing matched): {', '.join(result.widened)}"
    note += f"; {result.variant}" + (f" ({result.reranker})" if result.reranker else "")
    err.print(Text(note))
    if unknown := result.filters.unknown_companies:
        err.print(
            Text(
                f"not in the store: {', '.join(unknown)} — these results come from the "
                "filings it holds (`finrag docs list`)",
                style="yellow",
            )
        )
    reranked = any(h.rerank_score is not None for h in result.hits)
    table = Table(show_lines=True)
    columns = ["#", "document", "pages", "section", "kind", "score", "dense", "text"]
    for column in columns + (["rerank"] if reranked else []):
        table.add_column(column, overflow="fold")
    for rank, hit in enumerate(result.hits, 1):
        pages = f"{hit.page_start}" + (f"-{hit.page_end}" if hit.page_end != hit.page_start else "")
        if isinstance(hit, PageHit):  # the page it stands for, and how many chunks on it
            pages = f"p.{hit.page} ({len(hit.chunks)} chunk{'s' if len(hit.chunks) > 1 else ''})"
        dense = f"#{hit.dense_rank} {hit.dense_score:.3f}" if hit.dense_rank else "-"
        text = f"#{hit.text_rank} {hit.text_score:.3f}" if hit.text_rank else "-"
        row = [
            str(rank),
            Path(hit.document).name,
            pages,
            Text(" > ".join(hit.section_path[-2:])),
            hit.kind + ("\nFLAGGED" if hit.flagged else ""),
            f"{hit.score:.4f}",
            dense,
            text,
        ]
        if reranked:
            row.append("-" if hit.rerank_score is None else f"{hit.rerank_score:.3f}")
        table.add_row(*row)
    out.print(table)
    if any(h.flagged for h in result.hits):
        err.print(
            Text(
                "FLAGGED: holds instruction-like text (possible prompt injection), e.g. "
                f"{next(h.flagged for h in result.hits if h.flagged)!r}; answers leave it out "
                "unless answer.include_flagged is set",
                style="yellow",
            )
        )
