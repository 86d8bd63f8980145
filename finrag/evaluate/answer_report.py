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
    "route",
    "route_reason",
    "company",
    "answerable",
    "refused",
    "error",
    "auto_correct",
    "numeric_correct",
    "polarity_correct",
    "judge_correct",
    "citations",
    "citation_valid",
    "evidence_cited",
    "evidence_quote_recall",
    "evidence_passage_recall",
    "evidence_quote_from_gold",
    "quotes_from",
    "numbers_untraceable",
    "faithfulness",
    "statements",
    "answer_relevance",
    "context_precision",
    "context_recall",
    "latency_s",
    "gold",
    "answer",
)
METRIC_LABELS = (  # the summary's figures, as the reports name them
    ("auto_correct", "correct (numeric + yes/no checks)"),
    ("numeric_correct", "headline figure right"),
    ("polarity_correct", "yes/no right"),
    ("judge_correct", "correct (LLM judge)"),
    ("refusal_rate", "refused"),
    ("refusal_precision", "refusals that were expected (of refused questions)"),
    ("refusal_recall", "unanswerable questions refused"),
    ("error_rate", "model errors (timeout, output off its schema)"),
    ("citation_valid", "answers whose citations all hold their numbers"),
    ("valid_citation_share", "citations that hold their numbers"),
    ("evidence_cited", "answers citing a gold evidence page"),
    ("evidence_recall_quotes", "gold evidence covered by the printed quotes (token recall >= 0.5)"),
    ("evidence_recall_passages", "gold evidence covered by the cited passages' text"),
    ("evidence_quotes_from_gold", "a printed quote drawn from the gold passage"),
    ("numbers_untraceable", "facts/mixed answers stating a number no fact or calculation gave"),
    ("faithfulness", "faithfulness: statements their citations or facts support (by rule)"),
    ("faithful_answers", "answers with every statement supported"),
    ("answer_relevance", "answer relevance: company, period and measure asked, named"),
    ("context_precision", "context precision: passages given on a gold page"),
    ("context_recall", "context recall: gold pages among the passages given"),
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
    for key, label in METRIC_LABELS:
        lines.append(f"| {label} | {fmt(s[key]['value'])} | {s[key]['n']} |")
    lines += [
        f"| latency p50 / p95 | {s['latency_s']['p50']} s / {s['latency_s']['p95']} s | |",
        f"| tokens in / out per question | {s['tokens']['prompt_per_question']:,} / "
        f"{s['tokens']['completion_per_question']:,} | |",
    ]
    lines += breakdown_table("By route", "route", s["by_route"])
    lines += breakdown_table("By question type", "type", s["by_question_type"])
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
        if not r.answerable:
            state += ", refusal expected"
        lines.append(
            f"- `{r.id}` **{verdict}**, {r.route} route, {state}, {r.latency_s:.0f} s — gold: "
            f"{clip(r.gold, 90)} — answer: {clip(r.answer, 160)}"
        )
    return "\n".join(lines) + "\n"


# A breakdown's columns after the group's name (by route, by question type).
BREAKDOWN_COLUMNS = (
    "n",
    "correct (auto)",
    "headline right",
    "correct (judge)",
    "refused",
    "latency p50 / p95",
    "untraceable numbers",
)


def breakdown_table(title: str, column: str, groups: dict[str, dict]) -> list[str]:
    """A summary's breakdown (by route, by question type) as a Markdown section."""
    lines = [
        "",
        f"## {title}",
        "",
        f"| {column} | " + " | ".join(BREAKDOWN_COLUMNS) + " |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, g in groups.items():
        lines.append(f"| {name} | " + " | ".join(breakdown_cells(g)) + " |")
    return lines


def breakdown_cells(g: dict) -> list[str]:
    """One group's cells after its name: n, correct (auto), headline right, correct
    (judge), refused, latency p50 / p95, untraceable numbers (the Markdown and HTML rows)."""
    return [
        str(g["n"]),
        fmt(g["auto_correct"]["value"]),
        fmt(g.get("numeric_correct", {}).get("value")),
        fmt(g["judge_correct"]["value"]),
        fmt(g["refusal_rate"]["value"]),
        _latency(g.get("latency_s")),
        _untraceable(g.get("numbers_untraceable", {})),
    ]


def _latency(latency: dict | None) -> str:
    return f"{latency['p50']} s / {latency['p95']} s" if latency else "—"


def _untraceable(found: dict) -> str:
    """'1 of 5 answers (2 numbers)'; '—' where no answer was built on facts."""
    if not found or not found.get("n"):
        return "—"
    with_any = round(found["value"] * found["n"])
    return f"{with_any} of {found['n']} answers ({found['numbers']} numbers)"
