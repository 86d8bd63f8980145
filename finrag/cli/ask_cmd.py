"""`finrag ask`: one question, a cited answer once checked, each number's status, sources."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from finrag.answer.citations import Citation
from finrag.answer.extraction import CalculationOutcome
from finrag.answer.hop_plan import Hop, HopPlan, plan_for
from finrag.answer.hops import Chain, run_chain
from finrag.answer.markdown import answer_markdown
from finrag.answer.pipeline import Answer, Asker
from finrag.answer.safety import declined_answer
from finrag.answer.status import FOUND_IN_SOURCE, UNSUPPORTED, VERIFIED, WORDS
from finrag.cli.inputs import clean_option, question_text
from finrag.cli.options import (
    BackendOption,
    CompanyOption,
    FormOption,
    ModeOption,
    QuarterOption,
    YearOption,
)
from finrag.cli.persona_view import (
    PersonaOption,
    persona_markdown,
    persona_view,
    print_persona,
    with_persona_json,
)
from finrag.cli.progress import Activity
from finrag.cli.render import err, out, print_json, warn
from finrag.cli.report import Report
from finrag.cli.series_view import print_series_chart, write_series_png
from finrag.cli.state import app_state, with_mode_option, with_options, without_model
from finrag.config import Settings
from finrag.db import Store, open_store
from finrag.errors import ExitCode, NothingFound, UsageError
from finrag.llm import crashed_model
from finrag.personas import persona_name
from finrag.personas.kpis import PersonaKpis

STAGE_WORDS = {
    "retrieved": "reading the excerpts",
    "extracted": "checking facts and calculations",
    "phrasing": "wording the facts store's answer",
    "answering": "writing the answer",
    "checking": "checking the answer's numbers",
    "retrying": "a number was not in its sources: answering again",
}
_FORMATS = ("text", "md", "json")


def ask_command(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question, in words.")],
    k: Annotated[
        int | None,
        typer.Option("--k", help="Chunks given to the model (default: answer.k).", min=1, max=40),
    ] = None,
    company: CompanyOption = None,
    year: YearOption = None,
    quarter: QuarterOption = None,
    form: FormOption = None,
    backend: BackendOption = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            help="Seconds one model call may take (default: llm.timeout_s, 300).",
            min=1,
        ),
    ] = None,
    no_llm: Annotated[
        bool,
        typer.Option(
            "--no-llm",
            help="No model call: questions the facts store answers get a template answer; "
            "others get the closest excerpts and exit 7.",
        ),
    ] = False,
    persona: PersonaOption = None,
    mode: ModeOption = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Exit 8 unless every number is verified (a stored fact or a calculation on "
            "them); a number only found in an excerpt fails too.",
        ),
    ] = False,
    strict_filters: Annotated[
        bool,
        typer.Option(
            "--strict-filters",
            help="When no filing matches a filter (company, year, quarter, form), fail with "
            "exit 7 instead of answering without it.",
        ),
    ] = False,
    output_format: Annotated[
        str,
        typer.Option(
            "--format", help="Output: text, md (Markdown: answer, sources, calculations) or json."
        ),
    ] = "text",
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print {answer, citations, calculations, ...} as JSON."),
    ] = False,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Ask anew, even when this question (or a rewording of it) was answered on "
            "the same store (the answer cache; `finrag cache clear` empties it).",
        ),
    ] = False,
    png: Annotated[
        Path | None,
        typer.Option(
            "--png",
            metavar="PATH",
            dir_okay=False,
            help="When the answer is a measure over several periods, write its chart to PATH "
            "(on a terminal it is also drawn under the answer).",
        ),
    ] = None,
) -> None:
    """Answer a question from the stored filings, citing document and page.

    Each number is checked: "verified" (a stored fact, or a calculation on stored facts),
    "found in source" (printed in a cited excerpt) or "unsupported". Exit 0 with an
    answer, 7 when the filings do not hold one, 8 when a number is unsupported (with
    --strict: any number not verified). A question whose second part needs the first
    part's answer is asked in hops (--json: "plan"); exit 6 when a later hop found
    nothing after an earlier one answered.
    """
    if output_format not in _FORMATS:
        raise UsageError(f"unknown --format {output_format!r}", hint="use text, md or json")
    if as_json:
        output_format = "json"
    settings = app_state(ctx).settings
    # The answer is printed once it has passed its checks: while the model writes, the
    # status line shows the stage, the time and tokens/s (never an unchecked draft).
    # The embedded server may take seconds to start: that is a stage too.
    with Activity("opening the store") as activity:

        def on_event(event: str) -> None:
            activity.stage(STAGE_WORDS.get(event, event))
            if event == "retrying":
                activity.line(Text(STAGE_WORDS["retrying"], style="yellow"))

        outcome = ask_outcome(
            settings,
            question,
            opened=open_store,
            on_event=on_event,
            on_token=activity.tokens,
            k=k,
            company=company,
            year=year,
            quarter=quarter,
            form=form,
            backend=backend,
            timeout=timeout,
            no_llm=no_llm,
            persona=persona,
            mode=mode,
            strict=strict,
            strict_filters=strict_filters,
            no_cache=no_cache,
        )
    answer, view = outcome.answer, outcome.view
    if output_format == "json":
        print_json(outcome.report.data)
    elif output_format == "md":
        out.file.write(answer_markdown(answer) + persona_markdown(view))
        out.file.flush()
        print_notes(answer)
    else:
        out.print(Text(answer.answer))
        print_series_chart(answer.series)
        print_plan(outcome.chain)
        print_sources(answer)
        print_persona(view)
    if png is not None:
        write_series_png(answer.series, png, sorted({c.document for c in answer.citations}))
    outcome.report.finish()


@dataclass
class AskOutcome:
    answer: Answer
    view: PersonaKpis | None
    report: Report  # the JSON of --json, and how the command ends
    chain: Chain | None = None  # a question answered in dependent hops


def ask_outcome(
    settings: Settings,
    question: str,
    *,
    opened: Callable[[Settings], AbstractContextManager[Store]],
    on_event: Callable[[str], None] | None = None,
    on_token: Callable[[], None] | None = None,
    k: int | None = None,
    company: str | None = None,
    year: int | None = None,
    quarter: int | None = None,
    form: str | None = None,
    backend: str | None = None,
    timeout: float | None = None,
    no_llm: bool = False,
    persona: str | None = None,
    mode: str | None = None,
    strict: bool = False,
    strict_filters: bool = False,
    no_cache: bool = False,
) -> AskOutcome:
    """`ask` apart from its printing, for the CLI and the local API alike: the options are
    the command's, by name. ``opened(settings)`` gives the store (the CLI opens one, the
    server lends its own); ``on_event`` hears each stage, ``on_token`` each token."""
    question = question_text(question)
    company, form = clean_option(company), clean_option(form)
    settings = with_mode_option(settings, mode)
    settings = with_options(settings, "llm", backend=backend, timeout_s=timeout)
    settings = without_model(settings) if no_llm else settings
    settings = with_options(settings, "answer", persona=persona_name(persona) or persona)
    tick = on_token or (lambda: None)
    # Only a crash during this command is this command's (a library caller, or a test
    # runner, may have seen an earlier one in the same process).
    earlier_crash = crashed_model()
    # Screened first, as `chat` screens each turn: a declined request is never searched.
    answer, view, chain = declined_answer(question), None, None
    if answer is None:
        with opened(settings) as store:
            if on_event is not None:
                on_event("retrieving")
            asker = Asker(store, settings)
            overrides = {"company": company, "year": year, "quarter": quarter, "form": form}

            def ask(text: str, hop: Hop | None = None) -> Answer:
                # A hop asking about the company an earlier hop picked is not held to --company.
                picked = hop is not None and _takes_company(hop, plan)
                return asker.ask(
                    text,
                    k=k,
                    overrides={**overrides, "company": None} if picked else overrides,
                    on_token=lambda _piece: tick(),
                    on_event=on_event,
                    on_progress=lambda _piece: tick(),
                    strict_filters=strict_filters,
                    use_cache=not no_cache,
                )

            with store.connect() as conn:
                model = (lambda: asker.llm) if settings.answer.use_llm else None
                plan, note = plan_for(conn, question, model)
                conn.rollback()
            if plan is None:
                answer = ask(question)
                if note:
                    answer.flags.append(note)
            else:
                if on_event is not None:
                    on_event(f"{len(plan.hops)} hops planned ({plan.planner})")
                chain = run_chain(store, plan, question, ask)
                answer = chain.answer
            view = persona_view(store, settings, answer)
    data = with_persona_json(answer.as_dict(), view)
    if chain is not None:
        data = {**data, "planner": chain.planner, "plan": chain.rows}
    report = Report(data)
    crash = crashed_model()
    if crash is not None and crash is not earlier_crash:  # the answer is the facts' alone
        report.problem = crash
    elif chain is not None and chain.partial:
        report.exit_code = ExitCode.PARTIAL
    elif answer.refused and answer.route == "declined":
        report.problem = NothingFound(f"declined ({answer.refusal}): the reply says why")
    elif answer.refused:
        report.problem = NothingFound(
            "no answer in the stored filings: the reply says why",
            hint="`finrag docs list` shows what the store holds",
        )
    elif failed_check(answer, strict=strict):
        report.exit_code = ExitCode.UNVERIFIED
    return AskOutcome(answer, view, report, chain)


def _takes_company(hop: Hop, plan: HopPlan | None) -> bool:
    return plan is not None and any(plan.hops[n - 1].slot == "company" for n in hop.depends_on)


def print_plan(chain: Chain | None) -> None:
    """The hops, briefly: what each asked, what it passed on, how it ended."""
    if chain is None:
        return
    out.print(Text(f"\nPlan ({chain.planner})", style="bold"))
    for row in chain.rows:
        after = f" (uses {', '.join(map(str, row['depends_on']))})" if row["depends_on"] else ""
        passed = row.get("passes_on")
        took = f" → {passed['value']}" if passed else ""
        style = "green" if row["status"] == "answered" else "yellow"
        line = f"{row['hop']}. {row['question']}{after}{took} · "
        out.print(Text.assemble(line, (row["status"], style)))
        for key in ("repair", "reason"):
            if row.get(key) and not (key == "repair" and row.get("reason")):
                out.print(Text(f"    {row[key]}", style="dim"))


def failed_check(answer: Answer, *, strict: bool = False) -> bool:
    """Exit 8: a number is unsupported; with ``strict``, any number is not verified."""
    statuses = {n["status"] for n in answer.numbers}
    if strict:
        return bool(statuses - {VERIFIED})
    return UNSUPPORTED in statuses


def print_sources(answer: Answer) -> None:
    """Number checks, citations and calculations on stdout (they are part of the answer);
    checks and timings on stderr."""
    print_numbers(answer.numbers)
    print_citations(answer.citations)
    print_calculations(answer.calculations)
    print_notes(answer)


_MARK = {VERIFIED: ("verified", "green"), FOUND_IN_SOURCE: ("found in source", "yellow")}


def print_numbers(numbers: list[dict[str, str]]) -> None:
    """Each number's status, in words: a number only found in an excerpt never reads as
    verified, and an unsupported one never goes quietly."""
    if not numbers:
        return
    out.print(Text("\nNumbers", style="bold"))
    for n in unique_numbers(numbers):
        word, style = _MARK.get(n["status"], ("unsupported", "bold red"))
        source = f" · {n['source']}" if n["source"] else ""
        out.print(Text.assemble(f"{n['number']}  ", (word, style), (source, "dim")))


def unique_numbers(numbers: list[dict[str, str]]) -> list[dict[str, str]]:
    """One line per number and status, in order of first use."""
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for n in numbers:
        seen.setdefault((n["number"], n["status"]), n)
    return list(seen.values())


def print_notes(answer: Answer) -> None:
    """Checks, route and timings: on stderr, each on its own line."""
    if answer.cache:
        hit = answer.cache
        err.print(
            Text(
                f"cached: the answer given {hit['answered_at'][:16].replace('T', ' ')} to "
                f'"{hit["question"]}" (similarity {hit["similarity"]:.2f}); '
                "--no-cache asks anew",
                style="cyan",
            )
        )
    for flag in answer.flags:
        if flag in answer.warnings:
            warn(f"warning: {flag}")
        else:
            err.print(Text(f"check: {flag}", style="yellow"))
    reason = answer.retrieval.get("route_reason")
    if reason:
        err.print(Text(f"route: {answer.route} · {reason}", style="dim"))
    status = WORDS.get(answer.status, answer.status)
    seconds = answer.timings.get("total", 0)
    if not answer.backend:
        where = "facts store · " if answer.route in ("facts", "mixed") else ""
        err.print(Text(f"status: {status} · {where}{seconds:.1f} s", style="dim"))
    else:
        tokens = answer.tokens
        err.print(
            Text(
                f"status: {status} · {answer.backend} {answer.model} · {seconds:.1f} s · "
                f"{tokens['prompt']:,} tokens in, {tokens['completion']:,} out",
                style="dim",
            )
        )


def print_citations(citations: list[Citation]) -> None:
    if not citations:
        return
    out.print(Text("\nSources", style="bold"))
    for c in citations:
        where = " · ".join(p for p in (c.where, c.section) if p)
        out.print(Text.assemble((f"[{c.n}] ", "bold"), where))
        if c.flagged:
            out.print(Text(f"    flagged: instruction-like text ({c.flagged!r})", style="yellow"))
        if c.quote:
            out.print(Text(f'    "{c.quote}"', style="dim"))


def print_calculations(calculations: list[CalculationOutcome]) -> None:
    used = [c for c in calculations if c.result is not None and not c.unsourced_inputs]
    if not used:
        return
    out.print(Text("\nCalculations", style="bold"))
    for c in used:
        inputs = ", ".join(
            f"{i['text']} [{','.join(map(str, i['sources']))}]" if i["sources"] else i["text"]
            for i in c.inputs
        )
        out.print(Text(f"{c.description}: {c.expression} = {c.formatted}"))
        if inputs:
            out.print(Text(f"    inputs: {inputs}", style="dim"))
