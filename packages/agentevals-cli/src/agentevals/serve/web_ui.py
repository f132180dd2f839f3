"""The web UI of ``serve``: server-rendered pages over the session store, no JavaScript, no network.

    /                     sessions as they arrive (refreshes itself), filters by text, status and result; each
                          with its model, tokens, latency and cost (``_figures``) and why a result failed
    /sessions/{id}        figures, results with reasons, expected vs actual trajectory, the conversation, and a
                          link to its case in the live run
    /compare?a=…&b=…      two sessions' results side by side
    /trend?metric=…       a metric's score, latency and tokens over the sessions, oldest first (SVG charts with
                          axes, no script: ``web_charts``)
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
import logging
from pathlib import Path
from typing import Any, Optional

import jinja2
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response

from ..__about__ import __version__
from ..core.redact import redact
from ..errors import first_line
from ..protocol import InvocationData
from ..report._format import reason_lines
from ..results._transcript import transcript
from . import operations
from ._csrf import CSRF_COOKIE
from ._figures import case_figures, record_figures
from .web_charts import clock, session_charts
from .web_golden import add_golden_pages, session_forms
from .web_live import add_live_pages
from .web_review import add_review_pages
from .web_runs import add_run_pages, trajectory_rows
from .web_upload import add_upload_pages

__all__ = ["CSP", "add_web_ui", "session_values"]

log = logging.getLogger(__name__)

CSP = ("default-src 'none'; style-src 'self'; img-src data:; form-action 'self'; base-uri 'none'; "
       "frame-ancestors 'none'")
_HERE = Path(__file__).parent / "ui"


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(_HERE), autoescape=True,
                             undefined=jinja2.ChainableUndefined)
    env.filters["when"] = clock
    # ISO 8601 UTC from the run store → "2026-01-02 03:04:05"
    env.filters["iso"] = lambda text: str(text)[:19].replace("T", " ") if text else ""
    env.filters["reasons"] = reason_lines  # why a row is not PASSED, the table report's lines
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
        needle = q.strip().lower()

        def shown(row: dict[str, Any]) -> bool:
            return ((not status or row["status"] == status)
                    and (not result or result in (row.get("metrics") or {}).values())
                    and (not needle or needle in row["session_id"].lower()
                         or needle in str(row.get("eval_id") or "").lower()))

        # filtered first: only the rows shown are given their figures and reasons (up to 600 otherwise)
        stored = [(r, summary) for r in ctx.store.list(limit=500) if shown(summary := r.summary())]
        live = [r for r in ctx.assembler.open_sessions()[:100] if shown(r)]
        rows = [*({**r, "figures": case_figures(None).cells()} for r in live),
                *({**summary, "figures": record_figures(r).cells(), "why": _why(r)} for r, summary in stored)]
        return page("sessions.html", request, sessions=rows, q=q, status=status, result=result, refresh=5,
                    counters=ctx.assembler.stats(), otlp=ctx.otlp)

    @app.get("/sessions/{session_id:path}", include_in_schema=False)
    async def session(request: Request, session_id: str) -> HTMLResponse:
        record = ctx.store.get(session_id)
        if record is None:
            return page("sessions.html", request, 404, sessions=[], q=session_id, status="", result="", refresh=0,
                        counters=ctx.assembler.stats(), otlp=ctx.otlp)
        values = await asyncio.to_thread(session_values, ctx, record, request)
        return page("session.html", request, **values)

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
        return page("trend.html", request, metrics=metrics, metric=metric, points=[
            {"score": m.score, "status": m.status.value, "session_id": r.session_id, "received_at": r.received_at}
            for r, m in scored], refresh=0, **session_charts(records, scored, metric))

    add_run_pages(app, ctx, page)
    add_live_pages(app, ctx, page)
    add_review_pages(app, ctx, page)
    add_upload_pages(app, ctx, page)
    add_golden_pages(app, ctx, page)


def session_values(ctx: Any, record: Any, request: Request, state: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """What ``session.html`` shows of ``record`` (a ``SessionRecord``): its conversation and trajectory, figures,
    the link to its case in the live run and the golden forms (``state``: a refused form's; reads the run store,
    once: call it on a worker thread)."""
    turns = transcript([InvocationData.model_validate(i) for i in record.invocations], _expected(record, ctx.settings))
    figures = record_figures(record)
    index, problem = _live_index(ctx, record.session_id)
    return {"record": record, "result": record.result, "turns": turns, "trajectory": trajectory_rows(turns),
            "refresh": 0, "figures": figures.cells(), "figures_turns": figures.turns,
            "live_case": None if index is None else f"/runs/{ctx.live_run}/cases/{index}",
            "golden": session_forms(ctx, request, record, state, index=index, problem=problem)}


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


def _why(record: Any) -> list[str]:
    """``metric: its reason lines on one line`` for each result of a session that is not PASSED (the list's why)."""
    result = record.result
    rows = [(m.name, reason_lines(m)) for m in (result.metrics if result else ())]
    return [f"{name}: " + " ".join(" ".join(line.removeprefix("reason: ").split()) for line in lines)
            for name, lines in rows if lines]


def _live_index(ctx: Any, session_id: str) -> tuple[Optional[int], str]:
    """Where the session's case is in this server's live run: ``(index or None, "")``, or ``(None, why)`` when
    the run store cannot be read (locked, gone: the session page still renders, saying so)."""
    if ctx.runs is None or not ctx.live_run:
        return None, ""
    try:
        return ctx.runs.case_index(ctx.live_run, session_id), ""
    except Exception as exc:
        log.warning("web UI: run store: %s: %s", type(exc).__name__, first_line(exc))
        return None, f"The run store could not be read: {type(exc).__name__}: {first_line(exc)}"
