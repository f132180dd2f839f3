"""The trace ids of stored cases (schema version 4) on SQLite and a real PostgreSQL: what ``run --unscored``
leaves out and ``serve --pull`` does not evaluate again; and the watermark of a live run's pulled sources."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from agentevals.store import RunStore, SourceRecord
from support.stored_runs import HELM, HELM_ID, K8S, K8S_ID, META, record


def test_scored_traces_are_those_of_stored_cases_with_a_result(store_url):
    store = RunStore.open(store_url)
    try:
        run, _ = record(store, [HELM, K8S])
        statuses = {c.trace_ids[0]: c.metrics[0].status.value for c in run.cases}
        with_result = {t for t, s in statuses.items() if s in ("PASSED", "FAILED")}
        assert HELM_ID in with_result and len(set(statuses.values())) == 2  # helm matches its eval set, k8s not
        assert store.scored_traces([HELM_ID, K8S_ID, "0" * 32]) == with_result
        assert store.scored_traces([HELM_ID, K8S_ID], statuses=list(set(statuses.values()))) == {HELM_ID, K8S_ID}
        assert store.scored_traces([]) == set()
    finally:
        store.close()


def test_a_live_runs_pulled_window_is_a_watermark_for_pull_only(store_url):
    store = RunStore.open(store_url)
    try:
        store.begin_run("20260101-000000-000001-aaaaaa", started_at="2026-01-01T00:00:00.000Z", status="live",
                        **META)
        end = datetime(2026, 1, 1, 1, tzinfo=timezone.utc)
        key = "jaeger+http://h:16686?service=a"
        store.record_sources("20260101-000000-000001-aaaaaa",
                             [SourceRecord(uri=key, key=key, start=end - timedelta(hours=1), end=end, traces=3)])
        assert store.watermark(key) is None  # `run --since last` reads completed runs only
        assert store.watermark(key, live=True) == (end, "20260101-000000-000001-aaaaaa")
    finally:
        store.close()
