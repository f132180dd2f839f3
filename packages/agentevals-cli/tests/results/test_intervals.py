"""results/intervals.py: Wilson intervals against the closed form (support/reference_stats.py), the clustered bootstrap against
numpy's percentile of a bootstrap done here, and the reports showing them."""

from __future__ import annotations

import json
import random

import pytest
from agentevals.report import ReportContext, render
from agentevals.results import CaseResult, MetricResult, RunResult, Status
from agentevals.results.intervals import run_intervals
from agentevals.results.stats import wilson_interval

from ..support.reference_stats import ci_text, wilson

numpy = pytest.importorskip("numpy", reason="numpy comes with scipy, a test dependency (hatch.toml)")


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 2), (45, 50), (50, 50), (17, 20), (2000, 2001), (3, 1000)])
def test_wilson_matches_the_closed_form(k: int, n: int) -> None:
    lower, upper = wilson_interval(k, n)
    want = wilson(k, n)
    assert lower == pytest.approx(max(0.0, want[0]), abs=1e-12)
    assert upper == pytest.approx(min(1.0, want[1]), abs=1e-12)
    assert lower <= k / n <= upper
    assert wilson_interval(0, 0) is None


def _case(i: int, passed: bool, score: float, group: str | None = None) -> CaseResult:
    status = Status.PASSED if passed else Status.FAILED
    return CaseResult(case_id=f"c{i}", trace_ids=[f"t{i}"], sources=["x.json"], eval_id=group, repeat_group=group,
                      metrics=[MetricResult(name="quality", status=status, score=score, threshold=0.5)])


def test_run_intervals_count_what_totals_count() -> None:
    cases = [_case(i, i < 45, 0.9 if i < 45 else 0.1) for i in range(50)]
    run = RunResult(cases=cases)
    figures = run_intervals(run)
    want = wilson(45, 50)
    assert figures["pass_rate"]["passed"] == 45 and figures["pass_rate"]["evaluated"] == 50
    assert (figures["pass_rate"]["lower"], figures["pass_rate"]["upper"]) == pytest.approx(want)
    quality = figures["metrics"]["quality"]
    assert quality["pass_rate"]["lower"] == pytest.approx(want[0])
    assert quality["mean_score"]["mean"] == pytest.approx(0.82)
    assert quality["mean_score"]["clusters"] == 50
    assert run_intervals(run) == figures  # seeded: the same run prints the same interval


def _numpy_cluster_bootstrap(clusters: list[list[float]], seed: int) -> tuple[float, float]:
    rng = numpy.random.default_rng(seed)
    sums = numpy.array([sum(c) for c in clusters])
    counts = numpy.array([len(c) for c in clusters])
    picks = rng.integers(0, len(clusters), size=(4000, len(clusters)))
    means = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    return float(numpy.percentile(means, 2.5)), float(numpy.percentile(means, 97.5))


def test_mean_score_interval_resamples_eval_cases_not_rows() -> None:
    """10 eval cases × 5 repetitions that agree with each other: 10 independent units, not 50."""
    rng = random.Random(3)
    levels = [rng.random() for _ in range(10)]
    cases = [_case(g * 5 + r, levels[g] >= 0.5, levels[g], group=f"task{g}") for g in range(10) for r in range(5)]
    figures = run_intervals(RunResult(cases=cases))["metrics"]["quality"]["mean_score"]
    assert figures["clusters"] == 10 and figures["n"] == 50
    want = _numpy_cluster_bootstrap([[levels[g]] * 5 for g in range(10)], seed=1)
    assert figures["lower"] == pytest.approx(want[0], abs=0.03)
    assert figures["upper"] == pytest.approx(want[1], abs=0.03)
    # Treated as 50 independent rows the interval would be about sqrt(5) times narrower.
    rows = _numpy_cluster_bootstrap([[levels[g]] for g in range(10) for _ in range(5)], seed=1)
    assert (figures["upper"] - figures["lower"]) > 1.8 * (rows[1] - rows[0])


def test_every_report_shows_the_interval() -> None:
    cases = [_case(i, i < 45, 0.9 if i < 45 else 0.1) for i in range(50)]
    run = RunResult(cases=cases)
    lower = wilson(45, 50)[0]
    ci = ci_text(45, 50)
    context = ReportContext()
    for fmt in ("table", "summary", "markdown", "html"):
        text = render(run, fmt, context=context)
        assert f"90.00% (45/50, {ci})" in text, fmt
    table = render(run, "table", context=context)
    assert "metric quality: pass rate 90.00% (45/50, " in table and "mean score 0.820 (95% CI " in table
    doc = json.loads(render(run, "json", context=context))
    assert doc["intervals"]["pass_rate"]["lower"] == pytest.approx(lower)
    assert doc["totals"]["pass_rate"] == 0.9  # the existing keys stay


def test_large_runs_use_the_bootstraps_normal_limit() -> None:
    """Past BOOTSTRAP_MAX_CLUSTERS eval cases the interval is the normal one with a cluster-robust error: it must
    still agree with a real bootstrap (numpy, here) and still widen for correlated repetitions."""
    from agentevals.results.intervals import BOOTSTRAP_MAX_CLUSTERS

    rng = random.Random(11)
    groups = BOOTSTRAP_MAX_CLUSTERS * 2
    levels = [rng.random() for _ in range(groups)]
    cases = [_case(g * 3 + r, levels[g] >= 0.5, min(1.0, levels[g] + r / 20), group=f"t{g}")
             for g in range(groups) for r in range(3)]
    figures = run_intervals(RunResult(cases=cases))["metrics"]["quality"]["mean_score"]
    assert figures["clusters"] == groups
    want = _numpy_cluster_bootstrap([[min(1.0, levels[g] + r / 20) for r in range(3)] for g in range(groups)], seed=2)
    assert figures["lower"] == pytest.approx(want[0], abs=0.004)
    assert figures["upper"] == pytest.approx(want[1], abs=0.004)
