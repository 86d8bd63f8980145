"""Evaluation reports as one self-contained HTML page: the run's tables and PNG charts.

Pure: a report in, an HTML string out. Styles are inline and charts are PNGs embedded as
``data:`` URIs (finrag.evaluate.html_charts), so the page opens offline, archived or mailed
alone. Every string from the data (questions, answers, names) is escaped.
"""

from __future__ import annotations

import base64
import json
import os
import platform
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

from finrag import __version__
from finrag.evaluate import html_charts
from finrag.evaluate.answer_compare import Comparison, comparison_rows
from finrag.evaluate.answer_report import BREAKDOWN_COLUMNS, METRIC_LABELS, breakdown_cells
from finrag.evaluate.answers import AnswerReport, AnswerResult
from finrag.evaluate.report import fmt, metric_cells, metric_columns, shown_k
from finrag.evaluate.retrieval import BREAKDOWNS, RetrievalReport
from finrag.text import clip

REPORT_FILE = "report.html"
_BREAKDOWN_TITLES = {
    "company": "company",
    "question_type": "question type",
    "doc_type": "form",
    "kind": "question kind (graph)",
}
_VERDICTS = {True: "right", False: "wrong", None: "n/a"}

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2330;
margin:0;background:#f6f7f9}
main{max-width:1180px;margin:0 auto;padding:24px 28px 48px;background:#fff}
h1{font-size:22px;margin:0 0 6px}h2{font-size:17px;margin:28px 0 8px;
border-bottom:1px solid #dde1e7;padding-bottom:4px}
.meta{color:#4a5263;margin:0 0 4px}.meta b{color:#1d2330}
.note{background:#fff6e0;border-left:4px solid #e0a800;padding:6px 10px;margin:8px 0}
table{border-collapse:collapse;margin:6px 0 14px;font-size:13px}
th,td{border:1px solid #dde1e7;padding:3px 8px;vertical-align:top}
th{background:#eef1f5;text-align:left}td.n{text-align:right;white-space:nowrap;
font-variant-numeric:tabular-nums}tr:nth-child(even) td{background:#fafbfc}
td.q{max-width:420px}.right{color:#17803d}.wrong{color:#b42318}
figure{margin:10px 0 18px}figure img{max-width:100%;border:1px solid #eef1f5}
figcaption{color:#4a5263;font-size:12px}
details pre{background:#f3f4f6;padding:8px;overflow:auto;font-size:12px}
footer{color:#6b7280;font-size:12px;margin-top:28px}
"""


def retrieval_html(report: RetrievalReport, *, generated: datetime | None = None) -> str:
    """`eval retrieval`: metrics per variant, hit@k curves, breakdowns, per question."""
    k5, kmax = shown_k(report.ks), max(report.ks)
    names = [s.variant for s in report.variants]
    parts = [
        _header(
            "Retrieval evaluation",
            report.dataset,
            generated,
            [
                ("questions", str(report.variants[0].questions if report.variants else 0)),
                ("variants", ", ".join(names)),
                ("k", ", ".join(map(str, report.ks))),
                ("run", str(report.run_id)),
                ("commit", report.git_commit or "unknown"),
                ("elapsed", f"{report.elapsed_s:.1f} s"),
            ],
        ),
        *(f'<p class="note">{escape(note)}</p>' for note in report.notes),
        "<h2>Metrics by variant</h2>",
        _table(
            ["variant", *metric_columns(report)],
            ([s.variant, *(_num(c) for c in metric_cells(report, s))] for s in report.variants),
        ),
        _figure(
            html_charts.hit_curves_png(
                report.ks,
                {s.variant: [s.scores[k]["hit"] for k in report.ks] for s in report.variants},
            ),
            "hit@k curves: the share of questions with a relevant page in the top k, per variant",
        ),
        _figure(
            html_charts.latency_png(
                {n: [r.latency_ms for r in report.results if r.variant == n] for n in names},
                unit="ms",
            ),
            "retrieval latency per question",
        ),
    ]
    for by in BREAKDOWNS:
        groups = sorted({g for s in report.variants for g in s.breakdowns[by]})
        if not groups or groups == ["unknown"]:
            continue  # the dataset does not say: nothing to break down
        parts.append(f"<h2>By {_BREAKDOWN_TITLES.get(by, by)}</h2>")
        rows = []
        for group in groups:
            found = {s.variant: s.breakdowns[by].get(group) for s in report.variants}
            n = next((g["n"] for g in found.values() if g), 0)
            cells = [group, _num(str(n))]
            for g in found.values():
                cells += [
                    _num(fmt(g["scores"][k5]["hit"]) if g else "—"),
                    _num(fmt(g["scores"][kmax]["mrr"]) if g else "—"),
                ]
            rows.append(cells)
        head = [_BREAKDOWN_TITLES.get(by, by), "n"]
        head += [f"{n} {m}" for n in names for m in (f"hit@{k5}", f"MRR@{kmax}")]
        parts.append(_table(head, rows))
    parts += ["<h2>Per question: rank of the first relevant result</h2>", _per_question(report)]
    parts.append(_settings(report.settings))
    return _page(f"Retrieval evaluation: {Path(report.dataset).name}", parts)


def _per_question(report: RetrievalReport) -> str:
    names = [s.variant for s in report.variants]
    kmax = max(report.ks)
    by_id: dict[str, dict[str, Any]] = {}
    for r in report.results:
        row = by_id.setdefault(r.id, {"result": r, "ranks": {}})
        row["ranks"][r.variant] = r.first_relevant_rank
    rows = []
    for row in by_id.values():
        r = row["result"]
        gold = ", ".join(f"{g['document']} p.{g['page']}" for g in r.gold) or "—"
        ranks = [row["ranks"].get(n) for n in names]
        rows.append(
            [
                r.id,
                _Cell(clip(r.question, 240), "q"),
                r.question_type or "—",
                r.company or "—",
                gold,
                *(_num(str(rank) if rank else f">{kmax}") for rank in ranks),
            ]
        )
    return _table(["id", "question", "type", "company", "gold pages", *names], rows)


def answers_html(report: AnswerReport, *, generated: datetime | None = None) -> str:
    """`eval answers`: the summary, correctness by type and route, latency, per question."""
    s = report.summary
    parts = [
        _header("Answer evaluation", report.dataset, generated, _answer_meta([report])),
        "<h2>Summary</h2>",
        _table(
            ["metric", "value", "over"],
            [
                [label, _num(fmt(s[key]["value"])), _num(str(s[key]["n"]))]
                for key, label in METRIC_LABELS
            ]
            + [
                [
                    "latency p50 / p95",
                    _num(f"{s['latency_s']['p50']} s / {s['latency_s']['p95']} s"),
                    "",
                ],
                [
                    "tokens in / out per question",
                    _num(
                        f"{s['tokens']['prompt_per_question']:,} / "
                        f"{s['tokens']['completion_per_question']:,}"
                    ),
                    "",
                ],
            ],
        ),
    ]
    name = report.settings.get("variant") or "this run"
    for by, title in (("by_question_type", "question type"), ("by_route", "route")):
        parts += [f"<h2>By {title}</h2>", _breakdown(title, s[by])]
        parts.append(_correctness_chart({name: report}, by, title))
    parts.append(
        _figure(
            html_charts.latency_png({name: [r.latency_s for r in report.results]}, unit="s"),
            "answer latency per question (retrieval, model calls and checks)",
        )
    )
    parts += ["<h2>Per question</h2>", _answers_table(report.results)]
    parts.append(_settings(report.settings))
    return _page(f"Answer evaluation: {Path(report.dataset).name}", parts)


def comparison_html(comparison: Comparison, *, generated: datetime | None = None) -> str:
    """`eval answers --compare`: the variants side by side, then each one's breakdowns."""
    reports = comparison.variants
    names = list(reports)
    parts = [
        _header(
            "Answer evaluation: configurations compared",
            comparison.dataset,
            generated,
            [("variants", ", ".join(names)), *_answer_meta(list(reports.values()))],
        ),
        "<h2>Side by side</h2>",
        _table(
            ["", *names],
            ([label, *map(_num, cells)] for label, cells in comparison_rows(comparison)),
        ),
    ]
    for by, title in (("by_question_type", "question type"), ("by_route", "route")):
        parts.append(_correctness_chart(reports, by, title))
    parts.append(
        _figure(
            html_charts.latency_png(
                {n: [r.latency_s for r in report.results] for n, report in reports.items()},
                unit="s",
            ),
            "answer latency per question, by variant",
        )
    )
    for name, report in reports.items():
        parts.append(f"<h2>{escape(name)}: by route</h2>")
        parts.append(_breakdown("route", report.summary["by_route"]))
        parts.append(f"<h2>{escape(name)}: by question type</h2>")
        parts.append(_breakdown("question type", report.summary["by_question_type"]))
    for name, report in reports.items():
        parts += [f"<h2>{escape(name)}: per question</h2>", _answers_table(report.results)]
    parts.append(_settings({n: r.settings for n, r in reports.items()}))
    return _page(f"Answer evaluation compared: {Path(comparison.dataset).name}", parts)


def _answer_meta(reports: Sequence[AnswerReport]) -> list[tuple[str, str]]:
    """The header's facts of one run, or of a comparison's runs (one per variant)."""
    first = reports[0]
    models = sorted({f"{r.backend} {r.model}" for rep in reports for r in rep.results if r.backend})
    if not models:
        uses_llm = any(rep.settings.get("answer", {}).get("use_llm", True) for rep in reports)
        backend = first.settings.get("llm", {}).get("backend", "?")
        models = [f"{backend} (no call made)" if uses_llm else "none (answer.use_llm off)"]
    return [
        ("questions", str(first.questions)),
        ("model", ", ".join(models)),
        ("numeric tolerance", str(first.settings.get("tolerance"))),
        ("LLM judge", "on" if first.settings.get("judge") else "off"),
        ("run" if len(reports) == 1 else "runs", ", ".join(str(r.run_id) for r in reports)),
        ("commit", first.git_commit or "unknown"),
        ("elapsed", f"{sum(r.elapsed_s for r in reports):.1f} s"),
    ]


def _breakdown(title: str, groups: dict[str, dict]) -> str:
    return _table(
        [title, *BREAKDOWN_COLUMNS],
        ([name, *map(_num, breakdown_cells(g))] for name, g in groups.items()),
    )


def _correctness_chart(reports: dict[str, AnswerReport], by: str, title: str) -> str:
    groups = sorted({g for r in reports.values() for g in r.summary[by]})
    values = {
        name: {
            g: (found["auto_correct"]["value"], found["n"]) for g, found in r.summary[by].items()
        }
        for name, r in reports.items()
    }
    png = html_charts.group_bars_png(
        groups, values, title=f"correct (auto) by {title}", ylabel="share correct"
    )
    return _figure(png, f"correctness by {title}: each bar's share and its number of questions")


def _answers_table(results: Sequence[AnswerResult]) -> str:
    rows = []
    for r in results:
        verdict = _VERDICTS[r.auto_correct]
        state = f"error: {r.error}" if r.error else "refused" if r.refused else "answered"
        if not r.answerable:
            state += ", refusal expected"
        rows.append(
            [
                r.id,
                _Cell(verdict, verdict),
                r.question_type or "—",
                r.route,
                state,
                _num(str(r.citations)),
                _num(f"{r.latency_s:.1f}"),
                _Cell(clip(r.question, 200), "q"),
                _Cell(clip(r.gold, 120), "q"),
                _Cell(clip(r.answer, 300), "q"),
            ]
        )
    head = ["id", "verdict", "type", "route", "outcome", "citations", "s", "question", "gold"]
    return _table([*head, "answer"], rows)


# ---- page pieces ----------------------------------------------------------------------


class _Cell:
    """A table cell with a class (numbers right-aligned, long text wrapped)."""

    def __init__(self, text: str, css: str) -> None:
        self.text, self.css = text, css


def _num(text: str) -> _Cell:
    return _Cell(text, "n")


def _td(value: object) -> str:
    if isinstance(value, _Cell):
        return f'<td class="{escape(value.css)}">{escape(value.text)}</td>'
    return f"<td>{escape(str(value))}</td>"


def _table(head: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(_td(v) for v in row) + "</tr>\n" for row in rows)
    return f"<table>\n<thead><tr>{header}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>"


def _figure(png: bytes, caption: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure><img alt="{escape(caption)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{escape(caption)}</figcaption></figure>"
    )


def _settings(settings: dict[str, Any]) -> str:
    text = json.dumps(settings, indent=2, default=str, sort_keys=True)
    return f"<details><summary>settings of the run</summary><pre>{escape(text)}</pre></details>"


def machine() -> str:
    """Where the run ran: host, system, CPUs, Python (numbers are only comparable there)."""
    return (
        f"{platform.node() or 'unknown host'} ({platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()})"
    )


def _header(
    title: str, dataset: str, generated: datetime | None, facts: list[tuple[str, str]]
) -> str:
    when = (generated or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"<h1>{escape(title)}</h1>",
        f'<p class="meta">Dataset <b title="{escape(dataset)}">{escape(Path(dataset).name)}</b>'
        f" · {escape(when)} · finrag {escape(__version__)} · {escape(machine())}</p>",
        '<p class="meta">'
        + " · ".join(f"{escape(k)} <b>{escape(v)}</b>" for k, v in facts)
        + "</p>",
    ]
    return "\n".join(lines)


def _page(title: str, parts: Iterable[str]) -> str:
    body = "\n".join(parts)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n<main>\n"
        f"{body}\n<footer>Written by finrag {escape(__version__)}; one file, no network "
        "needed to view it.</footer>\n</main>\n</body>\n</html>\n"
    )


def write_html(html: str, out_dir: Path) -> Path:
    """``out_dir/report.html``; returns its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / REPORT_FILE
    path.write_text(html, encoding="utf-8")
    return path
