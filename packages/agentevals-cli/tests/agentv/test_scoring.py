"""The case score: Σ score * weight / Σ weight, required gates, verdicts, and what each status adds."""

from __future__ import annotations

from typing import Any

import pytest
from agentevals.results import MetricResult, Status, Verdict
from agentevals.results.scoring import case_score

PASS, BORDERLINE, FAIL = Verdict.PASS, Verdict.BORDERLINE, Verdict.FAIL


def m(score: float | None, weight: float = 1.0, required: float | None = None,
      status: Status | None = None) -> MetricResult:
    if status is None:
        status = Status.PASSED if score is not None and score >= 0.8 else Status.FAILED
    return MetricResult(name=f"m{score}-{weight}", type="contains", status=status, score=score, weight=weight,
                        required=required)


CASES = [
    pytest.param([m(0.9, 3.0), m(0.7, 1.0)], 0.85, PASS, id="docs-example-weights-3-1"),
    pytest.param([m(1.0), m(0.0, 0.0)], 1.0, PASS, id="weight-0-counts-nothing"),
    pytest.param([m(1.0, 0.0), m(0.5, 0.0)], 0.0, FAIL, id="all-weights-0-give-0"),
    pytest.param([m(0.7), m(0.7)], 0.7, BORDERLINE, id="borderline"),
    pytest.param([m(0.6)], 0.6, BORDERLINE, id="0.6-is-borderline"),
    pytest.param([m(0.8)], 0.8, PASS, id="0.8-is-pass"),
    pytest.param([m(0.59)], 0.59, FAIL, id="below-0.6-fails"),
    pytest.param([m(0.7, required=0.8), m(1.0, 5.0)], 0.0, FAIL, id="required-true-below-0.8"),
    pytest.param([m(0.8, required=0.8), m(0.0)], 0.4, FAIL, id="required-true-met"),
    pytest.param([m(0.7, required=0.6), m(1.0)], 0.85, PASS, id="required-number-met"),
    pytest.param([m(0.5, required=0.6), m(1.0)], 0.0, FAIL, id="required-number-missed"),
    pytest.param([m(0.0, 0.0, required=0.8), m(1.0)], 0.0, FAIL, id="weight-0-gate-still-gates"),
    pytest.param([m(1.0), m(None, status=Status.ERROR)], 0.5, FAIL, id="error-counts-as-0"),
    pytest.param([m(1.0), m(None, status=Status.NOT_EVALUATED)], 1.0, PASS, id="not-evaluated-left-out"),
    pytest.param([m(1.0), m(None, status=Status.NOT_EVALUATED, required=0.8)], 0.0, FAIL, id="not-evaluated-gate-fails"),
    pytest.param([m(1.0), m(None, status=Status.ERROR, required=0.8)], 0.0, FAIL, id="error-gate-fails"),
    pytest.param([m(1.0), m(None, status=Status.INFORMATIONAL, required=0.8)], 1.0, PASS, id="informational-ignored"),
    pytest.param([m(None, status=Status.NOT_EVALUATED)], None, None, id="nothing-counted"),
    pytest.param([], None, None, id="no-metrics"),
]


@pytest.mark.parametrize(("metrics", "score", "verdict"), CASES)
def test_case_score(metrics: list[MetricResult], score: Any, verdict: Any) -> None:
    got_score, got_verdict = case_score(metrics)
    assert got_score == (pytest.approx(score) if score is not None else None)
    assert got_verdict == verdict


@pytest.mark.parametrize(
    ("scores", "exact", "verdict"),
    [
        ([0.85, 0.95, 0.63, 0.77], 0.7999999999999999, BORDERLINE),
        ([0.48, 0.61, 0.97, 0.52, 0.42], 0.5999999999999999, FAIL),
        ([0.66, 0.75, 0.99], 0.8000000000000002, PASS),
    ],
)
def test_weighted_mean_adds_left_to_right_like_javascript(scores: list[float], exact: float, verdict: Verdict) -> None:
    # Node's loop gives exactly these; Python >= 3.12's sum() compensates rounding (0.8 and 0.6 for the
    # first two) and would turn AgentV's borderline into a pass and its fail into a borderline.
    assert case_score([m(s) for s in scores]) == (exact, verdict)


def test_composite_weighted_average_adds_left_to_right(av: Any) -> None:
    members = [{"name": f"m{i}", "type": "code_judge",
                "command": f"cat > /dev/null; echo '{{\"score\": {s}}}'"} for i, s in enumerate([0.85, 0.95, 0.63, 0.77])]
    result = av.run({"type": "composite", "name": "c", "aggregator": {"type": "weighted_average"},
                     "evaluators": members}, av.case())
    assert (result.score, result.verdict) == (0.7999999999999999, BORDERLINE)
