"""The run pages of the web UI: the run store (the runs ``agentevals run`` and ``serve`` recorded).

    /runs                          the runs, newest first; filters by text, run status and result
    /runs/{run}                    totals, latency/token percentiles and charts over the cases, then the cases
                                   (failures first) with scores, reasons, model, tokens, latency and cost
    /runs/{run}/cases/{index}      one case: figures, results, expected vs actual trajectory, the conversation
                                   (a live run's case links to its session)
    /runs/compare?a=…&b=…          regressions, fixes and score changes from run A to run B (without a and b:
                                   the two newest runs, compared at once)
    /runs/trend?metric=…           a metric's pass rate and mean score, and latency and tokens, over the runs

``{run}``, ``a`` and ``b`` take what ``agentevals runs show`` takes: an id, a unique prefix or ``latest``.
Without a run store (``serve --no-store``) the pages say so; an unknown run is a 404 page.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse

from ..errors import StoreError, first_line
from ..report._format import fmt_num
from ..results import CaseResult, MetricResult, Status, case_status
from ..results.intervals import format_rate_interval, format_totals_rate
from ._figures import Figures, case_figures
from ._input import refuse_long_ref
from .web_charts import run_charts, runs_charts
from .web_review import queue_nav

if TYPE_CHECKING:
    from ..store import RunRecord, RunStore

__all__ = ["add_run_pages", "case_values", "load_case", "store_page", "trajectory_rows"]

log = logging.getLogger(__name__)

_MAX_RUNS = 500
"""Runs listed (and offered to compare); the CLI's ``runs list -n`` reaches further back."""
_MAX_ROWS = 500
"""Cases listed on a run's page; the filters narrow the rest down."""
_MAX_FIGURES = 500
"""Cases of each run read for the latency and token percentiles of ``/runs/trend`` (the first ones: each is a
stored JSON document to parse, and the page reads up to 500 runs)."""
_FAILING = ("FAILED", "ERROR")
_GROWING = ("running", "live")
"""Run statuses whose pages refresh themselves: cases are still being added."""

Page = Callable[..., HTMLResponse]
_NO_STORE = "No run store: this server records no runs (serve --no-store), so there are none to show."


async def store_page(ctx: Any, page: Page, request: Request, title: str,
                     build: Callable[[RunStore], tuple[str, dict[str, Any]]], *, missing_status: int = 200,
                     no_store: Optional[str] = None) -> HTMLResponse:
    """A page read from ``ctx.runs``: ``build(store)`` → (template, values), run on a worker thread (reading a large
    run must not stall the OTLP receivers on the event loop; the store's connection is shared under a lock). No
    store: ``no_store`` (or the /runs wording) with ``missing_status``; an unknown run (StoreError): 404; the
    database itself (locked, gone): 503 with one line, never a traceback::

        return await store_page(ctx, page, request, "Runs", lambda store: ("runs.html", {...}))
    """
    store: Optional[RunStore] = ctx.runs
    if store is None:
        return page("message.html", request, missing_status, title=title, message=no_store or _NO_STORE)
    try:
        template, values = await asyncio.to_thread(build, store)
    except StoreError as exc:  # an unknown or ambiguous run id
        return page("message.html", request, 404, title=title, message=str(exc))
    except Exception as exc:  # the database itself (locked, gone): one line, never a traceback
        log.warning("web UI: run store %s: %s: %s", store.location, type(exc).__name__, first_line(exc))
        return page("message.html", request, 503, title=title,
                    message=f"The run store could not be read: {type(exc).__name__}: {first_line(exc)}")
    return page(template, request, **values)


def add_run_pages(app: FastAPI, ctx: Any, page: Page) -> None:
    """Add the ``/runs`` pages; ``ctx.runs`` is the ``RunStore`` (or None), ``page`` renders a template."""

    async def render(request: Request, title: str, build: Callable[[RunStore], tuple[str, dict[str, Any]]],
                     *, missing_status: int = 200) -> HTMLResponse:
        """``store_page`` with this app's ``ctx`` and ``page``."""
        return await store_page(ctx, page, request, title, build, missing_status=missing_status)

    @app.get("/runs", include_in_schema=False)
    async def runs(request: Request, q: str = "", status: str = "", result: str = "") -> HTMLResponse:
        return await render(request, "Runs", lambda store: ("runs.html", _runs(store, q, status, result)))

    @app.get("/runs/compare", include_in_schema=False)
    async def compare(request: Request, a: str = "", b: str = "") -> HTMLResponse:
        return await render(request, "Compare runs", lambda store: ("runs_compare.html", _compare(store, a, b)))

    @app.get("/runs/trend", include_in_schema=False)
    async def trend(request: Request, metric: str = "", limit: str = "50") -> HTMLResponse:
        return await render(request, "Trend over runs", lambda store: ("runs_trend.html", _trend(store, metric, limit)))

    @app.get("/runs/{run}", include_in_schema=False)
    async def run_page(request: Request, run: str, q: str = "", status: str = "", metric: str = "") -> HTMLResponse:
        return await render(request, "Run", lambda store: ("run.html", _run(store, run, q, status, metric)),
                            missing_status=404)

    @app.get("/runs/{run}/cases/{index}", include_in_schema=False)
    async def case_page(request: Request, run: str, index: str, queue: str = "") -> HTMLResponse:  # a bad index: 404
        from .web_golden import case_forms

        return await render(request, "Case", lambda store: ("run_case.html",
                                                            case_forms(ctx, request, store,
                                                                       case_values(store, run, index, queue))),
                            missing_status=404)


