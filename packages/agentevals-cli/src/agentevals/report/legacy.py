"""The keys of agentevals-cli 0.11's ``-o json`` document, built from a run, beside ours in one document.

Scripts written for 0.11 read ``traces[].metrics[].eval_status`` and friends; ``render_json`` adds these
keys to our document so they keep working. Each key keeps its 0.11 meaning:

    {
      "traces": [{"trace_id", "num_invocations", "conversion_warnings",
                  "metrics": [{"metric_name", "score", "eval_status", "per_invocation_scores",
                               "duration_ms", "error", "details"?}],
                  "performance_metrics"?}],
      "errors": ["…"],
      "performance_metrics"?: {"tokens", "latency", "counts", "models", "trace_count"}
    }

``eval_status`` is PASSED, FAILED or NOT_EVALUATED, as in 0.11: an evaluator that could not produce a
score (our ERROR) is NOT_EVALUATED with ``error`` set, and an informational metric (our INFORMATIONAL,
which 0.11 could not compute) is NOT_EVALUATED with no ``score`` (a score is in [0, 1]) and its value in
``details.value``. A NOT_EVALUATED row carries its reason in ``details.reason``. One ``traces`` entry per case (a trace, or the traces of one conversation), whose
``trace_id`` is the case's earliest trace.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Optional

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from ..core._docs import ATTRIBUTE_DOCS
from ..results import CaseResult, MetricResult, RunResult, Status
from ..traces.convert._common import stats

__all__ = ["LegacyDocument", "legacy_keys", "legacy_trace"]


def _object(required: bool = True, **props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, **({"required": list(props)} if required else {})}


_INT: dict[str, Any] = {"type": "integer"}
_NUMBER: dict[str, Any] = {"type": "number"}
_STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
_STATS = _object(min=_NUMBER, median=_NUMBER, max=_NUMBER, count=_INT, p50=_NUMBER, p95=_NUMBER, p99=_NUMBER)
"""0.11's figures of a series: zeros (``count`` 0) when nothing was measured, never null."""
TRACE_PERFORMANCE_SCHEMA = _object(
    latency=_object(overall=_STATS, llm_calls=_STATS, tool_executions=_STATS),
    tokens=_object(total_prompt=_INT, total_output=_INT, total=_INT, per_llm_call=_STATS,
                   cache_creation_tokens=_INT, cache_read_tokens=_INT),
    counts=_object(llm_calls=_INT, tool_calls=_INT, invocations=_INT),
    models=_STRINGS,
    tool_names=_STRINGS,
)
"""A trace's ``performance_metrics`` as 0.11 wrote them: every key present, with 0.11's types."""
RUN_PERFORMANCE_SCHEMA = _object(
    tokens=_object(total_prompt=_INT, total_output=_INT, total=_INT,
                   avg_per_trace=_object(prompt=_NUMBER, output=_NUMBER),
                   cache_creation_tokens=_INT, cache_read_tokens=_INT),
    latency=_object(False, overall_per_trace=_object(p50=_NUMBER, p95=_NUMBER, p99=_NUMBER)),
    counts=_object(traces=_INT, total_llm_calls=_INT, total_tool_calls=_INT, avg_llm_calls_per_trace=_NUMBER,
                   avg_tool_calls_per_trace=_NUMBER),
    models=_STRINGS,
    trace_count=_INT,
)
"""The run's totals as 0.11 wrote them (``latency`` is ``{}`` when no trace had a timed turn)."""


def _nullable(schema: dict[str, Any]) -> Any:
    return WithJsonSchema({"anyOf": [schema, {"type": "null"}], "default": None})


class LegacyMetric(BaseModel):
    """One evaluator's result on one trace, as 0.11 wrote it."""

    model_config = ConfigDict(**ATTRIBUTE_DOCS)

    metric_name: str
    """The evaluator's name (builtin metrics: the metric name)."""
    score: Optional[float] = None
    eval_status: str = Field(json_schema_extra={"enum": ["PASSED", "FAILED", "NOT_EVALUATED"]})
    """PASSED, FAILED or NOT_EVALUATED (an evaluator error is NOT_EVALUATED with ``error`` set)."""
    per_invocation_scores: list[Optional[float]] = Field(default_factory=list)
    duration_ms: Optional[float] = None
    error: Optional[str] = None
    details: Optional[dict[str, Any]] = None
    """Present only when there are details (a NOT_EVALUATED row's reason is ``details.reason``)."""


class LegacyTrace(BaseModel):
    """One trace (or conversation) with its metrics, as 0.11 wrote it."""

    model_config = ConfigDict(**ATTRIBUTE_DOCS)

    trace_id: str
    num_invocations: int
    conversion_warnings: list[str] = Field(default_factory=list)
    metrics: list[LegacyMetric] = Field(default_factory=list)
    performance_metrics: Annotated[Optional[dict[str, Any]], _nullable(TRACE_PERFORMANCE_SCHEMA)] = None
    """Present only when the trace has figures."""


