"""Server-rendered SVG line charts with axes, tick labels and units (the UI has no script).

``line_chart`` places the points; ``ui/_chart.html``'s ``chart`` macro draws them. Every colour and line style
is a class in ``ui/app.css`` (the CSP allows no inline style).

    chart = line_chart([Series("p50", "s1", [120.0, 95.0]), Series("p95", "s2", [400.0, None])],
                       x_labels=["run a", "run b"], x_title="run (oldest left)", unit="ms", title="latency")
    # {% from "_chart.html" import chart %} … {{ chart(chart) }}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from ._figures import fmt_ms

__all__ = ["Series", "line_chart", "nice_ticks"]

WIDTH, HEIGHT = 720, 240
LEFT, RIGHT, TOP, BOTTOM = 72, 16, 14, 46
"""Margins: the y tick labels on the left, the x tick labels and the axis title below."""
_MAX_X_LABELS = 8


@dataclass
class Series:
    """One line: its legend name, its CSS class (``s1``…``s3`` in app.css) and a value per x position (None:
    no value there, the line skips it); ``titles`` are the points' hover texts (default: name and value)."""

    name: str
    css: str
    values: Sequence[Optional[float]]
    titles: Sequence[str] = field(default_factory=list)
    classes: Sequence[str] = field(default_factory=list)
    """A CSS class per point (``passed``, ``failed``: the dot's colour), optional."""


def nice_ticks(top: float, most: int = 6) -> list[float]:
    """0 and round steps (1, 2, 2.5 or 5 × 10ⁿ), at most ``most`` of them, up to at least ``top``:
    ``nice_ticks(930)`` → ``[0, 200, 400, 600, 800, 1000]``, ``nice_ticks(4200)`` → ``[0, 1000, …, 5000]``."""
    if top <= 0 or not math.isfinite(top):
        return [0.0, 1.0]
    raw = top / most
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(math.ceil(top / step - 1e-9) + 1)]


def _axis(unit: str, top: float) -> tuple[str, Callable[[float], str]]:
    """The y axis' unit as its title says it, and how a tick reads (latency in s once the top reaches 2 s)."""
    if unit == "ms":
        return ("s", lambda v: f"{v / 1000:g}") if top >= 2000 else ("ms", lambda v: f"{v:g}")
    if unit == "tokens":
        return "tokens", lambda v: f"{v:,.0f}"
    if unit == "score":
        return "0–1", lambda v: f"{v:g}"
    return unit, lambda v: f"{v:g}"


def line_chart(series: Sequence[Series], *, x_labels: Sequence[str], x_title: str, unit: str, title: str,
               y_max: Optional[float] = None, marks: Sequence[tuple[str, float]] = ()) -> dict[str, Any]:
    """Positions of everything the ``chart`` macro draws.

    ``unit`` is the values' unit: ``ms`` (the axis reads ms, or s from 2 s up), ``tokens``, ``score`` or ``%``; ``y_max`` fixes the top (default: the largest value, rounded up to a
    tick); ``marks`` are labelled horizontal reference lines (``("p95", 1200.0)``).
    """
    values = [v for s in series for v in s.values if v is not None] + [v for _, v in marks]
    ticks = nice_ticks(y_max if y_max is not None else max(values, default=0.0))
    top = ticks[-1] or 1.0
    shown_unit, tick = _axis(unit, top)
    fmt: Callable[[float], str] = fmt_ms if unit == "ms" else (lambda v: f"{v:,.0f} tokens") if unit == "tokens" else tick
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    bottom = TOP + plot_h
    count = max((len(s.values) for s in series), default=0)

    def x(i: int) -> float:
        return round(LEFT + (plot_w / 2 if count <= 1 else i * plot_w / (count - 1)), 1)

    def y(v: float) -> float:
        return round(bottom - max(0.0, v) / top * plot_h, 1)

    lines = []
    for s in series:
        dots = [{"x": x(i), "y": y(v), "title": (s.titles[i] if i < len(s.titles) else f"{s.name}: {fmt(v)}"),
                 "css": s.classes[i] if i < len(s.classes) else ""}
                for i, v in enumerate(s.values) if v is not None]
        lines.append({"name": s.name, "css": s.css, "dots": dots,
                      "points": " ".join(f"{d['x']},{d['y']}" for d in dots)})
    every = max(1, math.ceil(count / _MAX_X_LABELS))
    x_ticks: list[dict[str, Any]] = [{"x": x(i), "label": label} for i, label in enumerate(x_labels) if i % every == 0 or i == count - 1]
    if len(x_ticks) > 1 and x_ticks[-1]["x"] - x_ticks[-2]["x"] < plot_w / _MAX_X_LABELS:
        del x_ticks[-2]  # the last label (newest) wins over a neighbour it would overlap
    return {"width": WIDTH, "height": HEIGHT, "left": LEFT, "right": WIDTH - RIGHT, "top": TOP, "bottom": bottom,
            "title": title, "x_title": x_title, "y_title": f"{title} ({shown_unit})",
            "y_ticks": [{"y": y(t), "label": tick(t)} for t in ticks], "x_ticks": x_ticks, "lines": lines,
            "marks": [{"y": y(v), "label": f"{', '.join(names)} {fmt(v)}"} for v, names in _merged(marks)],
            "x_mid": round(LEFT + plot_w / 2, 1), "y_mid": round(TOP + plot_h / 2, 1)}


def _merged(marks: Sequence[tuple[str, float]]) -> list[tuple[float, list[str]]]:
    """Marks at the same value drawn once, named together (``p95, p99 18.2 s``: few cases make them equal)."""
    out: dict[float, list[str]] = {}
    for name, value in marks:
        out.setdefault(value, []).append(name)
    return list(out.items())
