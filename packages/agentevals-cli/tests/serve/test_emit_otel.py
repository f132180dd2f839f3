"""``run --emit-otel`` and ``serve --emit-otel``: one ``gen_ai.evaluation.result`` event per result, parented to
the evaluated span, decoded by an OTLP receiver in the test."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from support.live_server import EXAMPLES, REPO

pytest.importorskip("opentelemetry.proto", reason="the serve extra is not installed")

from agentevals.engine import load_traces


def decoded_events(recorder) -> list[dict]:
    """Every log record the receiver got on /v1/logs: event name, parent ids, attributes."""
    assert {r.path for r in recorder.requests} <= {"/v1/logs"}
    return recorder.log_events()


def test_run_emit_otel_parents_each_result_to_its_span(otlp_recorder):
    traces = [EXAMPLES / "traces/helm.json", EXAMPLES / "traces/k8s.json"]
    result = subprocess.run(
        [sys.executable, "-m", "agentevals", "run", *map(str, traces), "-e", str(EXAMPLES / "evalsets/eval_set_helm.json"),
         "-m", "tool_trajectory_avg_score", "-m", "tool_call_count_v1", "-o", "json", "--emit-otel",
         "--no-store"],  # HOME is the repository here: no run store under it
        capture_output=True, text=True, timeout=120, cwd=REPO,
        env={"PATH": "", "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_recorder.url, "HOME": str(REPO)})
    assert result.returncode in (0, 1), result.stderr
    cases = json.loads(result.stdout)["cases"]
    converted, _ = load_traces(traces, keep_spans=False)
    last_span = {t.trace_id: (t.trace_id, t.invocations[-1].span_id) for t in converted if t.invocations}
    expected = sorted((*last_span[c["trace_ids"][-1]], m["name"], m["status"]) for c in cases for m in c["metrics"])
    events = decoded_events(otlp_recorder)
    assert {e["event_name"] for e in events} == {"gen_ai.evaluation.result"}
    got = sorted((e["trace_id"], e["span_id"], e["attributes"]["gen_ai.evaluation.name"],
                  {"pass": "PASSED", "fail": "FAILED", "not_evaluated": "NOT_EVALUATED",
                   "informational": "INFORMATIONAL"}[e["attributes"]["gen_ai.evaluation.score.label"]])
                 for e in events)
    assert got == expected
    assert len(events) == sum(len(c["metrics"]) for c in cases)
    scored = [e for e in events if e["attributes"]["gen_ai.evaluation.name"] == "tool_trajectory_avg_score"
              and "gen_ai.evaluation.score.value" in e["attributes"]]
    assert scored, events


def test_serve_emit_otel_parents_results_to_the_received_spans(serve, tmp_path, otlp_recorder):
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from support.weather_agent import run_weather_agent, weather_eval_set

    weather_eval_set(tmp_path)
    server = serve("--eval-sets", str(tmp_path), "--emit-otel", env={"OTEL_EXPORTER_OTLP_ENDPOINT": otlp_recorder.url})
    trace_id = run_weather_agent(OTLPSpanExporter(endpoint=server.otlp_grpc, insecure=True))
    server.wait_for_session(lambda s: s["session_id"] == trace_id)
    deadline = time.monotonic() + 20
    while not otlp_recorder.requests and time.monotonic() < deadline:
        time.sleep(0.1)
    (event,) = decoded_events(otlp_recorder)
    detail = server.get(f"/sessions/{trace_id}").json()["data"]["record"]
    assert (event["trace_id"], event["span_id"]) == (trace_id, detail["invocations"][0]["span_id"])
    assert event["attributes"]["gen_ai.evaluation.score.label"] == "pass"
    assert event["attributes"]["gen_ai.evaluation.score.value"] == 1.0


def test_run_emit_otel_over_grpc(tmp_path):
    """OTEL_EXPORTER_OTLP_PROTOCOL=grpc: the events reach a gRPC LogsService, parented the same way."""
    from concurrent import futures

    import grpc
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc

    received: list[logs_service_pb2.ExportLogsServiceRequest] = []

    class Logs(logs_service_pb2_grpc.LogsServiceServicer):
        def Export(self, request, context):  # the generated service's method name
            received.append(request)
            return logs_service_pb2.ExportLogsServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    logs_service_pb2_grpc.add_LogsServiceServicer_to_server(Logs(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "agentevals", "run", str(EXAMPLES / "traces/helm.json"),
             "-e", str(EXAMPLES / "evalsets/eval_set_helm.json"), "-o", "json", "--emit-otel"],
            capture_output=True, text=True, timeout=120, cwd=REPO,
            env={"PATH": "", "HOME": str(tmp_path), "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
                 "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}", "OTEL_EXPORTER_OTLP_INSECURE": "true"})
    finally:
        server.stop(grace=1)
    assert result.returncode in (0, 1), result.stderr
    (case,) = json.loads(result.stdout)["cases"]
    converted, _ = load_traces([EXAMPLES / "traces/helm.json"], keep_spans=False)
    records = [r for req in received for rl in req.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    assert [(r.trace_id.hex(), r.span_id.hex(), r.event_name) for r in records] == [
        (converted[0].trace_id, converted[0].invocations[-1].span_id, "gen_ai.evaluation.result")] * len(case["metrics"])


def test_emit_otel_is_off_with_the_standard_switch(otlp_recorder, tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "agentevals", "run", str(EXAMPLES / "traces/helm.json"), "--emit-otel", "-o", "json"],
        capture_output=True, text=True, timeout=120, cwd=REPO,
        env={"PATH": "", "HOME": str(tmp_path), "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_recorder.url,
             "OTEL_SDK_DISABLED": "true"})
    assert result.returncode in (0, 1), result.stderr
    assert otlp_recorder.requests == []
