"""`finrag research`: a question read in rounds (the interleaved agentic design's retrieval
memory, taken to a memo). Each round asks every open sub-question through the Asker (the
facts route first, the text route with quotes otherwise), keeps what it found, and leaves
open what it did not; the next round sees both: an open sub-question is asked in its next
phrasing, passages already kept are not kept again, and what the found passages name (a
tariff, a supplier, an export licence) becomes a follow-up. It stops when nothing is open,
or at the bounds (rounds, seconds).

What counts as found is decided by rule, with or without a model: an answer or passage
must name the topic (China, Chinese ...); a facts-store figure that does not (total
revenue, asked for revenue from China) is kept as a context figure, not as an answer.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from finrag.analysis.asking import MODEL_FAILED, ask_one
from finrag.analysis.findings import COMPUTED_ROUTES
from finrag.analysis.research_plan import Plan, SubQuestion, fill
from finrag.analysis.sources import Source, SourceList
from finrag.answer.pipeline import Asker
from finrag.answer.result import Answer
from finrag.answer.status import UNSUPPORTED

Progress = Callable[[str], None]
FOLLOW_UPS_PER_ROUND = 2
# What an exposure runs through, by the words a filing uses for it (general knowledge of
# how companies describe exposure); a found passage naming one opens a follow-up.
CHANNELS: dict[str, tuple[str, ...]] = {
    "tariffs": ("tariff",),
    "export controls": ("export control", "export licen", "export restriction"),
    "sanctions": ("sanction",),
    "suppliers": ("supplier", "supply chain", "outsourcing partner", "manufactur"),
    "customers and deliveries": ("deliver", "backlog", "order"),
    "currency": ("currency", "exchange rate", "renminbi", "yuan"),
    "joint ventures": ("joint venture",),
    "regulation": ("regulat", "government", "certif"),
    "trade relations": ("trade relation", "trade tension", "trade polic", "geopolitic"),
}


@dataclass
class Evidence:
    sub_question: int
    angle: str
    round: int
    kind: str  # answer (a written or facts-store answer) | quote (a passage, no model)
    text: str  # in the memo's numbering
    sources: list[Source]

    def as_dict(self) -> dict[str, Any]:
        return {
            "sub_question": self.sub_question,
            "angle": self.angle,
            "round": self.round,
            "kind": self.kind,
            "text": self.text,
            "citations": [s.as_dict() for s in self.sources],
        }


@dataclass
class FigureRow:
    measure: str
    period: str
    value: str
    stated: str  # the clause of the answer that gives it
    source: Source
    about_topic: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "period": self.period,
            "value": self.value,
            "stated": self.stated,
            "about_topic": self.about_topic,
            "citation": self.source.as_dict(),
        }


@dataclass
class Round:
    n: int
    open_before: list[int]  # the sub-questions open when it began (what it set out to find)
    found_before: list[int]  # those found in earlier rounds (what it knew)
    asked: list[dict[str, Any]] = field(default_factory=list)  # {id, question, outcome}
    found: list[int] = field(default_factory=list)
    follow_ups: list[int] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "round": self.n,
            "open_before": self.open_before,
            "found_before": self.found_before,
            "asked": self.asked,
            "found": self.found,
            "still_open": [a["id"] for a in self.asked if a["outcome"] != "found"],
            "follow_ups": self.follow_ups,
            "seconds": round(self.seconds, 2),
        }


@dataclass
class Research:
    plan: Plan
    rounds: list[Round] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    figures: list[FigureRow] = field(default_factory=list)
    numbering: SourceList = field(default_factory=SourceList)
    stopped: str = ""
    model_used: bool = False
    seconds: float = 0.0

    def open_questions(self) -> list[SubQuestion]:
        return [q for q in self.plan.sub_questions if q.state != "found"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "plan": self.plan.as_dict(),
            "rounds": [r.as_dict() for r in self.rounds],
            "evidence": [e.as_dict() for e in self.evidence],
            "figures": [f.as_dict() for f in self.figures],
            "open": [q.as_dict() for q in self.open_questions()],
            "stopped": self.stopped,
            "sources": [s.as_dict() for s in self.numbering.sources],
            "seconds": round(self.seconds, 2),
        }


def research(
    asker: Asker,
    plan: Plan,
    *,
    rounds: int = 3,
    seconds: float | None = None,
    on_progress: Progress | None = None,
) -> Research:
    """Read ``plan`` in at most ``rounds`` rounds and ``seconds`` (None: no time bound; a
    question begun is finished, none is begun past it)."""
    started = time.perf_counter()
    say = on_progress or (lambda _line: None)
    run = Research(plan, model_used=asker.settings.answer.use_llm)
    pattern = plan.topic_pattern()
    asked_channels: set[str] = set()
    for n in range(1, rounds + 1):
        open_now = [q for q in plan.sub_questions if q.state == "open"]
        if not open_now:
            run.stopped = "nothing open"
            break
        found = [q.id for q in plan.sub_questions if q.state == "found"]
        this = Round(n, [q.id for q in open_now], found)
        run.rounds.append(this)
        round_started = time.perf_counter()
        say(f"round {n}: {len(open_now)} open ({', '.join(q.angle for q in open_now)})")
        for q in open_now:
            if seconds is not None and time.perf_counter() - started > seconds:
                run.stopped = f"time ({seconds:.0f} s)"
                break
            text = q.text
            answer = ask_one(asker, text, plan.subject.name)
            if answer.refusal == MODEL_FAILED:
                q.model_failures += 1
                kept, outcome = 0, "model failed"
            else:
                q.tries += 1
                kept = _read(run, q, answer, pattern, n)
                outcome = "found" if kept else ("exhausted" if q.exhausted else "open")
                q.state = outcome
            this.asked.append(
                {
                    "id": q.id,
                    "angle": q.angle,
                    "question": text,
                    "outcome": outcome,
                    "refusal": answer.refusal,  # why no answer was written, if none was
                }
            )
            if kept:
                this.found.append(q.id)
            say(f"    [{q.angle}] {outcome}: {kept} kept · {answer.timings.get('total', 0):.1f} s")
        this.follow_ups = _follow_ups(run, n, asked_channels)
        for q_id in this.follow_ups:
            say(f"    follow-up: {plan.sub_questions[q_id - 1].text}")
        this.seconds = time.perf_counter() - round_started
        if run.stopped:
            break
    if not run.stopped:
        still = [q for q in plan.sub_questions if q.state == "open"]
        run.stopped = f"rounds ({rounds})" if still else "nothing open"
    run.seconds = time.perf_counter() - started
    return run


def _read(run: Research, q: SubQuestion, answer: Answer, pattern: re.Pattern | None, n: int) -> int:
    """Keep what ``answer`` holds about the topic and the angle: a written or facts-store
    answer about the topic whose sources speak to the angle's matter, else (no answer
    written) the passages that name both and were not kept before. Facts-store figures
    go to the figures table either way (as context when not about the topic). The count
    kept."""
    names = (lambda text: True) if pattern is None else (lambda text: bool(pattern.search(text)))
    seen = {s.n for e in run.evidence for s in e.sources}
    on_angle = (lambda t: True) if not q.cues else (lambda t: any(c in t.lower() for c in q.cues))
    if not answer.refused:
        computed = answer.route in COMPUTED_ROUTES
        quoted = " ".join(f"{c.section} {c.quote}" for c in answer.citations)
        if computed:
            # A company-wide figure is never about a narrower topic, however a model words
            # it ("revenue from China" said of total revenue): only a breakdown by an axis
            # (region, segment) or a measure named for the topic can be.
            reason = str(answer.retrieval.get("route_reason") or "")
            about = names(reason.replace("_", " ")) or ("Axis" in reason and names(answer.answer))
        else:  # the answer, or the passages it cites, name the topic
            about = names(answer.answer) or names(quoted)
        keep = about and on_angle(quoted)  # and what it cites is about the angle's matter
        # A claim the memo could not stand behind: a number in no cited source, or no
        # source at all ("citations on every claim").
        keep = keep and bool(answer.citations) and answer.status != UNSUPPORTED
        if not (computed or keep):
            return 0  # its sources stay out of the memo's list: no claim cites them
        local = {c.n: run.numbering.cite(c) for c in answer.citations}
        if computed:
            _figures(run, answer, local, names if about else (lambda _text: False))
        if keep:
            text = run.numbering.rewrite(answer.answer, local)
            cited = list(dict.fromkeys(local.values()))
            run.evidence.append(Evidence(q.id, q.angle, n, "answer", text, cited))
            return 1
        return 0
    kept = 0
    # The same sentence printed again (a 10-Q repeating its 10-K) is kept once.
    said = [_words(e.text) for e in run.evidence if e.kind == "quote"]
    for e in answer.evidence:
        if not names(e["quote"]) or not on_angle(e["quote"]):
            continue
        words = _words(e["quote"])
        if any(words in old or old in words for old in said):
            continue
        source = run.numbering.add(e["document"], e.get("page"), e["quote"])
        if source.n in seen:
            continue
        seen.add(source.n)
        said.append(words)
        run.evidence.append(Evidence(q.id, q.angle, n, "quote", e["quote"].strip(), [source]))
        kept += 1
    return kept


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _figures(run: Research, answer: Answer, local: dict[int, Source], names) -> None:
    from finrag.facts.charts import format_value
    from finrag.facts.dictionary import metric

    have = {(f.source.n, f.value) for f in run.figures}
    for value in answer.fact_values:
        source = local.get(value.get("n"))
        if source is None or value.get("value") is None:
            continue
        unit = "money" if value.get("unit") == "USD" else "ratio"
        shown = format_value(float(value["value"]), unit)
        if (source.n, shown) in have:
            continue
        stated = _clause(answer.answer, value["n"])
        try:
            measure = metric(value["metric"]).display if value.get("metric") else ""
        except KeyError:
            measure = value.get("metric") or ""
        measure = measure or value.get("label") or value.get("concept") or "figure"
        row = FigureRow(measure, value.get("period") or "", shown, stated, source, names(stated))
        run.figures.append(row)
        have.add((source.n, shown))


def _clause(text: str, n: int) -> str:
    """The part of an answer that states the figure cited [n]: from the last ':' or ';'
    (or the sentence's start) before its marker."""
    m = re.search(rf"\[(?:\d+\s*,\s*)*{n}(?:\s*,\s*\d+)*\]", text)
    if not m:
        return ""
    before = text[: m.start()]
    start = max(before.rfind(";"), before.rfind(":"), before.rfind(". "))
    return " ".join(before[start + 1 :].split()).strip()


def _follow_ups(run: Research, n: int, asked: set[str]) -> list[int]:
    """New sub-questions from what this round kept: an exposure channel its passages name
    that no question asked about yet; at most FOLLOW_UPS_PER_ROUND."""
    plan = run.plan
    if plan.topic is None:
        return []
    added: list[int] = []
    text = " ".join(e.text.lower() for e in run.evidence if e.round == n)
    # A channel some question already asked about is no follow-up.
    already = " ".join(p.lower() for q in plan.sub_questions for p in q.phrasings[: q.tries])
    angles = {w for q in plan.sub_questions for w in q.angle.lower().split()}
    for channel, cues in CHANNELS.items():
        if len(added) >= FOLLOW_UPS_PER_ROUND:
            break
        if channel in asked or any(cue in already for cue in cues):
            continue
        if {w for w in channel.split() if len(w) > 4} & angles:  # an angle asks it already
            continue
        if not any(cue in text for cue in cues):
            continue
        asked.add(channel)
        phrasings = fill(
            (
                "What does {company} say about " + channel + " involving {topic}?",
                "How do " + channel + " related to {topic} affect {company}?",
            ),
            plan.subject,
            plan.topic,
        )
        if plan.add(channel, phrasings, "follow-up", n, cues):
            added.append(plan.sub_questions[-1].id)
    return added
