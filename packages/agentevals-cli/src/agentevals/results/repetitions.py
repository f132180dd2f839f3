"""Repetitions: several cases that match the same eval case are runs of one task.

Per group: n, mean and standard deviation of every numeric metric (each metric a Python evaluator
returned counts too, as ``name.key``), pass rate, pass@k (the unbiased estimator
1 - C(n-c, k) / C(n, k)) and pass^k (C(c, k) / C(n, k): all k independent tries pass), for each
requested k (default k = n). A repetition passes when none of its results FAILED or ERRORed and at
least one PASSED; ``evaluation_failed`` repetitions count as not passed.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from math import comb
from typing import Any, Optional

from . import SKIP_KINDS, CaseResult, MetricResult, Status, case_key

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


def _numeric_values(metric: MetricResult) -> list[tuple[str, Optional[float]]]:
    """The metric's score (or numeric value) under its name, then each other numeric metric it returned
    (a Python evaluator's dict: ``name.key``, booleans as 0/1) — MASEval benchmarks average every one."""
    primary = metric.score if metric.score is not None else metric.value
    numeric = isinstance(primary, (int, float)) and not isinstance(primary, bool)
    out: list[tuple[str, Optional[float]]] = [(metric.name, float(primary) if numeric else None)]
    returned = metric.details.get("metrics")
    if isinstance(returned, dict):
        for key, value in returned.items():
            if key != metric.details.get("score_metric") and isinstance(value, (int, float)):
                out.append((f"{metric.name}.{key}", float(value)))
    return out


def summarize_repetitions(
    cases: Sequence[CaseResult], *, k_values: Sequence[int] = (), repeat_key: Optional[str] = None
) -> list[dict[str, Any]]:
    """One summary per group of cases sharing ``CaseResult.repeat_group``, in first-seen order."""
    groups: dict[str, list[CaseResult]] = {}
    for case in cases:
        if case_key(case) in SKIP_KINDS:  # sampled or filtered out by every evaluator: not a repetition that ran
            continue
        groups.setdefault(case.repeat_group or case.case_id, []).append(case)
    out = []
    for key, members in groups.items():
        for index, case in enumerate(members):
            case.repeat_index = index if len(members) > 1 else None
        n = len(members)
        c = sum(repetition_passed(m) for m in members)
        ks = sorted({k for k in k_values if 1 <= k <= n} or {n})
        samples: dict[str, list[float]] = {}
        for case in members:
            for m in case.metrics:
                for name, value in _numeric_values(m):
                    samples.setdefault(name, [])
                    if value is not None:
                        samples[name].append(value)
        metrics = {
            name: {
                "n": len(values),
                "mean": statistics.fmean(values) if values else None,
                "std": statistics.stdev(values) if len(values) > 1 else (0.0 if values else None),
            }
            for name, values in samples.items()
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
