"""A persona analysis as FinSight runs one: each persona's own questions (its TOML file's
``[[questions]]``) put to the store for each company by the Asker (the facts route first,
the text route with quotes otherwise), kept as cited findings, then one synthesis
(finrag.analysis.synthesis) that says, from the computed signs, where the personas
disagree.

analysis = analyze(asker, store, ["AAPL", "NFLX"], [load_persona("credit"), ...])
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from finrag.analysis.asking import ask_one
from finrag.analysis.findings import Finding, finding_from
from finrag.analysis.sources import SourceList, sources_markdown
from finrag.analysis.subjects import Subject, resolve_subjects
from finrag.analysis.synthesis import Synthesis, synthesize
from finrag.answer.pipeline import Asker
from finrag.config import Settings
from finrag.db import Store
from finrag.errors import UsageError
from finrag.personas import Persona, PersonaQuestion

Progress = Callable[[str], None]


@dataclass
class PersonaFindings:
    persona: Persona
    findings: list[Finding] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.persona.name,
            "title": self.persona.title,
            "questions": [q.as_dict() for q in self.persona.questions],
            "findings": [f.as_dict() for f in self.findings],
        }


@dataclass
class Analysis:
    subjects: list[Subject]
    personas: list[PersonaFindings]
    numbering: SourceList
    synthesis: Synthesis
    seconds: float = 0.0
    model_used: bool = False

    @property
    def findings(self) -> list[Finding]:
        return [f for p in self.personas for f in p.findings]

    def markdown(self) -> str:
        """The synthesis, then every source it cites (document · page and the quote)."""
        return self.synthesis.markdown + "\n" + sources_markdown(self.numbering.sources)

    def as_dict(self) -> dict[str, Any]:
        return {
            "companies": [s.as_dict() for s in self.subjects],
            "personas": [p.as_dict() for p in self.personas],
            "synthesis": self.synthesis.as_dict(),
            "sources": [s.as_dict() for s in self.numbering.sources],
            "model_used": self.model_used,
            "seconds": round(self.seconds, 2),
        }


def analyze(
    asker: Asker,
    store: Store,
    companies: Sequence[str],
    personas: Sequence[Persona],
    *,
    seconds: float | None = None,
    on_progress: Progress | None = None,
) -> Analysis:
    """Every persona's questions for every company, answered and kept with their sources;
    then the synthesis. Past ``seconds`` no question is begun (each left is kept as not
    asked, saying so). A persona without questions is a UsageError."""
    started = time.perf_counter()
    say = on_progress or (lambda _line: None)
    if without := [p.name for p in personas if not p.questions]:
        raise UsageError(f"persona(s) {', '.join(without)} have no questions to analyze with")
    with store.connect() as conn:
        subjects = resolve_subjects(conn, companies)
        conn.rollback()
    numbering = SourceList()
    results = [PersonaFindings(p) for p in personas]
    total = sum(len(p.questions) for p in personas) * len(subjects)
    done = 0
    general = asker.settings
    try:
        for result in results:
            # Each persona's questions are answered in its own voice (its instructions
            # reach the model's prompts through answer.persona); one retriever and model
            # serve all of them.
            asker.settings = _as_persona(general, result.persona)
            for subject in subjects:
                for question in result.persona.questions:
                    done += 1
                    text = _question_text(question, subject)
                    if seconds is not None and time.perf_counter() - started > seconds:
                        result.findings.append(_unasked(question, subject, f"time ({seconds:g} s)"))
                        continue
                    where = f"{result.persona.name} · {subject.short} · {question.angle}"
                    say(f"[{done}/{total}] {where}")
                    finding = _ask(asker, numbering, question, subject, text)
                    result.findings.append(finding)
                    say(f"    {_outcome(finding)}")
    finally:
        asker.settings = general
    synthesis = synthesize(subjects, results)
    seconds = time.perf_counter() - started
    return Analysis(subjects, results, numbering, synthesis, seconds, general.answer.use_llm)


def _as_persona(settings: Settings, persona: Persona) -> Settings:
    answer = settings.answer.model_copy(update={"persona": persona.name})
    return settings.model_copy(update={"answer": answer})


def _question_text(question: PersonaQuestion, subject: Subject) -> str | None:
    if subject.year is None and ("{year}" in question.ask or "{prior}" in question.ask):
        return None
    return question.text(subject.short, subject.year or "", subject.prior or "")


def _ask(
    asker: Asker,
    numbering: SourceList,
    question: PersonaQuestion,
    subject: Subject,
    text: str | None,
) -> Finding:
    if text is None:
        return _unasked(question, subject, "the store holds no statement figures for it")
    answer = ask_one(asker, text, subject.name)
    return finding_from(
        answer,
        numbering,
        angle=question.angle,
        company=subject.name,
        measure=question.measure,
        reads=question.reads,
        better=question.better,
        positive_only=question.positive_only,
    )


def _unasked(question: PersonaQuestion, subject: Subject, why: str) -> Finding:
    return Finding(
        question=question.ask,
        angle=question.angle,
        company=subject.name,
        text=f"not asked: {why}",
        route="none",
        status="refused",
        refused=True,
        refusal="not-asked",
    )


def _outcome(finding: Finding) -> str:
    """'facts · 0.2 s · debt to equity rose …' for the progress lines."""
    what = finding.route if finding.found else f"not found ({finding.refusal})"
    parts = [what, f"{finding.seconds:.1f} s"]
    if finding.reading is not None:
        parts.append(finding.reading.words())
    elif finding.unread:
        parts.append(finding.unread)
    return " · ".join(parts)
