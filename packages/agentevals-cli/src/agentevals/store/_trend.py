"""A metric over runs: its pass rate and mean score in each run, oldest first (``/api/metrics/{name}/trend``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Optional

from ..results import tally_totals

if TYPE_CHECKING:
    from ._store import RunStore

__all__ = ["case_performance", "metric_trend"]


def metric_trend(store: RunStore, metric: str, limit: int = 20) -> list[dict[str, Any]]:
    """``metric`` in the latest ``limit`` runs that have it, oldest first.

    Each point: ``run_id``, ``started_at``, ``status`` (a ``live`` run is still growing), ``rows``
    (that metric's results in the run), ``passed``, ``evaluated`` and ``pass_rate`` (over PASSED,
    FAILED and ERROR, the rule of ``RunResult.totals()``) with its Wilson 95% interval (``pass_rate_lower``,
    ``pass_rate_upper``; None when nothing was evaluated), and ``mean_score`` (over the rows with a
    score; None when none has one).

    Example:
        ```python
        for point in metric_trend(RunStore.open("runs.sqlite"), "tool_trajectory_avg_score", limit=10):
            print(point["run_id"], point["pass_rate"], point["mean_score"])
        ```
    """
    from ..results.intervals import rate_interval

    rows = store.db.execute(
        "SELECT r.run_id, r.started_at, r.status, m.status, COUNT(*), SUM(m.score), COUNT(m.score) "
        "FROM metric_results m JOIN runs r ON r.run_id = m.run_id WHERE m.metric = ? "
        "GROUP BY r.run_id, r.started_at, r.status, m.status", (metric,))
    runs: dict[str, dict[str, Any]] = {}
    for run_id, started_at, run_status, status, count, score_sum, scored in rows:
        point = runs.setdefault(run_id, {"run_id": run_id, "started_at": started_at, "status": run_status,
                                         "counts": {}, "score_sum": 0.0, "scored": 0})
        point["counts"][status] = int(count)
        point["score_sum"] += float(score_sum or 0.0)
        point["scored"] += int(scored)
    latest = sorted(runs.values(), key=lambda p: (p["started_at"], p["run_id"]))[-max(0, limit):] if limit > 0 else []
    out = []
    for point in latest:
        counts = point.pop("counts")
        score_sum, scored = point.pop("score_sum"), point.pop("scored")
        rate = tally_totals({}, {metric: counts})["metrics"][metric]
        interval = rate_interval(rate["passed"], rate["evaluated"])
        out.append({**point, "rows": sum(counts.values()), "passed": rate["passed"], "evaluated": rate["evaluated"],
                    "pass_rate": rate["pass_rate"], "pass_rate_lower": interval["lower"],
                    "pass_rate_upper": interval["upper"], "mean_score": score_sum / scored if scored else None})
    return out


def case_performance(store: RunStore, run_id: str, *, limit: int = 2000) -> list[Optional[dict[str, Any]]]:
    """The ``performance_metrics`` of the run's first ``limit`` cases, in case order (None: a case without them).

    Example:
        ```python
        figures = case_performance(RunStore.open("runs.sqlite"), run_id)   # [{"latency": …, "tokens": …}, None]
        ```
    """
    rows = store.db.execute("SELECT case_json FROM cases WHERE run_id = ? ORDER BY idx LIMIT ?", (run_id, limit))
    return [json.loads(row[0]).get("performance_metrics") for row in rows]
