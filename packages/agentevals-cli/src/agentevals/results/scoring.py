"""Case scoring, AgentV's model: weighted mean of evaluator scores, required gates, verdicts.

    case score = Σ score * weight / Σ weight        over the rows that count (below)
    required   = a gate: a row whose score is below its gate (true → 0.8) makes the case score 0
    verdict    = pass ≥ 0.8, borderline ≥ 0.6, fail below

What each row contributes (AgentV's ``runEvaluatorList``):

    PASSED / FAILED   its score, with its weight (weight 0: counted in nothing, still a gate)
    ERROR             score 0 with its weight: AgentV scores an evaluator that failed as 0
    NOT_EVALUATED     nothing (AgentV's ``skip``); as a gate it fails: nothing shows it passed
    INFORMATIONAL     nothing, and never a gate

Σ weight = 0 gives 0. A case where no row counts and no gate failed has no score: (None, None).
Sums add left to right (``running_sum``), as AgentV's JavaScript does, so scores match to the last bit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from . import MetricResult, Status, Verdict, verdict_for

__all__ = ["case_score", "gate_failed", "running_sum"]

_LEFT_OUT = (Status.NOT_EVALUATED, Status.INFORMATIONAL)


def running_sum(values: Iterable[float]) -> float:
    """Floats added one by one, left to right, like a JavaScript loop or ``reduce``.

    Python 3.12's ``sum()`` compensates rounding, which can move a mean across a verdict line
    (0.85, 0.95, 0.63, 0.77 average to 0.8 there, to 0.7999999999999999 in JavaScript).
    """
    total = 0.0
    for value in values:
        total += value
    return total


def _counted_score(metric: MetricResult) -> float | None:
    """The score a row adds to the weighted mean, or None when it adds nothing."""
    if metric.status in _LEFT_OUT:
        return None
    if metric.status == Status.ERROR:
        return 0.0
    return metric.score


def gate_failed(metric: MetricResult) -> bool:
    """Whether ``metric`` is a required gate that it did not reach."""
    if metric.required is None or metric.status == Status.INFORMATIONAL:
        return False
    score = metric.score if metric.status in (Status.PASSED, Status.FAILED) else None
    return (score or 0.0) < metric.required


def case_score(metrics: Sequence[MetricResult]) -> tuple[float | None, Verdict | None]:
    """Weighted score and verdict of one case (see the module docstring for what each row adds)."""
    if any(gate_failed(m) for m in metrics):
        return 0.0, Verdict.FAIL
    counted = [(score, m.weight) for m in metrics if (score := _counted_score(m)) is not None]
    if not counted:
        return None, None
    total = running_sum(weight for _, weight in counted)
    score = running_sum(s * w for s, w in counted) / total if total > 0 else 0.0
    return score, verdict_for(score)
