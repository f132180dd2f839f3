"""Alert rules: parsing, the fire/clear rule with its hysteresis on real rolling outcomes, the webhook sender
against a loopback receiver, ``GET /api/alerts``, and a real ``agentevals serve`` fed failing then passing
sessions over OTLP (one fire, one clear, one webhook body and one OTel event each)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from agentevals.errors import ConfigError
from agentevals.serve.alerts import (
    BODY_SCHEMA,
    DEFAULT_MIN_SESSIONS,
    AlertMonitor,
    WebhookSender,
    alert_body,
    load_rules,
    parse_rule,
)
from agentevals.serve.continuous import ContinuousState
from support.polling import wait_for

# -- rules ----------------------------------------------------------------------------------------------

def test_rule_parses_with_its_defaults_and_canonical_text():
    rule = parse_rule("tool_trajectory_avg_score pass_rate < 0.90 over 1h")
    assert (rule.metric, rule.comparison, rule.threshold, rule.window_seconds, rule.min_sessions) == (
        "tool_trajectory_avg_score", "<", 0.9, 3600.0, DEFAULT_MIN_SESSIONS)
    assert rule.text == "tool_trajectory_avg_score pass_rate < 0.9 over 1h min 10"
    tight = parse_rule("  judge   pass_rate<=0.5 over 30m min 3 ")
    assert (tight.comparison, tight.window_seconds, tight.min_sessions) == ("<=", 1800.0, 3)


@pytest.mark.parametrize(("text", "column", "says"), [
    ("m pass_rate > 0.9 over 1h", 13, "expected '<' or '<='"),
    ("m pass_ratio < 0.9 over 1h", 3, "expected 'pass_rate'"),
    ("m pass_rate < 1.5 over 1h", 15, "threshold must be in (0, 1]"),
    ("m pass_rate < high over 1h", 15, "a threshold between 0 and 1"),
    ("m pass_rate < 0.9 over 1x", 24, "a window such as 30m"),
    ("m pass_rate < 0.9 within 1h", 19, "expected 'over'"),
    ("m pass_rate < 0.9", 18, "got the end of the rule"),
    ("m pass_rate < 0.9 over 1h min 0", 31, "at least 1"),
    ("m pass_rate < 0.9 over 1h or worse", 27, "'min N' or the end"),
])
def test_a_bad_rule_names_the_column(text, column, says):
    with pytest.raises(ValueError) as caught:
        parse_rule(text)
    message = str(caught.value)
    assert message.startswith(f"column {column}: ") and says in message and "\n" not in message


def test_load_rules_merges_config_and_flags_and_refuses_unknown_metrics():
    rules = load_rules(["a pass_rate < 0.9 over 1h", "b pass_rate < 0.5 over 1d min 5"],
                       ["a pass_rate < 0.90 over 1h min 10"], metrics=["a", "b"])
    assert [r.text for r in rules] == ["a pass_rate < 0.9 over 1h min 10", "b pass_rate < 0.5 over 1d min 5"]
    with pytest.raises(ConfigError) as caught:
        load_rules([], ["tool_trajectory pass_rate < 0.9 over 1h"], config_source="eval_config.yaml",
                   metrics=["tool_trajectory_avg_score"])
    assert str(caught.value) == (
        "eval_config.yaml: alerts[0] 'tool_trajectory pass_rate < 0.9 over 1h': metric 'tool_trajectory' is not "
        "evaluated by this server (did you mean 'tool_trajectory_avg_score'?); evaluated: tool_trajectory_avg_score")
    with pytest.raises(ConfigError, match=r"^--alert 'm pass_rate > 0.9 over 1h': column 13: "):
        load_rules(["m pass_rate > 0.9 over 1h"], [])


def test_config_validation_points_at_the_bad_rule(tmp_path):
    from agentevals.config.loader import load_config

    config = tmp_path / "eval_config.yaml"
    config.write_text("evaluators:\n  - name: tool_trajectory_avg_score\n    type: builtin\nalerts:\n"
                      "  - tool_trajectory_avg_score pass_rate < 0.9 over 1h\n"
                      "  - tool_trajectory_avg_score pass_rate < 0.9 over an hour\n")
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    assert str(caught.value) == (
        f"{config}:6:5: the config: alerts[1]: 'tool_trajectory_avg_score pass_rate < 0.9 over an hour': column 48: "
        "expected a window such as 30m, 1h or 1d, got 'an' (say METRIC pass_rate < THRESHOLD over DURATION [min N], "
        "e.g. 'tool_trajectory_avg_score pass_rate < 0.9 over 1h')")


# -- firing and clearing on rolling outcomes ------------------------------------------------------------

class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def monitor_for(rule: str) -> tuple[AlertMonitor, ContinuousState, Clock]:
    clock = Clock()
    state = ContinuousState(clock=clock)
    return AlertMonitor([parse_rule(rule)], state), state, clock


def add(state: ContinuousState, clock: Clock, passed: bool, count: int, prefix: str) -> None:
    for i in range(count):
        clock.now += 1
        state.outcomes.add("m", f"{prefix}{i}", passed)


def test_few_failures_do_not_fire_enough_do_once_and_recovery_clears_once():
    monitor, state, clock = monitor_for("m pass_rate < 0.9 over 1h")
    add(state, clock, False, 3, "night")
    assert monitor.check() == []  # three bad sessions at 3 a.m.: under the minimum sample size
    add(state, clock, True, 40, "ok")
    add(state, clock, False, 7, "bad")  # 40/50 = 0.8, interval [0.67, 0.89]: below 0.9 with confidence
    (fired,) = monitor.check()
    assert (fired.state, fired.n, fired.passed, fired.threshold) == ("firing", 50, 40, 0.9)
    assert fired.upper < 0.9 and fired.sessions[:2] == ["bad6", "bad5"] and len(fired.sessions) == 10
    assert monitor.check() == []  # still firing: no second event
    assert list(state.active) == [fired.rule]
    add(state, clock, True, 40, "back")  # 80/90 = 0.89: the rate is still under 0.9, keeps firing
    assert monitor.check() == []
    add(state, clock, True, 10, "more")  # 90/100 = 0.9: recovered
    (cleared,) = monitor.check()
    assert (cleared.state, cleared.n, cleared.passed) == ("cleared", 100, 90)
    assert state.active == {} and [e.state for e in state.alerts] == ["firing", "cleared"]


def test_a_rate_hovering_at_the_threshold_does_not_flap():
    monitor, state, clock = monitor_for("m pass_rate < 0.7 over 1h min 20")
    add(state, clock, False, 20, "f")
    assert [e.state for e in monitor.check()] == ["firing"]
    changes = []
    for i in range(60):  # alternating around the line: at most the one clear when the rate reaches 0.7
        add(state, clock, i % 10 < 7, 1, f"h{i}")
        changes += [e.state for e in monitor.check()]
    assert changes.count("firing") == 0 and changes.count("cleared") <= 1


def test_a_window_that_empties_clears_on_the_timer_check():
    monitor, state, clock = monitor_for("m pass_rate <= 0.5 over 10m min 4")
    add(state, clock, False, 4, "f")
    assert [e.state for e in monitor.check()] == ["firing"]
    clock.now += 601  # nothing new: the failures leave the window
    (cleared,) = monitor.check()
    assert (cleared.state, cleared.n) == ("cleared", 0)


def test_a_session_evaluated_again_counts_once_with_its_latest_outcome():
    monitor, state, clock = monitor_for("m pass_rate < 0.5 over 1h min 5")
    add(state, clock, False, 5, "s")
    add(state, clock, True, 5, "s")  # the same five conversations, evaluated again after a late turn: passed
    window = state.outcomes.window("m", 3600)
    assert (window.n, window.passed, window.failed_sessions) == (5, 5, ())
    assert monitor.check() == []


def test_run_finished_checks_after_each_batch():
    monitor, state, clock = monitor_for("m pass_rate < 0.5 over 1h min 5")
    add(state, clock, False, 5, "f")
    monitor.run_finished(None)  # what the live evaluation calls after a batch
    assert [e.state for e in state.alerts] == ["firing"]


# -- the webhook ----------------------------------------------------------------------------------------

def test_webhook_retries_a_5xx_and_delivers_once_with_the_token(hook, monkeypatch):
    monkeypatch.setenv("AGENTEVALS_ALERT_WEBHOOK_TOKEN", "hook-token-123456")
    hook.statuses = [503, 500]
    sender = WebhookSender(hook.url, backoff=0.05)
    sender.send({"schema": BODY_SCHEMA, "state": "firing"})
    sender.stop()
    assert hook.attempts == 3 and hook.bodies == [{"schema": BODY_SCHEMA, "state": "firing"}]
    assert hook.headers[0]["authorization"] == "Bearer hook-token-123456"
    assert (sender.delivered, sender.failed) == (1, 0)


def test_webhook_does_not_retry_a_refusal_and_survives_a_dead_host(hook, caplog):
    hook.statuses = [400]
    sender = WebhookSender(hook.url, backoff=0.05)
    sender.send({"state": "firing", "rule": {"text": "m pass_rate < 0.9 over 1h min 10"}})
    sender.stop()
    assert hook.attempts == 1 and (sender.delivered, sender.failed) == (0, 1)
    assert sender.last_error == "HTTP 400 Bad Request"
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/hook/s3cr3t-path"
    down = WebhookSender(dead, attempts=2, backoff=0.05, deadline=2)
    down.send({"state": "cleared"})
    down.stop()
    assert (down.delivered, down.failed) == (0, 1) and "refused" in (down.last_error or "").lower()
    assert "s3cr3t-path" not in caplog.text  # logs name the host, never the URL's path
    assert "was not delivered" in caplog.text


def test_webhook_url_is_checked():
    with pytest.raises(ConfigError, match=r"^--alert-webhook: not an http"):
        WebhookSender.check_url("ftp://example.com/x")
    with pytest.raises(ConfigError, match="AGENTEVALS_ALERT_WEBHOOK_TOKEN"):
        WebhookSender.check_url("https://user:pw@example.com/x")


def test_monitor_posts_the_documented_body(hook):
    clock = Clock()
    state = ContinuousState(clock=clock)
    monitor = AlertMonitor([parse_rule("m pass_rate < 0.5 over 1h min 5")], state,
                           webhook=WebhookSender(hook.url, backoff=0.05), base_url="http://evals.example:8001",
                           run_id="run-1")
    monitor.start()
    try:
        add(state, clock, False, 6, "sess/")
        monitor.check()
        add(state, clock, True, 6, "ok")
        monitor.check()
        fired, cleared = hook.wait(2)
    finally:
        monitor.stop()
    assert fired["schema"] == BODY_SCHEMA and fired["state"] == "firing" and cleared["state"] == "cleared"
    assert fired["rule"] == {"text": "m pass_rate < 0.5 over 1h min 5", "metric": "m", "comparison": "<",
                             "threshold": 0.5, "window_seconds": 3600.0, "min_sessions": 5}
    assert fired["figures"]["sessions"] == 6 and fired["figures"]["passed"] == 0 and fired["figures"]["failed"] == 6
    assert fired["figures"]["wilson_upper"] < 0.5 and fired["figures"]["pass_rate"] == 0.0
    assert fired["window"]["seconds"] == 3600.0 and fired["window"]["end"].endswith("Z")
    assert fired["sessions"][0] == {"id": "sess/5", "url": "http://evals.example:8001/sessions/sess%2F5"}
    assert fired["links"]["alerts"] == "http://evals.example:8001/api/alerts" and fired["run_id"] == "run-1"
    assert fired["text"].startswith("agentevals alert FIRING: m pass_rate < 0.5 over 1h min 5")
    assert cleared["figures"]["pass_rate"] == 0.5
    assert fired == alert_body(state.alerts[0], base_url="http://evals.example:8001", run_id="run-1")


def test_api_alerts_shows_rules_windows_and_events(hook):
    pytest.importorskip("fastapi", reason="the serve extra is not installed")
    from agentevals.serve.http_api import ApiContext, api_app
    from agentevals.serve.sessions import SessionAssembler
    from agentevals.serve.store import MemorySessionStore
    from fastapi.testclient import TestClient

    empty = TestClient(api_app(ApiContext(assembler=SessionAssembler(), store=MemorySessionStore(10))),
                       base_url="http://127.0.0.1")
    assert empty.get("/api/alerts").json() == {"data": {"rules": [], "active": [], "recent": [], "webhook": None},
                                               "error": None}
    clock = Clock()
    state = ContinuousState(clock=clock)
    monitor = AlertMonitor([parse_rule("m pass_rate < 0.5 over 1h min 5")], state,
                           webhook=WebhookSender(hook.url, backoff=0.05))
    client = TestClient(api_app(ApiContext(assembler=SessionAssembler(), store=MemorySessionStore(10),
                                           continuous=state)), base_url="http://127.0.0.1")
    add(state, clock, False, 5, "f")
    (rule,) = client.get("/api/alerts").json()["data"]["rules"]
    assert (rule["state"], rule["n"], rule["passed"], rule["pass_rate"]) == ("ok", 5, 0, 0.0)
    monitor.check()
    add(state, clock, True, 5, "p")
    monitor.check()
    data = client.get("/api/alerts", params={"limit": 1}).json()["data"]
    assert data["rules"][0]["state"] == "ok" and data["active"] == []
    assert [e["state"] for e in data["recent"]] == ["cleared"]
    assert data["webhook"]["host"] == hook.url.split("/")[2] and "s3cr3t" not in json.dumps(data)
    monitor.stop()


def test_headless_links_go_to_the_api_record():
    clock = Clock()
    state = ContinuousState(clock=clock)
    monitor = AlertMonitor([parse_rule("m pass_rate < 0.5 over 1h min 5")], state)
    add(state, clock, False, 5, "f")
    (event,) = monitor.check()
    body = alert_body(event, base_url="http://h:1", ui=False)
    assert body["sessions"][0]["url"] == "http://h:1/api/sessions/f4" and "ui" not in body["links"]


# -- a real serve -----------------------------------------------------------------------------------------

def _alerts(server) -> dict[str, Any]:
    answer = server.get("/alerts")
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def _agents(server, cities: list[str]) -> list[str]:
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from support.weather_agent import run_weather_agent

    ids = [run_weather_agent(OTLPSpanExporter(endpoint=server.otlp_grpc, insecure=True), city=c) for c in cities]
    for trace_id in ids:
        server.wait_for_session(lambda s, t=trace_id: s["session_id"] == t)
    return ids


@pytest.fixture
def serving(tmp_path) -> Iterator[Any]:
    pytest.importorskip("fastapi", reason="the serve extra is not installed")
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
    from support.live_server import start_server, stop_server
    from support.weather_agent import weather_eval_set

    weather_eval_set(tmp_path)
    started = []

    def start(*args: str, env: dict[str, str] | None = None):
        server = start_server("--eval-sets", str(tmp_path), "--session-idle", "0.3", "--no-store", *args, env=env)
        started.append(server)
        return server

    yield start
    for server in started:
        stop_server(server.process)


@pytest.mark.timeout(180)
def test_serve_fires_once_on_failing_sessions_and_clears_once_on_passing_ones(serving, hook, otlp_events):
    rule = "tool_trajectory_avg_score pass_rate < 0.5 over 1h min 4"
    server = serving("--alert", rule, "--alert-webhook", hook.url, "--emit-otel",
                     env={"OTEL_EXPORTER_OTLP_ENDPOINT": otlp_events.url})
    failing = _agents(server, ["London"] * 4)  # a wrong tool argument: trajectory FAILED
    (fired,) = hook.wait(1)
    assert fired["state"] == "firing" and fired["rule"]["text"] == rule
    assert fired["figures"]["sessions"] == 4 and fired["figures"]["passed"] == 0
    assert sorted(s["id"] for s in fired["sessions"]) == sorted(failing)
    ui = server.api.removesuffix("/api")
    assert all(s["url"] == f"{ui}/sessions/{s['id']}" for s in fired["sessions"])
    data = _alerts(server)
    assert [a["rule"] for a in data["active"]] == [rule] and data["rules"][0]["state"] == "firing"
    page = requests.get(fired["sessions"][0]["url"], timeout=10)
    assert page.status_code == 200 and fired["sessions"][0]["id"] in page.text  # the UI's page of that session

    _agents(server, ["Paris"] * 3)  # 3/7 passed: still under 0.5, still firing
    time.sleep(1)
    assert len(hook.bodies) == 1 and _alerts(server)["rules"][0]["state"] == "firing"
    _agents(server, ["Paris"])  # 4/8 = 0.5: recovered
    fired_again, cleared = hook.wait(2)
    assert fired_again is fired and cleared["state"] == "cleared" and cleared["figures"]["pass_rate"] == 0.5
    time.sleep(1)
    assert len(hook.bodies) == 2  # exactly one fire and one clear
    data = _alerts(server)
    assert data["active"] == [] and [a["state"] for a in data["recent"]] == ["cleared", "firing"]
    assert data["webhook"]["delivered"] == 2 and "s3cr3t" not in json.dumps(data)
    events = wait_for(lambda: [e for e in otlp_events.log_events() if e["event_name"] == "agentevals.alert"] or None,
                   what="alert OTel events")
    wait_for(lambda: len([e for e in otlp_events.log_events() if e["event_name"] == "agentevals.alert"]) == 2,
          what="two alert OTel events")
    events = [e for e in otlp_events.log_events() if e["event_name"] == "agentevals.alert"]
    assert [e["attributes"]["agentevals.alert.state"] for e in events] == ["firing", "cleared"]
    assert events[0]["attributes"]["gen_ai.evaluation.name"] == "tool_trajectory_avg_score"
    assert events[0]["attributes"]["agentevals.alert.sessions"] == 4


@pytest.mark.timeout(180)
def test_a_webhook_that_is_down_does_not_stop_serve(serving):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/hook"
    server = serving("--alert", "tool_trajectory_avg_score pass_rate < 0.5 over 1h min 4", "--alert-webhook", dead)
    _agents(server, ["London"] * 4)
    wait_for(lambda: _alerts(server)["active"], what="the alert firing")
    _agents(server, ["Paris"] * 4)  # scoring goes on while the webhook is retried
    assert server.get("/health").status_code == 200
    data = wait_for(lambda: (d := _alerts(server))["webhook"]["failed"] >= 1 and d, timeout=60, what="webhook failure")
    assert data["active"] == [] and [a["state"] for a in data["recent"]] == ["cleared", "firing"]
    assert "refused" in data["webhook"]["last_error"].lower()
    assert server.process.poll() is None


def test_serve_refuses_a_bad_rule_in_one_line(tmp_path):
    pytest.importorskip("fastapi", reason="the serve extra is not installed")
    from support.live_server import agentevals

    result = agentevals("serve", "-p", "0", "--otlp-http-port", "0", "--otlp-grpc-port", "0", "--no-store",
                        "-m", "tool_trajectory_avg_score", "--alert", "tool_trajectory_avg_score pass_rate > 0.9 over 1h")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "Error: --alert 'tool_trajectory_avg_score pass_rate > 0.9 over 1h': column 37: expected '<' or '<=' "
        "(a rule watches for a drop), got '>' (say METRIC pass_rate < THRESHOLD over DURATION [min N], e.g. "
        "'tool_trajectory_avg_score pass_rate < 0.9 over 1h')"]
    config = tmp_path / "eval_config.yaml"
    config.write_text("evaluators:\n  - name: tool_trajectory_avg_score\n    type: builtin\n"
                      "alerts:\n  - 'trajectory pass_rate < 0.9 over 1h'\n")
    result = agentevals("serve", "-p", "0", "--otlp-http-port", "0", "--otlp-grpc-port", "0", "--no-store",
                        "-c", str(config))
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: {config}: alerts[0] 'trajectory pass_rate < 0.9 over 1h': metric 'trajectory' "
                           "is not evaluated by this server (did you mean 'tool_trajectory_avg_score'?)")


@pytest.fixture
def otlp_events() -> Iterator[Any]:
    """A loopback OTLP/HTTP logs receiver (a stand-in collector) that decodes what it gets."""
    pytest.importorskip("opentelemetry.proto", reason="the serve extra is not installed")
    from support.otlp_recorder import OtlpRecorder

    with OtlpRecorder() as recorder:
        yield recorder
