"""The persona's KPIs beside an answer, for `ask --persona` and `chat --persona`: the
"Persona: credit" block (text, Markdown) and the ``persona`` object of --json."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from finrag.agent.session import ChatSession
from finrag.cli.render import out
from finrag.config import Settings
from finrag.db import Store
from finrag.facts.kpi import KpiValue
from finrag.facts.kpi_report import gap_note
from finrag.personas import Persona, active_persona, persona_names
from finrag.personas.kpis import PersonaKpis, format_kpi, kpis_for_answers

PersonaOption = Annotated[
    str | None,
    typer.Option(
        "--persona",
        metavar="NAME",
        help=f"Write for a reader: {', '.join(persona_names())} (finrag/personas/); its "
        "KPIs for the company and period asked are shown after the answer, from the facts "
        "store. off: none (default: answer.persona).",
    ),
]


def persona_view(store: Store, settings: Settings, answer: Any) -> PersonaKpis | None:
    """The KPIs of the persona ``answer.persona`` names for what ``answer`` is about; None
    without a persona or when the question was refused before anything was read."""
    persona = active_persona(settings)
    if persona is None:
        return None
    with store.connect() as conn:
        view = kpis_for_answers(conn, persona, [answer])
        conn.rollback()
    return view


def persona_command(chat: ChatSession, args: list[str], *, as_json: bool) -> str | dict:
    """`/persona` (which one), `/persona NAME` (switch), `/persona off`."""
    if args:
        chat.set_persona(" ".join(args))
    persona = chat.persona
    if as_json:
        return {"persona": persona.as_dict() if persona else None}
    verb = "persona now" if args else "persona"
    if persona is None:
        return (
            f"{verb}: none (answers are written for no particular reader); "
            f"/persona NAME picks one of {', '.join(persona_names())}"
        )
    return (
        f"{verb}: {persona.name} ({persona.title}: {persona.summary}); its KPIs: "
        f"{', '.join(persona.kpis)}. /persona off for none"
    )


def with_persona_json(data: dict[str, Any], view: PersonaKpis | None) -> dict[str, Any]:
    """An answer's JSON with ``persona`` added when a persona was used."""
    return data if view is None else data | {"persona": view.as_dict()}


def print_persona(view: PersonaKpis | None) -> None:
    """The "Persona: credit" block on stdout: each KPI's value, formula and the pages its
    inputs are on, or why it has none."""
    if view is None:
        return
    out.print(Text(f"\n{heading(view.persona, view)}", style="bold"))
    width = max((len(c.display) for c in view.report.kpis), default=10)
    for company, result in view.rows():
        chosen = next(k for k in view.report.kpis if k.name == result.name)
        who = f"{company.short} " if len(view.report.companies) > 1 else ""
        label = f"  {who}{chosen.display:<{width}}  "
        if isinstance(result, KpiValue):
            where = ", ".join(dict.fromkeys(_page(i.value.as_dict()) for i in result.inputs))
            out.print(
                Text.assemble(
                    label,
                    (f"{format_kpi(result, chosen.unit):>10}", "bold"),
                    (f"  {result.formula} · {where}", "dim"),
                )
            )
        else:
            out.print(Text.assemble(label, f"{'—':>10}", (f"  {gap_note(result)}", "dim")))
    for note in view.notes:
        out.print(Text(f"  {note}", style="yellow"))


def persona_markdown(view: PersonaKpis | None) -> str:
    """The same block in Markdown, for --format md."""
    if view is None:
        return ""
    lines = [f"\n### {heading(view.persona, view)}\n", "| KPI | value | from |", "|---|---:|---|"]
    for company, result in view.rows():
        chosen = next(k for k in view.report.kpis if k.name == result.name)
        who = f"{company.short}: " if len(view.report.companies) > 1 else ""
        if isinstance(result, KpiValue):
            pages = ", ".join(dict.fromkeys(_page(i.value.as_dict()) for i in result.inputs))
            value, source = format_kpi(result, chosen.unit), f"{result.formula} · {pages}"
        else:
            value, source = "—", gap_note(result)
        lines.append(f"| {who}{chosen.display} | {value} | {source.replace('|', '/')} |")
    lines += [f"\n{note}" for note in view.notes]
    return "\n".join(lines) + "\n"


def heading(persona: Persona, view: PersonaKpis) -> str:
    """'Persona: credit (credit analyst) · Best Buy Co., Inc. · FY2024 Q2'."""
    where = [c.name for c in view.report.companies] + view.periods
    return f"Persona: {persona.name} ({persona.title})" + "".join(f" · {w}" for w in where)


def _page(value: dict[str, Any]) -> str:
    return value.get("ref") or f"{Path(value['document']).name} p.{value['page']}"
