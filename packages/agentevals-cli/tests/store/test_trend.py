"""What the web UI reads from the run store: a metric's trend over runs, the metric names, a running run's
case counts, one case by its index; on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import pytest
from agentevals.results import CaseResult, MetricResult, RunResult, Status
from agentevals.store import RunStore, case_counts, metric_names, metric_trend
from support.reference_stats import wilson

META = {"command": "agentevals run …", "cwd": "/x", "config_digest": None, "eval_set_digest": None,
        "versions": {}, "options": {}}


def case(case_id: str, *rows: tuple[str, Status, float | None]) -> CaseResult:
    return CaseResult(case_id=case_id, trace_ids=[case_id], sources=["t.json"],
                      metrics=[MetricResult(name=n, status=s, score=score) for n, s, score in rows])


def add_run(store: RunStore, run_id: str, started_at: str, cases: list[CaseResult], *, finish: bool = True) -> None:
    store.begin_run(run_id, started_at=started_at, **META)
    for i, c in enumerate(cases):
        store.record_case(run_id, i, c, {})
    if finish:
        run = RunResult(cases=cases, run_id=run_id)
        store.finish_run(run, status="completed", exit_code=run.exit_code(), totals=run.totals())


def test_metric_trend_per_run_oldest_first(store_url):
    store = RunStore.open(store_url)
    add_run(store, "r1", "2026-01-01T00:00:00Z", [case("a", ("traj", Status.PASSED, 1.0), ("resp", Status.FAILED, 0.2)),
                                                   case("b", ("traj", Status.FAILED, 0.0))])
    add_run(store, "r2", "2026-01-02T00:00:00Z", [case("a", ("traj", Status.PASSED, 1.0)),
                                                   case("b", ("traj", Status.ERROR, None)),
                                                   case("c", ("traj", Status.NOT_EVALUATED, None))])
    add_run(store, "r3", "2026-01-03T00:00:00Z", [case("a", ("resp", Status.NOT_EVALUATED, None))])

    trend = metric_trend(store, "traj")
    assert [p["run_id"] for p in trend] == ["r1", "r2"]  # r3 has no traj result
    first, second = trend
    assert first["pass_rate"] == 0.5 and first["mean_score"] == 0.5 and first["rows"] == 2
    assert first["started_at"] == "2026-01-01T00:00:00Z"
    # ERROR counts as evaluated and failing, NOT_EVALUATED not at all; only scored rows make the mean
    assert second["pass_rate"] == 0.5 and second["mean_score"] == 1.0 and second["rows"] == 3
    assert second["passed"] == 1 and second["evaluated"] == 2
    lower, upper = wilson(1, 2)  # Wilson 95% for 1/2, closed form
    assert second["pass_rate_lower"] == pytest.approx(lower)
    assert second["pass_rate_upper"] == pytest.approx(upper)

    (only,) = metric_trend(store, "traj", limit=1)
    assert only["run_id"] == "r2"  # the newest runs, still oldest first
    resp = metric_trend(store, "resp")
    assert [(p["run_id"], p["pass_rate"], p["mean_score"]) for p in resp] == [("r1", 0.0, 0.2), ("r3", None, None)]
    assert resp[1]["pass_rate_lower"] is None and resp[1]["pass_rate_upper"] is None  # nothing evaluated
    assert metric_trend(store, "unknown") == []
    assert metric_names(store) == ["resp", "traj"]
    store.close()


def test_case_counts_and_one_case_by_index(store_url):
    store = RunStore.open(store_url)
    add_run(store, "r1", "2026-01-01T00:00:00Z", [case("a", ("traj", Status.PASSED, 1.0)),
                                                   case("b", ("traj", Status.FAILED, 0.0))], finish=False)
    store.record_case("r1", 5, case("f", ("traj", Status.ERROR, None)), {})  # a gap: cases 2-4 never finished
    assert case_counts(store, "r1") == {"total": 3, "PASSED": 1, "FAILED": 1, "ERROR": 1}
    assert case_counts(store, "nope") == {"total": 0}
    assert [(i, c.case_id) for i, c in store.load_cases("r1")] == [(0, "a"), (1, "b"), (5, "f")]
    ((index, found),) = store.load_cases("r1", index=5)
    assert index == 5 and found.case_id == "f" and found.metrics[0].status == Status.ERROR
    assert store.load_cases("r1", index=3) == []
    assert [c.case_id for c in store.load_run("r1").cases] == ["a", "b", "f"]
    store.close()
