"""``serve`` records its sessions in the run store as one run (``live`` while serving), and the runs API
reads that store: a real OpenTelemetry SDK exporting to a running ``serve``, ``agentevals runs`` in
subprocesses, and stores filled by real ``agentevals run`` invocations on the shipped samples."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
import requests
from support.live_server import EXAMPLES, REPO, agentevals, listed_runs, stop_server
from support.polling import wait_for

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from support.weather_agent import QUESTION, run_weather_agent, weather_eval_set

HELM = EXAMPLES / "traces/helm.json"
HELM_SET = EXAMPLES / "evalsets/eval_set_helm.json"


def conversation_turn(endpoint: str, conversation: str, city: str) -> str:
    """One turn of a conversation (``gen_ai.conversation.id``) from the plain SDK; returns its trace id."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces")))
    tracer = provider.get_tracer("weather")
    messages = lambda role, text: json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])  # noqa: E731
    with tracer.start_as_current_span("invoke_agent weather", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather",
            "gen_ai.conversation.id": conversation,
            "gen_ai.input.messages": messages("user", QUESTION),
            "gen_ai.output.messages": messages("assistant", f"It is sunny in {city}.")}) as root:
        with tracer.start_as_current_span("execute_tool get_weather", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.arguments": json.dumps({"city": city}), "gen_ai.tool.call.result": "sunny"}):
            pass
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    return trace_id


def test_sessions_from_the_sdk_are_cases_of_the_live_run(serve, tmp_path):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    store = str(tmp_path / "runs.sqlite")
    weather_eval_set(tmp_path)
    server = serve("--eval-sets", str(tmp_path), "--store", store, "--session-idle", "1")
    (live,) = listed_runs(store)
    assert live["status"] == "live" and live["command"].startswith("agentevals serve ")
    assert live["totals"]["cases"]["total"] == 0

    passed = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"))
    failed = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"), city="Rome")
    conversation_turn(server.otlp_http, "conv-7", "Paris")
    server.wait_for_session(lambda s: s["session_id"] == "conv-7" and s["invocation_count"] == 1)

    def totals(expected: dict) -> dict | None:
        run = next(r for r in listed_runs(store) if r["run_id"] == live["run_id"])
        cases = run["totals"]["cases"]
        return run if {k: cases[k] for k in expected} == expected else None

    wait_for(lambda: totals({"total": 3, "PASSED": 2, "FAILED": 1}), what="three recorded cases")
    # A later turn re-evaluates the whole conversation (two turns against a one-turn eval case: not
    # evaluated): its case is replaced, not added, and the totals follow.
    conversation_turn(server.otlp_http, "conv-7", "Rome")
    server.wait_for_session(lambda s: s["session_id"] == "conv-7" and s["invocation_count"] == 2)
    run = wait_for(lambda: totals({"total": 3, "PASSED": 1, "FAILED": 1, "NOT_EVALUATED": 1}), what="replaced case")
    assert run["status"] == "live" and run["totals"]["pass_rate"] == 0.5
    table = agentevals("runs", "list", "--store", store).stdout.splitlines()
    row = next(line for line in table if line.startswith(live["run_id"]))
    assert row.split()[3:7] == ["live", "3", "1", "50.00%"], table

    shown = agentevals("runs", "show", live["run_id"], "-o", "json", "--store", store)
    document = _ours(server.get(f"/runs/{live['run_id']}").json()["data"], like=json.loads(shown.stdout))
    assert [c["case_id"] for c in document["cases"]] == [passed, failed, "conv-7"]
    conv = document["cases"][2]
    assert conv["invocation_count"] == 2 and conv["metrics"][0]["status"] == "NOT_EVALUATED"
    assert document["complete"] is False and "live run" in document["incomplete"]
    assert document == json.loads(shown.stdout)

    stop_server(server.process)  # SIGTERM: the run is closed with its totals
    (closed,) = listed_runs(store)
    assert closed["status"] == "completed" and closed["finished_at"]
    assert closed["totals"] == run["totals"]
    final = json.loads(agentevals("runs", "show", live["run_id"], "-o", "json", "--store", store).stdout)
    assert final["complete"] is True and final["cases"] == document["cases"]


def test_a_session_the_api_calls_evaluated_is_in_the_run_store(serve, tmp_path):
    """Sessions are written to the live run in batches: one a client sees evaluated is already stored (the
    session is marked after its batch is written), and every one of a burst is stored once."""
    from agentevals.store import RunStore
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

    count = 150  # within /api/sessions' page: a few evaluation batches
    spans = [Span(trace_id=(i + 1).to_bytes(16, "big"), span_id=(i + 1).to_bytes(8, "big"), name="chat",
                  start_time_unix_nano=1, end_time_unix_nano=2,
                  attributes=[KeyValue(key="gen_ai.operation.name", value=AnyValue(string_value="chat"))])
             for i in range(count)]
    body = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])])
    store = str(tmp_path / "runs.sqlite")
    server = serve("--store", store, "-m", "tool_call_count_v1")
    (live,) = listed_runs(store)
    sent = requests.post(f"{server.otlp_http}/v1/traces", data=body.SerializeToString(), timeout=30,
                         headers={"Content-Type": "application/x-protobuf"})
    assert sent.status_code == 200
    runs = RunStore.open(store)
    try:
        deadline = time.monotonic() + 120
        evaluated: set[str] = set()
        while len(evaluated) < count:
            assert time.monotonic() < deadline, f"{len(evaluated)} of {count} sessions evaluated"
            sessions = server.get("/sessions", params={"limit": 200}).json()["data"]
            evaluated = {s["session_id"] for s in sessions if s["status"] == "evaluated"}
            stored = [case.case_id for _, case in runs.load_cases(live["run_id"])]  # read after the sessions
            assert evaluated <= set(stored), sorted(evaluated - set(stored))[:5]
            time.sleep(0.05)
        assert sorted(stored) == sorted(f"{i + 1:032x}" for i in range(count))  # each once
        assert runs.get_run(live["run_id"]).totals["cases"]["total"] == count
    finally:
        runs.close()


