"""agentevals-cli 0.11's keys in ``-o json``: each status means what it meant there."""

from __future__ import annotations

import json

import pytest
from agentevals.report import render
from agentevals.results import CaseResult, InputError, MetricResult, RunResult, Status


def run_of(*metrics: MetricResult, **fields) -> RunResult:
    case = CaseResult(case_id="c1", trace_ids=["t1", "t2"], sources=["a.json"], invocation_count=2,
                      warnings=["turn x: no output"], metrics=list(metrics))
    return RunResult(cases=[case], **fields)


def test_statuses_map_onto_0_11_meanings():
    run = run_of(
        MetricResult.scored("traj", 0.5, 0.5, per_invocation_scores=[1.0, 0.0]),
        MetricResult.errored("judge", "exited with code 1: boom", type="code"),
        MetricResult.not_evaluated("resp", "needs an eval case: none matched"),
        MetricResult(name="token_usage_v1", status=Status.INFORMATIONAL, value=3906, details={"unit": "tokens"}),
    )
    document = json.loads(render(run, "json"))
    (trace,) = document["traces"]
    assert (trace["trace_id"], trace["num_invocations"], trace["conversion_warnings"]) == (
        "t1", 2, ["turn x: no output"])
    rows = [(m["metric_name"], m["eval_status"], m["score"], m["error"], m.get("details")) for m in trace["metrics"]]
    assert rows == [
        ("traj", "PASSED", 0.5, None, None),
        ("judge", "NOT_EVALUATED", None, "exited with code 1: boom", None),
        ("resp", "NOT_EVALUATED", None, None, {"reason": "needs an eval case: none matched"}),
        ("token_usage_v1", "NOT_EVALUATED", None, None, {"unit": "tokens", "value": 3906}),
    ]
    assert trace["metrics"][0]["per_invocation_scores"] == [1.0, 0.0]
    assert document["errors"] == [] and "performance_metrics" not in document
    assert document["cases"][0]["metrics"][1]["status"] == "ERROR"  # ours beside theirs, unchanged


def test_run_level_errors_and_totals():
    perf = {"tokens": {"total_prompt": 10, "total_output": 5, "total": 15, "cache_read_tokens": 2},
            "latency": {"overall": {"median": 120.0, "count": 1}}, "counts": {"llm_calls": 2, "tool_calls": 1},
            "models": ["m"]}
    run = run_of(MetricResult.scored("traj", 1.0, 0.5), input_errors=[InputError(source="x", error="x: no such file")],
                 aborted="stopped early")
    run.cases[0].performance_metrics = perf
    document = json.loads(render(run, "json"))
    assert document["errors"] == ["x: no such file", "stopped early"]
    assert document["traces"][0]["performance_metrics"] == perf
    totals = document["performance_metrics"]
    assert totals["tokens"]["total"] == 15 and totals["tokens"]["cache_read_tokens"] == 2
    assert totals["latency"] == {"overall_per_trace": {"p50": 120.0, "p95": 120.0, "p99": 120.0}}
    assert totals["counts"] == {"traces": 1, "total_llm_calls": 2, "total_tool_calls": 1,
                                "avg_llm_calls_per_trace": 2.0, "avg_tool_calls_per_trace": 1.0}
    assert (totals["models"], totals["trace_count"]) == (["m"], 1)


def test_a_turn_without_tool_calls_has_0_11s_zero_figures_not_null():
    """0.11 wrote ``tool_executions`` as zeros for a turn without tool calls; a script reading
    ``["tool_executions"]["count"]`` must read 0 (it crashed on null)."""
    import jsonschema
    from agentevals.report.json import load_result_schema
    from agentevals.traces.convert._common import Measure, performance_metrics

    turn = Measure(durations_ms=[2130.338], llm_ms=[2108.918], prompt_tokens=[2203], output_tokens=[139],
                   models=["gpt-4.1-mini"], invocations=1)
    run = run_of(MetricResult.scored("traj", 1.0, 0.5))
    run.cases[0].performance_metrics = performance_metrics(turn)
    document = json.loads(render(run, "json"))
    perf = document["traces"][0]["performance_metrics"]
    zeros = {"min": 0.0, "median": 0.0, "max": 0.0, "count": 0, "p50": 0.0, "p95": 0.0, "p99": 0.0}
    assert perf["latency"]["tool_executions"] == zeros
    assert (perf["counts"], perf["tool_names"]) == ({"llm_calls": 1, "tool_calls": 0, "invocations": 1}, [])
    jsonschema.validate(document, load_result_schema())
    perf["latency"]["tool_executions"] = None  # what this release wrote before: the published schema refuses it
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, load_result_schema())


def test_percentiles_are_0_11s():
    """0.11's p95/p99: the value at index int(n * p) of the sorted values (n = 20: the largest)."""
    from agentevals.traces.convert._common import stats

    figures = stats(float(v) for v in range(1, 21))
    assert (figures["p50"], figures["p95"], figures["p99"]) == (10.5, 20.0, 20.0)
