"""The shared pieces of continuous evaluation: admissions in the pool, rolling outcomes, the state recorder."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentevals.api import prepare_run
from agentevals.engine.admission import Skip, skip_kind
from agentevals.engine.run import run_evaluation
from agentevals.results import CaseResult, MetricResult, Status
from agentevals.serve.continuous import ContinuousState, Outcomes, StateRecorder, wilson_interval

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"


def test_wilson_interval_brackets_the_rate_and_narrows_with_n():
    low3, high3 = wilson_interval(0, 3)
    _, high300 = wilson_interval(0, 300)
    assert low3 == 0.0 and high3 > 0.4  # three failures say little
    assert high300 < 0.02
    low, high = wilson_interval(45, 50)
    assert low < 0.9 < high


def test_outcomes_window_and_series():
    now = [1000.0]
    outcomes = Outcomes(clock=lambda: now[0], keep_seconds=100)
    for i in range(10):
        outcomes.add("m", f"s{i}", passed=i % 2 == 0, at=950.0 + i)
    outcomes.add("other", "x", True, at=999.0)
    window = outcomes.window("m", 60)
    assert (window.n, window.passed) == (10, 5)
    assert window.failed_sessions[0] == "s9"
    assert outcomes.window("m", 45).n == 5
    series = outcomes.series("m", 60, 30)
    assert [b["n"] for b in series] == [10, 0]
    now[0] = 1200.0
    outcomes.add("m", "late", True)
    assert outcomes.window("m", 1000).n == 1  # older rows are trimmed


class _SkipOdd:
    def __init__(self) -> None:
        self.asked = 0

    def skip(self, case, evaluator):
        self.asked += 1
        return Skip("sampled_out", "sampled out (test)") if self.asked % 2 else None


def test_pool_consults_admissions_and_the_recorder_counts(tmp_path):
    evaluators, options, _ = prepare_run(metrics=["tool_trajectory_avg_score"])
    admission = _SkipOdd()
    options.admissions.append(admission)
    traces = sorted(TRACES.rglob("*.json"))
    assert traces, TRACES
    state = ContinuousState()
    run = asyncio.run(run_evaluation([str(p) for p in traces], evaluators, options=options,
                                     consumers=[StateRecorder(state)]))
    assert admission.asked == len(run.cases) > 0
    skipped = [c for c in run.cases if skip_kind(c.metrics[0])]
    assert 0 < len(skipped) < len(run.cases)
    for case in skipped:
        assert case.metrics[0].status == Status.NOT_EVALUATED and case.metrics[0].reason == "sampled out (test)"
    counts = state.counters.as_json()
    assert counts["sampled_out"] == len(skipped)
    assert counts["scored"] == len(run.cases) - len(skipped)


def test_recorder_records_only_pass_and_fail():
    state = ContinuousState()
    case = CaseResult(case_id="c1", trace_ids=["t1"], sources=["x"], metrics=[
        MetricResult.scored("a", 1.0, 0.5), MetricResult.scored("b", 0.0, 0.5),
        MetricResult.errored("c", "boom")])
    StateRecorder(state).case_finished(0, case)
    assert state.outcomes.metrics() == ["a", "b"]
    assert state.outcomes.window("b", 60).failed_sessions == ("c1",)
