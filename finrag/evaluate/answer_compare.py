"""`finrag eval answers --compare`: one question set through several answer configurations.

Each variant is a change to the settings (``text``: the facts route off; ``facts+text``:
the defaults; ``facts+text:no-llm``: no model call; ``rerank:llm``, ``retrieval:dense``,
``graders:on``, ``verify:off`` and the other keys of finrag.evaluate.variants), or
``naive``, the common RAG recipe as a baseline (finrag.evaluate.naive), run as a plain
`eval answers` into its own subfolder of the output folder, so every variant resumes on
its own. One model per backend and one embedder serve every variant: an embedded model
loads once. With ``naive``
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
from finrag.config import Settings
from finrag.db import Store
from finrag.evaluate.answer_report import breakdown_table, write_answer_report
from finrag.evaluate.answers import AnswerReport, AnswerResult, evaluate_answers, newly_refused
from finrag.evaluate.chat_asker import ChatAsker
from finrag.evaluate.dataset import EvalQuestion
from finrag.evaluate.naive import DESCRIPTION as NAIVE_DESCRIPTION
from finrag.evaluate.naive import NAME as NAIVE
from finrag.evaluate.naive import NaiveAsker
from finrag.evaluate.report import fmt
from finrag.evaluate.variants import (
    MODE_VARIANTS,
    VARIANTS,
    FixedRetriever,
    parse_variant,
    parse_variants,
)
from finrag.llm import LLM, get_llm
from finrag.retrieve import Retriever

__all__ = ["MODE_VARIANTS", "VARIANTS", "parse_variants"]  # the CLI's names, from here


def variant_settings(settings: Settings, name: str) -> Settings:
    return parse_variant(name).settings(settings)


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
    specs = {name: parse_variant(name) for name in variants}
    needs_model = use_judge or any(
        spec.naive or spec.chat is not None or spec.settings(settings).answer.use_llm
        for spec in specs.values()
    )
    if llm is None and needs_model:
        llm = get_llm(settings)  # cheap: a model loads on its first chat
    # One model per backend (a variant may name another), one retriever for each retrieval
    # configuration (a mode may change the reranker), all with one embedder: it would
    # otherwise load once per variant.
    llms = {settings.llm.model_dump_json(): llm}
    retriever = Retriever(store, settings, llm=llm)
    retrievers = {settings.retrieve.model_dump_json(): retriever}
    reports = {}
    for name, spec in specs.items():
        chosen = spec.settings(settings)
        llm_key = chosen.llm.model_dump_json()
        if llm_key not in llms:
            llms[llm_key] = get_llm(chosen)
        model = llms[llm_key]
        key = chosen.retrieve.model_dump_json() + llm_key
        if key not in retrievers:
            retrievers[key] = Retriever(store, chosen, embedder=retriever.embedder, llm=model)
        retriever = retrievers[key]
        if spec.fixes_retrieval:
            fixed = spec.retrieval_variant(retriever.default_variant())
            retriever = FixedRetriever(retriever, fixed)
        if spec.naive:
            asker = NaiveAsker(store, chosen, llm=model, retriever=retriever)
        elif spec.chat is not None:
            asker = ChatAsker(store, chosen, llm=model, retriever=retriever, stages=spec.chat)
        else:
            asker = Asker(store, chosen, llm=model, retriever=retriever)
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
        row("faithfulness (statements supported)", lambda s: _share_cell(s.get("faithfulness"))),
        row("answers fully faithful", lambda s: _share_cell(s.get("faithful_answers"))),
        row("answer relevance", lambda s: _share_cell(s.get("answer_relevance"))),
        row(
            "context precision / recall (pages)",
            lambda s: _pair_cell(s.get("context_precision"), s.get("context_recall")),
        ),
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


def _pair_cell(a: dict | None, b: dict | None) -> str:
    return f"{fmt(a['value'])} / {fmt(b['value'])}" if a and b else "—"


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
    return parse_variant(name).describe()


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
