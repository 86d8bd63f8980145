"""`finrag eval fundamentals`: yes/no questions whose gold is the filings' own
fundamentals (finrag.evaluate.fundamentals), written as a dataset for `eval answers`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from finrag.cli.conventions import nothing_found
from finrag.cli.render import Column, err, print_json, print_table
from finrag.cli.state import app_state
from finrag.db import open_store
from finrag.db.companies import require_company
from finrag.evaluate.fundamentals import METRICS, fundamentals_questions
from finrag.facts.dictionary import metric as find_metric


def fundamentals_command(
    ctx: typer.Context,
    output: Annotated[Path, typer.Argument(help="Where to write the questions (JSONL).")],
    companies: Annotated[
        list[str] | None,
        typer.Option("--company", help="Only these companies (repeat; default: every one)."),
    ] = None,
    metrics: Annotated[
        list[str] | None,
        typer.Option("--metric", help=f"Line items (repeat; default: {', '.join(METRICS)})."),
    ] = None,
    quarterly: Annotated[
        bool,
        typer.Option(
            "--quarterly/--annual-only",
            help="Also the same fiscal quarter a year apart (three-month figures).",
        ),
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Yes/no questions whose gold is the filings' fundamentals, for `eval answers`.

    "Did COMPANY's revenue rise from FY2023 to FY2024?": the gold Yes/No and both values
    from verified stored facts (both periods' facts passed the filing's own
    cross-checks); score them with `finrag eval answers FILE`."""
    names = [find_metric(m).name for m in metrics or METRICS]  # unknown: close matches
    with open_store(app_state(ctx).settings) as store, store.connect() as conn:
        chosen = [require_company(conn, c)[:2] for c in companies] if companies else None
        found = fundamentals_questions(conn, companies=chosen, metrics=names, quarterly=quarterly)
    lines = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in found.questions)
    summary = found.as_dict() | {"written": str(output)}
    if not found.questions:
        if as_json:
            print_json(summary)
        nothing_found(
            "no question: the store holds no pair of verified facts a year apart",
            hint="`finrag facts COMPANY --metric revenue` shows what it holds",
        )
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(lines, encoding="utf-8")
    err.print(f"wrote {output} ({len(found.questions)} questions)", highlight=False)
    if as_json:
        print_json(summary)
        return
    rows = [
        ["questions", str(summary["questions"])],
        ["gold Yes / No", f"{summary['yes']} / {summary['no']}"],
    ]
    rows += [[f"type {t}", str(n)] for t, n in summary["by_type"].items()]
    rows += [[f"left out: {why}", str(n)] for why, n in found.skipped.items()]
    print_table([Column("fundamentals questions"), Column("n", justify="right")], rows)