def test_done_when_default_endpoint_and_default_store(monkeypatch, tmp_path):
    """The issue's check, literally: an agent on the plain SDK with its default endpoint, `serve` with its
    default OTLP ports and default run store; the session shows in `agentevals runs list` (no flags)."""
    import socket

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from support.live_server import start_server

    for port in (4318, 4317):
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                pytest.skip(f"port {port} is in use on this machine")
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AGENTEVALS_STORE")  # the user data folder's runs.sqlite (XDG_DATA_HOME is a tmp dir)
    weather_eval_set(tmp_path)
    try:
        server = start_server("--eval-sets", str(tmp_path), default_otlp_ports=True)
    except AssertionError as exc:
        if "cannot listen" in str(exc):
            pytest.skip(f"default OTLP ports taken meanwhile: {exc}")
        raise
    try:
        assert server.otlp_http == "http://127.0.0.1:4318"
        trace_id = run_weather_agent(OTLPSpanExporter())  # no endpoint: the SDK's default, localhost:4318
        finished = time.monotonic()
        server.wait_for_session(lambda s: s["session_id"] == trace_id)

        def in_runs_list() -> str | None:
            table = agentevals("runs", "list").stdout
            row = next((line for line in table.splitlines() if " live " in line), "")
            return row if row.split()[4:6] == ["1", "0"] else None  # 1 case, 0 failed

        wait_for(in_runs_list, what="the session in `agentevals runs list`")
        print(f"session in `agentevals runs list` {time.monotonic() - finished:.2f}s after the agent finished")
    finally:
        stop_server(server.process)


