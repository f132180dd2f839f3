"""A real OpenTelemetry SDK exporting over OTLP/HTTP and OTLP/gRPC to a running ``agentevals serve``."""

from __future__ import annotations

import gzip

import pytest
import requests
from support.live_server import DATA, Server

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from agentevals.serve.operations import convert_files
from support.weather_agent import QUESTION, run_weather_agent, weather_eval_set


def _check_evaluated(server: Server, trace_id: str, *, status: str) -> dict:
    session = server.wait_for_session(lambda s: s["session_id"] == trace_id)
    assert session["status"] == "evaluated", session
    assert session["eval_set_id"] == "weather"
    assert session["eval_id"] == "paris"
    assert session["metrics"] == {"tool_trajectory_avg_score": status}
    detail = server.get(f"/sessions/{trace_id}").json()["data"]
    assert detail["turns"][0]["user"] == QUESTION
    assert detail["turns"][0]["tool_calls"][0]["name"] == "get_weather"
    return detail


def test_sdk_over_otlp_http_is_evaluated(serve, tmp_path):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    weather_eval_set(tmp_path)
    server = serve("--eval-sets", str(tmp_path))
    trace_id = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"))
    _check_evaluated(server, trace_id, status="PASSED")
    wrong = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"), city="Rome")
    _check_evaluated(server, wrong, status="FAILED")
    compared = server.get(f"/sessions/compare?a={trace_id}&b={wrong}").json()["data"]
    (row,) = compared["metrics"]
    assert row["name"] == "tool_trajectory_avg_score"
    assert (row["a"]["status"], row["b"]["status"]) == ("PASSED", "FAILED")
    assert row["delta"] == pytest.approx(row["b"]["score"] - row["a"]["score"]) and row["delta"] < 0
    missing = server.get(f"/sessions/compare?a={trace_id}&b=nope")
    assert missing.status_code == 404 and "no evaluated session 'nope'" in missing.json()["error"]


def test_sdk_over_otlp_grpc_is_evaluated(serve, tmp_path):
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    weather_eval_set(tmp_path)
    server = serve("--eval-sets", str(tmp_path))
    trace_id = run_weather_agent(OTLPSpanExporter(endpoint=server.otlp_grpc, insecure=True))
    _check_evaluated(server, trace_id, status="PASSED")


def test_otlp_json_spans_and_logs_convert_as_run_does(serve):
    """The same OTLP JSON export, posted live (spans, then the GenAI log records), gives the same turns as `run`."""
    traces = DATA / "traces/genai/openai_otel_genai_v2_latest.otlp.json"
    logs = DATA / "traces/genai/openai_otel_genai_v2_latest.otlp-logs.json"
    server = serve("--session-idle", "0.5", "-m", "tool_call_count_v1")
    for path, route in ((logs, "/v1/logs"), (traces, "/v1/traces")):
        response = requests.post(f"{server.otlp_http}{route}", data=path.read_bytes(),
                                 headers={"Content-Type": "application/json"}, timeout=10)
        assert response.status_code == 200, response.text
        assert response.json() == {}
    expected = convert_files([traces, logs])["traces"]
    assert expected and expected[0]["invocations"]
    for trace in expected:
        key = trace["session_id"] or trace["trace_id"]
        session = server.wait_for_session(lambda s, key=key: s["session_id"] == key)
        record = server.get(f"/sessions/{key}").json()["data"]["record"]
        assert [i["user_content"] for i in record["invocations"]] == [i["user_content"] for i in trace["invocations"]]
        assert record["invocations"] == trace["invocations"]
        assert session["metrics"] == {"tool_call_count_v1": "INFORMATIONAL"}


