"""What the HTTP API and the MCP tools do, once: list metrics, validate, convert, evaluate, summarize,
and read the run store (list, show, summarize, compare runs).

Each function takes file paths (uploads are saved to a temporary folder first) and returns plain JSON
values, so the two front ends stay thin and cannot disagree.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ..engine.consumers import RunConsumer
from ..errors import AgentevalsError
from ..results import RunResult
from .store import SessionRecord

if TYPE_CHECKING:
    from ..store import RunStore

__all__ = ["compare_stored_runs", "convert_files", "evaluate_files", "list_metrics", "list_runs", "run_document",
           "run_summary", "summarize", "validate_eval_set"]


def list_metrics() -> list[dict[str, Any]]:
    """The builtin metrics with what each needs (an eval set, an LLM judge)."""
    from ..evaluators.builtin import METRICS

    out = []
    for name in METRICS.names():
        cls = METRICS.get(name)
        out.append({"name": name, "description": getattr(cls, "description", ""),
                    "requires_eval_set": bool(getattr(cls, "needs_expected", False)),
                    "requires_judge": bool(getattr(cls, "needs_judge", False)),
                    "informational": bool(getattr(cls, "informational", False)),
                    "default_threshold": getattr(cls, "default_threshold", None)})
    return out


def validate_eval_set(path: str | Path) -> dict[str, Any]:
    """``{"valid": true, "eval_set_id", "num_cases", …}`` or ``{"valid": false, "errors": [one line]}``."""
    from ..errors import InputFileError
    from ..evalsets import load_eval_set

    try:
        eval_set = load_eval_set(path)
    except InputFileError as exc:
        return {"valid": False, "errors": [str(exc)]}
    return {"valid": True, "eval_set_id": eval_set.eval_set_id, "name": eval_set.name,
            "num_cases": len(eval_set.eval_cases), "case_ids": [c.eval_id for c in eval_set.eval_cases], "errors": []}


def convert_files(paths: Sequence[str | Path], *, trace_format: Optional[str] = None) -> dict[str, Any]:
    """Traces read and converted exactly as ``run`` does: agent turns per trace, and unreadable inputs."""
    from ..engine import load_traces

    converted, errors = load_traces([str(p) for p in paths], trace_format=trace_format, keep_spans=False)
    return {
        "traces": [{"trace_id": t.trace_id, "source": t.source, "format": t.format, "session_id": t.session_id,
                    "eval_id": t.eval_id, "agent_name": t.agent_name, "warnings": t.warnings,
                    "invocations": [inv.model_dump(mode="json") for inv in t.invocations]} for t in converted],
        "errors": [e.model_dump() for e in errors],
    }


def evaluate_files(paths: Sequence[str | Path], *, consumers: Sequence[RunConsumer] = (),
                   trace_format: Optional[str] = None, **run_options: Any) -> RunResult:
    """``agentevals run`` on files, in a thread of its own (safe to call from an event loop's executor).

    ``run_options`` are those of ``agentevals.api.prepare_run`` (``eval_set``, ``metrics``, ``config``,
    ``threshold``, …) and ``since`` (the window of pull sources whose URI names none, as ``run --since``);
    a bad one raises ``ConfigError`` before anything runs.
    """
    from ..api import prepare_run
    from ..engine.run import run_evaluation

    since = run_options.pop("since", None)
    evaluators, options, eval_set = prepare_run(**run_options)
    if since is not None:
        from ..trace_sources import ReadContext
        from ..trace_sources.pull import check_since

        if check_since(since, flag="since") == "last":
            raise AgentevalsError("since: 'last' needs the run store's watermarks: use `agentevals run --since last` "
                                  "(or serve --pull, which keeps them); give a duration or a time")
        options.read_context = ReadContext(since=since)
    return asyncio.run(run_evaluation([str(p) for p in paths], evaluators, eval_set=eval_set, options=options,
                                      trace_format=trace_format, consumers=consumers))


async def evaluate_files_async(paths: Sequence[str | Path], **kwargs: Any) -> RunResult:
    """``evaluate_files`` on a worker thread, so the caller's event loop keeps serving."""
    return await asyncio.to_thread(evaluate_files, paths, **kwargs)


async def evaluate_against_golden(golden: SessionRecord, records: Sequence[SessionRecord], *,
                                  eval_set_id: Optional[str] = None, **run_options: Any) -> RunResult:
    """Evaluate sessions with the golden session's turns as the expected conversation (one eval case of
    an eval set named ``eval_set_id``, by default ``golden:<session id>``)."""
    from ..api import prepare_run
    from ..engine.run import run_evaluation
    from ..evalsets import EvalCase, EvalSet
    from ..protocol import InvocationData
    from ..traces.model import ConvertedTrace

    if not golden.invocations:
        raise AgentevalsError(f"golden session '{golden.session_id}' has no agent turns")
    case = EvalCase(eval_id=golden.session_id,
                    conversation=[InvocationData.model_validate(i) for i in golden.invocations])
    eval_set = EvalSet(eval_set_id=eval_set_id or f"golden:{golden.session_id}", eval_cases=[case], source=f"session {golden.session_id}")
    traces = [ConvertedTrace(trace_id=r.session_id, source=f"session {r.session_id}", session_id=r.session_id,
                             eval_id=golden.session_id,
                             invocations=[InvocationData.model_validate(i) for i in r.invocations]) for r in records]
    evaluators, options, _ = prepare_run(group_by="conversation", **run_options)
    return await run_evaluation(traces, evaluators, eval_set=eval_set, options=options)


def summarize(record: SessionRecord) -> dict[str, Any]:
    """A session in readable form: each turn's user input, tool calls, response; then the scores."""
    turns = []
    for inv in record.invocations:
        steps = inv.get("intermediate_steps") or {}
        turns.append({
            "user": inv.get("user_content", ""),
            "tool_calls": [{"name": c.get("name"), "args": c.get("args")} for c in steps.get("tool_calls") or []],
            "response": inv.get("final_response"),
        })
    result = record.result
    return {
        **record.summary(),
        "turns": turns,
        "results": [{"name": m.name, "status": m.status.value, "score": m.score, "threshold": m.threshold,
                     "reason": m.reason or m.error or m.reasoning} for m in (result.metrics if result else [])],
        "match_reason": result.match_reason if result else None,
    }


def compare_sessions(left: SessionRecord, right: SessionRecord) -> list[dict[str, Any]]:
    """Two evaluated live sessions' results per metric (``left`` first): ``name``, ``a``, ``b``
    (``MetricResult`` or None when a side lacks the metric) and ``delta`` (b - a when both are scored).
    The UI's ``/compare`` and ``GET /api/sessions/compare`` show it."""
    assert left.result is not None and right.result is not None
    by_a = {m.name: m for m in left.result.metrics}
    by_b = {m.name: m for m in right.result.metrics}
    rows = []
    for name in [*by_a, *(n for n in by_b if n not in by_a)]:
        ma, mb = by_a.get(name), by_b.get(name)
        delta = (mb.score - ma.score) if ma and mb and ma.score is not None and mb.score is not None else None
        rows.append({"name": name, "a": ma, "b": mb, "delta": delta})
    return rows


def list_runs(store: RunStore, limit: int = 20, *, statuses: Sequence[str] = (),
              before: Optional[str] = None) -> list[dict[str, Any]]:
    """The latest runs, newest first, as ``agentevals runs list --json`` prints them (only ``statuses``, and
    those started before ``before``, when given; see ``RunStore.list_runs``)."""
    return [r.as_dict() for r in store.list_runs(limit=max(1, limit), statuses=statuses, before=before)]


def run_document(store: RunStore, ref: str = "latest") -> dict[str, Any]:
    """One stored run (id, unique prefix or ``latest``) as ``agentevals runs show RUN -o json`` prints it.

    Raises ``RunNotFoundError`` for an unknown run, ``StoreError`` for an ambiguous prefix.
    """
    import json

    from ..report import ReportContext, render
    from ..store._store import report_context_values

    run_id = store.resolve(ref)
    record, result = store.get_run(run_id), store.load_run(run_id)
    context = ReportContext(**report_context_values(record, result, store.sources(run_id)))
    return json.loads(render(result, "json", context=context))


_ORDER = {"ERROR": 0, "FAILED": 1, "NOT_EVALUATED": 2, "PASSED": 3, "INFORMATIONAL": 4}


def run_summary(store: RunStore, ref: str = "latest", *, rows: int = 50) -> dict[str, Any]:
    """A stored run in brief, for an agent to read: its record, totals (``intervals``: their 95% intervals), and
    its result rows with the failing ones first (ERROR, FAILED, then NOT_EVALUATED), at most ``rows`` of them."""
    from ..core.redact import redact_obj
    from ..results.intervals import run_intervals
    from ..store._store import incomplete_reason

    run_id = store.resolve(ref)
    record, result = store.get_run(run_id), store.load_run(run_id)
    found: list[dict[str, Any]] = [{"case_id": c.case_id, "eval_id": c.eval_id, "metric": m.name, "status": m.status.value,
              "score": m.score, "threshold": m.threshold, "reason": m.error or m.reason or m.reasoning}
             for c in result.cases for m in c.metrics]
    found.sort(key=lambda r: _ORDER.get(r["status"], 5))  # stable: config order within a status
    return redact_obj({
        "run_id": run_id, "status": record.status, "started_at": record.started_at,
        "finished_at": record.finished_at, "command": record.command, "exit_code": record.exit_code,
        "incomplete": incomplete_reason(record, result), "totals": result.totals(),
        "intervals": run_intervals(result),  # each pass rate's Wilson interval, as `runs show -o json` has them
        "input_errors": [e.model_dump() for e in result.input_errors], "notes": result.notes,
        "rows": found[:max(0, rows)], "rows_left_off": max(0, len(found) - max(0, rows)),
    })


def compare_stored_runs(store: RunStore, a: str, b: str = "latest") -> dict[str, Any]:
    """What changed from stored run ``a`` (the baseline) to ``b``, as ``agentevals runs compare A B --json``."""
    from ..results.compare import compare_stored

    comparison = compare_stored(store, a, b)[0]
    return {**comparison.as_dict(), "headline": comparison.headline()}
