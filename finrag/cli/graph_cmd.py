"""`finrag graph`: the entities and relations extracted from a company's filings."""

from __future__ import annotations

from typing import Annotated

import typer

from finrag.cli.conventions import nothing_found
from finrag.cli.render import Column, err, print_json, print_table
from finrag.cli.state import app_state
from finrag.db import open_store
from finrag.db.companies import require_company
from finrag.errors import UsageError
from finrag.graph.store import rebuild_company_graph
from finrag.graph.view import company_graph


def graph_command(
    ctx: typer.Context,
    company: Annotated[str, typer.Argument(help="Company name, alias or ticker in the store.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    rebuild: Annotated[
        bool,
        typer.Option(
            "--rebuild",
            help="First extract the graph again from the stored chunks of the company's "
            "filings (no re-parse, no re-embedding): for filings ingested before the graph.",
        ),
    ] = False,
    llm: Annotated[
        bool,
        typer.Option(
            "--llm",
            help="With --rebuild: the LLM reads the filings too (as `ingest --graph llm`; "
            "bounded by ingest.graph_budget_s per filing).",
        ),
    ] = False,
) -> None:
    """What the knowledge graph holds for a company: entities by kind (segments, products,
    auditor, officers, subsidiaries, customers, competitors, places) and relations, each
    with its document, page and extractor (rules, or llm for what a model read)."""
    if llm and not rebuild:
        raise UsageError("--llm reads the filings again: it goes with --rebuild")
    settings = app_state(ctx).settings
    with open_store(settings) as store, store.connect() as conn:
        company_id, name, _ = require_company(conn, company)
        if rebuild:
            documents = rebuild_company_graph(conn, company_id)
            err.print(f"rebuilt the graph of {documents} filing(s) of {name}")
            if llm:
                _read_with_llm(conn, company_id, settings)
        graph = company_graph(conn, company_id, name)
    if as_json:
        print_json(graph.as_dict())
    if not graph.relations:
        nothing_found(
            f"no graph for {name}: no rule matched in its filings, or they were ingested "
            "before the graph existed",
            hint=f'`finrag graph "{name}" --rebuild` extracts it again from the stored chunks',
        )
    if as_json:
        return
    print_table(
        [Column("kind", no_wrap=True), Column("count", justify="right"), "names"],
        [
            [kind, len(items), ", ".join(i["name"] for i in items)]
            for kind, items in graph.entities.items()
        ],
        title=f"{name}: entities",
    )
    print_table(
        [
            "subject",
            Column("relation", no_wrap=True),
            Column("by", no_wrap=True),
            "object",
            "document",
            Column("page", justify="right", no_wrap=True),
            Column("as stated", max_width=60),
        ],
        [
            [r.subject, r.predicate, r.extractor, r.object, r.document, r.page, r.evidence[:120]]
            for r in graph.relations
        ],
        title=f"{name}: relations",
    )


def _read_with_llm(conn, company_id: int, settings) -> None:
    """Each of the company's filings read by the configured LLM for the graph."""
    from finrag.graph.llm_pass import read_document
    from finrag.llm import get_llm

    model = get_llm(settings)
    for (document_id,) in conn.execute(
        "SELECT id FROM documents WHERE company_id = %s ORDER BY id", (company_id,)
    ).fetchall():
        reading = read_document(
            conn,
            document_id,
            model,
            budget_s=settings.ingest.graph_budget_s,
            max_chunks=settings.ingest.graph_max_chunks,
            force=True,
        )
        err.print(
            f"document {document_id}: {reading.model} read {reading.chunks_read} of "
            f"{reading.candidates} passages in {reading.seconds:.1f} s, kept "
            f"{reading.relations} relations ({reading.dropped} proposed that the passages do not "
            "state, dropped)" + ("" if reading.complete else "; not read to the end"),
            highlight=False,
        )