def test_receiver_answers_as_otlp_says(serve):
    server = serve("--max-upload-mb", "1")
    url = f"{server.otlp_http}/v1/traces"
    bad = requests.post(url, data=b"\xff\x00garbage", headers={"Content-Type": "application/x-protobuf"}, timeout=10)
    assert bad.status_code == 400
    assert b"invalid protobuf" in bad.content
    big = requests.post(url, data=b"{" + b" " * (2 * 2**20) + b"}", headers={"Content-Type": "application/json"},
                        timeout=10)
    assert big.status_code == 413
    bomb = gzip.compress(b"{" + b" " * (8 * 2**20) + b"}")  # small on the wire, 8 MiB inflated
    inflated = requests.post(url, data=bomb, timeout=10,
                             headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert inflated.status_code == 413
    document = (DATA / "traces/genai/openai_otel_genai_v2_latest.otlp.json").read_bytes()
    zipped = requests.post(url, data=gzip.compress(document), timeout=10,
                           headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert zipped.status_code == 200, zipped.text
    assert server.get("/health").json()["data"]["receiver"]["accepted_spans"] > 0


def test_token_is_required_when_set(serve):
    server = serve("--api-token", "s3cret", token="s3cret")
    assert requests.post(f"{server.otlp_http}/v1/traces", data=b"{}", timeout=10,
                         headers={"Content-Type": "application/json"}).status_code == 401
    assert requests.post(f"{server.otlp_http}/v1/traces", data=b"{}", timeout=10,
                         headers={"Content-Type": "application/json", "Authorization": "Bearer s3cret"}).status_code == 200
    assert requests.get(f"{server.api}/sessions", timeout=10).status_code == 401
    assert server.get("/sessions").status_code == 200
    assert requests.get(f"{server.api}/health", timeout=10).status_code == 200


def _protobuf(document: dict, message_type):
    """An OTLP JSON file (hex ids) as the protobuf request it stands for (the JSON mapping wants base64 ids)."""
    import base64

    from google.protobuf.json_format import ParseDict

    def walk(value):
        if isinstance(value, dict):
            return {k: base64.b64encode(bytes.fromhex(v)).decode() if k in ("traceId", "spanId", "parentSpanId") and v
                    else walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return ParseDict(walk(document), message_type(), ignore_unknown_fields=True)


@pytest.mark.parametrize("transport", ["grpc", "http-protobuf"])
def test_protobuf_spans_and_logs_convert_as_run_does(serve, transport):
    import json

    import grpc
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

    traces = DATA / "traces/genai/openai_otel_genai_v2_latest.otlp.json"
    logs = DATA / "traces/genai/openai_otel_genai_v2_latest.otlp-logs.json"
    span_request = _protobuf(json.loads(traces.read_text()), trace_service_pb2.ExportTraceServiceRequest)
    log_request = _protobuf(json.loads(logs.read_text()), logs_service_pb2.ExportLogsServiceRequest)
    assert span_request.resource_spans and log_request.resource_logs
    server = serve("--session-idle", "0.5", "-m", "tool_call_count_v1")
    if transport == "grpc":
        with grpc.insecure_channel(server.otlp_grpc) as channel:
            logs_service_pb2_grpc.LogsServiceStub(channel).Export(log_request, timeout=10)
            trace_service_pb2_grpc.TraceServiceStub(channel).Export(span_request, timeout=10)
    else:
        for route, message in (("/v1/logs", log_request), ("/v1/traces", span_request)):
            response = requests.post(f"{server.otlp_http}{route}", data=message.SerializeToString(), timeout=10,
                                     headers={"Content-Type": "application/x-protobuf"})
            assert response.status_code == 200 and response.headers["content-type"] == "application/x-protobuf"
    for trace in convert_files([traces, logs])["traces"]:
        key = trace["session_id"] or trace["trace_id"]
        server.wait_for_session(lambda s, key=key: s["session_id"] == key)
        record = server.get(f"/sessions/{key}").json()["data"]["record"]
        assert record["invocations"] == trace["invocations"]
        assert any(i["user_content"] for i in record["invocations"])  # the content came from the log records
