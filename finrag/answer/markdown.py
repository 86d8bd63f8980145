"""An answer as Markdown: the text, each number's status, sources and calculations
(``ask --format md``; ``sessions export`` builds each turn from the same pieces)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from finrag.answer.citations import Citation
from finrag.answer.extraction import CalculationOutcome
from finrag.answer.result import Answer
from finrag.answer.status import WORDS


def answer_markdown(answer: Answer) -> str:
    """The whole answer as one Markdown document, ending in a newline."""
    lines = [f"## {escape(answer.question)}", "", answer.answer.strip(), ""]
    status = WORDS.get(answer.status, answer.status)
    lines += [f"**Status:** {status} · route: {answer.route}", ""]
    lines += section("### Numbers", numbers_table(answer.numbers))
    lines += section("### Sources", sources_list(answer.citations))
    lines += section("### Calculations", calculations_list(answer.calculations))
    lines += section("### Checks", [f"- {escape(f)}" for f in answer.flags])
    return "\n".join(lines).rstrip("\n") + "\n"


def section(heading: str, body: list[str]) -> list[str]:
    """A heading, its body and a blank line; nothing when the body is empty."""
    return [heading, "", *body, ""] if body else []


def numbers_table(numbers: Iterable[dict[str, Any]]) -> list[str]:
    """Each number once with its status word and source, as a Markdown table."""
    rows, seen = [], set()
    for n in numbers:
        key = (n["number"], n["status"])
        if key in seen:
            continue
        seen.add(key)
        rows.append(
            f"| {cell(n['number'])} | {WORDS.get(n['status'], n['status'])} | "
            f"{cell(n.get('source') or '—')} |"
        )
    return ["| Number | Status | Source |", "|---|---|---|", *rows] if rows else []


def sources_list(citations: Iterable[Citation]) -> list[str]:
    """One item per citation: document, pages, section, and the ``path#page=N`` reference
    another tool can open; the quote beneath it."""
    lines = []
    for c in citations:
        where = " · ".join(p for p in (c.where, c.section) if p)
        ref = f" (`{c.ref}`)" if c.path else ""
        lines.append(f"- [{c.n}] {escape(where)}{ref}")
        if c.quote:
            lines.append(f"  > {escape(c.quote)}")
    return lines


def calculations_list(calculations: Iterable[CalculationOutcome]) -> list[str]:
    """The calculations the answer used (every input sourced), with their inputs."""
    lines = []
    for c in calculations:
        if c.result is None or c.unsourced_inputs:
            continue
        inputs = ", ".join(
            f"{i['text']} [{','.join(map(str, i['sources']))}]" if i.get("sources") else i["text"]
            for i in c.inputs
        )
        lines.append(f"- {escape(c.description)}: `{c.expression} = {c.formatted}`")
        if inputs:
            lines.append(f"  - inputs: {inputs}")
    return lines


def escape(text: str) -> str:
    """Text that Markdown would read as markup, shown as written (citation brackets stay;
    underscores inside names like GLOBEX_2023_10K are no emphasis in CommonMark)."""
    return text.replace("*", "\\*").replace("`", "\\`")


def cell(text: str) -> str:
    return escape(text).replace("|", "\\|").replace("\n", " ")
