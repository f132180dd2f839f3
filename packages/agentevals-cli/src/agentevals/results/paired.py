"""Paired comparisons: is a change between two runs a regression, an improvement, or within noise?

The same cases evaluated twice are paired by case id (by occurrence when an id repeats; by eval case and
occurrence when the runs share no case id, as two agent runs of one eval set do). Per metric, and for the
case verdict as a whole (``case``):

    pass/fail   McNemar's exact test on the discordant pairs: ``b`` passed before and fails now, ``c``
                failed before and passes now; p = two-sided binomial test of min(b, c) of b + c at 1/2.
                p < α (default 0.05) with b > c is a ``regression``, with c > b an ``improvement``;
                anything else is ``within noise``. ERROR counts as a fail.
    scores      the mean paired difference (now − before) with a seeded paired-bootstrap 95% interval
                (its normal limit past ``intervals.BOOTSTRAP_MAX_CLUSTERS`` pairs).
                A metric that has scores but no pass/fail verdicts (informational) is classified by it:
                an interval below 0 is a regression, above 0 an improvement.

With repetitions (``repeat_group``), each run's eval cases are also sorted into stable pass (every
repetition passed), flaky (some did) and stable fail: a flaky case failing now is expected noise.

Example:
    ```python
    changes = paired_changes(baseline_run, current_run, alpha=0.05)
    changes[0].verdict, changes[0].p_value     # "regression", 1.8e-12 (40 pass→fail, 0 fail→pass)
    stability(current_run)                     # {"stable_pass": [...], "flaky": ["task3"], "stable_fail": [...]}
    ```
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Optional

from . import SKIP_KINDS, CaseResult, RunResult, Status, case_status, row_key
from .intervals import BOOTSTRAP_MAX_CLUSTERS, clustered_normal_interval
from .stats import mcnemar_exact, paired_bootstrap

__all__ = ["ALPHA", "CASE", "PairedMetric", "format_p", "paired_changes", "stability"]

ALPHA = 0.05
"""The default significance level of ``--alpha``: a 1-in-20 chance of calling pure noise a regression."""
CASE = "case"
"""The name of the row that compares whole-case verdicts (every metric together)."""

_VERDICTS = (Status.PASSED, Status.FAILED, Status.ERROR)


@dataclass
class PairedMetric:
    """One metric (or ``case``) compared over the cases both runs have."""

    metric: str
    pairs: int
    """Cases with a pass/fail verdict in both runs."""
    passed_before: int
    passed_after: int
    pass_to_fail: int
    """McNemar's ``b``: passed in the baseline, fails now."""
    fail_to_pass: int
    """McNemar's ``c``."""
    p_value: Optional[float]
    """McNemar's exact two-sided p; None when no pair has a verdict (scores only)."""
    score_pairs: int = 0
    mean_delta: Optional[float] = None
    """Mean of (score now − score before) over the pairs scored in both runs."""
    delta_interval: Optional[tuple[float, float]] = None
    verdict: str = "within noise"
    """``regression``, ``improvement`` or ``within noise``."""

    def as_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "verdict": self.verdict, "p_value": self.p_value, "pairs": self.pairs,
                "passed_before": self.passed_before, "passed_after": self.passed_after,
                "pass_to_fail": self.pass_to_fail, "fail_to_pass": self.fail_to_pass,
                "score_pairs": self.score_pairs, "mean_delta": self.mean_delta,
                "delta_interval": list(self.delta_interval) if self.delta_interval else None}

    @property
    def p_text(self) -> str:
        """McNemar's p as reports print it (``format_p``): ``0.031``, ``1.8e-12``; ``-`` with no pass/fail pair."""
        return format_p(self.p_value) if self.p_value is not None else "-"

    @property
    def counts_text(self) -> str:
        """Passed before → now over the pairs: ``45/50 → 5/50``; ``-`` with no pass/fail pair."""
        return f"{self.passed_before}/{self.pairs} → {self.passed_after}/{self.pairs}" if self.pairs else "-"

    @property
    def interval_text(self) -> str:
        """The 95% interval of the mean score change: ``-0.412…-0.198``; empty without one."""
        return f"{self.delta_interval[0]:+.3f}…{self.delta_interval[1]:+.3f}" if self.delta_interval else ""

    @property
    def delta_text(self) -> str:
        """The mean score change with its interval, as the report tables print it: ``-0.305 (-0.412…-0.198)``,
        ``+0.010``; ``-`` when no pair has a score in both runs."""
        if self.mean_delta is None:
            return "-"
        return f"{self.mean_delta:+.3f}" + (f" ({self.interval_text})" if self.interval_text else "")

    def describe(self) -> str:
        """``tool_trajectory_avg_score: regression (p=1.8e-12; 40 pass→fail, 0 fail→pass; 45/50 → 5/50 passed)``."""
        parts = []
        if self.p_value is not None:  # then pairs > 0: the counts are never ``-``
            parts += [f"p={self.p_text}", f"{self.pass_to_fail} pass→fail, {self.fail_to_pass} fail→pass",
                      f"{self.counts_text} passed"]
        if self.mean_delta is not None:
            ci = f", 95% CI {self.interval_text}" if self.interval_text else ""
            parts.append(f"score {self.mean_delta:+.3f}{ci}")
        return f"{self.metric}: {self.verdict} ({'; '.join(parts)})"


