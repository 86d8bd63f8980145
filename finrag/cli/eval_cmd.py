"""`finrag eval`: score retrieval (and, later, answers) on a question set."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from finrag.cli.render import err, out, print_json
from finrag.cli.state import app_state
from finrag.db import open_store
from finrag.errors import UsageError
from finrag.evaluate.dataset import load_dataset
from finrag.evaluate.report import fmt, shown_k, write_retrieval_report
from finrag.evaluate.retrieval import BREAKDOWNS, evaluate_retrieval
from finrag.retrieve import Retriever, Variant

app = typer.Typer(help="Evaluate retrieval on a question set.", no_args_is_help=True)


def parse_ks(text: str) -> list[int]:
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise UsageError(f"--k {text!r}: expected numbers like 1,3,5,10") from None
    if not ks or ks[0] < 1 or ks[-1] > 200:
        raise UsageError(f"--k {text!r}: each k must be between 1 and 200")
    return ks


@app.command("retrieval")
def retrieval_command(
    ctx: typer.Context,
    dataset: Annotated[Path, typer.Argument(help="JSONL questions (finrag or FinanceBench).")],
    k: Annotated[str, typer.Option("--k", help="Cut-offs, comma-separated.")] = "1,3,5,10",
    compare: Annotated[
        str | None,
        typer.Option(
            help="Variants side by side, e.g. dense,fts,hybrid,hybrid+filters,"
            "hybrid+filters+rerank (default: the configured pipeline)."
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N questions.", min=1)] = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Write retrieval.json, .csv and .md here.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the whole report as JSON.")
    ] = False,
) -> None:
    """Retrieval only: hit rate, recall, precision, F1, MRR and evidence-text match at k."""
    settings = app_state(ctx).settings
    ks = parse_ks(k)
    questions = load_dataset(dataset, limit=limit)
    variants = [Variant.parse(v) for v in compare.split(",")] if compare else None
    store = open_store(settings)
    try:
        retriever = Retriever(store, settings)
        total = len(questions) * (len(variants) if variants else 1)
        with _progress(total) as advance:
            report = evaluate_retrieval(
                store,
                settings,
                questions,
                dataset=dataset,
                ks=ks,
                variants=variants,
                retriever=retriever,
                on_question=lambda _r: advance(),
            )
    finally:
        store.close()
    if out_dir is not None:
        for path in write_retrieval_report(report, out_dir):
            err.print(f"wrote {path}", highlight=False)
    if as_json:
        print_json(report.as_dict())
        return
    for note in report.notes:
        err.print(f"note: {note}", highlight=False)
    _print_tables(report)


class _progress:
    """A bar on stderr when it is a terminal; a no-op otherwise."""

    def __init__(self, total: int) -> None:
        self.bar = (
            Progress(
                TextColumn("evaluating"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=err,
                transient=True,
            )
            if err.is_terminal
            else None
        )
        self.total = total

    def __enter__(self):
        if self.bar is None:
            return lambda: None
        self.bar.start()
        task = self.bar.add_task("eval", total=self.total)
        return lambda: self.bar.update(task, advance=1)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def _print_tables(report) -> None:
    k5, kmax = shown_k(report.ks), max(report.ks)
    table = Table(title=f"retrieval on {Path(report.dataset).name} ({report.elapsed_s:.0f} s)")
    table.add_column("variant")
    for kk in report.ks:
        table.add_column(f"hit@{kk}", justify="right")
    for name in (f"MRR@{kmax}", f"recall@{k5}", f"prec@{k5}", f"F1@{k5}", f"text@{k5}", "p50 ms"):
        table.add_column(name, justify="right")
    for s in report.variants:
        table.add_row(
            s.variant,
            *[fmt(s.scores[kk]["hit"]) for kk in report.ks],
            fmt(s.scores[kmax]["mrr"]),
            *[fmt(s.scores[k5][m]) for m in ("recall", "precision", "f1", "text_hit")],
            f"{s.latency_ms['p50']:.0f}",
        )
    out.print(table)
    last = report.variants[-1]
    for by in BREAKDOWNS:
        sub = Table(title=f"{last.variant} by {by.replace('_', ' ')}")
        for column in (by, "n", f"hit@{k5}", f"MRR@{kmax}", f"text@{k5}"):
            sub.add_column(column, justify="left" if column == by else "right")
        for name, group in last.breakdowns[by].items():
            s = group["scores"]
            sub.add_row(
                name,
                str(group["n"]),
                fmt(s[k5]["hit"]),
                fmt(s[kmax]["mrr"]),
                fmt(s[k5]["text_hit"]),
            )
        out.print(sub)