def _runs(store: RunStore, q: str, status: str, result: str) -> dict[str, Any]:
    from ..store import RUN_STATUSES

    rows = [_run_row(store, r) for r in store.list_runs(limit=_MAX_RUNS)]
    needle = q.strip().lower()
    shown = [r for r in rows
             if (not status or r["status"] == status)
             and (not result or (result == "failed") == bool(r["failed"]))
             and (not needle or needle in r["run_id"].lower() or needle in r["command"].lower())]
    # A run still in progress (serve's live run, a batch run in another terminal) keeps growing.
    refresh = 10 if any(r["status"] in _GROWING for r in shown) else 0
    return {"runs": shown, "total": len(rows), "q": q, "status": status, "result": result, "refresh": refresh,
            "statuses": RUN_STATUSES}


def _compare(store: RunStore, a: str, b: str) -> dict[str, Any]:
    from ..results.compare import compare_stored

    refuse_long_ref(a)
    refuse_long_ref(b)
    choices = store.list_runs(limit=_MAX_RUNS)
    if not (a and b):  # preselect the two newest runs, and compare them: "what did my last change do?"
        a = a or (choices[1].run_id if len(choices) > 1 else "")
        b = b or (choices[0].run_id if choices else "")
        if not (a and b) or a == b:
            return {"choices": choices, "comparison": None, "a": a, "b": b}
    comparison, run_a, run_b = compare_stored(store, a, b)
    return {"choices": choices, "a": comparison.baseline, "b": comparison.current, "comparison": comparison,
            "moved": comparison.moved,
            "totals": {"a": _rate(run_a.totals()), "b": _rate(run_b.totals())}}


def _trend(store: RunStore, metric: str, limit: str) -> dict[str, Any]:
    from ..store import case_performance, metric_names, metric_trend

    names = metric_names(store)
    metric = metric or (names[0] if names else "")
    runs = max(1, min(int(limit), _MAX_RUNS)) if limit.strip().isdigit() else 50
    points = metric_trend(store, metric, runs) if metric else []
    figures = {p["run_id"]: [case_figures(pm) for pm in case_performance(store, p["run_id"], limit=_MAX_FIGURES)]
               for p in points}
    return {"metrics": names, "metric": metric, "limit": runs, "max_figures": _MAX_FIGURES, **_chart(points),
            "perf": runs_charts(points, figures)}


def _run(store: RunStore, ref: str, q: str, status: str, metric: str) -> dict[str, Any]:
    refuse_long_ref(ref)
    run_id = store.resolve(ref)
    record = store.get_run(run_id)
    pairs = store.load_cases(run_id)
    run = store.load_run(run_id, cases=pairs)
    totals = run.totals()
    figures = [case_figures(case.performance_metrics, case.metrics) for _, case in pairs]  # once per case
    rows = [_case_row(idx, case, fig) for (idx, case), fig in zip(pairs, figures, strict=True)]
    matching = [r for r in rows if _matches(r, q.strip().lower(), status, metric)]
    matching.sort(key=lambda r: r["status"] not in _FAILING)  # failures first, else run order (stable)
    return {"record": record, "run": run, "totals": totals, "rate": _rate(totals),
            "metric_rates": [(name, e, format_rate_interval(e["passed"], e["evaluated"]))
                             for name, e in totals["metrics"].items()],
            "cases": matching[:_MAX_ROWS], "matching": len(matching), "q": q, "status": status, "metric": metric,
            "statuses": [s.value for s in Status], "refresh": 10 if record.status in _GROWING else 0,
            "perf": run_charts(figures)}


def load_case(store: RunStore, ref: str, index: str) -> tuple[str, int, CaseResult]:
    """``(run id, position, case)`` of a case page's ``{run}`` and ``{index}``; ``StoreError`` when there is none."""
    refuse_long_ref(ref)
    run_id = store.resolve(ref)
    found = store.load_cases(run_id, index=int(index)) if index.isdigit() else []
    if not found:
        raise StoreError(f"run {run_id} has no case #{index}")
    (position, case), = found
    return run_id, position, case


