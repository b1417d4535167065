"""``--report FILE.html``: one self-contained page a designer looks at rather than reads.

Per policy: how long matched entries waited (a histogram), how close each
group was on each range-rule attribute (a histogram), and the two against
each other (one dot per group: its longest wait, its spread). Charts are
inline SVG drawn here (no script, no network, nothing to fetch), and every
chart of one kind shares its axes across the policies, so a narrower
window's longer waits and tighter groups are seen side by side. An axis ends
at the 99th percentile of what it shows (``N+`` when values lie past it,
drawn at its end), so the tail does not flatten the rest. The page
holds nothing that varies between runs: the same inputs give the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

from matchmaker.simulate.stats import Number, Summary, percentile, to_json
from matchmaker.simulate.table import figure_rows

__all__ = ["render_report"]

_W, _H, _PAD = 360, 200, 36  # a chart's size and the room its axis labels take
_BINS = 24
_MAX_DOTS = 2000  # a scatter draws at most this many groups (every k-th, in formed order)
_COLOURS = ("#3b6ea8", "#c0632b", "#4d8b4a", "#8a4f9e")

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin-bottom:2em}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}
section{margin-bottom:2em}.charts{display:flex;flex-wrap:wrap;gap:1.5em}
figure{margin:0}figcaption{font-size:.9em;margin-bottom:.3em}
svg text{font-size:10px;fill:#555}
"""


def render_report(summaries: Sequence[Summary]) -> str:
    """The whole page for ``summaries`` (the policies of one run, in order)."""
    wait_axis = _Axis.of(v for s in summaries for v in s.waits)
    group_axis = _Axis.of(v for s in summaries for v in s.group_waits)
    attributes = sorted({a for s in summaries for a in s.spreads})
    spread_axis = {
        a: _Axis.of(v for s in summaries for v in s.spreads.get(a, ())) for a in attributes
    }
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>matchmaker simulate</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>matchmaker simulate</h1>",
        _figures_table(summaries),
    ]
    for n, summary in enumerate(summaries):
        colour = _COLOURS[n % len(_COLOURS)]
        charts = [
            _chart(
                "wait, ms (matched entries)",
                _histogram(summary.waits, wait_axis, colour),
            )
        ]
        for attribute in attributes:
            spreads = summary.spreads.get(attribute, [])
            axis = spread_axis[attribute]
            charts.append(_chart(f"{attribute} spread (groups)", _histogram(spreads, axis, colour)))
            charts.append(
                _chart(
                    f"longest wait, ms (x) against {attribute} spread (y), one dot per group",
                    _scatter(summary.group_waits, spreads, group_axis, axis, colour),
                )
            )
        parts.append(
            f"<section><h2>{escape(summary.name)}</h2>"
            f'<div class="charts">{"".join(charts)}</div></section>'
        )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _figures_table(summaries: Sequence[Summary]) -> str:
    """The JSON document's figures as an HTML table, one column per policy."""
    head = "".join(f"<th>{escape(s.name)}</th>" for s in summaries)
    rows = [f"<tr><th></th>{head}</tr>"]
    for label, cells in figure_rows(to_json(list(summaries))):
        shown = "".join(f"<td>{escape(cell)}</td>" for cell in cells)
        rows.append(f"<tr><td>{escape(label)}</td>{shown}</tr>")
    return f"<table>{''.join(rows)}</table>"


@dataclass(frozen=True, slots=True)
class _Axis:
    """An axis from 0 to ``top``: the 99th percentile of what it shows (at least 1), so a
    long tail does not squeeze the rest into one bar; ``clipped``: some values lie past
    ``top`` (drawn at it, the end labelled ``top+``)."""

    top: float
    clipped: bool

    @classmethod
    def of(cls, values: Iterable[Number]) -> _Axis:
        ordered = sorted(values)
        top = float(percentile(ordered, 99) or 0) or 1.0
        return cls(top, bool(ordered) and ordered[-1] > top)

    @property
    def label(self) -> str:
        return _num(self.top) + ("+" if self.clipped else "")

    def at(self, value: Number) -> float:
        """Where ``value`` lies on the axis, 0 to 1."""
        return min(float(value) / self.top, 1.0)


def _chart(caption: str, svg: str) -> str:
    return f"<figure><figcaption>{escape(caption)}</figcaption>{svg}</figure>"


def _svg(body: list[str], x_label: str, y_label: str) -> str:
    """A chart's frame: axes, the x axis's ends and the y axis's top label."""
    x0, y0, x1 = _PAD, _H - _PAD // 2, _W - 8
    frame = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'viewBox="0 0 {_W} {_H}" role="img">',
        f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#999"/>',
        f'<line x1="{x0}" y1="8" x2="{x0}" y2="{y0}" stroke="#999"/>',
        f'<text x="{x0}" y="{_H - 4}">0</text>',
        f'<text x="{x1}" y="{_H - 4}" text-anchor="end">{escape(x_label)}</text>',
        f'<text x="{x0 - 4}" y="16" text-anchor="end">{escape(y_label)}</text>',
    ]
    return "".join(frame + body + ["</svg>"])


def _histogram(values: Sequence[Number], axis: _Axis, colour: str) -> str:
    """Counts of ``values`` in :data:`_BINS` equal bins over the axis (the last bin also
    counts the values past it)."""
    counts = [0] * _BINS
    for value in values:
        counts[min(_BINS - 1, int(axis.at(value) * _BINS))] += 1
    most = max(counts) or 1
    x0, y0 = _PAD, _H - _PAD // 2
    width = (_W - 8 - x0) / _BINS
    bars = []
    for i, count in enumerate(counts):
        if count:
            height = (y0 - 8) * count / most
            bars.append(
                f'<rect x="{x0 + i * width:.1f}" y="{y0 - height:.1f}" '
                f'width="{max(width - 1, 1):.1f}" height="{height:.1f}" fill="{colour}">'
                f"<title>{count}</title></rect>"
            )
    return _svg(bars, axis.label, str(max(counts)))


def _scatter(
    xs: Sequence[Number], ys: Sequence[Number], x_axis: _Axis, y_axis: _Axis, colour: str
) -> str:
    """One dot per (x, y) pair, every k-th when there are more than :data:`_MAX_DOTS`."""
    step = max(1, -(-len(xs) // _MAX_DOTS))
    x0, y0 = _PAD, _H - _PAD // 2
    width, height = _W - 8 - x0, y0 - 8
    dots = [
        f'<circle cx="{x0 + width * x_axis.at(x):.1f}" '
        f'cy="{y0 - height * y_axis.at(y):.1f}" r="1.6" fill="{colour}" '
        'fill-opacity="0.5"/>'
        for x, y in list(zip(xs, ys, strict=True))[::step]
    ]
    return _svg(dots, x_axis.label, y_axis.label)


def _num(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:g}"
