"""results/paired.py: pairing, the classification at α, scores-only metrics and flaky eval cases."""

from __future__ import annotations

import random

import pytest
from agentevals.results import CaseResult, MetricResult, RunResult, Status
from agentevals.results.compare import compare_runs
from agentevals.results.paired import paired_changes, stability

scipy_stats = pytest.importorskip("scipy.stats", reason="scipy is a test dependency (hatch.toml)")


def _case(case_id: str, passed: bool, *, eval_id: str | None = None, group: str | None = None,
          score: float | None = None) -> CaseResult:
    score = score if score is not None else (1.0 if passed else 0.0)
    status = Status.PASSED if passed else Status.FAILED
    return CaseResult(case_id=case_id, trace_ids=[case_id], sources=["x"], eval_id=eval_id, repeat_group=group,
                      metrics=[MetricResult(name="m", status=status, score=score, threshold=0.5)])


def test_agent_reruns_pair_by_eval_case_when_no_case_id_is_shared() -> None:
    before = RunResult(cases=[_case(f"a{i}", True, eval_id=f"e{i}") for i in range(30)])
    after = RunResult(cases=[_case(f"b{i}", i >= 12, eval_id=f"e{i}") for i in range(30)])
    row = next(p for p in paired_changes(before, after) if p.metric == "m")
    assert (row.pairs, row.pass_to_fail, row.fail_to_pass) == (30, 12, 0)
    assert row.p_value == pytest.approx(scipy_stats.binomtest(0, 12, 0.5).pvalue)
    assert row.verdict == "regression"
    improved = next(p for p in paired_changes(after, before) if p.metric == "m")
    assert improved.verdict == "improvement" and improved.p_value == row.p_value


def test_a_repeated_case_id_pairs_by_occurrence() -> None:
    """``c`` three times in each run: the first with the first, the second with the second (which failed)."""
    before = RunResult(cases=[_case("c", True), _case("c", True), _case("c", True)])
    after = RunResult(cases=[_case("c", True), _case("c", False), _case("c", True)])
    row = next(p for p in paired_changes(before, after) if p.metric == "m")
    assert (row.pairs, row.pass_to_fail, row.fail_to_pass, row.passed_after) == (3, 1, 0, 2)
    shorter = next(p for p in paired_changes(before, RunResult(cases=after.cases[:2])) if p.metric == "m")
    assert (shorter.pairs, shorter.pass_to_fail) == (2, 1)  # the third ``c`` has no partner


def test_alpha_decides_between_regression_and_noise() -> None:
    """6 pass→fail, 0 fail→pass: p = 2/64 ≈ 0.031: a regression at 0.05, noise at 0.01."""
    before = RunResult(cases=[_case(f"c{i}", True) for i in range(20)])
    after = RunResult(cases=[_case(f"c{i}", i >= 6) for i in range(20)])
    assert next(p for p in paired_changes(before, after) if p.metric == "m").verdict == "regression"
    strict = next(p for p in paired_changes(before, after, alpha=0.01) if p.metric == "m")
    assert strict.p_value == pytest.approx(scipy_stats.binomtest(0, 6, 0.5).pvalue) and strict.verdict == "within noise"


def test_scores_only_metric_is_classified_by_its_paired_interval() -> None:
    def run(shift: float) -> RunResult:
        return RunResult(cases=[CaseResult(case_id=f"c{i}", trace_ids=["t"], sources=["x"], metrics=[
            MetricResult(name="tokens", status=Status.INFORMATIONAL, score=0.5 + shift + (i % 5) / 100)])
            for i in range(40)])
    row = next(p for p in paired_changes(run(0.0), run(-0.1)) if p.metric == "tokens")
    assert row.p_value is None and row.mean_delta == pytest.approx(-0.1)
    assert row.delta_interval[1] < 0 and row.verdict == "regression"
    assert next(p for p in paired_changes(run(0.0), run(0.0)) if p.metric == "tokens").verdict == "within noise"


def test_repetitions_sort_eval_cases_into_stable_pass_flaky_stable_fail() -> None:
    cases = [_case(f"s{r}", True, eval_id="steady", group="steady") for r in range(3)]
    cases += [_case(f"f{r}", r != 1, eval_id="wobbly", group="wobbly") for r in range(3)]
    cases += [_case(f"x{r}", False, eval_id="broken", group="broken") for r in range(3)]
    run = RunResult(cases=cases)
    assert stability(run) == {"stable_pass": ["steady"], "flaky": ["wobbly"], "stable_fail": ["broken"]}
    assert stability(RunResult(cases=[_case("lone", True)])) is None
    comparison = compare_runs(run, run)
    assert comparison.as_dict()["stability"]["current"]["flaky"] == ["wobbly"]
    assert "1 flaky eval case (wobbly)" in comparison.paired_line()


def test_large_comparisons_use_the_paired_bootstraps_normal_limit() -> None:
    numpy = pytest.importorskip("numpy")
    rng = random.Random(5)
    before = [rng.random() for _ in range(600)]
    after = [min(1.0, max(0.0, b - 0.03 + rng.gauss(0, 0.1))) for b in before]

    def run(scores: list[float]) -> RunResult:
        return RunResult(cases=[_case(f"c{i}", s >= 0.5, score=s) for i, s in enumerate(scores)])

    row = next(p for p in paired_changes(run(before), run(after)) if p.metric == "m")
    diffs = numpy.array(after) - numpy.array(before)
    means = diffs[numpy.random.default_rng(0).integers(0, len(diffs), size=(4000, len(diffs)))].mean(axis=1)
    assert row.delta_interval[0] == pytest.approx(float(numpy.percentile(means, 2.5)), abs=0.003)
    assert row.delta_interval[1] == pytest.approx(float(numpy.percentile(means, 97.5)), abs=0.003)
