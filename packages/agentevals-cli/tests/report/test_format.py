"""Text reports: numbers keep their digits, and every kind of informational value renders."""

from __future__ import annotations

import pytest
from agentevals.report import render
from agentevals.report._format import fmt_num, fmt_perf
from agentevals.results import CaseResult, MetricResult, RunResult, Status


@pytest.mark.parametrize(("value", "digits", "text"), [
    (2130.338, 0, "2130"),
    (100.4, 0, "100"),
    (10.0, 3, "10"),
    (0.8118, 3, "0.812"),
    (0.5, 2, "0.5"),
    (None, 3, "-"),
    (True, 3, "true"),
    ("high", 3, "high"),
])
def test_fmt_num(value, digits, text):
    assert fmt_num(value, digits) == text


def test_perf_line_keeps_trailing_zeros_of_latencies():
    stats = {"min": 2130.338, "median": 2130.338, "max": 2130.338, "count": 1}
    pm = {"latency": {"overall": stats, "llm_calls": {**stats, "max": 2108.918}}, "counts": {"llm_calls": 1}}
    assert fmt_perf(pm) == "2130ms · 1 LLM call (2109ms)"


def _run_with(value):
    metric = MetricResult(name="env", type="python", status=Status.INFORMATIONAL, value=value)
    return RunResult(cases=[CaseResult(case_id="t1", trace_ids=["t1"], sources=["a.json"], metrics=[metric])])


@pytest.mark.parametrize("value", [{"service": "helm", "has_user": False}, ["a", 1], "text", True, 3])
@pytest.mark.parametrize("fmt", ["table", "summary"])
def test_informational_values_of_any_json_type_render(value, fmt):
    text = render(_run_with(value), fmt)
    assert "env" in text and "INFORMATIONAL" in text


def test_informational_dict_is_shown_compactly():
    text = render(_run_with({"service": "helm", "has_user": False}), "summary")
    assert text.splitlines()[0] == 't1: env=INFORMATIONAL({"service": "helm", "has_user": false})'
