"""Judge budgets in a real ``agentevals serve`` (a subprocess, ports from the OS): sessions pushed over OTLP are
judged by a loopback OpenAI-compatible chat server (``support/openai_server.py``, chat completions with
``usage``) until ``max_calls_per_hour`` is reached; ``/api/metrics`` shows the calls, tokens and cost per evaluator
beside 0.11's list of metrics. The sessions are shipped OTLP JSON payloads, posted as recorded."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

pytest.importorskip("fastapi", reason="the serve extra is not installed")
pytest.importorskip("grpc", reason="the serve extra is not installed")
pytest.importorskip("openai", reason="the openai extra is not installed")

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))  # → `support` is importable

from support.live_server import start_server, stop_server  # noqa: E402
from support.openai_server import ChatServer, Reply, chat_completion  # noqa: E402

GENAI = TESTS / "data" / "traces" / "genai"
SESSIONS = {  # one trace each, no conversation id: each is its own session, complete on arrival
    "cf9325706a6226ce394ad625f28dc83a": "openai_agents_chatcompletions_openllmetry.otlp.json",
    "b18b8e6ce7cf0843c6bad9280aa457d2": "openai_agents_chatcompletions_otel_genai.otlp.json",
    "f4c72884fc5c17936495c2eb32a3d283": "openai_agents_openllmetry.otlp.json",
    "7da21b56137d03dd436537d1d7fddaaa": "openai_agents_otel_genai.otlp.json",
}


def _verdict(body: dict[str, Any]) -> Reply:
    reply = chat_completion(json.dumps({"score": 0.9, "hits": ["ok"], "misses": [], "reasoning": "Fine."}),
                            model=body["model"])
    reply["usage"] = {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}
    return Reply(json=reply)


def test_serve_stops_judging_at_the_budget_and_shows_usage_on_api_metrics(tmp_path):
    with ChatServer() as judge:
        judge.chat = _verdict
        config = tmp_path / "eval_config.yaml"
        config.write_text(yaml.safe_dump({
            "judge_prices": {"judge-model": {"input": 1000, "output": 10000}},  # $2 a call
            "evaluators": [{"name": "quality", "type": "llm_judge", "model": "judge-model",
                            "base_url": judge.base_url, "api_key_env": "TEST_JUDGE_KEY", "max_calls_per_hour": 2}],
        }))
        server = start_server("-c", str(config), "--store", str(tmp_path / "runs.sqlite"),
                              env={"TEST_JUDGE_KEY": "sk-test-judge-key"})
        try:
            for name in SESSIONS.values():
                sent = requests.post(f"{server.otlp_http}/v1/traces", data=(GENAI / name).read_bytes(),
                                     headers={"Content-Type": "application/json"}, timeout=10)
                assert sent.status_code == 200, sent.text
            deadline = time.monotonic() + 60
            done: dict[str, dict] = {}
            while time.monotonic() < deadline and len(done) < len(SESSIONS):
                listed = server.get("/sessions", params={"limit": 200}).json()["data"]
                done = {s["session_id"]: s for s in listed if s["status"] == "evaluated" and s["session_id"] in SESSIONS}
                time.sleep(0.2)
            assert sorted(done) == sorted(SESSIONS), done
            body = server.get("/metrics").json()
        finally:
            stop_server(server.process)
        calls = judge.requests_to("POST", "/chat/completions")
    assert len(calls) == 2
    assert isinstance(body["data"], list) and body["data"] and body["error"] is None  # 0.11's shape, unchanged
    quality = body["judges"]["quality"]
    assert (quality["calls"], quality["evaluations"], quality["over_budget"]) == (2, 2, 2)
    assert (quality["input_tokens"], quality["output_tokens"]) == (2000, 200)
    assert quality["cost_usd"] == pytest.approx(4.0)
    assert (quality["calls_last_hour"], quality["max_calls_per_hour"], quality["running"]) == (2, 2, 0)
    assert quality["spent_last_day_usd"] == pytest.approx(4.0)
