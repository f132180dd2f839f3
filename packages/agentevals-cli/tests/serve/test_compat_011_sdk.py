"""agentevals-cli 0.11's own SDK examples run unchanged against this release's ``serve``.

The examples (``tests/data/compat_0_11/examples``, copied from 0.11.0's sdist) use ``AgentEvals()``,
``AgentEvals(eval_set_id=…)``, ``session(eval_set_id=…, metadata=…)``, ``session_async(…)`` and
``@app.agent`` / ``app.run([...])``; their agent frameworks are stood in for (``frameworks/``, see its
README). Each session must arrive at a real serve as one session with the example's eval set and turns.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

DATA = Path(__file__).resolve().parents[1] / "data" / "compat_0_11"

CASES = [  # example, its eval set id, the prompts it sends (one turn each)
    ("sdk_example/context_manager_example.py", "sdk-context-manager-demo", ["What is 2 + 2?", "Is that number prime?"]),
    ("sdk_example/decorator_example.py", "sdk-decorator-demo", ["What is 2 + 2?", "Tell me a joke", "Is 17 prime?"]),
    ("sdk_example/async_example.py", "sdk-async-demo", ["Roll a 20-sided die", "Is that number prime?"]),
    # session_async(session_name=…, tracer_provider=…) on a provider the example creates itself
    ("dice_agent/main.py", "dice_agent_eval",
     ["Hi! Can you help me?", "Roll a 20-sided die for me", "Is the number you rolled prime?"]),
]


@pytest.mark.parametrize(("example", "eval_set_id", "prompts"), CASES, ids=[Path(c[0]).stem for c in CASES])
def test_0_11_sdk_example_runs_unchanged(serve, tmp_path, example, eval_set_id, prompts):
    (tmp_path / "sets").mkdir()
    (tmp_path / "sets" / "golden.json").write_text(json.dumps({"eval_set_id": eval_set_id, "eval_cases": [{
        "eval_id": "golden", "conversation": [{
            "invocation_id": f"turn-{i}", "user_content": {"role": "user", "parts": [{"text": p}]},
            "final_response": {"role": "model", "parts": [{"text": f"answer to: {p}"}]}}
            for i, p in enumerate(prompts)]}]}))
    # the session must end because the example's `with` block ended, not because it went idle
    server = serve("--session-idle", "600", "--eval-sets", str(tmp_path / "sets"), "-m", "response_match_score")
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(DATA / "frameworks"),
           "AGENTEVALS_OTLP_ENDPOINT": server.otlp_http, "GOOGLE_API_KEY": "unused-by-the-stand-in"}
    result = subprocess.run([sys.executable, str(DATA / "examples" / example)], capture_output=True,
                            text=True, timeout=60, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "❌" not in result.stdout, result.stdout  # 0.11's examples print a cross when they cannot stream
    session = server.wait_for_session(lambda s: s.get("eval_set_id") == eval_set_id, timeout=30)
    detail = server.get(f"/sessions/{session['session_id']}").json()["data"]
    assert [t["user"] for t in detail["turns"]] == prompts
    assert [t["response"] for t in detail["turns"]] == [f"answer to: {p}" for p in prompts]
    assert session["eval_id"] == "golden" and session["metrics"] == {"response_match_score": "PASSED"}


HELPER = '''
import json, sys
from opentelemetry import trace
from agentevals import AgentEvals

endpoint = sys.argv[1]
app = AgentEvals(None, "weather", {"team": "a"}, False, True, True, endpoint)   # 0.11's positional order

@app.agent
def weather(prompt="What's the weather in Paris?"):
    with trace.get_tracer("weather").start_as_current_span("execute_tool get_weather", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.arguments": json.dumps({"city": "Paris"}), "gen_ai.tool.call.result": "sunny"}):
        return "It is sunny in Paris."

with app.session(None, "named-1") as session:            # 0.11: session(eval_set_id, session_name, ...)
    assert isinstance(session, str) and session == "named-1" and session.eval_set_id == "weather"
    weather("What's the weather in Paris?")
with AgentEvals(endpoint=endpoint, streaming=False).session(session_name="never") as session:
    assert session == "never"                             # streaming=False: nothing is exported
print(json.dumps(app.run(session_id="no-prompt")))         # 0.11: no prompts = one call without a prompt
'''


def test_0_11_streaming_check_script(serve):
    """0.11's ``dice_agent/test_streaming.py``: one span in a ``session_async`` on the script's own provider."""
    server = serve("--session-idle", "600")
    result = subprocess.run([sys.executable, str(DATA / "examples" / "dice_agent" / "test_streaming.py")],
                            capture_output=True, text=True, timeout=60,
                            env={"PATH": os.environ.get("PATH", ""), "AGENTEVALS_OTLP_ENDPOINT": server.otlp_http})
    assert result.returncode == 0 and "Streaming works." in result.stdout, result.stdout + result.stderr
    session = server.wait_for_session(lambda s: s["session_id"] == "streaming-check")
    assert session["span_count"] >= 2  # the session span and the script's test_span
    assert "eval set 'test-eval' named by the session is not loaded" in session["error"]  # its eval_set_id arrived


def test_0_11_helper_arguments_against_serve(serve, tmp_path):
    from support.weather_agent import weather_eval_set

    weather_eval_set(tmp_path)
    server = serve("--eval-sets", str(tmp_path), "--session-idle", "600")
    result = subprocess.run([sys.executable, "-c", HELPER, server.otlp_http], capture_output=True, text=True,
                            timeout=60, env={"PATH": os.environ.get("PATH", "")})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == ["It is sunny in Paris."]
    named = server.wait_for_session(lambda s: s["session_id"] == "named-1")
    assert named["eval_set_id"] == "weather" and named["metrics"] == {"tool_trajectory_avg_score": "PASSED"}
    server.wait_for_session(lambda s: s["session_id"] == "no-prompt")
    detail = server.get("/sessions/named-1").json()["data"]
    assert detail["record"]["session_id"] == "named-1"
    assert "never" not in {s["session_id"] for s in server.get("/sessions").json()["data"]}


def test_0_11_ws_url_means_otlp_on_its_host(monkeypatch):
    from agentevals import AgentEvals

    monkeypatch.delenv("AGENTEVALS_OTLP_ENDPOINT", raising=False)
    with pytest.warns(DeprecationWarning, match=r"ws_url=\.\.\.\) is deprecated"):
        assert AgentEvals("ws://agents.internal:8001/ws/traces").endpoint == "http://agents.internal:4318"
    assert AgentEvals("ws://localhost:8001/ws/traces").endpoint == "http://localhost:4318"  # 0.11's default
    assert AgentEvals("ws://a:1/ws", endpoint="http://b:2").endpoint == "http://b:2"
