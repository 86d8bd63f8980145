"""A research run as a Markdown memo: the question, a summary of what each angle found,
a figures table from the facts store, one section per angle with every claim cited
(document · page), what is still open, the rounds, and the sources."""

from __future__ import annotations

from pathlib import PurePath

from finrag.analysis.research import Research
from finrag.analysis.sources import markers, sources_markdown
from finrag.answer.citations import MARK
from finrag.text import clip


def memo_markdown(run: Research) -> str:
    plan = run.plan
    documents = sorted({PurePath(s.document).stem for s in run.numbering.sources})
    how = "model answers" if run.model_used else "no model: facts-store answers and quoted passages"
    lines = [
        f"# {plan.question.strip()}",
        "",
        f"*Research memo on {plan.subject.name}"
        + (f" · topic: {plan.topic}" if plan.topic else "")
        + f" · {len(run.rounds)} round(s), stopped: {run.stopped} · {how} · "
        f"plan by {plan.planner}*",
        "",
        f"Filings cited: {', '.join(documents) or 'none'}.",
        "",
        "## Summary",
        "",
    ]
    for q in plan.sub_questions:
        kept = [e for e in run.evidence if e.sub_question == q.id]
        if kept:
            first = kept[0]
            # Clipped, an answer's own markers may go: its sources are cited after it.
            said = clip(MARK.sub("", first.text), 220)
            lines.append(f"- **{q.angle}**: {said} {markers(first.sources)}".rstrip())
        else:
            lines.append(f"- **{q.angle}**: nothing found ({_why_open(q, run)}).")
    lines += ["", "## Figures from the facts store", ""]
    if run.figures:
        lines += ["| Figure | Period | Value | As stated | Source |", "|---|---|---:|---|---|"]
        for f in sorted(run.figures, key=lambda f: not f.about_topic):
            measure = f.measure if f.about_topic else f"{f.measure} (context)"
            lines.append(
                f"| {_cell(measure)} | {f.period} | {f.value} | {_cell(clip(f.stated, 90))} | "
                f"{f.source.where} [{f.source.n}] |"
            )
    else:
        lines.append("The facts store gave no figure for these questions.")
    for q in plan.sub_questions:
        kept = [e for e in run.evidence if e.sub_question == q.id]
        lines += ["", f"## {q.angle[0].upper()}{q.angle[1:]}", ""]
        if not kept:
            lines.append(f"Nothing found: {_why_open(q, run)}. Asked: “{q.phrasings[0]}”")
            continue
        for e in kept:
            if e.kind == "quote":
                lines.append(f"- “{e.text}” {markers(e.sources)} ({e.sources[0].where})")
            else:
                where = "; ".join(f"[{s.n}] {s.where}" for s in e.sources)
                lines.append(f"- {e.text}" + (f" ({where})" if where else ""))
    still = run.open_questions()
    lines += ["", "## Still open", ""]
    if still:
        lines += [f"- {q.angle}: “{q.text}” — {_why_open(q, run)}" for q in still]
    else:
        lines.append("Nothing: every sub-question found something in the filings.")
    lines += [
        "",
        "## Rounds",
        "",
        "| Round | Asked | Found | Still open | Follow-ups | Seconds |",
        "|---:|---|---|---|---|---:|",
    ]
    angle = {q.id: q.angle for q in plan.sub_questions}
    for r in run.rounds:
        d = r.as_dict()
        lines.append(
            f"| {r.n} | {_names(angle, [a['id'] for a in r.asked])} | {_names(angle, r.found)} | "
            f"{_names(angle, d['still_open'])} | {_names(angle, r.follow_ups)} | "
            f"{r.seconds:.1f} |"
        )
    lines += ["", sources_markdown(run.numbering.sources)]
    return "\n".join(lines).rstrip() + "\n"


def _why_open(q, run: Research) -> str:
    if q.model_failures and not q.tries:
        return f"the model failed on it {q.model_failures} time(s); the filings were not read"
    if q.state == "exhausted":
        return f"not in the filings read, in {q.tries} phrasing(s)"
    if q.tries == 0:
        return f"not asked before the run stopped ({run.stopped})"
    return f"not found in {q.tries} try(s); the run stopped ({run.stopped})"


def _names(angle: dict[int, str], ids: list[int]) -> str:
    return ", ".join(angle[i] for i in ids) or "—"


def _cell(text: str) -> str:
    return text.replace("|", "/")
