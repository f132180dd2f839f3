"""Parity with google-adk: the same invocations scored natively and by ADK's own evaluators.

Runs in the hatch ``adk`` environment (``hatch run adk:test``), which installs the ``adk`` extra.
ADK scores through ``tools/adk_parity/adk_scores.py`` (one subprocess, resolving metrics as ``adk eval``).
"""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.adk
pytest.importorskip("google.adk.evaluation", reason="needs the adk extra (hatch run adk:test)")

from agentevals.evalsets import load_eval_set  # noqa: E402
from agentevals.evaluators import EVALUATOR_TYPES  # noqa: E402
from agentevals.evaluators.base import EvalContext  # noqa: E402
from agentevals.protocol import InvocationData, ToolCallData  # noqa: E402
from agentevals.traces.convert import convert_trace  # noqa: E402
from agentevals.traces.readers import read_traces  # noqa: E402

ROOT = Path(__file__).resolve().parents[4]
DATA = Path(__file__).resolve().parents[1] / "data" / "adk"
ORACLE = ROOT / "tools" / "adk_parity" / "adk_scores.py"
PAIRS = [("helm.json", "eval_set_helm.json"), ("k8s.json", "eval_set_helm.json"),
         ("helm_3.json", "evalset_helm_3_2026-02-23.json"), ("helm_2.json", "eval_set_helm.json"),
         ("k8s.json", "evalset_k8s_2026-02-20.json"), ("tempo_export_with_batches.json", "eval_set_helm.json")]


def actual_and_expected(trace: str, eval_set: str) -> tuple[list[InvocationData], list[InvocationData]]:
    (t,) = read_traces(DATA / trace)
    return convert_trace(t).invocations, load_eval_set(DATA / eval_set).eval_cases[0].conversation


def mutations(actual: list[InvocationData], expected: list[InvocationData]):
    yield "as recorded", actual, expected
    yield "identity", expected, expected
    dropped = copy.deepcopy(expected)
    for inv in dropped:
        inv.intermediate_steps.tool_calls = inv.intermediate_steps.tool_calls[:-1]
    yield "missing last call", dropped, expected
    extra = copy.deepcopy(expected)
    for inv in extra:
        inv.intermediate_steps.tool_calls.append(ToolCallData(name="helm_repo_update", args={}))
    yield "extra call", extra, expected
    args = copy.deepcopy(expected)
    for inv in args:
        for call in inv.intermediate_steps.tool_calls:
            call.args = {**call.args, "namespace": "kube-system"}
    yield "different args", args, expected
    two_expected = copy.deepcopy(expected)
    for inv in two_expected:
        inv.intermediate_steps.tool_calls.append(ToolCallData(name="helm_get_release", args={"name": "kagent"}))
    reordered = copy.deepcopy(two_expected)
    for inv in reordered:
        inv.intermediate_steps.tool_calls.reverse()
    yield "reordered", reordered, two_expected
    text = copy.deepcopy(expected)
    for inv in text:
        inv.final_response = "I could not list the Helm releases because the cluster is unreachable. Café 東京は晴れ"
    yield "other response", text, expected
    none = copy.deepcopy(expected)
    for inv in none:
        inv.final_response = None
    yield "no response", none, expected
    yield "two turns", actual + expected, expected + expected


def native(metric: str, actual, expected, match_type: str, threshold: float):
    cls = EVALUATOR_TYPES.get("builtin")
    config = {"trajectory_match_type": match_type} if metric == "tool_trajectory_avg_score" else {}
    ev = cls(cls.Config(name=metric, type="builtin", threshold=threshold, **config), base_dir=".")
    return asyncio.run(ev.evaluate(EvalContext(case_id="c", invocations=actual, expected_invocations=expected)))


def oracle_invocation(inv: InvocationData) -> dict:
    return {"invocation_id": inv.invocation_id, "user_content": inv.user_content, "final_response": inv.final_response,
            "tool_calls": [{"name": c.name, "args": c.args, "id": c.id} for c in inv.intermediate_steps.tool_calls]}


@pytest.mark.timeout(900)  # the google-adk oracle is given up to 600 s
def test_native_scores_equal_google_adk():
    cases, ours = [], []
    for trace, eval_set in PAIRS:
        actual, expected = actual_and_expected(trace, eval_set)
        for label, act, exp in mutations(actual, expected):
            for metric, match_types, threshold in (("tool_trajectory_avg_score", ("exact", "in_order", "any_order"), 1.0),
                                                   ("response_match_score", ("exact",), 0.8)):
                for match_type in match_types:
                    cases.append({"metric": metric, "match_type": match_type.upper(), "threshold": threshold,
                                  "actual": [oracle_invocation(i) for i in act],
                                  "expected": [oracle_invocation(i) for i in exp]})
                    ours.append((f"{trace}/{label}/{metric}/{match_type}", native(metric, act, exp, match_type, threshold)))
    proc = subprocess.run([sys.executable, str(ORACLE)], input=json.dumps({"cases": cases}), capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(proc.stdout)["results"]
    assert len(results) == len(ours) > 150
    for (label, mine), adk in zip(ours, results, strict=True):
        assert "error" not in adk, (label, adk)
        assert mine.score == adk["overall_score"], label
        assert mine.per_invocation_scores == adk["per_invocation_scores"], label
        assert mine.status.value == adk["overall_status"], label


def test_adk_judged_metric_without_credentials_is_not_evaluated(monkeypatch):
    for var in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(var, raising=False)
    actual, expected = actual_and_expected("helm.json", "eval_set_helm.json")
    result = native("final_response_match_v2", actual, expected, "exact", 0.5)
    assert result.status.value == "NOT_EVALUATED"
    assert result.reason.startswith("no judge credentials: set GOOGLE_API_KEY")
