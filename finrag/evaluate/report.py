"""Evaluation reports as files: the whole run as JSON, metrics as CSV, a Markdown summary."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from finrag.evaluate.metrics import METRICS
from finrag.evaluate.retrieval import BREAKDOWNS, RetrievalReport

_SHOWN_K = 5  # the k of the one-number columns (recall@5, ...), or the nearest asked for


def shown_k(ks: list[int]) -> int:
    return min(ks, key=lambda k: (abs(k - _SHOWN_K), k))


def fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def summary_rows(report: RetrievalReport) -> list[dict[str, Any]]:
    """One row per (variant, group, k): the CSV, and what tables are drawn from."""
    rows = []
    for summary in report.variants:
        groups = [("all", "all", summary.questions, summary.scores)]
        for by in BREAKDOWNS:
            for name, group in summary.breakdowns[by].items():
                groups.append((by, name, group["n"], group["scores"]))
        for by, name, n, scores in groups:
            for k in report.ks:
                rows.append(
                    {"variant": summary.variant, "by": by, "group": name, "n": n, "k": k}
                    | {m: scores[k][m] for m in METRICS}
                )
    return rows


def write_retrieval_report(report: RetrievalReport, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "retrieval.json", out_dir / "retrieval.csv", out_dir / "retrieval.md"]
    paths[0].write_text(json.dumps(report.as_dict(), indent=2, default=str) + "\n")
    rows = summary_rows(report)
    with paths[1].open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    paths[2].write_text(markdown(report))
    return paths


def metric_columns(report) -> list[str]:
    """The per-variant metric columns, as the Markdown and HTML reports head them."""
    k5, kmax = shown_k(report.ks), max(report.ks)
    return [f"hit@{k}" for k in report.ks] + [
        f"MRR@{kmax}",
        f"recall@{k5}",
        f"precision@{k5}",
        f"F1@{k5}",
        f"text hit@{k5}",
        "p50 ms",
        "p95 ms",
    ]


def metric_cells(report, s) -> list[str]:
    """One variant's figures under ``metric_columns``."""
    k5, kmax = shown_k(report.ks), max(report.ks)
    return [fmt(s.scores[k]["hit"]) for k in report.ks] + [
        fmt(s.scores[kmax]["mrr"]),
        fmt(s.scores[k5]["recall"]),
        fmt(s.scores[k5]["precision"]),
        fmt(s.scores[k5]["f1"]),
        fmt(s.scores[k5]["text_hit"]),
        f"{s.latency_ms['p50']:.0f}",
        f"{s.latency_ms['p95']:.0f}",
    ]


def _by_kind(report: RetrievalReport) -> list[str]:
    """Every variant per question kind (finrag.graph.retrieve.question_kind): the table
    that decides which kinds search with the graph."""
    k5, kmax = shown_k(report.ks), max(report.ks)
    kinds = sorted({g for s in report.variants for g in s.breakdowns["kind"]})
    lines = [
        "",
        "## Variants by question kind",
        "",
        f"| kind | n | variant | hit@{k5} | MRR@{kmax} | p50 ms |",
        "|---|---|---|---|---|---|",
    ]
    for kind in kinds:
        for s in report.variants:
            group = s.breakdowns["kind"].get(kind)
            if group is None:
                continue
            scores = group["scores"]
            lines.append(
                f"| {kind} | {group['n']} | {s.variant} | {fmt(scores[k5]['hit'])} | "
                f"{fmt(scores[kmax]['mrr'])} | {group['latency_ms']['p50']:.0f} |"
            )
    return lines


def markdown(report: RetrievalReport) -> str:
    k5 = shown_k(report.ks)
    kmax = max(report.ks)
    lines = [
        "# Retrieval evaluation",
        "",
        f"Dataset `{report.dataset}`, {report.variants[0].questions} questions, "
        f"commit {report.git_commit or 'unknown'}, run {report.run_id}, "
        f"{report.elapsed_s:.1f} s.",
        "",
    ]
    lines += [f"> {note}" for note in report.notes] + ([""] if report.notes else [])
    head = metric_columns(report)
    lines += ["| variant | " + " | ".join(head) + " |", "|---" * (len(head) + 1) + "|"]
    for s in report.variants:
        lines.append(f"| {s.variant} | " + " | ".join(metric_cells(report, s)) + " |")
    lines += _by_kind(report)
    last = report.variants[-1]
    for by in BREAKDOWNS:
        lines += [
            "",
            f"## {last.variant} by {by.replace('_', ' ')}",
            "",
            f"| {by} | n | hit@{k5} | MRR@{kmax} | text hit@{k5} |",
            "|---|---|---|---|---|",
        ]
        for name, group in last.breakdowns[by].items():
            s = group["scores"]
            lines.append(
                f"| {name} | {group['n']} | {fmt(s[k5]['hit'])} | {fmt(s[kmax]['mrr'])} | "
                f"{fmt(s[k5]['text_hit'])} |"
            )
    misses = [r for r in report.results if r.variant == last.variant and not r.scores[k5]["hit"]]
    lines += ["", f"## Misses at {k5} ({last.variant})", ""]
    if not misses:
        lines.append("None.")
    for r in misses:
        rank = r.first_relevant_rank or f">{kmax}"
        gold = ", ".join(f"{g['document']} p.{g['page']}" for g in r.gold)
        widened = f"; widened {', '.join(r.widened)}" if r.widened else ""
        lines.append(
            f"- `{r.id}` first relevant rank {rank}; gold {gold}; filters "
            f"{r.filters or 'none'}{widened} — {r.question[:110]}"
        )
    return "\n".join(lines) + "\n"