def format_p(p: float) -> str:
    """``0.031``, ``1.8e-12``: three decimals, or two significant digits when smaller than 0.001."""
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def _passes(status: Status) -> Optional[bool]:
    return None if status not in _VERDICTS else status == Status.PASSED


def _keyed(run: RunResult, by_eval: bool) -> dict[tuple[str, int], CaseResult]:
    """Every case of ``run`` by (case id, or eval id when ``by_eval``; its occurrence among the cases before it
    with that id): ``("t1", 0)``, ``("t1", 1)`` for a case id that repeats."""
    out: dict[tuple[str, int], CaseResult] = {}
    seen: Counter[str] = Counter()
    for case in run.cases:
        ident = (case.eval_id or case.case_id) if by_eval else case.case_id
        out[(ident, seen[ident])] = case
        seen[ident] += 1
    return out


def _pairs(baseline: RunResult, current: RunResult) -> list[tuple[CaseResult, CaseResult]]:
    before, after = _keyed(baseline, False), _keyed(current, False)
    if not before.keys() & after.keys():  # two agent runs: fresh trace ids, the same eval cases
        before, after = _keyed(baseline, True), _keyed(current, True)
    return [(before[k], after[k]) for k in after if k in before]


def paired_changes(baseline: RunResult, current: RunResult, *, alpha: float = ALPHA,
                   seed: int = 0) -> list[PairedMetric]:
    """``case`` first, then each metric in the current run's order (see the module docstring)."""
    pairs = _pairs(baseline, current)
    verdicts: dict[str, list[tuple[bool, bool]]] = {CASE: []}
    scores: dict[str, list[tuple[float, float]]] = {}
    for was, now in pairs:
        a, b = _passes(case_status(was)), _passes(case_status(now))
        if a is not None and b is not None:
            verdicts[CASE].append((a, b))
        earlier = {m.name: m for m in was.metrics if row_key(m) not in SKIP_KINDS}
        for m in now.metrics:
            old = earlier.get(m.name)
            if old is None or row_key(m) in SKIP_KINDS:
                continue
            a, b = _passes(old.status), _passes(m.status)
            if a is not None and b is not None:
                verdicts.setdefault(m.name, []).append((a, b))
            if old.score is not None and m.score is not None:
                scores.setdefault(m.name, []).append((float(old.score), float(m.score)))
    out = []
    for offset, name in enumerate(dict.fromkeys([*verdicts, *scores])):
        out.append(_classify(name, verdicts.get(name, []), scores.get(name, []), alpha=alpha, seed=seed + offset))
    return [p for p in out if p.pairs or p.score_pairs]


def _classify(name: str, verdicts: list[tuple[bool, bool]], scores: list[tuple[float, float]], *, alpha: float,
              seed: int) -> PairedMetric:
    b = sum(1 for x, y in verdicts if x and not y)
    c = sum(1 for x, y in verdicts if y and not x)
    row = PairedMetric(name, len(verdicts), sum(x for x, _ in verdicts), sum(y for _, y in verdicts), b, c,
                       mcnemar_exact(b, c) if verdicts else None, score_pairs=len(scores))
    if scores:
        row.mean_delta = sum(y - x for x, y in scores) / len(scores)
        if len(scores) > BOOTSTRAP_MAX_CLUSTERS:  # the bootstrap's normal limit: large runs compare fast
            row.delta_interval = clustered_normal_interval([y - x for x, y in scores], [1] * len(scores))
        else:
            row.delta_interval = paired_bootstrap([x for x, _ in scores], [y for _, y in scores], seed=seed)
    if row.p_value is not None:
        if row.p_value < alpha:
            row.verdict = "regression" if b > c else "improvement"
    elif row.delta_interval is not None:  # scores only: the interval decides
        if row.delta_interval[1] < 0:
            row.verdict = "regression"
        elif row.delta_interval[0] > 0:
            row.verdict = "improvement"
    return row


def stability(run: RunResult) -> Optional[dict[str, list[str]]]:
    """Eval cases by how their repetitions went: ``stable_pass``, ``flaky``, ``stable_fail`` (names: the
    eval id, else the repeat group); None when the run has no eval case repeated more than once."""
    groups: dict[str, list[bool]] = {}
    names: dict[str, str] = {}
    for case in run.cases:
        passed = _passes(case_status(case))
        if case.repeat_group is None or passed is None:
            continue
        groups.setdefault(case.repeat_group, []).append(passed)
        names.setdefault(case.repeat_group, case.eval_id or case.repeat_group)
    if not any(len(v) > 1 for v in groups.values()):
        return None
    out: dict[str, list[str]] = {"stable_pass": [], "flaky": [], "stable_fail": []}
    for group, results in groups.items():
        kind = "stable_pass" if all(results) else "stable_fail" if not any(results) else "flaky"
        out[kind].append(names[group])
    return out
