"""`finrag eval answers --compare`: one question set through several answer configurations.

Each variant is a change to the answer settings (``text``: the facts route off;
``facts+text``: the defaults; ``facts+text:no-llm``: no model call), or ``naive``, the
common RAG recipe as a baseline (finrag.evaluate.naive), run as a plain `eval answers`
into its own subfolder of the output folder, so every variant resumes on its own. One
model and one retriever serve every variant: an embedded model loads once. With ``naive``
in the run, the table gives each variant's correctness and latency over naive's; every
variant after the first is also compared with the first: answerable questions it
refused that the first answered ("newly refused").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from finrag.answer.pipeline import Asker
from finrag.config import MODES, Settings, with_mode
from finrag.db import Store
from finrag.errors import UsageError
from finrag.evaluate.answer_report import breakdown_table, write_answer_report
from finrag.evaluate.answers import AnswerReport, AnswerResult, evaluate_answers, newly_refused
from finrag.evaluate.dataset import EvalQuestion
from finrag.evaluate.naive import DESCRIPTION as NAIVE_DESCRIPTION
from finrag.evaluate.naive import NAME as NAIVE
from finrag.evaluate.naive import NaiveAsker
from finrag.evaluate.report import fmt
from finrag.llm import LLM, get_llm
from finrag.retrieve import Retriever

# Each variant's answer settings, over the configured ones.
VARIANTS: dict[str, dict[str, bool]] = {
    "text": {"facts_route": False},
    "facts+text": {"facts_route": True},
    "facts+text:no-llm": {"facts_route": True, "use_llm": False},
    NAIVE: {},  # not finrag's pipeline: finrag.evaluate.naive
}
# The presets (answer.mode) as variants: mode:fast, mode:balanced, mode:precise; a setting
# given explicitly (file, environment) stays as given in every one of them.
MODE_VARIANTS = {f"mode:{mode}": mode for mode in MODES}


def parse_variants(text: str) -> list[str]:
    """'text,facts+text' -> the names, in order; an unknown one is a usage error."""
    names = list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [n for n in names if n not in VARIANTS and n not in MODE_VARIANTS]
    if unknown or not names:
        raise UsageError(
            f"--compare {text!r}: unknown variant {', '.join(unknown) or '(none given)'}",
            hint=f"valid variants: {', '.join([*VARIANTS, *MODE_VARIANTS])}",
        )
    return names


def variant_settings(settings: Settings, name: str) -> Settings:
    if name in MODE_VARIANTS:
        return with_mode(settings, MODE_VARIANTS[name])
    answer = settings.answer.model_copy(update=VARIANTS[name])
    return settings.model_copy(update={"answer": answer})


def variant_folder(name: str) -> str:
    """A folder name for the variant: 'facts+text:no-llm' -> 'facts+text-no-llm'."""
    return re.sub(r"[^A-Za-z0-9+._-]", "-", name)


@dataclass
class Comparison:
    dataset: str
    variants: dict[str, AnswerReport]

    def as_dict(self) -> dict[str, Any]:
        return {
            "variants": {name: r.as_dict() for name, r in self.variants.items()},
            "versus": versus(self),
        }


def versus(comparison: Comparison) -> dict[str, dict[str, Any]]:
    """Each variant against the baselines run beside it: its correctness and latency p50
    over naive's (when naive ran), and the answerable questions it refused that the first
    variant answered."""
    names = list(comparison.variants)
    first = comparison.variants[names[0]]
    naive = comparison.variants.get(NAIVE)
    out: dict[str, dict[str, Any]] = {}
    for name, report in comparison.variants.items():
        row: dict[str, Any] = {}
        if naive is not None:
            row["correct_over_naive"] = _ratio(
                report.summary["auto_correct"]["value"], naive.summary["auto_correct"]["value"]
            )
            row["latency_p50_over_naive"] = _ratio(
                report.summary["latency_s"]["p50"], naive.summary["latency_s"]["p50"]
            )
        if name != names[0]:
            row["newly_refused_vs"] = names[0]
            row["newly_refused"] = newly_refused(report.results, first.results)
        out[name] = row
    return out


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a is not None and b else None


def compare_answers(
    store: Store,
    settings: Settings,
    questions: Sequence[EvalQuestion],
    variants: Sequence[str],
    *,
    dataset: Path,
    out_dir: Path | None,
    use_judge: bool = False,
    tolerance: float = 0.01,
    llm: LLM | None = None,
    on_question: Callable[[str, AnswerResult, bool], None] | None = None,
) -> Comparison:
    """Every variant over the same questions, each resumable in ``out_dir/<variant>``."""
    needs_model = use_judge or any(
        v == NAIVE or variant_settings(settings, v).answer.use_llm for v in variants
    )
    if llm is None and needs_model:
        llm = get_llm(settings)  # cheap: a model loads on its first chat
    # One retriever for each retrieval configuration (a mode may change the reranker), all
    # with one embedder: it would otherwise load once per variant.
    retriever = Retriever(store, settings, llm=llm)
    retrievers = {settings.retrieve.model_dump_json(): retriever}
    reports = {}
    for name in variants:
        chosen = variant_settings(settings, name)
        key = chosen.retrieve.model_dump_json()
        if key not in retrievers:
            retrievers[key] = Retriever(store, chosen, embedder=retriever.embedder, llm=llm)
        retriever = retrievers[key]
        asker = (
            NaiveAsker(store, chosen, llm=llm, retriever=retriever)
            if name == NAIVE
            else Asker(store, chosen, llm=llm, retriever=retriever)
        )
        report = evaluate_answers(
            store,
            chosen,
            questions,
            dataset=dataset,
            out_dir=out_dir / variant_folder(name) if out_dir else None,
            use_judge=use_judge,
            tolerance=tolerance,
            asker=asker,
            on_question=(lambda r, resumed, n=name: on_question(n, r, resumed))
            if on_question
            else None,
        )
        report.settings["variant"] = name
        reports[name] = report
    return Comparison(str(dataset), reports)


def comparison_rows(comparison: Comparison) -> list[tuple[str, list[str]]]:
    """The comparison table: one row per figure, one column per variant."""
    summaries = {name: r.summary for name, r in comparison.variants.items()}
    against = versus(comparison)

    def row(label: str, cell: Callable[[dict], str]) -> tuple[str, list[str]]:
        return label, [cell(s) for s in summaries.values()]

    def row_vs(label: str, cell: Callable[[dict], str]) -> tuple[str, list[str]]:
        return label, [cell(against[name]) for name in summaries]

    rows = [
        row("questions", lambda s: str(s["questions"])),
        row("correct (auto)", lambda s: fmt(s["auto_correct"]["value"])),
        row("headline figure right", lambda s: fmt(s["numeric_correct"]["value"])),
        row("correct (judge)", lambda s: fmt(s["judge_correct"]["value"])),
        row("refused", lambda s: fmt(s["refusal_rate"]["value"])),
        row("refusal precision", lambda s: fmt(s["refusal_precision"]["value"])),
        row("refusal recall", lambda s: fmt(s["refusal_recall"]["value"])),
        row("model errors", lambda s: fmt(s["error_rate"]["value"])),
        row(
            "facts answers with untraceable numbers",
            lambda s: fmt(s["numbers_untraceable"]["value"]),
        ),
        row("latency p50 / p95 s", lambda s: f"{s['latency_s']['p50']} / {s['latency_s']['p95']}"),
        row(
            "evidence recall: printed quotes",
            lambda s: _share_cell(s.get("evidence_recall_quotes")),
        ),
        row(
            "evidence recall: cited passages",
            lambda s: _share_cell(s.get("evidence_recall_passages")),
        ),
        row(
            "evidence: a printed quote drawn from the gold passage",
            lambda s: _share_cell(s.get("evidence_quotes_from_gold")),
        ),
        row(
            "tokens in / out per question",
            lambda s: (
                f"{s['tokens']['prompt_per_question']:,} / "
                f"{s['tokens']['completion_per_question']:,}"
            ),
        ),
    ]
    if NAIVE in summaries:
        rows.append(row_vs("correct / naive", lambda v: _times(v.get("correct_over_naive"))))
        rows.append(
            row_vs("latency p50 / naive", lambda v: _times(v.get("latency_p50_over_naive")))
        )
    if len(summaries) > 1:
        first = next(iter(summaries))
        rows.append(
            row_vs(
                f"answerable newly refused (vs {first})",
                lambda v: str(len(v["newly_refused"])) if "newly_refused" in v else "—",
            )
        )
    for by, label in (("by_question_type", "type"), ("by_route", "route")):
        names = sorted({g for s in summaries.values() for g in s[by]})
        for group in names:
            rows.append(row(f"correct, {label} {group}", lambda s, g=group, b=by: _cell(s, b, g)))
    routes = sorted({g for s in summaries.values() for g in s["by_route"]})
    for group in routes:
        rows.append(row(f"p50 / p95 s, route {group}", lambda s, g=group: _latency_cell(s, g)))
    return rows


def _share_cell(share: dict | None) -> str:
    return f"{fmt(share['value'])} ({share['n']})" if share else "—"


def _times(value: float | None) -> str:
    return f"{value:.2f}×" if value is not None else "—"


def _latency_cell(summary: dict, group: str) -> str:
    found = summary["by_route"].get(group)
    return f"{found['latency_s']['p50']} / {found['latency_s']['p95']}" if found else "—"


def _cell(summary: dict, by: str, group: str) -> str:
    """'0.800 (5)': a group's correct share and size; '—' where the variant has none."""
    found = summary[by].get(group)
    return f"{fmt(found['auto_correct']['value'])} ({found['n']})" if found else "—"