def case_values(store: RunStore, ref: str, index: str, queue: str = "") -> dict[str, Any]:
    """What ``run_case.html`` shows of a stored case (besides the golden forms), ``queue``: the review queue
    it was opened from."""
    from ..report._format import fmt_perf

    run_id, position, case = load_case(store, ref, index)
    turns = case._transcript
    figures = case_figures(case.performance_metrics, case.metrics)
    # serve's live run records each session as a case whose id is the session id: link back to its page.
    session = case.case_id if store.get_run(run_id).options.get("live") else None
    return {"run_id": run_id, "index": position, "case": case, "status": case_status(case).value,
            "metrics": case.metrics, "turns": turns, "trajectory": trajectory_rows(turns),
            "perf": fmt_perf(case.performance_metrics), "figures": figures.cells(), "figures_turns": figures.turns,
            "session": session,
            "queue_nav": queue_nav(store, run_id, position, queue) if queue else None}  # opened from /review


def trajectory_rows(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per turn of a transcript (``agentevals.results._transcript``): the expected tool calls beside the actual
    ones; empty when no turn has an expected one (the case matched no eval case)."""
    if not any("expected_tool_calls" in t for t in turns):
        return []
    rows = []
    for turn in turns:
        expected, actual = turn.get("expected_tool_calls") or [], turn.get("tool_calls") or []
        rows.append({"expected": expected, "actual": actual, "same": expected == actual})
    return rows


def _rate(totals: dict[str, Any]) -> str:
    cases = totals["cases"]
    evaluated = sum(cases.get(s, 0) for s in ("PASSED", *_FAILING))
    return format_rate_interval(cases.get("PASSED", 0), evaluated)  # with its Wilson 95% interval


def _run_row(store: RunStore, record: RunRecord) -> dict[str, Any]:
    """One line of ``/runs``, as ``agentevals runs list`` prints it."""
    from ..store import case_counts

    totals = record.totals
    if totals:
        cases = totals.get("cases", {})
        rate = format_totals_rate(totals)  # with its Wilson 95% interval, as `agentevals runs list` prints it
    else:  # still running (or killed): count what it stored so far
        cases = case_counts(store, record.run_id)
        rate = _rate({"cases": cases})
    return {"run_id": record.run_id, "started_at": record.started_at, "status": record.status,
            "command": record.command, "cases": cases.get("total", 0),
            "failed": sum(cases.get(s, 0) for s in _FAILING), "pass_rate": rate, "exit_code": record.exit_code}


def _case_row(index: int, case: CaseResult, figures: Figures) -> dict[str, Any]:
    """One line of a run's page; ``figures``: the case's ``case_figures`` (the page's charts use them too)."""
    return {"index": index, "case_id": case.case_id, "eval_id": case.eval_id, "status": case_status(case).value,
            "score": case.score, "metrics": [_metric_cell(m) for m in case.metrics], "figures": figures.cells()}


def _metric_cell(m: MetricResult) -> dict[str, Any]:
    from ..report._format import reason_lines

    # The lines the table report prints under the row (one function for both, so the UI says what the CLI says).
    return {"name": m.name, "status": m.status.value, "score": fmt_num(m.score if m.score is not None else m.value),
            "why": "\n".join(reason_lines(m))}


def _matches(row: dict[str, Any], needle: str, status: str, metric: str) -> bool:
    """A case is shown when one of its results has ``status`` (FAILING: failed or error) for ``metric``
    (any when empty), and ``needle`` is in its id, eval id or a reason."""
    def result_ok(cell: dict[str, Any]) -> bool:
        ok_status = not status or (cell["status"] in _FAILING if status == "FAILING" else cell["status"] == status)
        return ok_status and (not metric or cell["name"] == metric)

    if (status or metric) and not any(result_ok(c) for c in row["metrics"]):
        return False
    text = " ".join([row["case_id"], row["eval_id"] or "", *(c["why"] for c in row["metrics"])]).lower()
    return not needle or needle in text


def _chart(points: list[dict[str, Any]]) -> dict[str, Any]:
    """The trend chart: the metric's pass rate and mean score by run (oldest left), 0 at the bottom, 1 at the top."""
    from ._charts import Series, line_chart

    placed = [{**p, "rate": format_rate_interval(p["passed"], p["evaluated"])} for p in points]  # with its interval
    if not placed:
        return {"points": [], "chart": None}
    chart = line_chart([Series("pass rate", "s1", [p["pass_rate"] for p in placed],
                               titles=[f"{p['run_id']}: pass rate {p['rate']}" for p in placed]),
                        Series("mean score", "s2", [p["mean_score"] for p in placed],
                               titles=[f"{p['run_id']}: mean score {fmt_num(p['mean_score'])}" for p in placed])],
                       x_labels=[str(p["started_at"])[5:16].replace("T", " ") for p in placed],
                       x_title="run started, UTC (oldest left)", unit="score", title="pass rate · mean score", y_max=1.0)
    return {"points": placed, "chart": chart}
