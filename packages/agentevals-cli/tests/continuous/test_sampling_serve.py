"""``serve --sample --filter`` end to end: a real ``agentevals serve`` subprocess (ports from the OS), sessions sent
by the real OpenTelemetry SDK over OTLP/HTTP, and the live run's totals in the run store: exactly the documented
sessions scored, the others counted as sampled or filtered out, a conversation's later turn still skipped alike."""

from __future__ import annotations

import hashlib
import time

import pytest
from support.live_server import listed_runs, start_server, stop_server

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
pytest.importorskip("uvicorn", reason="the serve extra is not installed")


def documented_point(key: str) -> float:
    digest = hashlib.sha256(b"agentevals-sample-v1:" + key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def turn(endpoint: str, conversation: str, city: str) -> None:
    """One agent turn of a conversation (``gen_ai.conversation.id``), exported by the plain OTel SDK."""
    import json

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "weather-svc"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces")))
    tracer = provider.get_tracer("weather")

    def messages(role: str, text: str) -> str:
        return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])

    with tracer.start_as_current_span("invoke_agent weather", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather",
            "gen_ai.conversation.id": conversation, "deployment.environment": "prod",
            "gen_ai.input.messages": messages("user", f"Weather in {city}?"),
            "gen_ai.output.messages": messages("assistant", f"It is sunny in {city}.")}):
        with tracer.start_as_current_span("execute_tool get_weather", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.arguments": json.dumps({"city": city}), "gen_ai.tool.call.result": "sunny"}):
            pass
    provider.shutdown()


@pytest.mark.timeout(240)
def test_serve_samples_and_filters_the_documented_sessions(tmp_path):
    store = str(tmp_path / "runs.sqlite")
    conversations = [f"conv-{i}" for i in range(16)]
    server = start_server("-m", "tool_call_count_v1", "--store", store, "--session-idle", "1", "--sample", "0.5",
                          "--filter", 'attr.deployment.environment == "prod" and not session_id == "conv-0"')
    try:
        (live,) = listed_runs(store)
        for i, conversation in enumerate(conversations):
            turn(server.otlp_http, conversation, f"city-{i}")
        inside = [c for c in conversations[1:] if documented_point(c) < 0.5]
        assert 0 < len(inside) < 15
        expected = {"total": 16, "INFORMATIONAL": len(inside), "sampled_out": 15 - len(inside), "filtered_out": 1}
        deadline = time.monotonic() + 90
        cases: dict = {}
        while time.monotonic() < deadline:
            run = next(r for r in listed_runs(store) if r["run_id"] == live["run_id"])
            cases = run["totals"]["cases"]
            if cases["total"] == 16:
                break
            time.sleep(0.3)
        assert {k: cases.get(k) for k in expected} == expected, cases
        assert cases["NOT_EVALUATED"] == 0 and run["totals"]["results"]["sampled_out"] == 15 - len(inside)
        # A later turn of a sampled-out conversation: re-evaluated as a whole, still out; totals unchanged.
        out = next(c for c in conversations[1:] if c not in inside)
        turn(server.otlp_http, out, "again")
        server.wait_for_session(lambda s: s["session_id"] == out and s["invocation_count"] == 2, timeout=60)
        time.sleep(1.0)  # the live run records the session right after the API shows it
        run = next(r for r in listed_runs(store) if r["run_id"] == live["run_id"])
        assert {k: run["totals"]["cases"].get(k) for k in expected} == expected, run["totals"]
    finally:
        stop_server(server.process)
