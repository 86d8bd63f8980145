"""KPI values as text, terminal charts and PNG charts: rendering only, no database.

A chart takes :class:`Series` (one company's one KPI over periods); values of different
units never share an axis: each unit gets its own panel.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Protocol

# Money KPIs are computed in base units (USD); statements and charts read in millions.
_MILLION = Decimal(1_000_000)
AXIS_LABELS = {
    "percent": "percent",
    "ratio": "ratio",
    "times": "times (x)",
    "days": "days",
    "money": "USD millions",
}
# Lines are told apart by their marker, so that they still are without colour.
_MARKERS = ("•", "+", "x", "o", "*", "#", "@", "%")


class Valued(Protocol):
    """What a chart needs of a computed KPI (finrag.facts.kpi.KpiValue has it)."""

    name: str
    display: str
    unit: str
    period: str
    value: Decimal | float


def format_value(value: Decimal | float | None, unit: str) -> str:
    """A KPI value as a reader expects it: 46.2%, 1.07, 8.5x, 34.5 d, $12,345 M."""
    if value is None:
        return "—"
    number = Decimal(str(value)) if isinstance(value, float) else value
    if not number.is_finite():
        return "—"
    if unit == "percent":
        return f"{number:,.1f}%"
    if unit == "times":
        return f"{number:,.2f}x"
    if unit == "days":
        return f"{number:,.1f} d"
    if unit == "money":
        millions = number / _MILLION
        sign = "-" if millions < 0 else ""
        return f"{sign}${abs(millions):,.0f} M"
    return f"{number:,.2f}"


def chart_value(value: Decimal | float, unit: str) -> float:
    """The number plotted: money in millions (the axis says so), the rest as computed."""
    number = Decimal(str(value)) if isinstance(value, float) else value
    return float(number / _MILLION if unit == "money" else number)


@dataclass
class Series:
    """One line of a chart: one company's one KPI, period label -> value."""

    label: str
    unit: str
    points: dict[str, float] = field(default_factory=dict)


def build_series(company: str, results: Iterable[object]) -> tuple[list[Series], int]:
    """One series per KPI of ``company`` from its computed values, and how many results
    were left out (gaps: they have no value)."""
    by_kpi: dict[str, Series] = {}
    skipped = 0
    for result in results:
        value = getattr(result, "value", None)
        if value is None:
            skipped += 1
            continue
        valued: Valued = result  # type: ignore[assignment]
        series = by_kpi.setdefault(
            valued.name, Series(f"{company} · {valued.display}", valued.unit)
        )
        series.points[valued.period] = chart_value(value, valued.unit)
    return list(by_kpi.values()), skipped


def by_unit(series: Sequence[Series]) -> dict[str, list[Series]]:
    """Series grouped by unit, in the order first seen: one panel each."""
    panels: dict[str, list[Series]] = {}
    for s in series:
        panels.setdefault(s.unit, []).append(s)
    return panels


def terminal_chart(
    series: Sequence[Series],
    periods: Sequence[str],
    *,
    title: str,
    width: int = 80,
    height: int = 16,
    color: bool = False,
) -> str:
    """Line charts as text, one panel per unit, ``width`` columns wide; plain characters
    (a marker per series) unless ``color``."""
    import plotext  # a fresh import costs ~0.1 s: only commands that chart pay it

    figure = plotext.figure
    panels = []
    for unit, group in by_unit(series).items():
        figure.clear()
        figure.plot_size(max(width, 30), max(height, 8))
        figure.theme("simple" if color else "colorless")
        figure.title(title if len(panels) == 0 else "")
        for i, s in enumerate(group):
            xs = [n for n, p in enumerate(periods, start=1) if p in s.points]
            ys = [s.points[periods[x - 1]] for x in xs]
            signal = figure.signal(xs, ys, marker=_marker(i)).lines()
            for k in range(1, len(xs)):
                if xs[k] - xs[k - 1] > 1:  # a gap between: no line drawn across it
                    signal.line(k, False)
            figure.draw(signal)
        # Every period keeps its place even where a series has no value there.
        figure.ruler("x").lim(0.75, len(periods) + 0.25)
        figure.ruler("x").ticks(list(range(1, len(periods) + 1)), list(periods))
        figure.label(AXIS_LABELS.get(unit, unit), axis="y")
        # The legend is written under the panel: plotext's own box sits on the lines.
        legend = "   ".join(f"{_marker(i)} {s.label}" for i, s in enumerate(group))
        panels.append(figure.build().string(colorless=not color) + "\n" + legend)
    figure.clear()
    return "\n".join(panels)


def _marker(index: int) -> str:
    return _MARKERS[index % len(_MARKERS)]


def png_chart(
    series: Sequence[Series],
    periods: Sequence[str],
    path: Path,
    *,
    title: str,
    sources: Sequence[str] = (),
    note: str = "",
) -> int:
    """Write a PNG of line charts (one panel per unit, one line per series, a legend, the
    source documents and ``note`` in a footnote) to ``path``; return its size in bytes."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, no GUI toolkit
    from matplotlib import pyplot

    panels = by_unit(series)
    figure, axes = pyplot.subplots(
        len(panels), 1, figsize=(8, 3.2 * len(panels) + 1), dpi=100, squeeze=False
    )
    try:
        xs = list(range(len(periods)))
        for ax, (unit, group) in zip(axes[:, 0], panels.items(), strict=True):
            for s in group:
                # NaN breaks the line where a period has no value rather than bridging it.
                ys = [s.points.get(p, math.nan) for p in periods]
                ax.plot(xs, ys, marker="o", label=s.label)
            ax.set_xticks(xs, list(periods))
            ax.set_ylabel(AXIS_LABELS.get(unit, unit))
            ax.grid(alpha=0.3)
            ax.legend(fontsize="small")
        axes[0, 0].set_title(title)
        axes[-1, 0].set_xlabel("fiscal period")
        footnote = "\n".join(
            ([f"Source: {'; '.join(sources)}"] if sources else []) + ([note] if note else [])
        )
        if footnote:
            figure.text(0.01, 0.01, footnote, fontsize=7, ha="left", va="bottom", wrap=True)
        figure.tight_layout(rect=(0, 0.03 + 0.02 * footnote.count("\n") if footnote else 0, 1, 1))
        figure.savefig(path, format="png", dpi=100, pil_kwargs={"optimize": True})
    finally:
        pyplot.close(figure)
    return path.stat().st_size
