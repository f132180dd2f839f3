"""95% intervals on a run's figures: one function computes them, every report shows them.

    pass rates    Wilson score interval over the counted cases (or a metric's counted rows): the same
                  cases and statuses as ``RunResult.totals()``.
    mean scores   percentile bootstrap of each metric's mean score, seeded (the same run always prints the
                  same interval). With repetitions the unit resampled is the eval case (``repeat_group``):
                  the repetitions of one task are not independent, so resampling rows would understate
                  the noise. Beyond ``BOOTSTRAP_MAX_CLUSTERS`` units the bootstrap's own limit is used
                  instead, the normal interval with a cluster-robust standard error: the two agree to the
                  third decimal there, and a report of 100,000 cases stays instant.

Example:
    ```python
    figures = run_intervals(run)
    figures["pass_rate"]                  # {"rate": 0.9, "passed": 45, "evaluated": 50, "lower": 0.786, "upper": 0.957}
    figures["metrics"]["trajectory"]      # {"pass_rate": {...}, "mean_score": {"mean", "lower", "upper", "n", "clusters"}}
    format_interval(figures["pass_rate"])  # "95% CI 78.64–95.66%"
    ```
"""

from __future__ import annotations

import math
import random
from operator import itemgetter
from typing import Any, Optional

from . import SKIP_KINDS, CaseResult, RunResult, Status, evaluated_cases, row_key
from .stats import BOOTSTRAP_RESAMPLES, Z95, quantile, wilson_interval

__all__ = ["BOOTSTRAP_MAX_CLUSTERS", "LEVEL", "ScoreClusters", "add_score_clusters", "clustered_normal_interval",
           "format_interval", "format_mean_interval", "format_rate_interval", "format_totals_rate", "rate_interval", "run_intervals", "totals_interval"]

LEVEL = 0.95
"""The level of every interval the reports print."""
BOOTSTRAP_MAX_CLUSTERS = 200
"""Above this many resampling units, mean-score intervals use the normal approximation (see above)."""


def rate_interval(passed: int, evaluated: int) -> dict[str, Any]:
    """``{"rate", "passed", "evaluated", "lower", "upper"}``: the rate and its Wilson 95% interval (bounds None
    when nothing was evaluated)."""
    bounds = wilson_interval(passed, evaluated)
    return {"rate": passed / evaluated if evaluated else None, "passed": passed, "evaluated": evaluated,
            "lower": bounds[0] if bounds else None, "upper": bounds[1] if bounds else None}


def _clustered_mean(clusters: list[tuple[float, int]], *, seed: int,
                    resamples: int = BOOTSTRAP_RESAMPLES) -> Optional[tuple[float, float]]:
    """Percentile bootstrap of ``sum / count`` over clusters ``(sum of scores, number of scores)``, resampling
    clusters; ``random.choices`` keeps a run of thousands of cases well under a second per metric."""
    if not clusters:
        return None
    n = len(clusters)
    sums = [s for s, _ in clusters]
    counts = [c for _, c in clusters]
    if n > BOOTSTRAP_MAX_CLUSTERS:
        return clustered_normal_interval(sums, counts)
    rng = random.Random(seed)
    indexes = range(n)
    means = []
    for _ in range(resamples):
        pick = itemgetter(*rng.choices(indexes, k=n))
        picked_sums, picked_counts = (pick(sums), pick(counts)) if n > 1 else ((sums[0],), (counts[0],))
        means.append(math.fsum(picked_sums) / sum(picked_counts))
    means.sort()
    tail = (1.0 - LEVEL) / 2
    return quantile(means, tail), quantile(means, 1.0 - tail)


def clustered_normal_interval(sums: list[float], counts: list[int]) -> tuple[float, float]:
    """Mean ± z·SE with the cluster-robust (ratio-estimator) standard error
    ``SE² = k/(k−1) · Σ(Sᵢ − R·Cᵢ)² / (ΣC)²``, kept within the cluster means as a bootstrap's would be."""
    k, total = len(sums), sum(counts)
    ratio = math.fsum(sums) / total
    se = math.sqrt(k / (k - 1) * math.fsum((s - ratio * c) ** 2 for s, c in zip(sums, counts, strict=True))) / total
    means = [s / c for s, c in zip(sums, counts, strict=True)]
    return max(min(means), ratio - Z95 * se), min(max(means), ratio + Z95 * se)


ScoreClusters = dict[str, dict[str, list[float]]]
"""Metric name → cluster → [sum of scores, number of scores] (see ``add_score_clusters``)."""


def add_score_clusters(scores: ScoreClusters, index: int, case: CaseResult) -> None:
    """Add case number ``index``'s scores to ``scores``, summed per cluster: the eval case when the run has
    repetitions (``repeat_group``), else the case itself. Rows skipped or INFORMATIONAL carry no score here."""
    cluster = f"group:{case.repeat_group}" if case.repeat_group is not None else f"case:{index}"
    for m in case.metrics:
        if m.score is None or row_key(m) in SKIP_KINDS or m.status == Status.INFORMATIONAL:
            continue
        per = scores.setdefault(m.name, {}).setdefault(cluster, [0.0, 0])
        per[0] += float(m.score)
        per[1] += 1