def test_serve_refuses_a_store_it_cannot_open_as_run_does(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    store = str(blocker / "runs.sqlite")  # a folder that is a file
    served = subprocess.run([sys.executable, "-m", "agentevals", "serve", "-p", "0", "--otlp-http-port", "0",
                             "--otlp-grpc-port", "0", "--store", store], capture_output=True, text=True, timeout=60,
                            cwd=REPO)
    ran = agentevals("run", str(HELM), "-e", str(HELM_SET), "--store", store)
    assert served.returncode == ran.returncode == 2
    assert served.stderr.strip().splitlines() == ran.stderr.strip().splitlines()
    assert len(served.stderr.strip().splitlines()) == 1 and f"run store {store}: cannot open" in served.stderr


def test_runs_api_over_a_store_filled_by_run(serve, filled_store):
    store, first, second = filled_store
    server = serve("--store", store, "--headless")
    runs = server.get("/runs", params={"limit": 10}).json()
    assert runs["error"] is None
    assert [r["run_id"] for r in runs["data"]][1:] == [second, first]  # newest first, serve's own live run on top
    assert runs["data"][0]["status"] == "live"
    listed = [r for r in listed_runs(store) if r["run_id"] in (first, second)]
    assert [_ours(r, like=c) for r, c in zip(runs["data"][1:], listed, strict=True)] == listed

    cli = json.loads(agentevals("runs", "show", first, "-o", "json", "--store", store).stdout)
    shown = _ours(server.get(f"/runs/{first[:-2]}").json()["data"], like=cli)  # a unique prefix is enough
    assert shown == cli
    assert shown["run_id"] == first and shown["complete"] is True

    compared = server.get("/runs/compare", params={"a": first, "b": second}).json()["data"]
    cli = json.loads(agentevals("runs", "compare", first, second, "--json", "--store", store).stdout)
    assert compared == {**cli, "headline": compared["headline"]}
    assert compared["regressions"] and compared["headline"].startswith(f"baseline {first}: ")

    trend = server.get("/metrics/tool_trajectory_avg_score/trend", params={"limit": 5}).json()["data"]
    assert [p["run_id"] for p in trend] == [first, second]  # oldest first; the live run has no rows yet
    by_id = {r["run_id"]: r for r in listed_runs(store)}
    for point in trend:
        metric = by_id[point["run_id"]]["totals"]["metrics"]["tool_trajectory_avg_score"]
        assert (point["passed"], point["evaluated"], point["pass_rate"]) == (
            metric["passed"], metric["evaluated"], metric["pass_rate"])
    assert trend[1]["pass_rate"] == 0.0 and trend[0]["pass_rate"] > 0
    runs_shown = json.loads(agentevals("runs", "show", first, "-o", "json", "--store", store).stdout)
    scores = [m["score"] for c in runs_shown["cases"] for m in c["metrics"]
              if m["name"] == "tool_trajectory_avg_score" and m["score"] is not None]
    assert scores and trend[0]["mean_score"] == pytest.approx(sum(scores) / len(scores))
    second_shown = json.loads(agentevals("runs", "show", second, "-o", "json", "--store", store).stdout)
    (similarity,) = [m["score"] for c in second_shown["cases"] for m in c["metrics"] if m["name"] == "response_match_score"]
    assert server.get("/metrics/response_match_score/trend").json()["data"][1]["mean_score"] == pytest.approx(similarity)
    assert server.get("/metrics/tool_trajectory_avg_score/trend", params={"limit": 1}).json()["data"] == trend[1:]

    missing = server.get("/runs/nope")
    assert missing.status_code == 404
    line = f"no run 'nope' in the run store {store} (see 'agentevals runs list')"
    assert missing.json() == {"data": None, "error": line, "detail": line}  # 0.11's FastAPI `detail` too
    assert server.get("/runs/compare", params={"a": "nope"}).status_code == 404

    # 0.11's filters: status (ours or 0.11's words, repeatable) and before (runs started earlier)
    def ids(**params):
        answer = server.get("/runs", params=params)
        assert answer.status_code == 200, answer.text
        return [r["run_id"] for r in answer.json()["data"]]

    assert ids(status="succeeded") == ids(status="completed") == [second, first]
    assert ids(status=["running", "completed"])[1:] == [second, first]  # 0.11's running: serve's live run too
    assert ids(status="live") == ids(status="running")[:1] and ids(status="live")[0] not in (first, second)
    assert ids(status="queued") == [] and ids(status="cancelled") == []
    started = {r["run_id"]: r["started_at"] for r in listed_runs(store)}
    assert ids(before=started[second], status="completed") == [first]
    assert ids(before="2000-01-01T00:00:00Z") == []
    bad = server.get("/runs", params={"status": "done"})
    assert bad.status_code == 400 and "status must be among" in bad.json()["detail"] and "succeeded" in bad.json()["error"]
    assert server.get("/runs", params={"before": "yesterday"}).status_code == 400

    schema = requests.get(server.api.removesuffix("/api") + "/openapi.json", timeout=10).json()
    for path in ("/api/runs", "/api/runs/{run}", "/api/runs/compare", "/api/metrics/{name}/trend"):
        assert schema["paths"][path]["get"]["summary"], path


def test_runs_api_without_a_store_and_with_a_token(serve, tmp_path):
    server = serve("--no-store", "--headless")
    for path in ("/runs", "/runs/latest", "/metrics/x/trend"):
        answer = server.get(path)
        assert answer.status_code == 409
        assert answer.json()["error"].startswith("this server runs with --no-store")
    assert not (tmp_path / "runs.sqlite").exists()

    guarded = serve("--store", str(tmp_path / "runs.sqlite"), "--headless", "--api-token", "s3cret", token="s3cret")
    assert requests.get(f"{guarded.api}/runs", timeout=10).status_code == 401
    assert guarded.get("/runs").json()["data"][0]["status"] == "live"



def _ours(answer: dict, like: dict) -> dict:
    """A run answer of the API restricted to the keys of ``like`` (the CLI's document); the keys it has
    beyond them are agentevals 0.11's ``Run`` fields (``compat_011.with_run_fields``)."""
    from agentevals.serve.compat_011 import RUN_FIELDS_011

    assert set(answer) - set(like) <= RUN_FIELDS_011, sorted(set(answer) - set(like))
    return {k: answer[k] for k in like}
