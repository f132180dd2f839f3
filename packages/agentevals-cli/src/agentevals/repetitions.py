"""Repetitions: several cases that match the same eval case are runs of one task.

Per group: n, mean and standard deviation of every numeric metric, pass rate, pass@k (the unbiased
estimator 1 - C(n-c, k) / C(n, k)) and pass^k (C(c, k) / C(n, k): all k independent tries pass), for
each requested k (default k = n). A repetition passes when none of its results FAILED or ERRORed and at
least one PASSED; ``evaluation_failed`` repetitions count as not passed.
"""

from __future__ import annotations

import statistics
from math import comb
from typing import Any, Optional, Sequence

from .results import CaseResult, Status

__all__ = ["pass_at_k", "pass_hat_k", "repetition_passed", "summarize_repetitions"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples (without replacement) out of n passes, c of which pass."""
    if k > n or k < 1:
        raise ValueError(f"k must be between 1 and n={n}, got {k}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all of k samples out of n pass (tau-bench's pass^k)."""
    if k > n or k < 1:
        raise ValueError(f"k must be between 1 and n={n}, got {k}")
    return comb(c, k) / comb(n, k)


def repetition_passed(case: CaseResult) -> bool:
    statuses = {m.status for m in case.metrics}
    return (case.evaluation_status == "success" and Status.PASSED in statuses
            and not statuses & {Status.FAILED, Status.ERROR})


def summarize_repetitions(
    cases: Sequence[CaseResult], *, k_values: Sequence[int] = (), repeat_key: Optional[str] = None
) -> list[dict[str, Any]]:
    """One summary per group of cases sharing ``CaseResult.repeat_group``, in first-seen order."""
    groups: dict[str, list[CaseResult]] = {}
    for case in cases:
        groups.setdefault(case.repeat_group or case.case_id, []).append(case)
    out = []
    for key, members in groups.items():
        for index, case in enumerate(members):
            case.repeat_index = index if len(members) > 1 else None
        n = len(members)
        c = sum(repetition_passed(m) for m in members)
        ks = sorted({k for k in k_values if 1 <= k <= n} or {n})
        metrics: dict[str, dict[str, Any]] = {}
        for name in dict.fromkeys(m.name for case in members for m in case.metrics):
            values = [
                float(m.score if m.score is not None else m.value)
                for case in members for m in case.metrics
                if m.name == name and isinstance(m.score if m.score is not None else m.value, (int, float))
                and not isinstance(m.value, bool)
            ]
            metrics[name] = {
                "n": len(values),
                "mean": statistics.fmean(values) if values else None,
                "std": statistics.stdev(values) if len(values) > 1 else (0.0 if values else None),
            }
        out.append({
            "key": key,
            "eval_id": members[0].eval_id,
            "n": n,
            "passed": c,
            "pass_rate": c / n,
            "pass_at_k": {str(k): pass_at_k(n, c, k) for k in ks},
            "pass_hat_k": {str(k): pass_hat_k(n, c, k) for k in ks},
            "metrics": metrics,
            "repetitions": [{"case_id": m.case_id, "passed": repetition_passed(m), "status": m.evaluation_status}
                            for m in members],
        })
    return out
