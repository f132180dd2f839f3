#!/usr/bin/env python3
"""Score invocations with google-adk's OWN evaluators (the parity oracle).

Self-contained: imports only the standard library and google-adk (plus the
google-genai types it ships with). Run it in an environment made from
requirements.txt next to this file; the agentevals CLI itself never imports it.

Input (a file path as argv[1], or JSON on stdin):

    {"cases": [{
        "metric": "tool_trajectory_avg_score" | "response_match_score",
        "match_type": "EXACT" | "IN_ORDER" | "ANY_ORDER",  # trajectory only, default EXACT
        "ignore_args": false,                               # trajectory only, optional
        "threshold": 1.0,
        "actual":   [invocation, ...],
        "expected": [invocation, ...]
    }]}

    invocation = {
        "invocation_id": "inv-1",
        "user_content": "text",
        "final_response": "text" | null | ["part 1 text", "part 2 text"] | {genai Content dict},
        "tool_calls": [{"name": "tool", "args": {...}, "id": "call-1" | null}],
        "intermediate_form": "tool_uses" | "invocation_events"   # optional, default tool_uses
    }

    A tool call without an "args" key gets FunctionCall.args = None (ADK compares
    args with ==, so None and {} differ).

Output on stdout:

    {"results": [{"overall_score": float | null, "overall_status": "PASSED" | "FAILED" |
                  "NOT_EVALUATED" | "INFORMATIONAL", "per_invocation_scores": [float | null],
                  "per_invocation_statuses": [str]}]}

    A case for which ADK raises (e.g. actual/expected of different lengths) yields
    {"error": "<ExceptionType>: <message>"} instead; the other cases still run.

The metric is resolved exactly as `adk eval` does it: EvalConfig(criteria=...)
-> get_eval_metrics_from_config -> DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator.
"""

from __future__ import annotations

import inspect
import json
import logging
import sys
import warnings
from typing import Any

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)

from google.adk.evaluation.eval_case import (  # noqa: E402
    IntermediateData,
    Invocation,
    InvocationEvent,
    InvocationEvents,
)
from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config  # noqa: E402
from google.adk.evaluation.metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY  # noqa: E402
from google.genai import types as genai_types  # noqa: E402

SUPPORTED_METRICS = ("tool_trajectory_avg_score", "response_match_score")


def _content(value: Any, role: str) -> genai_types.Content | None:
    if value is None:
        return None
    if isinstance(value, str):
        return genai_types.Content(role=role, parts=[genai_types.Part(text=value)])
    if isinstance(value, list):
        return genai_types.Content(role=role, parts=[genai_types.Part(text=t) for t in value])
    if isinstance(value, dict):
        return genai_types.Content.model_validate(value)
    raise TypeError(f"unsupported content value: {value!r}")


def _function_call(call: dict[str, Any]) -> genai_types.FunctionCall:
    kwargs: dict[str, Any] = {"name": call["name"]}
    if "args" in call:
        kwargs["args"] = call["args"]
    if call.get("id") is not None:
        kwargs["id"] = call["id"]
    return genai_types.FunctionCall(**kwargs)


def _invocation(raw: dict[str, Any]) -> Invocation:
    calls = [_function_call(c) for c in raw.get("tool_calls") or []]
    form = raw.get("intermediate_form", "tool_uses")
    if form == "tool_uses":
        intermediate: Any = IntermediateData(tool_uses=calls)
    elif form == "invocation_events":
        intermediate = InvocationEvents(
            invocation_events=[
                InvocationEvent(
                    author="agent",
                    content=genai_types.Content(role="model", parts=[genai_types.Part(function_call=c)]),
                )
                for c in calls
            ]
        )
    else:
        raise ValueError(f"unknown intermediate_form {form!r}")
    return Invocation(
        invocation_id=raw.get("invocation_id") or "",
        user_content=_content(raw.get("user_content") or "", "user"),
        final_response=_content(raw.get("final_response"), "model"),
        intermediate_data=intermediate,
    )


def _criterion(case: dict[str, Any]) -> float | dict[str, Any]:
    threshold = float(case["threshold"])
    if case["metric"] == "tool_trajectory_avg_score":
        crit: dict[str, Any] = {"threshold": threshold, "match_type": case.get("match_type", "EXACT")}
        if "ignore_args" in case:
            crit["ignore_args"] = bool(case["ignore_args"])
        return crit
    return threshold


def _score_case(case: dict[str, Any]) -> dict[str, Any]:
    metric = case["metric"]
    if metric not in SUPPORTED_METRICS:
        raise ValueError(f"unsupported metric {metric!r}")
    config = EvalConfig.model_validate({"criteria": {metric: _criterion(case)}})
    eval_metric = next(m for m in get_eval_metrics_from_config(config) if m.metric_name == metric)
    evaluator = DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(eval_metric)
    actual = [_invocation(i) for i in case.get("actual") or []]
    expected_raw = case.get("expected")
    expected = None if expected_raw is None else [_invocation(i) for i in expected_raw]
    result = evaluator.evaluate_invocations(
        actual_invocations=actual, expected_invocations=expected, conversation_scenario=None
    )
    if inspect.isawaitable(result):  # not the case for these two metrics; kept for safety
        import asyncio

        result = asyncio.run(result)
    return {
        "overall_score": result.overall_score,
        "overall_status": result.overall_eval_status.name,
        "per_invocation_scores": [r.score for r in result.per_invocation_results],
        "per_invocation_statuses": [r.eval_status.name for r in result.per_invocation_results],
    }


def main(argv: list[str]) -> int:
    if len(argv) > 1 and argv[1] != "-":
        with open(argv[1], encoding="utf-8") as fh:
            payload = json.load(fh)
    else:
        payload = json.load(sys.stdin)
    results = []
    for case in payload.get("cases", []):
        try:
            results.append(_score_case(case))
        except Exception as exc:
            results.append({"error": f"{type(exc).__name__}: {exc}"})
    json.dump({"results": results}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
