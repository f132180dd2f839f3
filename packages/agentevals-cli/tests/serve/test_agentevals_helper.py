"""``from agentevals import AgentEvals``: a session run by the helper is evaluated by a running ``serve``; the
endpoint comes from ``endpoint=``, then ``AGENTEVALS_OTLP_ENDPOINT``, then localhost:4318, and the standard
``OTEL_EXPORTER_OTLP_*`` variables are never read."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from support.live_server import REPO

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

AGENT = textwrap.dedent('''
    import json, sys
    from opentelemetry import trace
    from agentevals import AgentEvals

    app = AgentEvals(**json.loads(sys.argv[1]))

    @app.agent
    def weather(prompt):
        tracer = trace.get_tracer("weather")   # the agent's own instrumentation, on the global provider
        with tracer.start_as_current_span("execute_tool get_weather", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.arguments": json.dumps({"city": "Paris"}), "gen_ai.tool.call.result": "sunny"}):
            pass
        return "It is sunny in Paris."

    answers = app.run(["What's the weather in Paris?"], eval_set_id="weather", session_id=sys.argv[2])
    print(json.dumps(answers))
''')


def run_agent(kwargs: str, session_id: str, env: dict[str, str]) -> list[str]:
    result = subprocess.run([sys.executable, "-c", AGENT, kwargs, session_id], capture_output=True, text=True,
                            timeout=60, cwd=REPO, env={"PATH": os.environ.get("PATH", ""), **env})
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_session_is_evaluated_and_otel_variables_are_ignored(serve, tmp_path, otlp_recorder):
    from support.weather_agent import weather_eval_set

    weather_eval_set(tmp_path)
    server = serve("--eval-sets", str(tmp_path), "--session-idle", "600")  # completion comes from the session end
    elsewhere = {"OTEL_EXPORTER_OTLP_ENDPOINT": otlp_recorder.url, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": otlp_recorder.url,
                 "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer for-another-backend"}
    out = run_agent(f'{{"endpoint": "{server.otlp_http}"}}', "conv-1", elsewhere)
    assert "It is sunny in Paris." in out
    session = server.wait_for_session(lambda s: s["session_id"] == "conv-1", timeout=20)
    assert session["eval_set_id"] == "weather" and session["eval_id"] == "paris"
    assert session["metrics"] == {"tool_trajectory_avg_score": "PASSED"}
    assert otlp_recorder.requests == []  # nothing went to the OTEL_EXPORTER_OTLP_* backend


def test_endpoint_from_environment_then_default(otlp_recorder, monkeypatch):
    run_agent("{}", "conv-2", {"AGENTEVALS_OTLP_ENDPOINT": otlp_recorder.url,
                               "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer for-another-backend"})
    paths = {r.path for r in otlp_recorder.requests}
    assert "/v1/traces" in paths
    assert all("authorization" not in r.headers for r in otlp_recorder.requests)
    from agentevals import AgentEvals

    monkeypatch.delenv("AGENTEVALS_OTLP_ENDPOINT", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector.invalid:4318")
    assert AgentEvals().endpoint == "http://localhost:4318"
    monkeypatch.setenv("AGENTEVALS_OTLP_ENDPOINT", "http://127.0.0.1:9999/")
    assert AgentEvals().endpoint == "http://127.0.0.1:9999"
    assert AgentEvals(endpoint="http://127.0.0.1:1234").endpoint == "http://127.0.0.1:1234"
