"""`finrag analyze`: a persona analysis of one or more companies (finrag.analysis): each
persona's own questions answered from the store with citations, then one synthesis that
says where the personas disagree."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from finrag.analysis.persona_analysis import analyze
from finrag.answer.pipeline import Asker
from finrag.cli.options import BackendOption, ModeOption
from finrag.cli.render import err, out, print_json
from finrag.cli.report import Report
from finrag.cli.state import app_state, with_mode_option, with_options, without_model
from finrag.db import open_store
from finrag.errors import NothingFound, UsageError
from finrag.persona_names import persona_names
from finrag.personas import load_persona

DEFAULT_PERSONAS = "credit,equity,esg"


def analyze_command(
    ctx: typer.Context,
    companies: Annotated[
        list[str],
        typer.Argument(help="Company names, aliases or tickers in the store.", metavar="COMPANY"),
    ],
    personas: Annotated[
        str,
        typer.Option(
            "--persona",
            metavar="NAMES",
            help=f"Comma-separated personas, each asking its own questions (from "
            f"{', '.join(persona_names())}; finrag/personas/).",
        ),
    ] = DEFAULT_PERSONAS,
    no_llm: Annotated[
        bool,
        typer.Option(
            "--no-llm",
            help="No model call: the questions the facts store answers are answered; the "
            "others list their closest passages.",
        ),
    ] = False,
    mode: ModeOption = None,
    backend: BackendOption = None,
    seconds: Annotated[
        float | None,
        typer.Option(
            "--time",
            metavar="SECONDS",
            min=1,
            help="Begin no question after SECONDS (those left are listed as not asked).",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--out", metavar="PATH", dir_okay=False, help="Also write the Markdown here."),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print JSON: per-persona findings, citations, synthesis."),
    ] = False,
) -> None:
    """Analyze companies as several readers would: each persona's questions, then a synthesis.

    The credit analyst asks about leverage, coverage, liquidity, maturities and covenants;
    the equity analyst about growth, margins, EPS, segments and guidance; the ESG analyst
    about emissions, governance, the board and human capital. Every finding keeps its
    citations. Where the computed figures point in opposite directions for two personas
    (credit sees leverage rising while equity sees growth), the synthesis says so: the
    rule reads the signs of the computed figures, not a model's opinion. Progress goes to
    stderr. Exit 7 when no question found anything.
    """
    chosen = [load_persona(name) for name in _names(personas)]
    settings = with_mode_option(app_state(ctx).settings, mode)
    settings = with_options(settings, "llm", backend=backend)
    settings = without_model(settings) if no_llm else settings
    settings = with_options(settings, "answer", persona=None)  # each persona asks as itself

    def progress(line: str) -> None:
        err.print(Text(line, style="dim" if line.startswith(" ") else ""))

    with open_store(settings) as store:
        asker = Asker(store, settings)
        analysis = analyze(asker, store, companies, chosen, seconds=seconds, on_progress=progress)
    markdown = analysis.markdown()
    if output is not None:
        output.write_text(markdown, encoding="utf-8")
        err.print(Text(f"wrote {output}", style="dim"))
    report = Report(analysis.as_dict())
    if not any(f.found for f in analysis.findings):
        report.problem = NothingFound(
            "no persona question was answered from the store",
            hint="without --no-llm the text questions are answered by the model",
        )
    if as_json:
        print_json(report.data)
    else:
        out.file.write(markdown)
        out.file.flush()
    err.print(Text(f"{len(analysis.findings)} questions · {analysis.seconds:.1f} s", style="dim"))
    report.finish()


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UsageError("--persona names no persona", hint=f"e.g. --persona {DEFAULT_PERSONAS}")
    return list(dict.fromkeys(names))