def run_intervals(run: RunResult, *, strict: bool = False, seed: int = 0) -> dict[str, Any]:
    """The run's pass rate and each metric's pass rate and mean score, each with its 95% interval.

    ``{"level": 0.95, "pass_rate": rate_interval(...), "metrics": {name: {"pass_rate": rate_interval(...),
    "mean_score": {"mean", "lower", "upper", "n", "clusters"} or None}}}``. Counts come from
    ``RunResult.totals(strict=...)``, so an interval always belongs to the rate printed beside it.
    """
    totals = run.totals(strict=strict)
    cases = totals["cases"]
    evaluated = evaluated_cases(cases, strict=strict)
    scores = getattr(run.cases, "score_clusters", None)  # a CaseList keeps them as cases are appended
    if scores is None:
        scores = {}
        for index, case in enumerate(run.cases):
            add_score_clusters(scores, index, case)
    metrics: dict[str, Any] = {}
    for offset, (name, entry) in enumerate(totals["metrics"].items()):
        clusters = [(s, int(c)) for s, c in scores.get(name, {}).values()]
        mean_score = None
        if clusters:
            n = sum(c for _, c in clusters)
            bounds = _clustered_mean(clusters, seed=seed + offset)
            mean_score = {"mean": sum(s for s, _ in clusters) / n, "lower": bounds[0] if bounds else None,
                          "upper": bounds[1] if bounds else None, "n": n, "clusters": len(clusters)}
        metrics[name] = {"pass_rate": rate_interval(entry["passed"], entry["evaluated"]), "mean_score": mean_score}
    return {"level": LEVEL, "pass_rate": rate_interval(cases["PASSED"], evaluated), "metrics": metrics}


def _percent(value: float, *, up: bool) -> str:
    # Bounds are rounded outwards, so the printed interval never claims more precision than it has.
    scaled = value * 10000
    return f"{(math.ceil(scaled) if up else math.floor(scaled)) / 100:.2f}"


def format_interval(rate: Optional[dict[str, Any]]) -> str:
    """``95% CI 78.64–95.66%`` for a ``rate_interval``; empty when it has no bounds."""
    if not rate or rate.get("lower") is None or rate.get("upper") is None:
        return ""
    return f"95% CI {_percent(rate['lower'], up=False)}–{_percent(rate['upper'], up=True)}%"


def format_rate_interval(passed: int, evaluated: int) -> str:
    """``50.00% (1/2, 95% CI 9.45–90.55%)``: the pass rate as ``format_rate`` prints it, with its interval."""
    from .gates import format_rate

    if not evaluated:
        return format_rate(None)
    ci = format_interval(rate_interval(passed, evaluated))
    return f"{format_rate(passed / evaluated if evaluated else None)} ({passed}/{evaluated}{', ' + ci if ci else ''})"


def format_totals_rate(totals: Optional[dict[str, Any]]) -> str:
    """A stored run's pass rate with its interval, from its ``totals`` (``runs list`` and the UI's ``/runs``):
    ``50.00% (1/2, 95% CI 9.45–90.55%)``; ``-`` without totals."""
    from .gates import format_rate

    if not totals:
        return "-"
    rate = totals_interval(totals)
    if rate is None:
        return format_rate(totals.get("pass_rate"))
    return format_rate_interval(rate["passed"], rate["evaluated"])


def totals_interval(totals: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """A stored run's pass rate and its Wilson interval (``rate_interval``) from its ``totals``; None when it has
    no pass rate (``runs list --json``, ``/api/runs`` and MCP's ``list_runs`` as ``pass_rate_interval``)."""
    if not totals or totals.get("pass_rate") is None:
        return None
    cases = totals.get("cases") or {}
    evaluated = evaluated_cases(cases, strict=False)
    if not evaluated:
        return None
    if abs(cases.get("PASSED", 0) / evaluated - totals["pass_rate"]) > 1e-9:  # a --strict run counted NOT_EVALUATED
        evaluated = evaluated_cases(cases, strict=True)
    return rate_interval(cases.get("PASSED", 0), evaluated)


def format_mean_interval(mean_score: Optional[dict[str, Any]]) -> str:
    """``0.812 (95% CI 0.761–0.859)`` for a ``mean_score`` entry; ``-`` when the metric has no scores."""
    if not mean_score:
        return "-"
    text = f"{mean_score['mean']:.3f}"
    if mean_score.get("lower") is None:
        return text
    return (f"{text} (95% CI {math.floor(mean_score['lower'] * 1000) / 1000:.3f}–"
            f"{math.ceil(mean_score['upper'] * 1000) / 1000:.3f})")
