"""What the UI's charts show: latency p50/p95/p99 and tokens in/out per run (over its cases) and over time.

    session_charts(records, scored, metric)   # /trend: the metric's score, latency and tokens by session
    run_charts(cases)                         # /runs/{run}: the distribution over the run's cases
    runs_charts(points, figures_by_run)       # /runs/trend: percentiles per run, oldest left

Each returns template values: ``line_chart`` dicts (drawn by ``ui/_chart.html``) and, for runs, the percentile
table; a chart whose values the traces do not carry is None (the page says so instead of drawing zeros).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from ._charts import Series, line_chart
from ._figures import Figures, fmt_ms, fmt_tokens, percentiles, record_figures

__all__ = ["clock", "figures_table", "run_charts", "runs_charts", "session_charts"]

_LEVELS = (("p50", "s1"), ("p95", "s2"), ("p99", "s3"))


def session_charts(records: Sequence[Any], scored: Sequence[tuple[Any, Any]], metric: str) -> dict[str, Any]:
    """``records``: evaluated sessions, oldest first; ``scored``: (session, its result of ``metric``)."""
    score = None
    if scored:
        score = line_chart([Series(metric, "s1", [m.score for _, m in scored],
                                   titles=[f"{r.session_id}: {m.score:.3f} {m.status.value}" for r, m in scored],
                                   classes=[m.status.value.lower() for _, m in scored])],
                           x_labels=[clock(r.received_at) for r, _ in scored], x_title="session received (oldest left)",
                           unit="score", title="score", y_max=1.0)
    figures = [(r, record_figures(r)) for r in records]
    labels = [clock(r.received_at) for r, _ in figures]
    x_title = "session received (oldest left)"
    latency = _chart([Series("latency", "s1", [f.latency_ms for _, f in figures],
                             titles=[f"{r.session_id}: {fmt_ms(f.latency_ms)}" for r, f in figures])],
                     labels, x_title, "ms", "latency")
    tokens = _chart([Series("tokens in", "s1", [_num(f.tokens_in) for _, f in figures],
                            titles=[f"{r.session_id}: {fmt_tokens(f.tokens_in)} in" for r, f in figures]),
                     Series("tokens out", "s2", [_num(f.tokens_out) for _, f in figures],
                            titles=[f"{r.session_id}: {fmt_tokens(f.tokens_out)} out" for r, f in figures])],
                    labels, x_title, "tokens", "tokens")
    return {"score_chart": score, "latency_chart": latency, "tokens_chart": tokens}


def run_charts(figures: Sequence[Figures]) -> dict[str, Any]:
    """The distribution over a run's cases: each case's value, smallest left, with p50/p95/p99 marked."""
    table = figures_table(figures)
    latencies = sorted(f.latency_ms for f in figures if f.latency_ms is not None)
    ins = sorted(float(f.tokens_in) for f in figures if f.tokens_in is not None)
    outs = sorted(float(f.tokens_out) for f in figures if f.tokens_out is not None)
    latency = tokens = None
    if latencies:
        p = table["latency"]["values"]
        latency = line_chart([Series("latency of each case", "s1", latencies)], x_labels=_ranks(len(latencies)),
                             x_title="cases, fastest left (percentile)", unit="ms", title="latency",
                             marks=[(name, p[name]) for name, _ in _LEVELS])
    if ins or outs:
        count = max(len(ins), len(outs))
        tokens = line_chart([Series("tokens in", "s1", _stretch(ins, count)),
                             Series("tokens out", "s2", _stretch(outs, count))], x_labels=_ranks(count),
                            x_title="cases, fewest left (percentile)", unit="tokens", title="tokens per case")
    return {"percentile_rows": table["rows"], "latency_chart": latency, "tokens_chart": tokens,
            "figures_cases": table["cases"]}


def runs_charts(points: Sequence[dict[str, Any]], figures_by_run: Mapping[str, Sequence[Figures]]) -> dict[str, Any]:
    """Latency p50/p95/p99 and tokens in/out (p50 per case) of each run of ``points`` (oldest first)."""
    tables = [figures_table(figures_by_run.get(p["run_id"], ())) for p in points]
    labels = [str(p["started_at"])[5:16].replace("T", " ") for p in points]
    x_title = "run started, UTC (oldest left)"
    latency = _chart([Series(name, css, [t["latency"]["values"].get(name) for t in tables],
                             titles=[f"{p['run_id']}: {name} {t['latency']['cells'][name]}" for p, t in zip(points, tables, strict=True)])
                      for name, css in _LEVELS], labels, x_title, "ms", "latency per case")
    tokens = _chart([Series(f"tokens {kind} (p50)", css, [t[f"tokens_{kind}"]["values"].get("p50") for t in tables],
                            titles=[f"{p['run_id']}: {t[f'tokens_{kind}']['cells']['p50']} tokens {kind} (p50)"
                                    for p, t in zip(points, tables, strict=True)])
                     for kind, css in (("in", "s1"), ("out", "s2"))], labels, x_title, "tokens", "tokens per case")
    return {"latency_chart": latency, "tokens_chart": tokens}


def figures_table(figures: Sequence[Figures]) -> dict[str, Any]:
    """p50/p95/p99 of latency, tokens in and tokens out over ``figures`` (cases without the figure left out)."""
    out: dict[str, Any] = {"cases": len(figures), "rows": []}
    for key, label, get, fmt in (("latency", "latency", lambda f: f.latency_ms, fmt_ms),
                                 ("tokens_in", "tokens in", lambda f: f.tokens_in, fmt_tokens),
                                 ("tokens_out", "tokens out", lambda f: f.tokens_out, fmt_tokens)):
        known = [float(v) for v in (get(f) for f in figures) if v is not None]
        values = percentiles(known) or {}
        cells = {name: fmt(values.get(name)) for name, _ in _LEVELS}
        out[key] = {"values": values, "cells": cells}
        out["rows"].append({"name": label, "known": len(known), **cells})
    return out


def _chart(series: list[Series], labels: list[str], x_title: str, unit: str, title: str) -> Optional[dict[str, Any]]:
    """A chart over time, or None when no point has a value."""
    if not any(v is not None for s in series for v in s.values):
        return None
    return line_chart(series, x_labels=labels, x_title=x_title, unit=unit, title=title)


def _num(value: Optional[int]) -> Optional[float]:
    return None if value is None else float(value)


def _stretch(values: list[float], count: int) -> list[Optional[float]]:
    """``values`` spread over ``count`` x positions by rank (a series with fewer known cases than the other)."""
    if len(values) == count or not values:
        return list(values) or [None] * count
    out: list[Optional[float]] = [None] * count
    for i, v in enumerate(values):
        out[round(i * (count - 1) / max(1, len(values) - 1))] = v
    return out


def _ranks(count: int) -> list[str]:
    """The percentile rank of each sorted position: ``0%`` … ``100%``."""
    return [f"{round(100 * i / max(1, count - 1))}%" for i in range(count)]


def clock(ts: Optional[float]) -> str:
    """A moment (epoch seconds) as the pages show it, local ``HH:MM:SS`` ("" for none; the ``when`` filter)."""
    return time.strftime("%H:%M:%S", time.localtime(ts)) if ts else ""
