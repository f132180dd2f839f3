"""The live view of ``serve``: what continuous evaluation is doing now, server-rendered, no script.

    /live?hours=6                            per ``--pull`` source its state and watermark; sessions scored,
                                             sampled out, filtered out, over budget; per metric the pass rate
                                             with its 95% Wilson interval per time bucket over the last hours
                                             (an SVG drawn here); alerts firing and cleared; judge calls,
                                             tokens and cost per evaluator
    /live/failures?metric=…&start=…&end=…    the failing sessions of one bucket, one alert's window or the
                                             whole span, each a link to ``/sessions/<id>``

Everything comes from the server's ``ContinuousState`` (``ctx.continuous``); session details from the
session store (``ctx.store``). Times are UTC. Like every page, text is escaped by the templates and the
Content-Security-Policy allows no script (nor inline styles: the chart is coloured by attributes and
``app.css`` classes)::

    add_live_pages(app, ctx, page)   # from web_ui.add_web_ui; ``page`` renders a template
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, Optional
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse

from ..results.gates import format_rate
from .continuous import Window, bucket_series

__all__ = ["BUCKETS", "add_live_pages", "live_view", "rate_chart", "tally"]

Page = Callable[..., HTMLResponse]

BUCKETS: dict[int, int] = {1: 120, 6: 600, 24: 1800, 48: 3600}
"""Span shown (hours) → bucket width (seconds); 30 to 48 buckets, within what ``Outcomes`` keeps (48 h)."""
_DEFAULT_HOURS = 6
_REFRESH = 10
_MAX_FAILURES = 500
"""Failing sessions listed on the drill-down page."""
_SHOWN_FAILURES = 10
"""Failing sessions linked under each metric's chart (the rest are one more click away)."""
_WIDTH, _HEIGHT, _LEFT, _PAD, _BOTTOM = 720, 180, 44, 10, 22


def add_live_pages(app: FastAPI, ctx: Any, page: Page) -> None:
    """Add ``/live`` and ``/live/failures``; ``ctx`` is the API's ``ApiContext``."""

    @app.get("/live", include_in_schema=False)
    async def live(request: Request, hours: str = "") -> HTMLResponse:
        span = int(hours) if hours.strip().isdigit() and int(hours) in BUCKETS else _DEFAULT_HOURS
        # A worker thread: tallying up to ``Outcomes.max_rows`` rows per metric must not stall the OTLP
        # receivers on the event loop.
        values = await asyncio.to_thread(live_view, ctx.continuous, span)
        return page("live.html", request, refresh=_REFRESH, **values)

    @app.get("/live/failures", include_in_schema=False)
    async def failures(request: Request, metric: str = "", start: str = "", end: str = "") -> HTMLResponse:
        try:
            begin, finish = float(start), float(end)
            if not (math.isfinite(begin) and math.isfinite(finish)):
                raise ValueError
        except ValueError:
            return page("message.html", request, 400, title="Failing sessions",
                        message="start and end must be epoch seconds (follow a link on the live view)")
        window = await asyncio.to_thread(ctx.continuous.outcomes.between, metric, begin, finish)
        rows = []
        for session_id in window.failed_sessions[:_MAX_FAILURES]:
            record = ctx.store.get(session_id)
            rows.append({"session_id": session_id, "kept": record is not None,
                         "summary": record.summary() if record is not None else {}})
        low, high = window.interval()
        return page("live_failures.html", request, metric=metric, start=_utc(begin), end=_utc(finish),
                    n=window.n, rate=format_rate(window.pass_rate if window.n else None, window.passed, window.n),
                    interval=_interval(low, high) if window.n else "", failures=rows,
                    total=len(window.failed_sessions))


