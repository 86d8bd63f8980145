"""`finrag eval`: score retrieval (and, later, answers) on a question set."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from finrag.cli.fundamentals_cmd import fundamentals_command
from finrag.cli.options import BackendOption, ModeOption
from finrag.cli.render import Column, err, print_json, print_table
from finrag.cli.state import app_state, with_mode_option, with_options, without_model
from finrag.db import open_store
from finrag.errors import UsageError
from finrag.evaluate.answer_compare import (
    MODE_VARIANTS,
    VARIANTS,
    Comparison,
    compare_answers,
    comparison_rows,
    parse_variants,
    write_comparison,
)
from finrag.evaluate.answer_report import write_answer_report
from finrag.evaluate.answers import AnswerReport, AnswerResult, evaluate_answers
from finrag.evaluate.dataset import datasets_label, load_dataset, load_datasets
from finrag.evaluate.html_report import answers_html, comparison_html, retrieval_html, write_html
from finrag.evaluate.report import fmt, shown_k, write_retrieval_report
from finrag.evaluate.retrieval import BREAKDOWNS, QuestionResult, evaluate_retrieval
from finrag.evaluate.variants import KEYS
from finrag.retrieve import Retriever, Variant

app = typer.Typer(help="Evaluate retrieval and answers on a question set.", no_args_is_help=True)
app.command("fundamentals")(fundamentals_command)


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
        Path | None,
        typer.Option("--out", help="Write retrieval.json, .csv, .md and report.html here."),
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
                on_question=lambda r: _retrieval_progress(r, advance),
            )
    finally:
        store.close()
    if out_dir is not None:
        written = [
            *write_retrieval_report(report, out_dir),
            write_html(retrieval_html(report), out_dir),
        ]
        for path in written:
            err.print(f"wrote {path}", highlight=False)
    if as_json:
        print_json(report.as_dict())
        return
    for note in report.notes:
        err.print(f"note: {note}", highlight=False)
    _print_tables(report)


def _retrieval_progress(result: QuestionResult, advance) -> None:
    """The bar on a terminal; a line per question otherwise (long runs in a log)."""
    advance()
    if not err.is_terminal:
        rank = result.first_relevant_rank or "-"
        err.print(
            f"{result.variant} {result.id}: first relevant rank {rank} "
            f"({result.latency_ms:.0f} ms)",
            highlight=False,
        )


@app.command("answers")
def answers_command(
    ctx: typer.Context,
    datasets: Annotated[
        list[Path],
        typer.Argument(
            help="JSONL questions (finrag or FinanceBench); several files run as one set "
            "(e.g. dev questions and the negative set)."
        ),
    ],
    limit: Annotated[
        int | None, typer.Option(help="Only the first N questions of each file.", min=1)
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Write answers.jsonl (one line per finished question: a rerun resumes), "
            "answers.json, .csv, .md and report.html (tables and charts, one file) here.",
        ),
    ] = None,
    judge: Annotated[
        bool, typer.Option("--judge", help="Also grade each answer with the configured LLM.")
    ] = False,
    tolerance: Annotated[
        float, typer.Option(help="Relative tolerance of the numeric check.", min=0, max=0.5)
    ] = 0.01,
    backend: BackendOption = None,
    compare: Annotated[
        str | None,
        typer.Option(
            help=f"Configurations side by side in one run, comma-separated, each into its own "
            f"subfolder of --out: base, chat, {', '.join(VARIANTS)}, the presets "
            f"{', '.join(MODE_VARIANTS)}, or key:value changes joined by '/' (keys: "
            f"{', '.join(KEYS)}), e.g. base,rerank:llm,retrieval:dense,graders:on,"
            "verify:off,hyde:off,decompose:on,persona:credit,backend:fake.",
        ),
    ] = None,
    no_llm: Annotated[
        bool,
        typer.Option(
            "--no-llm",
            help="No model call: facts-route answers from a template, other questions "
            "get their excerpts and no answer (answer.use_llm off).",
        ),
    ] = False,
    mode: ModeOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the whole report as JSON.")
    ] = False,
) -> None:
    """Answers: correctness (numeric-aware; optional LLM judge), citation validity,
    refusals, latency and tokens, per question, by route and question type, overall."""
    settings = with_mode_option(app_state(ctx).settings, mode)
    settings = with_options(settings, "llm", backend=backend)
    settings = without_model(settings) if no_llm else settings
    variants = parse_variants(compare) if compare is not None else None
    if variants and no_llm:
        raise UsageError(
            "--no-llm and --compare together: the variants say which run uses the model",
            hint="name the variant instead, e.g. --compare text,facts+text:no-llm",
        )
    questions = load_datasets(datasets, limit=limit)
    dataset = datasets_label(datasets)
    if variants:
        comparison = _compare_answers(
            settings,
            questions,
            variants,
            dataset=dataset,
            out_dir=out_dir,
            judge=judge,
            tolerance=tolerance,
        )
        if as_json:
            print_json(comparison.as_dict())
        else:
            _print_comparison(comparison)
        return
    with open_store(settings) as store, _progress(len(questions)) as advance:

        def on_question(result: AnswerResult, resumed: bool) -> None:
            advance()
            _answer_progress("", result, resumed)

        report = evaluate_answers(
            store,
            settings,
            questions,
            dataset=dataset,
            out_dir=out_dir,
            use_judge=judge,
            tolerance=tolerance,
            on_question=on_question,
        )
    if out_dir is not None:
        written = [*write_answer_report(report, out_dir), write_html(answers_html(report), out_dir)]
        for path in written:
            err.print(f"wrote {path}", highlight=False)
    if as_json:
        print_json(report.as_dict())
        return
    _print_answer_summary(report)


def _answer_progress(variant: str, result: AnswerResult, resumed: bool) -> None:
    """A line per question when stderr is no terminal (long runs in a log)."""
    if not err.is_terminal:
        state = "resumed" if resumed else f"{result.latency_s:.0f} s"
        verdict = {True: "right", False: "wrong", None: "n/a"}[result.auto_correct]
        where = f"{variant} " if variant else ""
        err.print(f"{where}{result.id}: {verdict}, {result.route} route ({state})", highlight=False)


def _compare_answers(
    settings, questions, variants, *, dataset, out_dir, judge, tolerance
) -> Comparison:
    with open_store(settings) as store, _progress(len(questions) * len(variants)) as advance:

        def on_question(variant: str, result: AnswerResult, resumed: bool) -> None:
            advance()
            _answer_progress(variant, result, resumed)

        comparison = compare_answers(
            store,
            settings,
            questions,
            variants,
            dataset=dataset,
            out_dir=out_dir,
            use_judge=judge,
            tolerance=tolerance,
            on_question=on_question,
        )
    if out_dir is not None:
        written = [*write_comparison(comparison, out_dir)]
        written.append(write_html(comparison_html(comparison), out_dir))
        for path in written:
            err.print(f"wrote {path}", highlight=False)
    return comparison


def _print_comparison(comparison: Comparison) -> None:
    columns = [Column(""), *(Column(n, justify="right", no_wrap=True) for n in comparison.variants)]
    print_table(
        columns,
        ([label, *cells] for label, cells in comparison_rows(comparison)),
        title=f"answers on {Path(comparison.dataset).name}, configurations compared",
    )


def _print_breakdown(title: str, column: str, groups: dict) -> None:
    names = (column, "n", "correct", "headline right", "refused", "p50 / p95 s")
    columns = [Column(column)] + [Column(n, justify="right", no_wrap=True) for n in names[1:]]
    print_table(
        columns,
        (
            [
                name,
                g["n"],
                fmt(g["auto_correct"]["value"]),
                fmt(g["numeric_correct"]["value"]),
                fmt(g["refusal_rate"]["value"]),
                f"{g['latency_s']['p50']} / {g['latency_s']['p95']}",
            ]
            for name, g in groups.items()
        ),
        title=title,
    )


def _print_answer_summary(report: AnswerReport) -> None:
    s = report.summary
    rows = [
        [name.replace("_", " "), fmt(s[name]["value"]), s[name]["n"]]
        for name in (
            "auto_correct",
            "numeric_correct",
            "polarity_correct",
            "judge_correct",
            "refusal_rate",
            "error_rate",
            "citation_valid",
            "valid_citation_share",
            "evidence_cited",
            "evidence_recall_quotes",
            "evidence_recall_passages",
            "evidence_quotes_from_gold",
            "numbers_untraceable",
            "faithfulness",
            "faithful_answers",
            "answer_relevance",
            "context_precision",
            "context_recall",
        )
    ]
    rows.append(["latency p50 / p95 s", f"{s['latency_s']['p50']} / {s['latency_s']['p95']}", ""])
    rows.append(
        [
            "tokens in / out per question",
            f"{s['tokens']['prompt_per_question']:,} / {s['tokens']['completion_per_question']:,}",
            "",
        ]
    )
    print_table(
        ["metric", Column("value", justify="right", no_wrap=True), Column("n", justify="right")],
        rows,
        title=f"answers on {Path(report.dataset).name} ({report.questions} questions)",
    )
    _print_breakdown("by route", "route", s["by_route"])
    _print_breakdown("by question type", "type", s["by_question_type"])


class _progress:
    """A bar on stderr when it is a terminal; a no-op otherwise."""

    def __init__(self, total: int) -> None:
        self.bar = (
            Progress(
                TextColumn("evaluating"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("eta"),
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
    names = [f"hit@{kk}" for kk in report.ks]
    names += [f"MRR@{kmax}", f"recall@{k5}", f"prec@{k5}", f"F1@{k5}", f"text@{k5}", "p50 ms"]
    print_table(
        [Column("variant", no_wrap=True)]
        + [Column(n, justify="right", no_wrap=True) for n in names],
        (
            [
                s.variant,
                *[fmt(s.scores[kk]["hit"]) for kk in report.ks],
                fmt(s.scores[kmax]["mrr"]),
                *[fmt(s.scores[k5][m]) for m in ("recall", "precision", "f1", "text_hit")],
                f"{s.latency_ms['p50']:.0f}",
            ]
            for s in report.variants
        ),
        title=f"retrieval on {Path(report.dataset).name} ({report.elapsed_s:.0f} s)",
    )
    last = report.variants[-1]
    for by in BREAKDOWNS:
        names = ["n", f"hit@{k5}", f"MRR@{kmax}", f"text@{k5}"]
        print_table(
            [Column(by)] + [Column(n, justify="right", no_wrap=True) for n in names],
            (
                [
                    name,
                    group["n"],
                    fmt(group["scores"][k5]["hit"]),
                    fmt(group["scores"][kmax]["mrr"]),
                    fmt(group["scores"][k5]["text_hit"]),
                ]
                for name, group in last.breakdowns[by].items()
            ),
            title=f"{last.variant} by {by.replace('_', ' ')}",
        )
