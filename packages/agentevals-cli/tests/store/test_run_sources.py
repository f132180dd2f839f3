"""What the run store keeps about a run's backend sources (migration 3, ``run_sources``), on SQLite and on a real
PostgreSQL server: each source's URI and window, read back in input order; ``watermark`` (``--since last``) is the
end of the window the latest completed run read in full, never a failed read's or an unfinished run's."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from agentevals.store import RunStore, SourceRecord, new_run_id, utc_now

KEY = "loop+http://127.0.0.1:9?service=shop"
T0 = datetime(2026, 11, 25, 0, 0, tzinfo=timezone.utc)


def _run(store: RunStore, status: str, *sources: SourceRecord) -> str:
    run_id = new_run_id()
    store.begin_run(run_id, command="agentevals run …", cwd=None, config_digest=None, eval_set_digest=None,
                    versions={}, options={}, started_at=utc_now())
    store.record_sources(run_id, list(sources))
    store.close_run(run_id, status=status)
    return run_id


def test_sources_are_stored_with_their_windows_and_read_back_in_order(store_url):
    store = RunStore.open(store_url)
    first = SourceRecord(uri=KEY + "&since=1d", key=KEY, start=T0, end=T0 + timedelta(days=1), traces=3,
                         newest=T0 + timedelta(hours=20, microseconds=5))
    second = SourceRecord(uri="loop+http://127.0.0.1:9?service=cart", key="loop+http://127.0.0.1:9?service=cart",
                          start=T0, end=T0 + timedelta(hours=1), error="loop+http://127.0.0.1:9: 500 Internal Server Error")
    run_id = _run(store, "completed", first, second)
    assert store.sources(run_id) == [first, second]
    store.record_sources(run_id, [first])  # a resumed run records its sources again: replaced, not added
    assert store.sources(run_id) == [first]
    store.close()


def test_the_watermark_is_the_latest_completed_full_read(store_url):
    store = RunStore.open(store_url)
    assert store.watermark(KEY) is None
    day = [SourceRecord(uri=KEY, key=KEY, start=T0 + timedelta(days=i), end=T0 + timedelta(days=i + 1))
           for i in range(4)]
    done = _run(store, "completed", day[0])
    assert store.watermark(KEY) == (day[0].end, done)
    _run(store, "interrupted", day[1])  # not finished: its window is read again
    failed = SourceRecord(uri=KEY, key=KEY, start=day[2].start, end=day[2].end, error="unreachable")
    _run(store, "completed", failed)  # the source failed: its window is read again
    assert store.watermark(KEY) == (day[0].end, done)
    assert store.watermark(KEY + "x") is None
    later = _run(store, "completed", day[3])
    assert store.watermark(KEY) == (day[3].end, later)
    store.close()
