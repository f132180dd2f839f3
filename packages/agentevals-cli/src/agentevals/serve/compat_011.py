"""agentevals-cli 0.11's shapes, built from our results, for its HTTP API and MCP clients.

The rule (docs/upgrading.md, "Live side"): a route or tool both releases have answers with **both**
releases' keys — ours as documented, 0.11's beside them (camelCase on HTTP, as 0.11's models had,
snake_case in MCP tools) — so a 0.11 client and a current one read the same answer. Routes only 0.11
had are served at their 0.11 paths by ``compat_routes``; the two that cannot come back (the debug
bundle and the Postgres run queue) answer ``410 Gone`` with one line naming what replaces them.

    legacy_run(run)          # 0.11's RunResult: {"traceResults": [...], "errors": [...], "runId": ...}
    metric_fields(entry)     # 0.11's MetricInfo fields for one of ``operations.list_metrics()``
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any, Optional

from ..core._names import snake_case
from ..report.legacy import legacy_keys
from ..results import RunResult

__all__ = ["RUN_FIELDS_011", "camel_keys", "config_options", "legacy_run", "mcp_evaluate_traces", "mcp_session_results",
           "metric_fields", "to_camel"]

log = logging.getLogger(__name__)

_PAYLOAD_KEYS = frozenset({"args", "arguments", "response", "result", "output"})
"""Values under these keys are user data (tool arguments, tool results): 0.11 left their keys alone."""

_CATEGORIES = {
    "tool_trajectory_avg_score": "trajectory", "response_match_score": "response",
    "response_evaluation_score": "response", "final_response_match_v2": "response",
    "rubric_based_final_response_quality_v1": "quality", "rubric_based_tool_use_quality_v1": "quality",
    "hallucinations_v1": "safety", "safety_v1": "safety", "per_turn_user_simulator_quality_v1": "simulation",
    "multi_turn_task_success_v1": "multi-turn", "multi_turn_trajectory_quality_v1": "multi-turn",
    "multi_turn_tool_use_quality_v1": "multi-turn", "rubric_based_multi_turn_trajectory_quality_v1": "multi-turn",
}
"""0.11's ``builtin_metrics._METRIC_CATEGORIES`` (anything else was ``other``)."""
_NEEDS_GCP = {"response_evaluation_score", "safety_v1", "multi_turn_task_success_v1",
              "multi_turn_trajectory_quality_v1", "multi_turn_tool_use_quality_v1"}
"""0.11's ``METRICS_NEEDING_GCP`` (Vertex AI)."""


