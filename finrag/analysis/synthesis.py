"""The synthesis of a persona analysis, by rule: each persona's stance on each company is
the balance of its computed readings (a measure moving the way that reader counts as good
scores +1, the other way -1); two personas whose stances have opposite signs disagree,
and the synthesis says so with the findings behind each side and their citations. The
model writes none of it, so it can neither invent a finding nor drop one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

from finrag.analysis.findings import Finding
from finrag.analysis.sources import markers
from finrag.answer.status import UNSUPPORTED

if TYPE_CHECKING:
    from finrag.analysis.persona_analysis import PersonaFindings
    from finrag.analysis.subjects import Subject
    from finrag.personas import Persona


@dataclass
class Stance:
    persona: Persona
    company: str
    good: list[Finding] = field(default_factory=list)  # readings this reader counts as good
    bad: list[Finding] = field(default_factory=list)

    @property
    def score(self) -> int:
        return len(self.good) - len(self.bad)

    @property
    def word(self) -> str:
        if not self.good and not self.bad:
            return "no computed reading"
        if self.score == 0:
            return "mixed"
        return "favourable" if self.score > 0 else "unfavourable"

    def tally(self) -> str:
        """'favourable (2 for, 1 against)'."""
        if not self.good and not self.bad:
            return self.word
        return f"{self.word} ({len(self.good)} for, {len(self.bad)} against)"

    def evidence(self, side: str) -> str:
        """The readings behind one side, with their markers: 'debt to equity rose from
        1.79 (FY2023) to 1.87 (FY2024) [1, 2]; …'."""
        chosen = self.good if side == "good" else self.bad
        return "; ".join(f"{f.reading.words()} {markers(f.sources)}".strip() for f in chosen)

    def as_dict(self) -> dict[str, Any]:
        return {
            "persona": self.persona.name,
            "company": self.company,
            "stance": self.word,
            "score": self.score,
            "for": [f.reading.as_dict() | {"angle": f.angle} for f in self.good],
            "against": [f.reading.as_dict() | {"angle": f.angle} for f in self.bad],
        }


@dataclass
class Disagreement:
    company: str
    favourable: Stance
    unfavourable: Stance

    def words(self) -> str:
        good, bad = self.favourable, self.unfavourable
        return (
            f"On {self.company}, the {bad.persona.title} reads the figures unfavourably "
            f"({bad.evidence('bad')}) while the {good.persona.title} reads them favourably "
            f"({good.evidence('good')})."
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "company": self.company,
            "favourable": self.favourable.persona.name,
            "unfavourable": self.unfavourable.persona.name,
            "words": self.words(),
        }


@dataclass
class Synthesis:
    stances: list[Stance]
    disagreements: list[Disagreement]
    markdown: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": "stance = readings counted good minus readings counted bad; personas "
            "with stances of opposite sign disagree",
            "stances": [s.as_dict() for s in self.stances],
            "disagreements": [d.as_dict() for d in self.disagreements],
            "markdown": self.markdown,
        }


def synthesize(subjects: Sequence[Subject], results: Sequence[PersonaFindings]) -> Synthesis:
    stances: list[Stance] = []
    disagreements: list[Disagreement] = []
    for subject in subjects:
        here = [_stance(r.persona, subject.name, r.findings) for r in results]
        stances += here
        for a, b in combinations(here, 2):
            if a.score * b.score < 0:
                good, bad = (a, b) if a.score > 0 else (b, a)
                disagreements.append(Disagreement(subject.name, good, bad))
    synthesis = Synthesis(stances, disagreements)
    synthesis.markdown = synthesis_markdown(subjects, results, synthesis)
    return synthesis


def _stance(persona: Persona, company: str, findings: Sequence[Finding]) -> Stance:
    stance = Stance(persona, company)
    for f in findings:
        if f.company != company or f.reading is None or f.reading.favourable is None:
            continue
        (stance.good if f.reading.favourable else stance.bad).append(f)
    return stance


def synthesis_markdown(
    subjects: Sequence[Subject], results: Sequence[PersonaFindings], synthesis: Synthesis
) -> str:
    titles = ", ".join(r.persona.title for r in results)
    spans = "; ".join(
        f"{s.name} {s.prior}→{s.year}" if s.year else f"{s.name} (no statement figures)"
        for s in subjects
    )
    lines = [
        f"# Persona analysis: {', '.join(s.name for s in subjects)}",
        "",
        f"Personas: {titles}. Periods: {spans}.",
        "",
        "## Where they disagree",
        "",
    ]
    if synthesis.disagreements:
        lines += [f"- {d.words()}" for d in synthesis.disagreements]
    else:
        lines.append(
            "- No two personas read the computed figures in opposite directions "
            "(a persona's stance is its readings counted good minus those counted bad)."
        )
    lines.append("")
    for subject in subjects:
        lines += [f"## {subject.name}", ""]
        for result in results:
            stance = next(
                s
                for s in synthesis.stances
                if s.company == subject.name and s.persona is result.persona
            )
            title = result.persona.title
            lines += [f"### {title[0].upper()}{title[1:]}: {stance.tally()}", ""]
            for f in (f for f in result.findings if f.company == subject.name):
                lines.append(f"- **{f.angle}**: {_finding_line(f, result.persona.title)}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _finding_line(f: Finding, reader: str) -> str:
    if not f.found:
        closest = f" Closest passages: {markers(f.passages)}." if f.passages else ""
        return f"not found — {f.text.rstrip('.')}.{closest}"
    line = f.text
    if not f.sources:
        line += " *(cites no source: unchecked)*"
    elif f.status == UNSUPPORTED:
        line += " *(a number here is in no cited source: unchecked)*"
    if f.unread:
        line += f" *(not read: {f.unread})*"
    if f.reading is not None:
        judged = {True: "good", False: "bad", None: "neutral"}[f.reading.favourable]
        line += f" *(read: {f.reading.direction}, {judged} for the {reader})*"
    return line
