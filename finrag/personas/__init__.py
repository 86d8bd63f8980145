"""Personas: who an answer is written for. One TOML file per persona beside this module
says what it emphasises, which KPIs it shows beside an answer (names from
``finrag/facts/kpis.toml``, checked at load) and its instructions to the model, which
``with_persona`` adds to a prompt's system message through ``prompts/persona.md``.

persona = load_persona("credit")
messages = with_persona(load_prompt("answer").messages(...), persona)
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from finrag.errors import FinragError, UsageError
from finrag.persona_names import persona_name, persona_names
from finrag.personas.questions import PersonaQuestion, parse_questions

if TYPE_CHECKING:
    from finrag.config import Settings
    from finrag.llm.base import Message

_FIELDS = {"title", "summary", "emphasis", "kpis", "instructions"}
_OPTIONAL = {"questions"}  # a persona without questions reads answers but runs no analysis


@dataclass(frozen=True)
class Persona:
    name: str  # the file's stem: "credit"
    title: str  # who reads the answer: "credit analyst"
    summary: str  # what it emphasises, in one line (for listings and --help)
    emphasis: tuple[str, ...]
    kpis: tuple[str, ...]  # KPI names from kpis.toml, in the order shown
    instructions: str  # the tone and focus, for the model
    questions: tuple[PersonaQuestion, ...] = ()  # what `finrag analyze` asks for this reader

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "title": self.title,
            "emphasis": list(self.emphasis),
            "kpis": list(self.kpis),
        }


@cache
def load_persona(name: str) -> Persona:
    """The persona called ``name``; UsageError listing the names when there is none. A
    file with an unknown field or a KPI kpis.toml does not define fails loudly."""
    name = persona_name(name) or ""
    if not name:
        raise UsageError("no persona named", hint=f"one of {', '.join(persona_names())}")
    source = resources.files(__package__) / f"{name}.toml"
    return parse_persona(name, source.read_text(encoding="utf-8"))


def parse_persona(name: str, text: str) -> Persona:
    """A persona file's text as a Persona, checked: every field there, none unknown, and
    every KPI one that kpis.toml defines (FinragError otherwise)."""
    where = f"persona file finrag/personas/{name}.toml"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FinragError(f"{where} is not TOML: {exc}") from None
    if missing := _FIELDS - data.keys():
        raise FinragError(f"{where} lacks {', '.join(sorted(missing))}")
    if extra := data.keys() - _FIELDS - _OPTIONAL:
        raise FinragError(f"{where} has unknown field(s) {', '.join(sorted(extra))}")
    persona = Persona(
        name=name,
        title=str(data["title"]).strip(),
        summary=str(data["summary"]).strip(),
        emphasis=tuple(str(e).strip() for e in data["emphasis"]),
        kpis=tuple(data["kpis"]),
        instructions=" ".join(str(data["instructions"]).split()),
    )
    known = _check_kpis(persona, where)
    if "questions" in data:
        persona = replace(persona, questions=parse_questions(data["questions"], where, known))
    return persona


def _check_kpis(persona: Persona, where: str) -> set[str]:
    """Every KPI name the KPI file defines, once the persona's are checked against them."""
    from finrag.facts.kpi_definitions import kpis  # the KPI file is read only when needed

    known = {k.name for k in kpis()}
    unknown = [k for k in persona.kpis if k not in known]
    if unknown or not persona.kpis:
        raise FinragError(
            f"{where}: KPI name(s) {', '.join(map(repr, unknown)) or '(none given)'} not in "
            "finrag/facts/kpis.toml",
            hint="use the KPI's name (`finrag kpi COMPANY --kpi all --json` lists them)",
        )
    if len(set(persona.kpis)) != len(persona.kpis):
        raise FinragError(f"{where}: a KPI is listed twice")
    return known


def active_persona(settings: Settings) -> Persona | None:
    """The persona ``answer.persona`` names, or None."""
    name = settings.answer.persona
    return load_persona(name) if name else None


def with_persona(messages: list[Message], persona: Persona | None) -> list[Message]:
    """``messages`` with the persona's instructions (``prompts/persona.md``) added to the
    system message; unchanged without a persona."""
    if persona is None:
        return messages
    from finrag.llm.prompts import load_prompt

    added = load_prompt("persona").messages(
        title=persona.title,
        emphasis="; ".join(persona.emphasis),
        instructions=persona.instructions,
    )[0]["content"]
    out = list(messages)
    for i, message in enumerate(out):
        if message["role"] == "system":
            out[i] = {**message, "content": f"{message['content']}\n\n{added}"}
            return out
    return [{"role": "system", "content": added}, *out]


__all__ = [
    "Persona",
    "PersonaQuestion",
    "active_persona",
    "load_persona",
    "parse_persona",
    "persona_name",
    "persona_names",
    "with_persona",
]
