"""Repetitions: several cases that are runs of one task (``CaseResult.repeat_group``).

Cases are grouped only when the run asked for repetitions (``--repeat-key``, ``--pass-at-k``) or their
traces say they are (``agentevals.repeat_index``): a case without ``repeat_group`` is no repetition.

Per group: n, mean and standard deviation of every numeric metric (each metric a Python evaluator
returned counts too, as ``name.key``), pass rate, pass@k (the unbiased estimator
1 - C(n-c, k) / C(n, k)) and pass^k (C(c, k) / C(n, k): all k independent tries pass), for each
requested k (default k = n). A repetition passes when none of its results FAILED or ERRORed and at
least one PASSED; ``evaluation_failed`` repetitions count as not passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb
from typing import Any, Optional

from . import SKIP_KINDS, CaseResult, MetricResult, Status, case_key

__all__ = ["RepetitionTally", "pass_at_k", "pass_hat_k", "repetition_passed", "summarize_repetitions"]


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
    """One summary per group of cases sharing ``CaseResult.repeat_group``, in first-seen order; sets each
    case's ``repeat_index`` (its position in its group, None when alone or without ``repeat_group``).

    One pass over ``cases`` (``RepetitionTally``: the engine feeds it as cases are emitted instead)."""
    tally = RepetitionTally()
    for i, case in enumerate(cases):
        tally.add(i, case)
    return tally.finish(cases, k_values=k_values)


class RepetitionTally:
    """``summarize_repetitions`` one case at a time: running figures per group, never the cases, so a
    ``CaseList`` spilled to disk is not read again at the end (only a case whose ``repeat_index`` changes
    is, and written back).

        tally = RepetitionTally()
        for i, case in enumerate(cases):
            tally.add(i, case)
        run.repetitions = tally.finish(cases, k_values=(1, 5))
    """

    def __init__(self) -> None:
        self._groups: dict[str, _Group] = {}
        self._loose: list[int] = []  # cases that are no repetition but carry a repeat_index

    def add(self, i: int, case: CaseResult) -> None:
        """Case number ``i`` of the run (its position in ``cases``)."""
        if case.repeat_group is None and case.repeat_index is None:  # most cases: nothing to tally (asked first)
            return
        if case_key(case) in SKIP_KINDS:  # sampled or filtered out by every evaluator: not a repetition that ran
            return
        if case.repeat_group is None:  # not a repetition (none asked for, no trace says so)
            if case.repeat_index is not None:
                self._loose.append(i)
            return
        group = self._groups.get(case.repeat_group)
        if group is None:
            group = self._groups[case.repeat_group] = _Group(case.eval_id)
        group.add(i, case)

    def finish(self, cases: Sequence[CaseResult], *, k_values: Sequence[int] = ()) -> list[dict[str, Any]]:
        """Set each case's ``repeat_index`` in ``cases`` (the sequence that was fed) and return the summaries."""
        replace = getattr(cases, "replace", None)  # a CaseList: spilled cases are copies, written back
        changes: list[tuple[int, Optional[int]]] = [(i, None) for i in self._loose]
        for group in self._groups.values():
            for position, (i, index) in enumerate(group.indexes):
                wanted = position if len(group.indexes) > 1 else None
                if index != wanted:
                    changes.append((i, wanted))
        for i, wanted in changes:
            case = cases[i]
            case.repeat_index = wanted
            if replace is not None:
                replace(i, case)
        return [group.summary(key, k_values) for key, group in self._groups.items()]


class _Group:
    """Running figures of one group of repetitions."""

    __slots__ = ("eval_id", "indexes", "passed", "repetitions", "samples")

    def __init__(self, eval_id: Optional[str]) -> None:
        self.eval_id = eval_id
        self.indexes: list[tuple[int, Optional[int]]] = []  # (position in the run, repeat_index it has)
        self.passed = 0
        self.samples: dict[str, list[float]] = {}
        self.repetitions: list[dict[str, Any]] = []

    def add(self, i: int, case: CaseResult) -> None:
        self.indexes.append((i, case.repeat_index))
        passed = repetition_passed(case)
        self.passed += passed
        for m in case.metrics:
            for name, value in _numeric_values(m):
                values = self.samples.setdefault(name, [])
                if value is not None:
                    values.append(value)
        self.repetitions.append({"case_id": case.case_id, "passed": passed, "status": case.evaluation_status})

    def summary(self, key: str, k_values: Sequence[int]) -> dict[str, Any]:
        import statistics  # here: a run without repetitions need not pay for it

        n, c = len(self.indexes), self.passed
        ks = sorted({k for k in k_values if 1 <= k <= n} or {n})
        metrics = {
            name: {
                "n": len(values),
                "mean": statistics.fmean(values) if values else None,
                "std": statistics.stdev(values) if len(values) > 1 else (0.0 if values else None),
            }
            for name, values in self.samples.items()
        }
        return {
            "key": key,
            "eval_id": self.eval_id,
            "n": n,
            "passed": c,
            "pass_rate": c / n,
            "pass_at_k": {str(k): pass_at_k(n, c, k) for k in ks},
            "pass_hat_k": {str(k): pass_hat_k(n, c, k) for k in ks},
            "metrics": metrics,
            "repetitions": self.repetitions,
        }
