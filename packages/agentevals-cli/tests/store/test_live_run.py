"""A live run (``serve``'s sessions as the cases of one open run) and a metric's trend, on SQLite and on a
real PostgreSQL server; and ``serve`` itself recording into PostgreSQL."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading

import pytest
from agentevals.api import prepare_run
from agentevals.engine import run_evaluation
from agentevals.errors import ConfigError, RunNotFoundError
from agentevals.results.compare import load_baseline
from agentevals.store import LiveRunRecorder, RunStore, metric_trend
from support.stored_runs import ES_HELM, HELM, K8S, META, record


def evaluate(inputs: list[str], recorder: LiveRunRecorder, **run_kw) -> None:
    evaluators, options, eval_set = prepare_run(eval_set=ES_HELM, **run_kw)
    asyncio.run(run_evaluation(inputs, evaluators, eval_set=eval_set, options=options, consumers=[recorder]))


def test_live_run_replaces_a_case_evaluated_again_and_keeps_totals(store_url):
    store = RunStore.open(store_url)
    recorder = LiveRunRecorder(store, meta={**META, "options": {"live": True}})
    recorder.begin()
    evaluate([HELM, K8S], recorder)  # helm passes, k8s fails
    ids = [c.case_id for c in store.load_run(recorder.run_id).cases]
    (live,) = store.list_runs()
    assert live.status == "live" and live.totals["cases"]["total"] == 2 and live.finished_at is None
    # The same traces again, with a threshold nothing reaches: both cases are replaced, none added.
    evaluate([HELM, K8S], recorder, threshold=1.0, trajectory_match_type="EXACT")
    evaluate([K8S], recorder)
    run = store.load_run(recorder.run_id)
    assert [c.case_id for c in run.cases] == ids and len(set(ids)) == 2  # same places, nothing added
    assert "live run" in run.aborted  # not final while serve records
    stored = store.get_run(recorder.run_id).totals
    assert stored == run.totals() == recorder.totals()
    # Evaluated again with another metric only: the first metric leaves the totals, as in totals().
    evaluate([HELM, K8S], recorder, metrics=["tool_call_count_v1"])
    stored = store.get_run(recorder.run_id).totals
    assert stored == store.load_run(recorder.run_id).totals() and list(stored["metrics"]) == ["tool_call_count_v1"]
    recorder.close()
    closed = store.get_run(recorder.run_id)
    assert closed.status == "completed" and closed.finished_at and closed.totals == stored
    assert store.load_run(recorder.run_id).aborted is None
    store.close()


def test_live_run_writes_from_another_thread_while_reading(store_url):
    """serve writes on its evaluation thread while the API reads on others: one shared connection."""
    store = RunStore.open(store_url)
    recorder = LiveRunRecorder(store, meta=META)
    recorder.begin()
    errors: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(30):
                store.list_runs()
                store.load_run(recorder.run_id)
        except BaseException as exc:  # pragma: no cover - the assertion below shows it
            errors.append(exc)

    readers = [threading.Thread(target=read) for _ in range(3)]
    writer = threading.Thread(target=evaluate, args=([HELM, K8S], recorder))
    for t in (*readers, writer):
        t.start()
    for t in (*readers, writer):
        t.join(60)
    assert errors == [] and recorder.failures == 0
    assert store.get_run(recorder.run_id).totals["cases"]["total"] == 2
    store.close()


def test_a_live_run_cannot_be_resumed_by_run(tmp_path):
    store_path = str(tmp_path / "runs.sqlite")
    store = RunStore.open(store_path)
    recorder = LiveRunRecorder(store, meta={**META, "options": {"live": True}})
    recorder.begin()
    evaluate([HELM], recorder)
    store.db.execute("UPDATE runs SET status = 'running' WHERE run_id = ?", (recorder.run_id,))  # killed, say
    store.db.conn.commit()
    store.close()
    from agentevals.cli._pipeline import RunRequest, _run_identity

    reopened = RunStore.open(store_path)
    with pytest.raises(ConfigError, match=f"--resume {recorder.run_id}: that run records the sessions of agentevals serve"):
        _run_identity(RunRequest(inputs=[HELM], evaluators=[], options=None, resume=recorder.run_id), reopened)  # type: ignore[arg-type]
    # Without an id, --resume looks for the latest run of agentevals run and passes the live one by.
    with pytest.raises(RunNotFoundError, match="no interrupted/running/aborted/failed run of agentevals run in the run store"):
        _run_identity(RunRequest(inputs=[HELM], evaluators=[], options=None, resume=""), reopened)  # type: ignore[arg-type]
    reopened.close()


def test_latest_of_run_passes_live_runs_by(tmp_path):
    """--baseline latest and --rerun-failed compare with the last batch run, not a serve started after it."""
    store = RunStore.open(str(tmp_path / "runs.sqlite"))
    batch, _ = record(store, [HELM, K8S])
    recorder = LiveRunRecorder(store, meta={**META, "options": {"live": True}})
    recorder.begin()
    evaluate([HELM], recorder)
    recorder.close()
    assert store.resolve("latest") == recorder.run_id  # runs show latest: whatever ran last
    assert store.resolve("latest", batch=True) == store.resolve(None, batch=True) == batch.run_id
    assert load_baseline("latest", store)[1] == batch.run_id
    assert store.resolve(recorder.run_id, batch=True) == recorder.run_id  # an explicit id is taken as given
    store.close()


def test_metric_trend_oldest_first_over_batch_and_live_runs(store_url):
    store = RunStore.open(store_url)
    first, _ = record(store, [HELM, K8S])
    recorder = LiveRunRecorder(store, meta=META)
    recorder.begin()
    evaluate([HELM], recorder)
    points = metric_trend(store, "tool_trajectory_avg_score", limit=10)
    assert [p["run_id"] for p in points] == [first.run_id, recorder.run_id]
    assert [p["status"] for p in points] == ["completed", "live"]
    assert [(p["passed"], p["evaluated"], p["pass_rate"]) for p in points] == [(1, 2, 0.5), (1, 1, 1.0)]
    scores = [m.score for c in first.cases for m in c.metrics]
    assert points[0]["mean_score"] == pytest.approx(sum(scores) / len(scores))
    assert metric_trend(store, "tool_trajectory_avg_score", limit=1) == points[1:]
    assert metric_trend(store, "no_such_metric") == []
    store.close()


def test_serve_records_sessions_in_postgres(postgres_url):
    pytest.importorskip("fastapi", reason="the serve extra is not installed")
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from support.live_server import listed_runs, start_server, stop_server
    from support.weather_agent import run_weather_agent

    server = start_server("--store", postgres_url, "-m", "tool_call_count_v1")
    try:
        trace_id = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"))
        server.wait_for_session(lambda s: s["session_id"] == trace_id)
        (live,) = server.get("/runs").json()["data"]
        assert live["status"] == "live" and live["totals"]["cases"]["total"] == 1
        shown = server.get(f"/runs/{live['run_id']}").json()["data"]
        assert [c["case_id"] for c in shown["cases"]] == [trace_id]
    finally:
        stop_server(server.process)
    (closed,) = listed_runs(postgres_url)
    assert closed["run_id"] == live["run_id"] and closed["status"] == "completed"
    assert closed["totals"]["cases"]["total"] == 1


def test_serve_refuses_a_postgres_store_behind_the_schema(postgres_server):
    url = postgres_server.create_database("serve_unmigrated")
    served = subprocess.run([sys.executable, "-m", "agentevals", "serve", "-p", "0", "--otlp-http-port", "0",
                             "--otlp-grpc-port", "0", "--store", url], capture_output=True, text=True, timeout=60)
    assert served.returncode == 2
    assert served.stderr.strip().endswith("run 'agentevals store migrate --store URL'")
