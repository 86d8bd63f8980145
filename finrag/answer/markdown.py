"""An answer as Markdown: the text, each number's status, sources and calculations
(``ask --format md``; a chat export can reuse it)."""

from __future__ import annotations

from finrag.answer.result import Answer
from finrag.answer.status import WORDS
from finrag.retrieve.context import page_label


def answer_markdown(answer: Answer) -> str:
    """The whole answer as one Markdown document, ending in a newline."""
    lines = [f"## {_escape(answer.question)}", "", answer.answer.strip(), ""]
    status = WORDS.get(answer.status, answer.status)
    lines += [f"**Status:** {status} · route: {answer.route}", ""]
    if answer.numbers:
        lines += ["### Numbers", "", "| Number | Status | Source |", "|---|---|---|"]
        seen = set()
        for n in answer.numbers:
            if (n["number"], n["status"]) in seen:
                continue
            seen.add((n["number"], n["status"]))
            lines.append(
                f"| {_cell(n['number'])} | {WORDS.get(n['status'], n['status'])} | "
                f"{_cell(n['source'] or '—')} |"
            )
        lines.append("")
    if answer.citations:
        lines += ["### Sources", ""]
        for c in answer.citations:
            pages = page_label(c.pages[0], c.pages[-1])
            where = " · ".join(p for p in (f"{c.document} {pages}".strip(), c.section) if p)
            lines.append(f"- [{c.n}] {_escape(where)}")
            if c.quote:
                lines.append(f"  > {_escape(c.quote)}")
        lines.append("")
    used = [c for c in answer.calculations if c.result is not None and not c.unsourced_inputs]
    if used:
        lines += ["### Calculations", ""]
        for c in used:
            inputs = ", ".join(
                f"{i['text']} [{','.join(map(str, i['sources']))}]" if i["sources"] else i["text"]
                for i in c.inputs
            )
            lines.append(f"- {_escape(c.description)}: `{c.expression} = {c.formatted}`")
            if inputs:
                lines.append(f"  - inputs: {inputs}")
        lines.append("")
    if answer.flags:
        lines += ["### Checks", ""] + [f"- {_escape(f)}" for f in answer.flags] + [""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _escape(text: str) -> str:
    """Text that Markdown would read as markup, shown as written (citation brackets stay;
    underscores inside names like GLOBEX_2023_10K are no emphasis in CommonMark)."""
    return text.replace("*", "\\*").replace("`", "\\`")


def _cell(text: str) -> str:
    return _escape(text).replace("|", "\\|").replace("\n", " ")
