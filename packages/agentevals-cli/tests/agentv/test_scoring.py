"""The case score: Σ score * weight / Σ weight, required gates, verdicts, and what each status adds."""

from __future__ import annotations

from typing import Any

import pytest
from agentevals.results import MetricResult, Status, Verdict
from agentevals.scoring import case_score

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
