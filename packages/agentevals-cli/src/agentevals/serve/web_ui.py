"""The web UI of ``serve``: server-rendered pages over the session store, no JavaScript, no network.

    /                     sessions as they arrive (refreshes itself), filters by text, status and result
    /sessions/{id}        results with reasons, expected vs actual trajectory, the conversation
    /compare?a=…&b=…      two sessions' results side by side
    /trend?metric=…       a metric's score over the sessions, oldest first (an SVG chart, no script)
    /runs…                the run store's runs: list, one run, a case, compare two, a metric's trend
                          (``web_runs``)
    /review               the cases of a run to label first, and why (``web_review``)
    /upload               evaluate a trace file from the browser, recorded as a run (``web_upload``)
    POST …/label, …/evalset  on a session and a run's case: a human label, a golden case (``web_golden``)
    /live…                continuous evaluation: pulled sources, skip counters, rolling pass rates with
                          their interval, alerts, judge spend (``web_live``)

Everything from a trace is untrusted: templates autoescape, and pages are served with a
Content-Security-Policy that allows no script at all (nor inline styles). The session pages read only
the ``SessionStore`` interface (and the eval sets, for the expected trajectory); the run pages read the
``RunStore`` (``ctx.runs``).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, Optional

import jinja2
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response

from ..__about__ import __version__
from ..core.redact import redact
from ..protocol import InvocationData
from ..results._transcript import transcript
from . import operations
from ._csrf import CSRF_COOKIE
from .web_golden import add_golden_pages, session_forms
from .web_live import add_live_pages
from .web_review import add_review_pages
from .web_runs import add_run_pages, trajectory_rows
from .web_upload import add_upload_pages

__all__ = ["CSP", "add_web_ui", "session_values"]

CSP = ("default-src 'none'; style-src 'self'; img-src data:; form-action 'self'; base-uri 'none'; "
       "frame-ancestors 'none'")
_HERE = Path(__file__).parent / "ui"


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(_HERE), autoescape=True,
                             undefined=jinja2.ChainableUndefined)
    env.filters["when"] = lambda ts: time.strftime("%H:%M:%S", time.localtime(ts)) if ts else ""
    # ISO 8601 UTC from the run store → "2026-01-02 03:04:05"
    env.filters["iso"] = lambda text: str(text)[:19].replace("T", " ") if text else ""
    return env


def add_web_ui(app: FastAPI, ctx: Any) -> None:
    """Add the UI routes to the API app (``ctx`` is its ``ApiContext``)."""
    env = _environment()

    def page(name: str, request: Request, http_status: int = 200, **values: Any) -> HTMLResponse:
        nonce, fresh = ctx.csrf.nonce(request.cookies.get(CSRF_COOKIE))
        html = env.get_template(name).render(root=str(request.scope.get("root_path", "")).rstrip("/"),
                                             version=__version__, section=_section(request.url.path),
                                             csrf_field=ctx.csrf.field(nonce), **values)
        # Trace text is the agent's: keys and tokens in it are redacted as in every report.
        response = HTMLResponse(redact(html), status_code=http_status, headers=_SECURITY_HEADERS)
        if fresh:  # the cookie half of the CSRF token that a form on this page carries ({{ csrf_field }})
            ctx.csrf.set_cookie(response, nonce)
        return response

    @app.get("/ui/app.css", include_in_schema=False)
    async def stylesheet() -> Response:
        return Response((_HERE / "app.css").read_bytes(), media_type="text/css", headers=_SECURITY_HEADERS)

    @app.get("/", include_in_schema=False)
    async def sessions(request: Request, q: str = "", status: str = "", result: str = "") -> HTMLResponse:
        rows = [*ctx.assembler.open_sessions()[:100], *(r.summary() for r in ctx.store.list(limit=500))]
        needle = q.strip().lower()
        rows = [r for r in rows
                if (not status or r["status"] == status)
                and (not result or result in (r.get("metrics") or {}).values())
                and (not needle or needle in r["session_id"].lower() or needle in str(r.get("eval_id") or "").lower())]
        return page("sessions.html", request, sessions=rows, q=q, status=status, result=result, refresh=5,
                    counters=ctx.assembler.stats(), otlp=ctx.otlp)

    @app.get("/sessions/{session_id:path}", include_in_schema=False)
    async def session(request: Request, session_id: str) -> HTMLResponse:
        record = ctx.store.get(session_id)
        if record is None:
            return page("sessions.html", request, 404, sessions=[], q=session_id, status="", result="", refresh=0,
                        counters=ctx.assembler.stats(), otlp=ctx.otlp)
        golden = await asyncio.to_thread(session_forms, ctx, request, record)
        return page("session.html", request, **session_values(ctx, record), golden=golden)

    @app.get("/compare", include_in_schema=False)
    async def compare(request: Request, a: str = "", b: str = "") -> HTMLResponse:
        choices = [r.session_id for r in ctx.store.list(limit=500) if r.result is not None]
        left, right = (ctx.store.get(a) if a else None), (ctx.store.get(b) if b else None)
        rows = (operations.compare_sessions(left, right)
                if left and right and left.result and right.result else [])
        return page("compare.html", request, choices=choices, a=a, b=b, rows=rows, refresh=0)


    @app.get("/trend", include_in_schema=False)
    async def trend(request: Request, metric: str = "") -> HTMLResponse:
        records = [r for r in ctx.store.list(limit=500) if r.result is not None][::-1]  # oldest first
        metrics = sorted({m.name for r in records for m in r.result.metrics if m.score is not None})
        metric = metric or (metrics[0] if metrics else "")
        scored = [(r, m) for r in records for m in r.result.metrics if m.name == metric and m.score is not None]
        width, height, pad = 720, 200, 12
        step = (width - 2 * pad) / max(1, len(scored) - 1)
        points = [{"x": round(pad + i * step, 1), "y": round(height - pad - m.score * (height - 2 * pad), 1),
                   "score": m.score, "status": m.status.value, "session_id": r.session_id,
                   "received_at": r.received_at} for i, (r, m) in enumerate(scored)]
        return page("trend.html", request, metrics=metrics, metric=metric, points=points, width=width,
                    height=height, pad=pad, refresh=0)

    add_run_pages(app, ctx, page)
    add_live_pages(app, ctx, page)
    add_review_pages(app, ctx, page)
    add_upload_pages(app, ctx, page)
    add_golden_pages(app, ctx, page)


def session_values(ctx: Any, record: Any) -> dict[str, Any]:
    """What ``session.html`` shows of ``record`` (a ``SessionRecord``) besides the golden forms."""
    turns = transcript([InvocationData.model_validate(i) for i in record.invocations], _expected(record, ctx.settings))
    return {"record": record, "result": record.result, "turns": turns, "trajectory": trajectory_rows(turns),
            "refresh": 0}


# same-origin, not no-referrer: under no-referrer a browser posts the UI's own forms with ``Origin: null``,
# which the guard refuses as cross-site; other sites still get no Referer (session ids stay here).
_SECURITY_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                     "Referrer-Policy": "same-origin", "Cache-Control": "no-store"}


def _section(path: str) -> str:
    """Which part of the navigation a page belongs to."""
    if path == "/live" or path.startswith("/live/"):
        return "live"
    if path in ("/review", "/upload"):
        return path[1:]
    return "runs" if path == "/runs" or path.startswith("/runs/") else "sessions"


def _expected(record: Any, settings: Any) -> Optional[list[Any]]:
    """The turns of the eval case the session matched (for the expected trajectory), or None."""
    result = record.result
    if not (result and result.eval_id and settings and record.eval_set_id in settings.eval_sets):
        return None
    case = next((c for c in settings.eval_sets[record.eval_set_id].eval_cases if c.eval_id == result.eval_id), None)
    return case.conversation if case is not None else None
