"""Charts drawn server-side as SVG: readable without JavaScript, nothing to load, nothing to run.

Numbers go into attributes as formatted floats and labels through `escape`, so no input reaches the
markup unescaped. Colours come from classes in app.css (the CSP forbids inline styles).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from markupsafe import Markup, escape


def _f(value: float) -> str:
    return f"{value:.2f}"


def interval_bar(mean: float | None, low: float | None, high: float | None, *, lo: float = 0.0, hi: float = 1.0,
                 width: int = 220, label: str = "", zero_line: bool = False) -> Markup:
    """One estimate with its interval as an error bar on a [lo, hi] axis."""
    height = 22
    if mean is None:
        return Markup(f'<svg class="chart interval" width="{width}" height="{height}" role="img" '
                      f'aria-label="no value"><text x="4" y="15" class="muted">no value</text></svg>')
    span = (hi - lo) or 1.0

    def x(v: float) -> float:
        return 6 + (min(max(v, lo), hi) - lo) / span * (width - 12)

    low_v = mean if low is None else low
    high_v = mean if high is None else high
    parts = [f'<svg class="chart interval" width="{width}" height="{height}" role="img" '
             f'aria-label="{escape(label)} {mean:.3f} [{low_v:.3f}, {high_v:.3f}]">',
             f'<line class="axis" x1="6" y1="17" x2="{width - 6}" y2="17"/>']
    if zero_line:
        parts.append(f'<line class="zero" x1="{_f(x(0))}" y1="2" x2="{_f(x(0))}" y2="20"/>')
    parts += [f'<line class="whisker" x1="{_f(x(low_v))}" y1="9" x2="{_f(x(high_v))}" y2="9"/>',
              f'<line class="whisker" x1="{_f(x(low_v))}" y1="4" x2="{_f(x(low_v))}" y2="14"/>',
              f'<line class="whisker" x1="{_f(x(high_v))}" y1="4" x2="{_f(x(high_v))}" y2="14"/>',
              f'<circle class="point" cx="{_f(x(mean))}" cy="9" r="4"/>', "</svg>"]
    return Markup("".join(parts))


def histogram(values: Sequence[float | None] | np.ndarray, *, title: str, unit: str = "", bins: int = 20,
              width: int = 300, height: int = 110, shown: Callable[[float], str] | None = None) -> Markup:
    """Counts of `values` in equal-width bins, with the range and the number of unknown values. `shown` writes
    a value as the page writes it elsewhere (`60 ms`, `$0.0012`), rather than `0.06 s` or `0.0012 $`."""
    def text(v: float) -> str:
        return shown(v) if shown is not None else f"{v:.4g}{unit}"

    # numpy: a 100,000-run experiment's metrics are binned in milliseconds, not the tenths a loop takes.
    array = (values.astype(float) if isinstance(values, np.ndarray)
             else np.fromiter((np.nan if v is None else v for v in values), dtype=float, count=len(values)))
    known = array[~np.isnan(array)]
    missing = len(values) - len(known)
    head = (f'<figure class="histogram"><figcaption>{escape(title)}'
            + (f' <span class="muted">({missing} unknown)</span>' if missing else "") + "</figcaption>")
    if not len(known):
        return Markup(head + '<p class="muted">no values</p></figure>')
    low, high = float(known.min()), float(known.max())
    step = (high - low) / bins if high > low else 1.0  # all equal: everything in the first bin
    counts = np.histogram(known, bins=bins, range=(low, low + step * bins))[0].tolist()
    top = max(counts)
    bar_w = (width - 10) / bins
    plot_h = height - 24
    bars = []
    for i, c in enumerate(counts):
        if not c:
            continue
        h = c / top * plot_h
        edge = low + i * step
        bars.append(f'<rect class="bar" x="{_f(5 + i * bar_w)}" y="{_f(plot_h - h + 2)}" width="{_f(bar_w - 1)}" '
                    f'height="{_f(h)}"><title>{c} runs from {escape(text(edge))}</title></rect>')
    svg = (f'<svg class="chart" width="{width}" height="{height}" role="img" '
           f'aria-label="{escape(title)}: {len(known)} values from {escape(text(low))} to {escape(text(high))}">'
           + "".join(bars)
           + f'<line class="axis" x1="5" y1="{plot_h + 2}" x2="{width - 5}" y2="{plot_h + 2}"/>'
           f'<text x="5" y="{height - 4}" class="tick">{escape(text(low))}</text>'
           + (f'<text x="{width - 5}" y="{height - 4}" class="tick end">{escape(text(high))}</text>'
              if high > low else "")  # one value: one label, not the same number at both ends
           + "</svg>")
    return Markup(head + svg + "</figure>")
