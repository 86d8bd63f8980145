"""`finrag research`: a question planned into sub-questions, read in bounded rounds, and
written up as a Markdown memo with a figures table and a citation on every claim
(finrag.analysis.research)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from finrag.analysis.memo import memo_markdown
from finrag.analysis.research import research
from finrag.analysis.research_plan import plan_for
from finrag.answer.pipeline import Asker
from finrag.cli.inputs import clean_option, question_text
from finrag.cli.options import BackendOption, CompanyOption, ModeOption
from finrag.cli.render import err, out, print_json
from finrag.cli.report import Report
from finrag.cli.state import app_state, with_mode_option, with_options, without_model
from finrag.db import open_store
from finrag.errors import ModelNotAvailable, NothingFound, UsageError

_PLANNERS = ("rules", "model")


def research_command(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The research question, in words.")],
    company: CompanyOption = None,
    rounds: Annotated[
        int,
        typer.Option("--rounds", metavar="N", min=1, max=8, help="At most N rounds of reading."),
    ] = 3,
    seconds: Annotated[
        float,
        typer.Option(
            "--time",
            metavar="SECONDS",
            min=1,
            help="Begin no question after SECONDS (the one being answered is finished).",
        ),
    ] = 600,
    planner: Annotated[
        str,
        typer.Option(
            "--planner",
            metavar="PLANNER",
            help="Who splits the question: rules (angles of the topic) or the model (its "
            "reply held to a JSON schema; the rules when it fails).",
        ),
    ] = "rules",
    no_llm: Annotated[
        bool,
        typer.Option(
            "--no-llm",
            help="No model call: facts-store answers, and the passages that name the topic.",
        ),
    ] = False,
    mode: ModeOption = None,
    backend: BackendOption = None,
    output: Annotated[
        Path | None,
        typer.Option("--out", metavar="PATH", dir_okay=False, help="Write the memo to PATH."),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print JSON: the plan, the rounds, the evidence, the memo."),
    ] = False,
) -> None:
    """Research a question in the filings and write a cited Markdown memo.

    The question is split into sub-questions by angle (for a place: revenue by geography,
    customers, supply chain, risk factors, operations). Each round asks the open ones
    (the facts store first, the quoted text otherwise), keeps what names the topic, and
    leaves the rest open for the next round, which also follows what the found passages
    name (tariffs, export controls ...). It stops when nothing is open, after --rounds or
    --time. Progress goes to stderr; exit 7 when nothing was found.
    """
    if planner not in _PLANNERS:
        raise UsageError(f"unknown --planner {planner!r}", hint="use rules or model")
    if planner == "model" and no_llm:
        raise UsageError("--planner model needs the model", hint="drop --no-llm, or use rules")
    question = question_text(question)
    settings = with_mode_option(app_state(ctx).settings, mode)
    settings = with_options(settings, "llm", backend=backend)
    settings = without_model(settings) if no_llm else settings

    def progress(line: str) -> None:
        err.print(Text(line, style="dim" if line.startswith(" ") else ""))

    with open_store(settings) as store:
        asker = Asker(store, settings)
        plan = plan_for(
            store, question, clean_option(company), llm=asker.llm if planner == "model" else None
        )
        progress(f"plan ({plan.planner}): {len(plan.sub_questions)} sub-questions on {plan.topic}")
        run = research(asker, plan, rounds=rounds, seconds=seconds, on_progress=progress)
    memo = memo_markdown(run)
    if output is not None:
        output.write_text(memo, encoding="utf-8")
        err.print(Text(f"wrote {output}", style="dim"))
    report = Report(run.as_dict() | {"memo": memo})
    failed = sum(q.model_failures for q in plan.sub_questions)
    if not run.evidence and failed and not any(q.tries for q in plan.sub_questions):
        report.problem = ModelNotAvailable(
            f"the model failed on every sub-question ({failed} time(s)): the filings were not read",
            hint="`finrag doctor` checks the model; `--no-llm` reads without it",
        )
    elif not run.evidence:
        report.problem = NothingFound(
            "nothing in the stored filings answers any sub-question",
            hint="`finrag docs list` shows what the store holds",
        )
    if as_json:
        print_json(report.data)
    elif output is None:
        out.file.write(memo)
        out.file.flush()
    err.print(
        Text(
            f"{len(run.rounds)} round(s), stopped: {run.stopped} · {len(run.evidence)} pieces of "
            f"evidence · {run.seconds:.1f} s",
            style="dim",
        )
    )
    report.finish()