def live_view(state: Any, hours: int, *, now: Optional[float] = None) -> dict[str, Any]:
    """The values of ``live.html`` for the last ``hours`` (one of ``BUCKETS``) of ``state``."""
    now = time.time() if now is None else now
    bucket = BUCKETS[hours]
    end = math.ceil(now / bucket) * bucket  # buckets on round times: a refresh does not shift them
    start = end - hours * 3600
    snapshot = state.as_json()
    events = [*snapshot["alerts"]["active"], *snapshot["alerts"]["recent"]]
    metrics = []
    for name, (series, window) in tally(state.outcomes.snapshot(), start, end, bucket).items():
        rules = state.alerting.rules if getattr(state, "alerting", None) is not None else []
        thresholds = sorted({e["threshold"] for e in events if e["metric"] == name}
                            | {r.threshold for r in rules if r.metric == name})  # configured rules, fired or not
        low, high = window.interval()
        metrics.append({
            "name": name, "n": window.n, "failed": window.n - window.passed,
            "rate": format_rate(window.pass_rate if window.n else None, window.passed, window.n),
            "interval": _interval(low, high) if window.n else "",
            "failing": list(window.failed_sessions[:_SHOWN_FAILURES]),
            "failures_link": _failures_link(name, start, end),
            "chart": rate_chart(series, bucket, thresholds=thresholds,
                                link=_bucket_links(name, bucket)),
        })
    return {
        "hours": hours, "choices": list(BUCKETS), "bucket": _duration(bucket),
        "sources": [_source_row(s, now) for s in snapshot["sources"]],
        "counters": snapshot["counters"],
        "metrics": metrics,
        "active": [_alert_row(e) for e in sorted(snapshot["alerts"]["active"], key=lambda e: e["at"])],
        "recent": [_alert_row(e) for e in reversed(snapshot["alerts"]["recent"])],
        "judges": [{"name": name, **usage, "cost": f"${usage['cost_usd']:.4f}"}
                   for name, usage in sorted(snapshot["judges"].items())],
    }


