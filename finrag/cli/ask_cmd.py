"""`finrag ask`: one question, a cited answer streamed to stdout, sources and checks after it."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.text import Text

from finrag.answer.citations import Citation
from finrag.answer.extraction import CalculationOutcome
from finrag.answer.pipeline import Answer, Asker
from finrag.cli.inputs import clean_option, question_text
from finrag.cli.render import err, out, print_json
from finrag.cli.state import app_state, with_options
from finrag.db import open_store
from finrag.errors import ExitCode
from finrag.retrieve.context import page_label

_STAGES = {
    "retrieved": "reading the excerpts",
    "extracted": "checking facts and calculations",
    "answering": "writing the answer",
    "retrying": "a number was not in its sources: answering again",
}


def ask_command(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question, in words.")],
    k: Annotated[
        int | None,
        typer.Option("--k", help="Chunks given to the model (default: answer.k).", min=1, max=40),
    ] = None,
    company: Annotated[str | None, typer.Option(help="Only this company.")] = None,
    year: Annotated[
        int | None, typer.Option(help="Only this fiscal year.", min=1900, max=2200)
    ] = None,
    quarter: Annotated[int | None, typer.Option(help="Only this quarter.", min=1, max=4)] = None,
    form: Annotated[str | None, typer.Option(help="Only this form (10-K, 10-Q...).")] = None,
    backend: Annotated[
        str | None, typer.Option(help="LLM backend: auto, ollama, embedded (default: llm.backend).")
    ] = None,
    no_llm: Annotated[
        bool,
        typer.Option(
            "--no-llm",
            help="No model call: questions the facts store answers get a template answer; "
            "others get the closest excerpts and exit 7.",
        ),
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print {answer, citations, calculations, ...} as JSON."),
    ] = False,
) -> None:
    """Answer a question from the stored filings, citing document and page.

    Exit 0 with an answer, 7 when the filings do not hold one (the reply says what was
    searched and what the store holds).
    """
    question = question_text(question)
    company, form = clean_option(company), clean_option(form)
    settings = with_options(app_state(ctx).settings, "llm", backend=backend)
    settings = with_options(settings, "answer", use_llm=False if no_llm else None)
    # Stream only to a terminal: a script reads the final, checked answer once.
    stream = not as_json and out.is_terminal
    status = err.status("retrieving", spinner="dots") if err.is_terminal else None
    streamed: list[str] = []

    def on_event(event: str) -> None:
        if event == "retrying" and streamed:
            out.print()
            streamed.clear()
        if status is not None:
            if event == "answering" and stream:
                status.stop()
            else:
                status.update(_STAGES.get(event, event))
        if event == "retrying":
            err.print(Text(_STAGES["retrying"], style="yellow"))

    def on_token(piece: str) -> None:
        streamed.append(piece)
        sys.stdout.write(piece)
        sys.stdout.flush()

    with open_store(settings) as store:
        if status is not None:
            status.start()
        try:
            answer = Asker(store, settings).ask(
                question,
                k=k,
                overrides={"company": company, "year": year, "quarter": quarter, "form": form},
                on_token=on_token if stream else None,
                on_event=on_event,
            )
        finally:
            if status is not None:
                status.stop()
    if as_json:
        print_json(answer.as_dict())
    else:
        if streamed:
            out.print()
        else:
            out.print(Text(answer.answer))
        print_sources(answer)
    if answer.refused:
        raise typer.Exit(ExitCode.NO_ANSWER)


def print_sources(answer: Answer) -> None:
    """Citations and calculations on stdout (they are part of the answer); checks and
    timings on stderr."""
    if answer.unverified_numbers:  # on stdout, with the answer: a wrong number never goes quietly
        numbers = ", ".join(dict.fromkeys(u["number"] for u in answer.unverified_numbers))
        out.print(
            Text(f"\nNot verified: {numbers} (in no cited excerpt, no calculation)", style="yellow")
        )
    print_citations(answer.citations)
    print_calculations(answer.calculations)
    for flag in answer.flags:
        err.print(Text(f"check: {flag}", style="yellow"))
    reason = answer.retrieval.get("route_reason")
    if reason:
        err.print(Text(f"route: {answer.route} · {reason}", style="dim"))
    if answer.route == "facts" and not answer.backend:
        err.print(Text(f"facts store · {answer.timings.get('total', 0):.1f} s", style="dim"))
    elif answer.backend:
        tokens = answer.tokens
        err.print(
            Text(
                f"{answer.backend} {answer.model} · {answer.timings.get('total', 0):.1f} s · "
                f"{tokens['prompt']:,} tokens in, {tokens['completion']:,} out",
                style="dim",
            )
        )


def print_citations(citations: list[Citation]) -> None:
    if not citations:
        return
    out.print(Text("\nSources", style="bold"))
    for c in citations:
        pages = page_label(c.pages[0], c.pages[-1])
        where = " · ".join(p for p in (f"{c.document} {pages}".strip(), c.section) if p)
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