def markdown(comparison: Comparison) -> str:
    names = list(comparison.variants)
    first = next(iter(comparison.variants.values()))
    lines = [
        "# Answer evaluation: configurations compared",
        "",
        f"Dataset `{comparison.dataset}`, {first.questions} questions, commit "
        f"{first.git_commit or 'unknown'}; variants: "
        + ", ".join(f"`{n}` ({_describe(n)})" for n in names)
        + ".",
        "",
        "| | " + " | ".join(names) + " |",
        "|---" * (len(names) + 1) + "|",
    ]
    lines += [
        f"| {label} | " + " | ".join(cells) + " |" for label, cells in comparison_rows(comparison)
    ]
    for name, report in comparison.variants.items():
        lines += breakdown_table(f"{name}: by route", "route", report.summary["by_route"])
    return "\n".join(lines) + "\n"


def _describe(name: str) -> str:
    if name == NAIVE:
        return NAIVE_DESCRIPTION
    if name in MODE_VARIANTS:
        mode = MODE_VARIANTS[name]
        return f"answer.mode={mode} (`finrag config show --mode {mode}`)"
    return ", ".join(f"answer.{k}={str(v).lower()}" for k, v in VARIANTS[name].items())


def write_comparison(comparison: Comparison, out_dir: Path) -> list[Path]:
    """Each variant's reports in its subfolder, and the comparison beside them."""
    paths: list[Path] = []
    for name, report in comparison.variants.items():
        paths += write_answer_report(report, out_dir / variant_folder(name))
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = {
        "dataset": comparison.dataset,
        "variants": {name: r.summary for name, r in comparison.variants.items()},
        "versus": versus(comparison),
    }
    paths.append(out_dir / "comparison.json")
    paths[-1].write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")
    paths.append(out_dir / "comparison.md")
    paths[-1].write_text(markdown(comparison), encoding="utf-8")
    return paths
