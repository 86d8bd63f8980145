"""Output helpers: data on stdout, everything else on stderr; colour only where it helps."""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

# rich honours NO_COLOR and drops styling when the stream is not a terminal.
out = Console(highlight=False, soft_wrap=True)
# Progress, timings and notes: what --quiet silences.
err = Console(stderr=True, highlight=False, soft_wrap=True)
# Errors and warnings: never silenced, a script's user must still learn what went wrong.
problems = Console(stderr=True, highlight=False, soft_wrap=True)


def set_quiet(quiet: bool) -> None:
    """--quiet: no progress, timings or notes on stderr; errors and warnings still show."""
    err.quiet = quiet


def warn(message: str | Text) -> None:
    """A warning on stderr that --quiet keeps (a widened filter, an unverified number)."""
    text = message if isinstance(message, Text) else Text(message)
    if not text.style and not text.spans:
        text.stylize("yellow")
    problems.print(text)


def print_json(data: Any) -> None:
    """JSON on stdout, never styled, one document per call."""
    sys.stdout.write(json_text(data) + "\n")
    sys.stdout.flush()


def json_text(data: Any, *, indent: int | None = 2) -> str:
    """``data`` as --json writes it (dates, decimals and paths as strings); the local API
    sends the same text."""
    return json.dumps(data, indent=indent, default=str, ensure_ascii=False)


STATUS_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red", "skip": "dim"}


class _Labelled(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


def log_warnings() -> None:
    """finrag's logged warnings on stderr as 'warning: ...' lines (--debug logs all)."""
    logger = logging.getLogger("finrag")
    if any(isinstance(h.formatter, _Labelled) for h in logger.handlers):
        return  # main() run again in one process
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Labelled())
    handler.setLevel(logging.WARNING)
    logger.addHandler(handler)


def print_error(message: str, hint: str | None = None, *, label: str = "error") -> None:
    """An error on stderr; the message is plain text, never parsed as markup. Nothing
    found (exit 7) is no failure: its label is yellow."""
    style = "bold red" if "error" in label else "bold yellow"
    problems.print(Text.assemble((f"{label}: ", style), message))
    if hint:
        problems.print(Text.assemble(("hint: ", "dim"), hint))


@dataclass(frozen=True)
class Column:
    """One table column: how it lines up on a terminal (piped output ignores all but name)."""

    name: str
    justify: Literal["left", "right", "center"] = "left"
    no_wrap: bool = False  # numbers, ids and variant names: never cut or folded
    min_width: int | None = None
    max_width: int | None = None


Cell = str | Text | int | float | None


def _plain(cell: Cell) -> str:
    """A cell as one TSV field: no tabs or line breaks inside it."""
    if cell is None:
        return ""
    text = cell.plain if isinstance(cell, Text) else str(cell)
    return re.sub(r"[\t\r\n]+", " ", text).strip()


def print_table(
    columns: Sequence[str | Column],
    rows: Iterable[Sequence[Cell]],
    *,
    title: str | None = None,
    caption: str | None = None,
    show_lines: bool = False,
    section_every: int = 0,
) -> None:
    """A table on stdout: drawn by rich on a terminal; piped, tab-separated rows under a
    header line, full width, unwrapped (as `gh` does), so `cut -f` and `awk -F'\t'` work.

    Piped, a title and a caption become "# ..." lines before the header, so several
    tables in one stream stay apart; cells lose their styling and any tab or line break.
    ``section_every``: a rule under every that many rows, on a terminal (groups of rows).
    """
    specs = [c if isinstance(c, Column) else Column(c) for c in columns]
    if not out.is_terminal:
        lines = []
        lines.extend(f"# {note}" for note in (title, caption) if note)
        lines.append("\t".join(c.name for c in specs))
        lines.extend("\t".join(_plain(cell) for cell in row) for row in rows)
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()
        return
    rows = [list(row) for row in rows]
    for table in _fitted_tables(specs, rows, title, caption, show_lines, section_every):
        out.print(table)


def _table(
    specs, rows, title, caption, show_lines, section_every=0, *, light: bool = False
) -> Table:
    table = Table(
        title=title,
        caption=caption,
        show_lines=show_lines,
        box=box.SIMPLE_HEAD if light else box.HEAVY_HEAD,
        padding=(0, 0) if light else (0, 1),
    )
    for c in specs:
        table.add_column(
            c.name,
            justify=c.justify,
            no_wrap=c.no_wrap,
            min_width=c.min_width,
            max_width=c.max_width,
            overflow="fold",
        )
    for i, row in enumerate(rows):
        if section_every and i and i % section_every == 0:
            table.add_section()
        table.add_row(*(cell if isinstance(cell, Text) else _cell_text(cell) for cell in row))
    return table


def _fits(table: Table) -> bool:
    """Whether the table fits the terminal without cutting a word (a number, a name)."""
    unbounded = out.options.update_width(10_000)  # a table measures itself to fit otherwise
    return Measurement.get(out, unbounded, table).minimum <= out.width


def _fitted_tables(specs, rows, title, caption, show_lines, section_every) -> list[Table]:
    """The table as drawn on this terminal; too narrow for it, first a lighter frame, then
    its columns in groups, each with the first (key) column again, so no cell is cut."""
    table = _table(specs, rows, title, caption, show_lines, section_every)
    if _fits(table) or len(specs) < 3:
        return [table]
    table = _table(specs, rows, title, caption, show_lines, section_every, light=True)
    if _fits(table):
        return [table]
    groups: list[list[int]] = [[]]
    for i in range(1, len(specs)):
        trial = [0, *groups[-1], i]
        candidate = _table(
            [specs[j] for j in trial],
            [[r[j] for j in trial] for r in rows],
            None,
            None,
            show_lines,
            light=True,
        )
        if groups[-1] and not _fits(candidate):
            groups.append([i])
        else:
            groups[-1].append(i)
    tables = []
    for n, group in enumerate(groups):
        keep = [0, *group]
        tables.append(
            _table(
                [specs[j] for j in keep],
                [[r[j] for j in keep] for r in rows],
                f"{title} ({n + 1}/{len(groups)})" if title else None,
                caption if n == len(groups) - 1 else None,
                show_lines,
                section_every,
                light=True,
            )
        )
    return tables


def print_notes(notes: Iterable[str | Text]) -> None:
    """Footnotes under a table on stdout: dim on a terminal, "# ..." lines when piped."""
    for note in notes:
        if out.is_terminal:
            out.print(note if isinstance(note, Text) else Text(note, style="dim"))
        else:
            sys.stdout.write(f"# {_plain(note)}\n")
    sys.stdout.flush()


def _cell_text(cell: Cell) -> Text:
    return Text("" if cell is None else str(cell))
