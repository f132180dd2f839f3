"""The cases a pass rate is over (``evaluated_cases``), the one count every report, gate and interval uses."""

from __future__ import annotations

import pytest
from agentevals.results import CaseResult, MetricResult, RunResult, Status, evaluated_cases
from agentevals.results.intervals import run_intervals, totals_interval


def _run() -> RunResult:
    statuses = [Status.PASSED] * 3 + [Status.FAILED, Status.ERROR, Status.INFORMATIONAL] + [Status.NOT_EVALUATED] * 2
    return RunResult(cases=[CaseResult(case_id=f"c{i}", trace_ids=[f"c{i}"], sources=["t.json"],
                                       metrics=[MetricResult(name="m", status=s)]) for i, s in enumerate(statuses)])


@pytest.mark.parametrize(("strict", "expected"), [(False, 5), (True, 7)])
def test_evaluated_cases_is_the_pass_rates_denominator(strict, expected):
    run = _run()
    totals = run.totals(strict=strict)
    assert evaluated_cases(totals["cases"], strict=strict) == expected  # INFORMATIONAL never counts
    assert totals["pass_rate"] == 3 / expected
    assert run_intervals(run, strict=strict)["pass_rate"]["evaluated"] == expected
    assert totals_interval(totals)["evaluated"] == expected  # a stored run's totals: strictness read off its rate


def test_evaluated_cases_counts_a_missing_status_as_none():
    assert evaluated_cases({"PASSED": 2, "NOT_EVALUATED": 4}, strict=False) == 2
    assert evaluated_cases({"PASSED": 2, "NOT_EVALUATED": 4}, strict=True) == 6
    assert evaluated_cases({}, strict=True) == 0
