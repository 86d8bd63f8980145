"""Answer evaluation reports as files: the run as JSON, one CSV row per question, Markdown."""

from __future__ import annotations

import csv
import json
from dataclasses import asdict
from pathlib import Path

from finrag.evaluate.answers import AnswerReport
from finrag.evaluate.report import fmt
from finrag.text import clip

_CSV_FIELDS = (
    "id",
    "question_type",
    "company",
    "refused",
    "error",
    "auto_correct",
    "numeric_correct",
    "polarity_correct",
    "judge_correct",
    "citations",
    "citation_valid",
    "evidence_cited",
    "latency_s",
    "gold",
    "answer",
)
_METRICS = (
    ("auto_correct", "correct (numeric + yes/no checks)"),
    ("numeric_correct", "headline figure right"),
    ("polarity_correct", "yes/no right"),
    ("judge_correct", "correct (LLM judge)"),
    ("refusal_rate", "refused"),
    ("error_rate", "model errors (timeout, output off its schema)"),
    ("citation_valid", "answers whose citations all hold their numbers"),
    ("valid_citation_share", "citations that hold their numbers"),
    ("evidence_cited", "answers citing a gold evidence page"),
)


def write_answer_report(report: AnswerReport, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "answers.json", out_dir / "answers.csv", out_dir / "answers.md"]
    paths[0].write_text(json.dumps(report.as_dict(), indent=2, default=str) + "\n")
    with paths[1].open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(_CSV_FIELDS), extrasaction="ignore")
        writer.writeheader()
        for r in report.results:
            writer.writerow(asdict(r))
    paths[2].write_text(markdown(report), encoding="utf-8")
    return paths


def markdown(report: AnswerReport) -> str:
    s = report.summary
    llm = report.settings.get("llm", {})
    models = sorted({f"{r.backend} {r.model}" for r in report.results if r.backend})
    lines = [
        "# Answer evaluation",
        "",
        f"Dataset `{report.dataset}`, {report.questions} questions, commit "
        f"{report.git_commit or 'unknown'}, run {report.run_id}; model "
        f"{', '.join(models) or llm.get('backend', '?')}; numeric tolerance "
        f"{report.settings.get('tolerance')}.",
        "",
        "| metric | value | over |",
        "|---|---|---|",
    ]
    for key, label in _METRICS:
        lines.append(f"| {label} | {fmt(s[key]['value'])} | {s[key]['n']} |")
    lines += [
        f"| latency p50 / p95 | {s['latency_s']['p50']} s / {s['latency_s']['p95']} s | |",
        f"| tokens in / out per question | {s['tokens']['prompt_per_question']:,} / "
        f"{s['tokens']['completion_per_question']:,} | |",
        "",
        "## By question type",
        "",
        "| type | n | correct (auto) | correct (judge) | refused |",
        "|---|---|---|---|---|",
    ]
    for name, group in s["by_question_type"].items():
        lines.append(
            f"| {name} | {group['n']} | {fmt(group['auto_correct']['value'])} | "
            f"{fmt(group['judge_correct']['value'])} | {fmt(group['refusal_rate']['value'])} |"
        )
    lines += ["", "## Per question", ""]
    for r in report.results:
        verdict = {True: "right", False: "wrong", None: "n/a"}[r.auto_correct]
        state = (
            f"error: {r.error}"
            if r.error
            else "refused"
            if r.refused
            else f"{r.citations} citation(s)"
        )
        lines.append(
            f"- `{r.id}` **{verdict}**, {state}, {r.latency_s:.0f} s — gold: "
            f"{clip(r.gold, 90)} — answer: {clip(r.answer, 160)}"
        )
    return "\n".join(lines) + "\n"
