"""Inline SVG plots with matplotlib, byte-identical across runs.

matplotlib writes a creation date and hash-derived element ids into SVG; the date is removed
(``metadata={"Date": None}``) and ids are salted per plot (``svg.hashsalt``) so several plots
in one page never share an id while the same plot always gets the same ones. Text stays text
(``svg.fonttype = "none"``) so it uses the page's font and stays selectable.
Colours are the Okabe-Ito palette, distinguishable with the common colour-vision deficiencies.
"""

from __future__ import annotations

import io
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from chemgauge.errors import MissingDependencyError
from chemgauge.report.adapter import Distribution, Plot, RatePlot

try:
    import matplotlib
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter
except ImportError as exc:  # pragma: no cover - matplotlib is a dependency
    raise MissingDependencyError("HTML reports need matplotlib: pip install matplotlib") from exc

__all__ = ["OKABE_ITO", "render_plot"]

OKABE_ITO = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",
)
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_HATCHES = ("", "//", "..", "xx", "\\\\", "++", "oo", "--")
_MAX_INTEGER_BARS = 30


def _style() -> dict[str, Any]:
    return {
        "svg.fonttype": "none",
        "font.family": "sans-serif",
        "font.size": 11,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.color": "#dddddd",
        "grid.linewidth": 0.6,
        "axes.axisbelow": True,
        "path.simplify": False,
    }


def _bars(ax: Axes, plot: RatePlot) -> None:
    categories: list[str] = []
    for points in plot.series.values():
        for label, _ in points:
            if label not in categories:
                categories.append(label)
    names = list(plot.series)
    width = 0.8 / max(1, len(names))
    for s, name in enumerate(names):
        by_label = dict(plot.series[name])
        xs, ys, lows, highs = [], [], [], []
        for c, category in enumerate(categories):
            rate = by_label.get(category)
            if rate is None or rate.estimate is None or rate.low is None or rate.high is None:
                continue
            xs.append(c - 0.4 + width * (s + 0.5))
            ys.append(rate.estimate)
            # Clamped: rounding can put a Wilson bound a hair on the wrong side of the estimate.
            lows.append(max(0.0, rate.estimate - rate.low))
            highs.append(max(0.0, rate.high - rate.estimate))
        ax.bar(
            xs,
            ys,
            width=width * 0.92,
            color=OKABE_ITO[s % len(OKABE_ITO)],
            hatch=_HATCHES[s % len(_HATCHES)],
            edgecolor="white",
            linewidth=0.5,
            label=name,
        )
        ax.errorbar(xs, ys, yerr=[lows, highs], fmt="none", ecolor="#333333", capsize=3, lw=1)
    ax.set_xticks(range(len(categories)))
    # Upright when long: slanted labels would share their boxes with their neighbours'.
    rotate = sum(len(c) for c in categories) > 60
    ax.set_xticklabels(categories, rotation=90 if rotate else 0)


def _lines(ax: Axes, plot: RatePlot) -> None:
    for s, (name, points) in enumerate(plot.series.items()):
        kept = [
            (x, r.estimate, r.low, r.high)
            for x, r in points
            if r.estimate is not None and r.low is not None and r.high is not None
        ]
        xs = list(range(len(kept)))
        colour = OKABE_ITO[s % len(OKABE_ITO)]
        ys = [k[1] for k in kept]
        lows = [k[2] for k in kept]
        highs = [k[3] for k in kept]
        alpha = 0.18 if len(plot.series) <= 2 else 0.08  # many bands stay readable
        ax.fill_between(xs, lows, highs, color=colour, alpha=alpha, linewidth=0)
        ax.plot(xs, ys, color=colour, marker=_MARKERS[s % len(_MARKERS)], label=name)
        ax.set_xticks(xs)
        ax.set_xticklabels([k[0] for k in kept])


def _distribution(ax: Axes, plot: Distribution) -> None:
    values = [v for v in plot.values if not math.isnan(v)]
    if plot.integer:
        counts = Counter(int(v) for v in values)
        if counts and max(counts) - min(counts) < _MAX_INTEGER_BARS:
            xs = list(range(min(counts), max(counts) + 1))
            ax.bar(xs, [counts.get(x, 0) for x in xs], color=OKABE_ITO[0], width=0.85)
            ax.set_xticks(xs if len(xs) <= 15 else xs[:: math.ceil(len(xs) / 15)])
            return
    if values:
        bins: int | Sequence[float] = min(40, max(5, int(math.sqrt(len(values)))))
        low = math.log10(min(values)) if min(values) > 0 else 0.0
        high = math.log10(max(values)) if min(values) > 0 else 0.0
        # Under a decade, a log axis has no tick to label: the linear one reads as well.
        if plot.log_x and min(values) > 0 and high - low >= 1:
            count = int(bins) if isinstance(bins, int) else 20
            bins = [10 ** (low + (high - low) * i / count) for i in range(count + 1)]
            _log_x(ax, high - low)
        else:  # at most six plain labels: tiny spans (0.0001 s) otherwise crowd the axis
            ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.hist(values, bins=bins, color=OKABE_ITO[0], edgecolor="white", linewidth=0.5)


def _log_x(ax: Axes, decades: float) -> None:
    """A log x axis with plain labels at 1, 2 and 5 per decade when it spans few decades,
    at powers of ten otherwise; minor ticks stay unlabelled (matplotlib labels them on a
    short axis, in a scientific notation that runs into its neighbours)."""
    ax.set_xscale("log")
    subs = (1.0, 2.0, 5.0) if decades <= 2 else (1.0,)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs, numticks=12))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def render_plot(plot: Plot, salt: str) -> str:
    """One plot as an inline ``<svg>`` element (no XML prolog), deterministic for a salt."""
    params = {**_style(), "svg.hashsalt": f"chemgauge-{salt}"}
    with matplotlib.rc_context(params):  # type: ignore[arg-type]
        # A bare Figure (no pyplot): no global figure registry, no GUI backend, thread-safe.
        fig = Figure(figsize=(6.0, 3.4), layout="constrained")
        ax = fig.add_subplot()
        if isinstance(plot, RatePlot):
            (_lines if plot.kind == "line" else _bars)(ax, plot)
            ax.set_ylim(0, 1.02)
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * v:.0f}%"))
            ax.set_ylabel(plot.ylabel)
            if len(plot.series) > 1 or plot.kind == "line":
                # Outside the axes: a legend never hides a bar or an interval.
                fig.legend(
                    frameon=False,
                    fontsize=8,
                    loc="outside upper center",
                    ncols=min(3, len(plot.series)),
                )
        else:
            _distribution(ax, plot)
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_ylabel("items")
        ax.set_xlabel(plot.xlabel)
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]
    # A fixed pixel size would not shrink on narrow screens; the viewBox keeps proportions.
    svg = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1 class="plot"', svg, count=1)
    return _drop_unreferenced_ids(svg)


def _drop_unreferenced_ids(svg: str) -> str:
    """Remove ids nothing refers to (``figure_1``, ``axes_1``... repeat in every plot).

    Referenced ids (clip paths, markers, hatches) are salted hashes, unique per plot.
    """
    referenced = set(re.findall(r"#([A-Za-z_][\w.\-]*)", svg))
    return re.sub(
        r'\sid="([^"]+)"',
        lambda m: m.group(0) if m.group(1) in referenced else "",
        svg,
    )
