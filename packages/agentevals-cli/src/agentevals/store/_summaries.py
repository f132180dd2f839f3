"""Small summaries read straight from the run store's tables for the web UI: the metric names (the trend
chart's picker) and a run's case counts while it is still running (before it has totals)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._store import RunStore

__all__ = ["case_counts", "metric_names"]


def metric_names(store: RunStore) -> list[str]:
    """Every metric name with a result in the store, sorted."""
    return [row[0] for row in store.db.execute("SELECT DISTINCT metric FROM metric_results ORDER BY metric")]


def case_counts(store: RunStore, run_id: str) -> dict[str, int]:
    """A run's stored cases by case status, ``{"total": n, "PASSED": …, "FAILED": …, …}`` (only the
    statuses present): the counts of a run that is still running and has no totals yet."""
    counts = {"total": 0}
    for status, count in store.db.execute("SELECT status, COUNT(*) FROM cases WHERE run_id = ? GROUP BY status",
                                          (run_id,)):
        counts[status] = int(count)
        counts["total"] += int(count)
    return counts