def to_camel(name: str) -> str:
    """``eval_set_id`` → ``evalSetId`` (pydantic's ``to_camel``, which 0.11's models used)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def camel_keys(value: Any) -> Any:
    """``value`` with its keys in camelCase, except under payload keys (0.11's ``_camel_keys``)."""
    if isinstance(value, dict):
        return {to_camel(k): (v if k in _PAYLOAD_KEYS else camel_keys(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [camel_keys(v) for v in value]
    return value


def config_options(config: dict[str, Any]) -> dict[str, Any]:
    """An evaluation's JSON ``config`` with 0.11's spelling read: camelCase keys (``groupBy``), camelCase
    evaluator entries (``judgeModel``, ``trajectoryMatchType``), ``maxConcurrentEvals`` → ``concurrency``
    (our one bound on evaluations in flight) and ``maxConcurrentTraces`` ignored with a warning (the engine
    has one pool, so traces are not bounded apart)."""
    options = {snake_case(k): v for k, v in config.items()}
    if "max_concurrent_traces" in options:
        log.warning("config: maxConcurrentTraces (agentevals 0.11) is ignored: evaluations share one pool, "
                    "bounded by maxConcurrentEvals (concurrency)")
        options.pop("max_concurrent_traces")
    if "max_concurrent_evals" in options:
        options.setdefault("concurrency", options.pop("max_concurrent_evals"))
    if isinstance(options.get("evaluators"), list):
        options["evaluators"] = [
            {snake_case(k): v for k, v in e.items() if v is not None and v != ""}  # 0.11: null or "" = not set
            if isinstance(e, dict) else e for e in options["evaluators"]]
    return options


def adk_invocation(inv: dict[str, Any]) -> dict[str, Any]:
    """One of our turns (``InvocationData`` as JSON) as an ADK invocation (snake_case), as 0.11's eval sets,
    ``create-eval-set`` and ``/api/convert`` carried it."""
    steps = inv.get("intermediate_steps") or {}
    out: dict[str, Any] = {"invocation_id": inv.get("invocation_id") or "",
                           "user_content": {"parts": [{"text": inv.get("user_content") or ""}], "role": "user"}}
    if inv.get("final_response") is not None:
        out["final_response"] = {"parts": [{"text": inv["final_response"]}], "role": "model"}
    out["intermediate_data"] = {
        "tool_uses": [{k: v for k, v in (("id", c.get("id")), ("args", c.get("args") or {}), ("name", c.get("name")))
                       if v is not None} for c in steps.get("tool_calls") or []],
        "tool_responses": [{k: v for k, v in (("id", r.get("id")), ("name", r.get("name")),
                                              ("response", r.get("response", r.get("output")))) if v is not None}
                           for r in steps.get("tool_responses") or []],
        "intermediate_responses": []}
    return out


def with_camel(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    """``data`` with the camelCase twin of each of ``keys`` (``eval_set_id`` → ``evalSetId``) beside it."""
    return {**data, **{to_camel(k): data.get(k) for k in keys}}


def otlp_ports(otlp: dict[str, Any]) -> dict[str, Any]:
    """0.11's ``otlp.{httpPort, grpcPort}`` from our receiver addresses (``http://host:4318``, ``host:4317``)."""
    def port(address: Optional[str]) -> Optional[int]:
        match = re.search(r":(\d+)/*$", address or "")
        return int(match.group(1)) if match else None

    return {"httpPort": port(otlp.get("http")), "grpcPort": port(otlp.get("grpc"))}


def _session_name(source: str) -> Optional[str]:
    """0.11's session name from an uploaded file's name (``trace_x.json`` → ``x``), or None."""
    base = re.sub(r"\.(jsonl?|json)$", "", source.replace("\\", "/").rsplit("/", 1)[-1], flags=re.IGNORECASE)
    for prefix in ("trace_", "agentevals_"):
        if base.startswith(prefix):
            return base[len(prefix):]
    return None


def convert_answer(converted: dict[str, Any], group_by: str = "trace") -> dict[str, Any]:
    """``/api/convert``'s answer with 0.11's keys beside ours: per entry ``traceId``, ``traceIds``,
    ``metadata``, and each invocation's ADK form in camelCase (``userContent``, ``intermediateData``, …).
    ``group_by=conversation`` (0.11) merges the traces of one conversation into one entry; ``auto`` does
    the same, as ``run --group-by auto`` groups traces that share a session id (a trace alone in its
    conversation is its own entry either way)."""
    entries: list[dict[str, Any]] = []
    groups: dict[str, dict[str, Any]] = {}
    for trace in converted["traces"]:
        key = trace.get("session_id") if group_by in ("conversation", "auto") else None
        if key and key in groups:
            group = groups[key]
            group["traceIds"].append(trace["trace_id"])
            group["invocations"].extend(trace["invocations"])
            group["warnings"].extend(trace["warnings"])
            continue
        entry = {**trace, "invocations": list(trace["invocations"]), "warnings": list(trace["warnings"]),
                 "traceId": trace["trace_id"], "traceIds": [trace["trace_id"]]}
        entries.append(entry)
        if key:
            groups[key] = entry
    for entry in entries:
        invocations = entry["invocations"]
        entry["invocations"] = [{**inv, **camel_keys(adk_invocation(inv))} for inv in invocations]
        entry["metadata"] = {
            "agentName": entry.get("agent_name"), "agentId": None, "model": None, "responseModel": None,
            "provider": None, "schemaVersion": None, "startTime": None,
            "userInputPreview": (invocations[0].get("user_content") or "")[:200] if invocations else None,
            "finalOutputPreview": (invocations[-1].get("final_response") or "")[:200] if invocations else None,
            "sessionName": _session_name(entry.get("source") or ""),
        }
    return {**converted, "traces": entries}


RUN_FIELDS_011 = frozenset({"run_id", "status", "spec", "attempt", "worker_id", "error", "summary", "created_at",
                            "started_at", "finished_at", "cancel_requested"})
"""0.11's ``Run`` record (``GET /api/runs``, ``GET /api/runs/{id}``)."""


RUN_STATUSES_011 = {"queued": (), "running": ("running", "live"), "succeeded": ("completed",),
                    "failed": ("failed", "aborted"), "cancelled": ("interrupted",)}
"""0.11's run statuses (``GET /api/runs?status=``) and the statuses of ours each stands for."""


def run_status_filter(values: Sequence[str]) -> Optional[tuple[str, ...]]:
    """Our statuses for ``GET /api/runs?status=…`` values, 0.11's (``succeeded`` = ``completed``, ``running``
    = ``running`` or ``live``) or ours;
    None when a value is neither (the route answers 400). An empty result matches no run (``queued``)."""
    from ..store import RUN_STATUSES

    out: list[str] = []
    for value in values:
        value = value.strip().lower()
        if value in RUN_STATUSES_011:  # first: 0.11's `running` covers serve's `live` run, `failed` an aborted one
            out.extend(RUN_STATUSES_011[value])
        elif value in RUN_STATUSES:
            out.append(value)
        else:
            return None
    return tuple(dict.fromkeys(out))


def with_run_fields(run: dict[str, Any]) -> dict[str, Any]:
    """A stored run (``runs list`` entry or ``runs show`` document) with 0.11's ``Run`` fields it lacks
    (``spec``, ``attempt``, ``created_at``, ``summary``, …; 0.11's run routes answered in snake_case).
    ``status`` keeps our values (``completed``, ``live``, ``interrupted``, …) where we have one."""
    complete = run.get("complete", run.get("status") in (None, "completed", "live"))
    sources = sorted({s for c in run.get("cases", []) for s in c.get("sources", [])})
    legacy: dict[str, Any] = {
        "status": "succeeded" if complete else "failed",
        "spec": {"approach": "trace_replay",
                 "target": {"kind": "uploaded", "inline": None, "base_url": None, "trace_id": None,
                            "trace_format": None, "trace_count": len(sources) or None, "trace_files": sources or None},
                 "eval_set": None, "eval_config": {}, "sinks": [], "context": {}, "credential_refs": None},
        "attempt": 1, "worker_id": None, "error": run.get("incomplete"), "summary": run.get("totals"),
        "created_at": run.get("started_at"), "started_at": run.get("started_at"),
        "finished_at": run.get("finished_at"), "cancel_requested": False,
    }
    return {**legacy, **run}


def metric_fields(entry: dict[str, Any]) -> dict[str, Any]:
    """0.11's ``MetricInfo`` fields (snake_case) for one entry of ``operations.list_metrics()``."""
    name = entry["name"]
    rubrics = name.startswith("rubric_based_")
    gcp = name in _NEEDS_GCP
    return {"name": name, "category": _CATEGORIES.get(name, "other"), "description": entry.get("description") or "",
            "requires_eval_set": bool(entry.get("requires_eval_set")),
            "requires_llm": bool(entry.get("requires_judge")) and not gcp, "requires_gcp": gcp,
            "requires_rubrics": rubrics, "working": True}


def http_metric(entry: dict[str, Any]) -> dict[str, Any]:
    """A ``/api/metrics`` entry: ours, plus 0.11's camelCase keys (``requiresLLM``, ``requiresGCP`` as 0.11 spelt them)."""
    fields = metric_fields(entry)
    legacy = {"category": fields["category"], "requiresEvalSet": fields["requires_eval_set"],
              "requiresLLM": fields["requires_llm"], "requiresGCP": fields["requires_gcp"],
              "requiresRubrics": fields["requires_rubrics"], "working": True}
    return {**entry, **legacy}


def _legacy_trace(trace: dict[str, Any], case: Any) -> dict[str, Any]:
    """One 0.11 ``TraceResult`` (snake_case, before camelCasing) from our legacy trace row and its case."""
    return {
        "trace_id": trace["trace_id"],
        "num_invocations": trace["num_invocations"],
        "metric_results": [{"metric_name": m["metric_name"], "score": m["score"], "eval_status": m["eval_status"],
                            "per_invocation_scores": m["per_invocation_scores"],
                            "per_invocation_statuses": [], "error": m["error"],
                            "error_type": "evaluator_error" if m["error"] else None,
                            "details": m.get("details"), "duration_ms": m["duration_ms"]}
                           for m in trace["metrics"]],
        "conversion_warnings": trace["conversion_warnings"],
        "performance_metrics": trace.get("performance_metrics"),
        "service_name": None,
        "agent_name": None,
        "trace_ids": list(case.trace_ids),
        "conversation_id": case.case_id if len(case.trace_ids) > 1 else None,
        "group_key": case.case_id,
        "eval_case_id": case.eval_id,
        "eval_case_match": case.match_reason,
        "turn_refs": [],
    }


def legacy_run(run: RunResult) -> dict[str, Any]:
    """0.11's ``RunResult`` in camelCase: ``traceResults[].metricResults[].{metricName, evalStatus, score}``,
    ``errors``, ``performanceMetrics``, ``runId``."""
    keys = legacy_keys(run)
    return camel_keys({
        "trace_results": [_legacy_trace(t, c) for t, c in zip(keys["traces"], run.cases, strict=True)],
        "errors": keys["errors"],
        "performance_metrics": keys.get("performance_metrics"),
        "run_id": run.run_id,
    })


def stream_frame(name: str, data: dict[str, Any], *, case: Any = None, run: Optional[RunResult] = None) -> dict[str, Any]:
    """One ``/api/evaluate/stream`` frame's data with 0.11's keys beside ours: a finished case also carries
    ``traceProgress: {traceId, partialResult}``, the end ``done: true`` and ``result`` (0.11's RunResult).
    (0.11's UI reads every ``data:`` line and looks for ``error``, ``done``, ``traceProgress``.)"""
    if name == "case" and case is not None:
        trace = legacy_run(RunResult(cases=[case]))["traceResults"][0]
        return {**data, "traceProgress": {"traceId": trace["traceId"], "status": "done", "partialResult": trace}}
    if name == "done" and run is not None:
        return {**data, "done": True, "result": legacy_run(run)}
    return data


def progress_frame(message: str) -> tuple[str, dict[str, Any]]:
    """0.11's ``SSEProgressEvent``: ``{"message": …}`` ("Evaluating N traces...", "Trace i/N: id...",
    "Evaluation complete")."""
    return "progress", {"message": message}


def performance_frame(case: Any) -> tuple[str, dict[str, Any]]:
    """0.11's ``event: performance_metrics`` frame for a case: its trace id, performance metrics and
    metadata in camelCase (0.11 sent it before evaluating the group; here it precedes the case's frame)."""
    trace = legacy_run(RunResult(cases=[case]))["traceResults"][0]
    users = [u for u in case.user_contents if u]
    metadata = {"agentName": None, "agentId": None, "serviceName": None, "model": None, "responseModel": None,
                "provider": None, "schemaVersion": None, "startTime": None,
                "userInputPreview": users[0][:200] if users else None, "finalOutputPreview": None}
    return "performance_metrics", {"traceId": trace["traceId"], "performanceMetrics": trace["performanceMetrics"],
                                   "traceMetadata": metadata}


def mcp_evaluate_traces(run: RunResult) -> dict[str, Any]:
    """0.11's ``evaluate_traces`` tool result: ``passed``, ``traces[].metrics[].{metric, score, status, error}``,
    ``errors`` (None when empty, as 0.11 wrote it)."""
    keys = legacy_keys(run)
    traces = [{"trace_id": t["trace_id"], "num_invocations": t["num_invocations"],
               "metrics": [{"metric": m["metric_name"], "score": m["score"], "status": m["eval_status"],
                            "error": m["error"] or None} for m in t["metrics"]],
               "warnings": t["conversion_warnings"] or None} for t in keys["traces"]]
    return {"passed": all(m["status"] != "FAILED" for t in traces for m in t["metrics"]),
            "traces": traces, "errors": keys["errors"] or None}


def session_results(run: RunResult, session_ids: list[str]) -> list[dict[str, Any]]:
    """0.11's ``evaluate-sessions`` results (snake_case keys; ``metric_results`` entries in camelCase as
    0.11 built them), one per session in ``session_ids`` order."""
    keys = legacy_keys(run)
    by_id: dict[str, tuple[dict[str, Any], Any]] = {}
    for trace, case in zip(keys["traces"], run.cases, strict=True):
        for tid in (case.case_id, *case.trace_ids):
            by_id.setdefault(tid, (trace, case))
    out: list[dict[str, Any]] = []
    for sid in session_ids:
        if sid not in by_id:
            out.append({"session_id": sid, "trace_id": None, "num_invocations": None, "metric_results": None,
                        "error": "No trace results"})
            continue
        trace, case = by_id[sid]
        out.append({"session_id": sid, "trace_id": trace["trace_id"], "num_invocations": trace["num_invocations"],
                    "metric_results": [{"metricName": m["metric_name"], "score": m["score"],
                                        "evalStatus": m["eval_status"], "error": m["error"],
                                        "perInvocationScores": m["per_invocation_scores"],
                                        "details": m.get("details")} for m in trace["metrics"]],
                    "error": None})
    return out


def mcp_session_results(run: RunResult, *, golden_session_id: str, eval_set_id: str,
                        session_ids: list[str]) -> dict[str, Any]:
    """0.11's ``evaluate_sessions`` tool result: ``golden_session_id``, ``eval_set_id``, ``results``."""
    return {"golden_session_id": golden_session_id, "eval_set_id": eval_set_id,
            "results": session_results(run, session_ids)}


def mcp_summary(summary: dict[str, Any], record: Any) -> dict[str, Any]:
    """0.11's ``summarize_session`` fields for ``operations.summarize(record)``: ``num_spans``,
    ``num_invocations``, ``invocations[].{user, response, tool_calls[].{tool, args}}``."""
    return {"num_spans": record.span_count, "num_invocations": len(summary["turns"]),
            "invocations": [{"user": _text(t["user"]), "response": _text(t["response"]),
                             "tool_calls": [{"tool": c["name"], "args": c["args"] if isinstance(c["args"], dict) else {}}
                                            for c in t["tool_calls"]]} for t in summary["turns"]]}


def mcp_session_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A ``list_sessions`` entry with 0.11's ``is_complete`` and ``started_at`` (ISO 8601) beside ours."""
    return {**entry, "is_complete": entry.get("status") != "collecting",
            "started_at": _iso(entry.get("received_at"))}


def _iso(value: Optional[float | str]) -> str:
    from datetime import datetime, timezone

    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, timezone.utc).isoformat()
    return value or ""


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)
