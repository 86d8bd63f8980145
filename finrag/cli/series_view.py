"""An answer that is a measure over several periods, charted: a terminal chart under the
answer when stdout is a terminal (never in --json or a pipe), a PNG on request."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from finrag.cli.render import err, out
from finrag.facts.charts import Series, chart_value, png_chart, terminal_chart

_PERIOD = re.compile(r"FY(\d{4})(?: Q(\d))?")


def answer_series(found: list[dict[str, Any]]) -> tuple[list[Series], list[str]]:
    """The answer's series (``Answer.series``) as chart lines, and every period they hold,
    oldest first."""
    lines = [
        Series(
            f"{s['company']} · {s['measure']}",
            s["unit"],
            {p["period"]: chart_value(p["value"], s["unit"]) for p in s["points"]},
            company=s["company"],
            kpi=s["measure"],
        )
        for s in found
    ]
    periods = list(dict.fromkeys(p for line in lines for p in line.points))
    return lines, sorted(periods, key=_period_key)


def _period_key(label: str) -> tuple[int, int]:
    found = _PERIOD.fullmatch(label)
    return (int(found[1]), int(found[2] or 0)) if found else (0, 0)


def _title(lines: list[Series]) -> str:
    return ", ".join(dict.fromkeys(line.label for line in lines))


def print_series_chart(found: list[dict[str, Any]]) -> None:
    """The chart, on a terminal only: a pipe or a file gets the answer's text alone."""
    if not found or not out.is_terminal:
        return
    lines, periods = answer_series(found)
    color = out.color_system is not None and not out.no_color
    width = min(out.width, 100)
    text = terminal_chart(lines, periods, title=_title(lines), width=width, color=color)
    sys.stdout.write("\n" + text + "\n")
    sys.stdout.flush()


def write_series_png(found: list[dict[str, Any]], path: Path, sources: list[str]) -> None:
    if not found:
        err.print(f"no PNG written to {path}: the answer is not a measure over several periods")
        return
    lines, periods = answer_series(found)
    size = png_chart(lines, periods, path, title=_title(lines), sources=sources)
    err.print(f"wrote {path} ({size / 1024:.0f} KB)")
