"""The eval report's charts as PNG bytes: hit@k curves, correctness bars, latency boxes.

Rendering only (matplotlib's Agg backend, no display): figures in, bytes out, so the HTML
report can embed them as ``data:`` URIs and stay one file.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence

# Lines and bars are told apart by marker and hatch too, so that they are without colour.
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_HATCHES = ("", "//", "..", "xx", "\\\\", "++")


def _pyplot():
    import matplotlib  # a fresh import costs about a second: only reports with --out pay it

    matplotlib.use("Agg")  # bytes only: no display, no GUI toolkit
    from matplotlib import pyplot

    return pyplot


def plain(label: str) -> str:
    """A label drawn as written: matplotlib reads '$...$' as maths (and fails on some)."""
    return label.replace("$", r"\$")


def _png(figure) -> bytes:
    """The figure as a PNG quantised to 64 colours: a chart's flat colours survive, and the
    page carrying it is a third of the size."""
    from PIL import Image

    raw = io.BytesIO()
    figure.savefig(raw, format="png", dpi=100)
    raw.seek(0)
    out = io.BytesIO()
    with Image.open(raw) as image:
        small = image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
        small.save(out, format="PNG", optimize=True)
    return out.getvalue()


def hit_curves_png(ks: Sequence[int], curves: Mapping[str, Sequence[float | None]]) -> bytes:
    """hit@k against k, one line per variant (``curves``: variant -> hit rate at each k)."""
    pyplot = _pyplot()
    figure, ax = pyplot.subplots(figsize=(8, 4.2), dpi=100)
    try:
        for i, (name, hits) in enumerate(curves.items()):
            ys = [math.nan if h is None else h for h in hits]
            ax.plot(
                list(ks),
                ys,
                label=plain(name),
                marker=_MARKERS[i % len(_MARKERS)],
                color=f"C{i % 10}",
            )
        ax.set_xticks(list(ks))
        ax.set_xlabel("k (results retrieved)")
        ax.set_ylabel("hit rate (a relevant page in the top k)")
        ax.set_ylim(-0.03, 1.03)
        ax.grid(alpha=0.3)
        ax.set_title("hit@k by variant", fontsize=11)
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
        figure.tight_layout()
        return _png(figure)
    finally:
        pyplot.close(figure)


def group_bars_png(
    groups: Sequence[str],
    values: Mapping[str, Mapping[str, tuple[float | None, int]]],
    *,
    title: str,
    ylabel: str,
) -> bytes:
    """Bars per group, one per variant side by side (``values``: variant -> group ->
    (share, n)); each bar says its n, and a group a variant has no figure for says n=0."""
    pyplot = _pyplot()
    width = max(6.0, min(12.0, 1.2 + 0.9 * len(groups) * max(len(values), 1) ** 0.5))
    figure, ax = pyplot.subplots(figsize=(width, 4.2), dpi=100)
    try:
        count = max(len(values), 1)
        bar = min(0.8, 0.25 * count) / count  # a lone bar not as wide as its slot
        for i, (name, by_group) in enumerate(values.items()):
            xs = [g + (i - (count - 1) / 2) * bar for g in range(len(groups))]
            labelled = False  # the legend names a variant once, at its first bar
            for x, group in zip(xs, groups, strict=True):
                share, n = by_group.get(group, (None, 0))
                if share is None:
                    ax.text(x, 0.01, "n=0", ha="center", va="bottom", fontsize=8)
                    continue
                ax.bar(
                    x,
                    share,
                    bar * 0.95,
                    color=f"C{i % 10}",
                    hatch=_HATCHES[i % len(_HATCHES)],
                    edgecolor="white",
                    label=None if labelled else plain(name),
                )
                labelled = True
                ax.text(
                    x, share + 0.01, f"{share:.2f}\nn={n}", ha="center", va="bottom", fontsize=8
                )
        ax.set_xticks(list(range(len(groups))), [plain(g) for g in groups])
        pad = max(0.0, (3 - len(groups)) * 0.5)  # one or two groups: bars not a wall
        ax.set_xlim(-0.5 - pad, len(groups) - 0.5 + pad)
        ax.set_ylim(0, 1.18)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
        ax.set_title(title, fontsize=11)
        if len(values) > 1:
            ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
        figure.tight_layout()
        return _png(figure)
    finally:
        pyplot.close(figure)


def latency_png(latencies: Mapping[str, Sequence[float]], *, unit: str) -> bytes:
    """The spread of latencies: a histogram for one variant, a box per variant for more."""
    pyplot = _pyplot()
    from matplotlib.ticker import MaxNLocator

    figure, ax = pyplot.subplots(figsize=(8, 3.8), dpi=100)
    try:
        names = list(latencies)
        if len(names) == 1:
            values = list(latencies[names[0]])
            ax.hist(values, bins=min(max(len(values), 1), 20), color="C0", edgecolor="white")
            ax.set_xlabel(f"latency per question ({unit})")
            ax.set_ylabel("questions")
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_title(f"latency, {plain(names[0])}", fontsize=11)
        else:
            ax.boxplot(
                [list(latencies[n]) or [math.nan] for n in names],
                orientation="horizontal",
                showmeans=True,
            )
            ax.set_yticks(list(range(1, len(names) + 1)), [plain(n) for n in names])
            ax.set_xlabel(f"latency per question ({unit})")
            ax.set_title("latency by variant (box: quartiles; triangle: mean)", fontsize=11)
        ax.grid(axis="x", alpha=0.3)
        figure.tight_layout()
        return _png(figure)
    finally:
        pyplot.close(figure)
