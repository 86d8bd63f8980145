"""`finrag search`: ranked chunks for a question, with the filters and scores behind them."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from finrag.cli.render import err, out, print_json
from finrag.cli.state import app_state
from finrag.db import open_store
from finrag.retrieve import retrieve


def search_command(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question, in words.")],
    k: Annotated[int, typer.Option("--k", help="How many chunks.", min=1, max=100)] = 10,
    company: Annotated[str | None, typer.Option(help="Only this company.")] = None,
    year: Annotated[int | None, typer.Option(help="Only this fiscal year.")] = None,
    quarter: Annotated[int | None, typer.Option(help="Only this quarter.", min=1, max=4)] = None,
    form: Annotated[str | None, typer.Option(help="Only this form (10-K, 10-Q...).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Hybrid (vector + full-text) search with filters read from the question."""
    settings = app_state(ctx).settings
    store = open_store(settings)
    try:
        result = retrieve(
            store,
            settings,
            question,
            k=k,
            overrides={"company": company, "year": year, "quarter": quarter, "form": form},
        )
    finally:
        store.close()
    filters = {
        "companies": [c.name for c in result.filters.companies],
        "years": result.filters.years,
        "quarter": result.filters.quarter,
        "form_types": result.filters.form_types,
        "matched": result.filters.matched,
    }
    if as_json:
        print_json(
            {
                "question": question,
                "filters": filters,
                "applied": result.applied,
                "widened": result.widened,
                "hits": [asdict(h) for h in result.hits],
            }
        )
        return
    err.print(
        Text(
            f"filters: {filters['matched'] or 'none'}"
            + (
                f"; widened (nothing matched): {', '.join(result.widened)}"
                if result.widened
                else ""
            )
        )
    )
    table = Table(show_lines=True)
    for column in ("#", "document", "pages", "section", "kind", "score", "dense", "text"):
        table.add_column(column, overflow="fold")
    for rank, hit in enumerate(result.hits, 1):
        pages = f"{hit.page_start}" + (f"-{hit.page_end}" if hit.page_end != hit.page_start else "")
        dense = f"#{hit.dense_rank} {hit.dense_score:.3f}" if hit.dense_rank else "-"
        text = f"#{hit.text_rank} {hit.text_score:.3f}" if hit.text_rank else "-"
        table.add_row(
            str(rank),
            Path(hit.document).name,
            pages,
            Text(" > ".join(hit.section_path[-2:])),
            hit.kind,
            f"{hit.score:.4f}",
            dense,
            text,
        )
    out.print(table)