def tally(rows: Sequence[tuple[float, str, str, bool]], start: float, end: float,
          bucket: float) -> dict[str, tuple[list[dict[str, Any]], Window]]:
    """Per metric of ``rows`` (``Outcomes.snapshot()``, oldest first), in one pass: the buckets of
    ``[start, end)`` as ``Outcomes.series`` gives them, and the ``Window`` of the whole span (a metric with
    rows only before ``start`` is listed too, with nothing in it)."""
    count = max(1, math.ceil((end - start) / bucket))
    slots: dict[str, list[list[int]]] = {}
    failed: dict[str, list[str]] = {}
    for at, name, session, ok in rows:
        if name not in slots:
            slots[name], failed[name] = [[0, 0] for _ in range(count)], []
        if start <= at < end:
            slot = slots[name][min(count - 1, int((at - start) // bucket))]
            slot[0] += 1
            slot[1] += int(ok)
            if not ok:
                failed[name].append(session)
    out = {}
    for name in sorted(slots):
        series = bucket_series(slots[name], start, bucket)
        window = Window(n=sum(n for n, _ in slots[name]), passed=sum(p for _, p in slots[name]),
                        failed_sessions=tuple(dict.fromkeys(reversed(failed[name]))))
        out[name] = (series, window)
    return out


def rate_chart(series: Sequence[dict[str, Any]], bucket: float, *, thresholds: Sequence[float] = (),
               link: Callable[[float], str] = lambda start: "") -> dict[str, Any]:
    """Positions for the pass-rate SVG from ``Outcomes.series`` buckets: x by time (oldest left), y from 0
    (bottom) to 1 (top); per non-empty bucket a bar of its Wilson interval and a point at its rate, linked
    (``link(bucket start)``) when the bucket has failures; dashed lines at the alert ``thresholds``."""
    plot_w, plot_h = _WIDTH - _LEFT - _PAD, _HEIGHT - _PAD - _BOTTOM
    step = plot_w / max(1, len(series))

    def y(value: float) -> float:
        return round(_PAD + (1 - value) * plot_h, 1)

    buckets = []
    for i, b in enumerate(series):
        if not b["n"]:
            continue
        x = round(_LEFT + (i + 0.5) * step, 1)
        span = f"{_hm(b['start'])}–{_hm(b['start'] + bucket)} UTC"
        buckets.append({
            "x": x, "y": y(b["rate"]), "bar_x": round(x - max(1.0, step * 0.3), 1),
            "bar_w": round(max(2.0, step * 0.6), 1), "bar_y": y(b["upper"]),
            "bar_h": round(max(1.0, y(b["lower"]) - y(b["upper"])), 1),
            "failed": b["n"] - b["passed"], "href": link(b["start"]) if b["n"] > b["passed"] else "",
            "title": f"{span}: {format_rate(b['rate'], b['passed'], b['n'])} passed, "
                     f"95% interval {_interval(b['lower'], b['upper'])}",
        })
    every = max(1, len(series) // 6)
    ticks = [{"x": round(_LEFT + i * step, 1), "label": _hm(b["start"])}
             for i, b in enumerate(series) if i % every == 0]
    return {"width": _WIDTH, "height": _HEIGHT, "left": _LEFT, "right": _WIDTH - _PAD, "buckets": buckets,
            "line": " ".join(f"{b['x']},{b['y']}" for b in buckets), "ticks": ticks,
            "axis_y": _HEIGHT - _BOTTOM, "label_y": _HEIGHT - 6,
            "grid": [{"y": y(v), "label": f"{v:.0%}"} for v in (0.0, 0.5, 1.0)],
            "thresholds": [{"y": y(t), "label": f"{t:g}"} for t in thresholds if 0 <= t <= 1]}


def _source_row(source: dict[str, Any], now: float) -> dict[str, Any]:
    watermark, next_poll = source.get("watermark"), source.get("next_poll")
    last_poll, last_success = source.get("last_poll"), source.get("last_success")
    return {**source, "watermark_at": _utc(watermark), "lag": _duration(now - watermark) if watermark else "",
            "last_poll_at": _utc(last_poll), "last_success_at": _utc(last_success),
            "last_poll_ago": _duration(max(0.0, now - last_poll)) if last_poll else "",
            "last_success_ago": _duration(max(0.0, now - last_success)) if last_success else "",
            "next_in": _duration(max(0.0, next_poll - now)) if next_poll else ""}


def _alert_row(event: dict[str, Any]) -> dict[str, Any]:
    # the window that was judged, as it stood when the rule fired or cleared (+1 s: rows at that instant)
    start, end = event["at"] - event["window_seconds"], event["at"] + 1
    return {**event, "at_utc": _utc(event["at"]), "window": _duration(event["window_seconds"]),
            "rate": format_rate(event["pass_rate"], event["passed"], event["n"]),
            "interval": _interval(event["lower"], event["upper"]), "shown": event["sessions"][:5],
            "failures_link": _failures_link(event["metric"], start, end)}


def _bucket_links(metric: str, bucket: float) -> Callable[[float], str]:
    """``start`` → the drill-down of ``metric``'s bucket starting there."""
    return lambda start: _failures_link(metric, start, start + bucket)


def _failures_link(metric: str, start: float, end: float) -> str:
    """The drill-down page's path and query (the template prefixes the root path)."""
    return "/live/failures?" + urlencode({"metric": metric, "start": f"{start:.3f}", "end": f"{end:.3f}"})


def _interval(low: float, high: float) -> str:
    return f"{math.floor(low * 1000) / 10:.1f}%–{math.ceil(high * 1000) / 10:.1f}%"


def _utc(ts: Optional[float]) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ts)) if ts else ""


def _hm(ts: float) -> str:
    return time.strftime("%H:%M", time.gmtime(ts))


def _duration(seconds: float) -> str:
    """``45s``, ``10min``, ``2h``, ``1h30min``, ``3d``: how long ago, how long a window is."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}min"
    if seconds < 86400:
        hours, minutes = divmod(seconds // 60, 60)
        return f"{hours}h{minutes}min" if minutes else f"{hours}h"
    return f"{seconds // 86400}d"