class LegacyDocument(BaseModel):
    """The 0.11 keys of the document (for the published schema)."""

    model_config = ConfigDict(**ATTRIBUTE_DOCS)

    traces: list[LegacyTrace] = Field(default_factory=list)
    """agentevals-cli 0.11's view of ``cases``."""
    errors: list[str] = Field(default_factory=list)
    """Run-level errors: unreadable inputs, an aborted run."""
    performance_metrics: Annotated[Optional[dict[str, Any]], _nullable(RUN_PERFORMANCE_SCHEMA)] = None
    """Totals over the traces (present only when some trace has figures)."""


def _metric(m: MetricResult) -> dict[str, Any]:
    score = m.score
    status = m.status.value if m.status in (Status.PASSED, Status.FAILED) else Status.NOT_EVALUATED.value
    out: dict[str, Any] = {
        "metric_name": m.name,
        "score": score,
        "eval_status": status,
        "per_invocation_scores": list(m.per_invocation_scores),
        "duration_ms": m.duration_ms,
        "error": m.error,
    }
    details = dict(m.details)
    if m.status == Status.NOT_EVALUATED and m.reason:
        details.setdefault("reason", m.reason)
    if m.status == Status.INFORMATIONAL:
        details.setdefault("value", m.value)
    if details:
        out["details"] = details
    return out


def _trace(case: CaseResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "trace_id": case.trace_ids[0] if case.trace_ids else case.case_id,
        "num_invocations": case.invocation_count,
        "conversion_warnings": list(case.warnings),
        "metrics": [_metric(m) for m in case.metrics],
    }
    if case.performance_metrics:
        out["performance_metrics"] = case.performance_metrics
    return out


def _run_performance(cases: Iterable[CaseResult]) -> Optional[dict[str, Any]]:
    """0.11's run totals: token sums and per-trace averages, per-trace latency percentiles, call counts.
    One pass keeping sums (and one latency per trace), never the cases' figures: cases may be spilled."""

    def tokens(p: dict[str, Any], key: str) -> float:
        return (p.get("tokens") or {}).get(key) or 0

    keys = ("total_prompt", "total_output", "total", "cache_creation_tokens", "cache_read_tokens")
    sums: dict[str, float] = dict.fromkeys(keys, 0)  # int sums stay ints, as 0.11 wrote them
    latencies: list[float] = []
    llm_calls = tool_calls = count = traces = 0
    models: set[str] = set()
    for case in cases:
        count += 1
        p = case.performance_metrics
        if not p:
            continue
        traces += 1
        for key in keys:
            sums[key] += tokens(p, key)
        overall = (p.get("latency") or {}).get("overall") or {}
        # 0.11: only traces whose turns were timed (count > 0) have a per-trace latency
        if overall.get("count") and isinstance(overall.get("median"), (int, float)):
            latencies.append(overall["median"])
        llm_calls += (p.get("counts") or {}).get("llm_calls") or 0
        tool_calls += (p.get("counts") or {}).get("tool_calls") or 0
        models.update(p.get("models") or [])
    if not traces:
        return None
    return {
        "tokens": {
            "total_prompt": sums["total_prompt"],
            "total_output": sums["total_output"],
            "total": sums["total"],
            "avg_per_trace": {"prompt": sums["total_prompt"] / traces, "output": sums["total_output"] / traces},
            "cache_creation_tokens": sums["cache_creation_tokens"],
            "cache_read_tokens": sums["cache_read_tokens"],
        },
        "latency": {"overall_per_trace": {k: v for k, v in (stats(latencies) or {}).items() if k in ("p50", "p95", "p99")}}
        if latencies else {},
        "counts": {
            "traces": count,
            "total_llm_calls": llm_calls,
            "total_tool_calls": tool_calls,
            "avg_llm_calls_per_trace": llm_calls / count,
            "avg_tool_calls_per_trace": tool_calls / count,
        },
        "models": sorted(models),
        "trace_count": count,
    }


def legacy_trace(case: CaseResult) -> dict[str, Any]:
    """One entry of the 0.11 ``traces`` list."""
    return _trace(case)


def legacy_keys(run: RunResult, *, traces: bool = True) -> dict[str, Any]:
    """The 0.11 keys (``traces``, ``errors``, ``performance_metrics``) for ``run`` (``traces=False``: the
    ``traces`` list left empty, for a writer that streams it with ``legacy_trace``)."""
    out: dict[str, Any] = {
        "traces": [_trace(case) for case in run.cases] if traces else [],
        "errors": [e.error for e in run.input_errors] + ([run.aborted] if run.aborted else []),
    }
    performance = _run_performance(run.cases)
    if performance is not None:
        out["performance_metrics"] = performance
    return out
