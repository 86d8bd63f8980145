"""KPI values as text, terminal charts and PNG charts: rendering only, no database.

A chart takes :class:`Series` (one company's one KPI over periods); values of different
units never share an axis: each unit gets its own panel.
"""

from __future__ import annotations

import io
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
    "per_share": "USD per share",
    "shares": "shares (millions)",
}
# Charted in millions, as statements print them.
_IN_MILLIONS = ("money", "shares")
# Lines are told apart by their marker, so that they still are without colour.
_MARKERS = ("•", "+", "x", "o", "*", "#", "@", "%")
_PNG_MARKERS = ("o", "s", "^", "D", "v", "P")
_DASHES = ("-", "--", ":", "-.")


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
    """The number plotted: money and share counts in millions (the axis says so), the
    rest as computed."""
    number = Decimal(str(value)) if isinstance(value, float) else value
    return float(number / _MILLION if unit in _IN_MILLIONS else number)


@dataclass
class Series:
    """One line of a chart: one company's one KPI, period label -> value."""

    label: str
    unit: str
    points: dict[str, float] = field(default_factory=dict)
    company: str = ""  # a PNG styles lines by company (dash, marker) and KPI (colour)
    kpi: str = ""


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
            valued.name,
            Series(f"{company} · {valued.display}", valued.unit, company=company, kpi=valued.name),
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
        legend = _wrap([f"{_marker(i)} {s.label}" for i, s in enumerate(group)], width)
        panels.append(figure.build().string(colorless=not color).rstrip("\n") + "\n" + legend)
    figure.clear()
    return "\n\n".join(panels)


def _save_small(figure, path: Path) -> None:
    """PNG with a 64-colour palette: a chart's few flat colours survive it, and the file is
    a third of the full-colour one."""
    from PIL import Image

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    buffer.seek(0)
    with Image.open(buffer) as image:
        small = image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
        small.save(path, format="PNG", optimize=True)


def _wrap(items: Sequence[str], width: int) -> str:
    """Items three spaces apart, on as few lines of ``width`` as they fit."""
    lines = [""]
    for item in items:
        if lines[-1] and len(lines[-1]) + 3 + len(item) > width:
            lines.append("")
        lines[-1] += ("   " if lines[-1] else "") + item
    return "\n".join(lines)


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
    # A KPI keeps its colour (and a company its dash) through the panel: a comparison reads
    # at once. Past ten KPIs in a panel the colours come round again with another marker.
    companies = {c: i for i, c in enumerate(dict.fromkeys(s.company for s in series))}
    # Each panel tall enough for its legend (beside it): about a fifth of an inch a line.
    heights = [max(2.8, 0.2 * len(group) + 0.6) for group in panels.values()]
    figure, axes = pyplot.subplots(
        len(panels),
        1,
        figsize=(10, sum(heights) + 0.8),
        dpi=100,
        squeeze=False,
        gridspec_kw={"height_ratios": heights},
    )
    try:
        xs = list(range(len(periods)))
        for ax, (unit, group) in zip(axes[:, 0], panels.items(), strict=True):
            kpis = {k: i for i, k in enumerate(dict.fromkeys(s.kpi or s.label for s in group))}
            for s in group:
                shade = kpis[s.kpi or s.label]
                # NaN breaks the line where a period has no value rather than bridging it.
                ax.plot(
                    xs,
                    [s.points.get(p, math.nan) for p in periods],
                    label=s.label,
                    color=f"C{shade % 10}",
                    marker=_PNG_MARKERS[(shade // 10 + companies[s.company]) % len(_PNG_MARKERS)],
                    linestyle=_DASHES[companies[s.company] % len(_DASHES)],
                )
            ax.set_xticks(xs, list(periods))
            ax.set_ylabel(AXIS_LABELS.get(unit, unit))
            ax.grid(alpha=0.3)
            # Beside the panel, not on it: a dozen lines' legend would hide them.
            ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
        axes[0, 0].set_title(title, fontsize=11)
        axes[-1, 0].set_xlabel("fiscal period")
        footnote = "\n".join(
            ([f"Source: {'; '.join(sources)}"] if sources else []) + ([note] if note else [])
        )
        if footnote:
            figure.text(0.01, 0.01, footnote, fontsize=7, ha="left", va="bottom", wrap=True)
        bottom = 0.02 + 0.025 * (footnote.count("\n") + 1) if footnote else 0
        figure.tight_layout(rect=(0, bottom, 1, 1))
        _save_small(figure, path)
    finally:
        pyplot.close(figure)
    return path.stat().st_size
