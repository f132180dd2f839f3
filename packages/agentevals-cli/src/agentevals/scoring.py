"""Case scoring (AgentV model): weighted mean of evaluator scores, required gates, verdicts.

    test score = Σ score × weight / Σ weight   over results that have a score
    a result with ``required`` (a gate) scoring below it makes the test score 0
    verdict: pass ≥ 0.8, borderline ≥ 0.6, fail below
"""

from __future__ import annotations

from typing import Optional, Sequence

from .results import MetricResult, Status, Verdict, verdict_for

__all__ = ["case_score"]


def case_score(metrics: Sequence[MetricResult]) -> tuple[Optional[float], Optional[Verdict]]:
    """Weighted score and verdict of one case; (None, None) when no result has a score."""
    scored = [m for m in metrics if m.score is not None and m.status in (Status.PASSED, Status.FAILED)]
    total_weight = sum(m.weight for m in scored)
    if not scored:
        return None, None
    score = sum(m.score * m.weight for m in scored) / total_weight if total_weight > 0 else 0.0
    if any(m.required is not None and (m.score is None or m.score < m.required) for m in metrics
           if m.status != Status.INFORMATIONAL):
        score = 0.0
    return score, verdict_for(score)
