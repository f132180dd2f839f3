"""The web UI in headless Chromium (Debian's ``chromium``): live sessions, a session's conversation and
trajectory, compare; trace content is escaped, and no page logs anything to the console."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import requests

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from support.weather_agent import QUESTION, run_weather_agent, weather_eval_set

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")

HOSTILE = '<script>console.error("xss")</script><img src=x onerror="console.error(1)">'


def browse(url: str, profile) -> tuple[str, list[str]]:
    """The DOM Chromium renders for ``url``, and every console message it logged (60 s deadline)."""
    result = subprocess.run([CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                             "--virtual-time-budget=2000", "--dump-dom", url],
                            capture_output=True, text=True, timeout=60)
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    return result.stdout, console


def hostile_trace(endpoint: str) -> str:
    """A plain-OTLP JSON trace whose user message and tool arguments carry markup; returns its trace id."""
    messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": HOSTILE}]}])
    answer = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": HOSTILE}]}])
    trace_id = "ab" * 16
    document = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "x"}, "spans": [
        {"traceId": trace_id, "spanId": "1" * 16, "name": "invoke_agent", "startTimeUnixNano": "1",
         "endTimeUnixNano": "3", "attributes": [
             {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
             {"key": "gen_ai.input.messages", "value": {"stringValue": messages}},
             {"key": "gen_ai.output.messages", "value": {"stringValue": answer}}]},
        {"traceId": trace_id, "spanId": "2" * 16, "parentSpanId": "1" * 16, "name": "execute_tool",
         "startTimeUnixNano": "2", "endTimeUnixNano": "2", "attributes": [
             {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
             {"key": "gen_ai.tool.name", "value": {"stringValue": "get_weather"}},
             {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": json.dumps({"city": HOSTILE})}},
             {"key": "gen_ai.tool.call.result", "value": {"stringValue": HOSTILE}}]}]}]}]}
    response = requests.post(f"{endpoint}/v1/traces", json=document, timeout=10)
    assert response.status_code == 200
    return trace_id


def test_console_check_can_fail(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text('<script>console.error("boom")</script>')
    _, console = browse(bad.as_uri(), tmp_path / "profile")
    assert any("boom" in line for line in console)


def test_pages_render_escaped_and_without_console_messages(serve, tmp_path):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    weather_eval_set(tmp_path)
    server = serve("--eval-sets", str(tmp_path))
    ui = server.api.removesuffix("/api")
    good = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"))
    bad = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"), city="Rome")
    hostile = hostile_trace(server.otlp_http)
    for trace_id in (good, bad, hostile):
        server.wait_for_session(lambda s, t=trace_id: s["session_id"] == t)
    profile = tmp_path / "profile"

    dom, console = browse(f"{ui}/", profile)
    assert console == []
    for trace_id in (good, bad, hostile):
        assert f'href="/sessions/{trace_id}"' in dom
    assert "tool_trajectory_avg_score: PASSED" in dom and "tool_trajectory_avg_score: FAILED" in dom

    dom, console = browse(f"{ui}/?result=FAILED", profile)
    assert console == [] and bad in dom and good not in dom

    dom, console = browse(f"{ui}/sessions/{bad}", profile)
    assert console == []
    assert QUESTION.replace("'", "&#39;") in dom or QUESTION in dom
    assert "Trajectory: expected vs actual" in dom
    assert re.search(r'get_weather\(\{"city": ?"Paris"\}\)', dom) and re.search(r'get_weather\(\{"city": ?"Rome"\}\)', dom)

    dom, console = browse(f"{ui}/sessions/{hostile}", profile)
    assert console == []  # the markup in the trace neither ran nor was even attempted
    assert "<script>console" not in dom and "<img src" not in dom
    assert "&lt;script&gt;console.error" in dom

    dom, console = browse(f"{ui}/compare?a={good}&b={bad}", profile)
    assert console == []
    assert "-1.000" in dom  # tool_trajectory_avg_score 1.0 → 0.0

    dom, console = browse(f"{ui}/trend?metric=tool_trajectory_avg_score", profile)
    assert console == []
    score = dom[dom.index('<figure class="chart score">'):]
    score = score[:score.index("</figure>")]
    ticks = {label: float(y) - 4 for y, label in re.findall(r'<text class="tick y" x="[\d.]+" y="([\d.]+)">([^<]+)</text>', score)}
    points = [float(y) for y in re.findall(r'<circle class="dot (?:passed|failed)" cx="[\d.]+" cy="([\d.]+)"', score)]
    assert len(points) == 3 and points[0] == ticks["1"] and points[1] == ticks["0"]  # 1.0 at the top, 0.0 at the bottom
    assert "score (0–1)" in score and "session received (oldest left)" in score
    # latency by session (the agents' turn durations), with its axis and unit; these agents make no LLM call,
    # so there is no token chart rather than a chart of zeros
    latency = dom[dom.index('<figure class="chart latency">'):]
    latency = latency[:latency.index("</figure>")]
    assert re.search(r'<text class="axis-title y"[^>]*>latency \((ms|s)\)</text>', latency)
    assert len(re.findall(r'<circle class="dot ?"', latency)) == 3 and '<figure class="chart tokens">' not in dom


def test_ui_needs_the_token_when_one_is_set(serve, tmp_path):
    server = serve("--api-token", "s3cret", token="s3cret")
    ui = server.api.removesuffix("/api")
    assert requests.get(f"{ui}/", timeout=10).status_code == 401
    with requests.Session() as browser:
        landed = browser.get(f"{ui}/?token=s3cret", timeout=10)
        assert landed.status_code == 200 and "Sessions" in landed.text
        assert "token" not in landed.url
        assert browser.get(f"{ui}/compare", timeout=10).status_code == 200


def test_headless_serves_no_ui(serve):
    server = serve("--headless")
    assert requests.get(server.api.removesuffix("/api") + "/", timeout=10).status_code == 404
    assert server.get("/health").status_code == 200
