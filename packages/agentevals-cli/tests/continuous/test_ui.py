"""The live view (``/live``, ``/live/failures``): state filled by a real evaluation of the shipped samples and
by a real ``agentevals serve`` fed over OTLP, rendered in headless Chromium (Debian's ``chromium``); the chart's
geometry; every text from a source, a rule or a session shown as text, never run."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
import requests

pytest.importorskip("fastapi", reason="the serve extra is not installed")


from agentevals.api import prepare_run
from agentevals.engine.admission import Skip
from agentevals.engine.run import run_evaluation
from agentevals.serve.continuous import (
    AlertEvent,
    ContinuousState,
    JudgeUsage,
    Outcomes,
    SourceStatus,
    StateRecorder,
)
from agentevals.serve.http_api import ApiContext, api_app
from agentevals.serve.sessions import SessionAssembler
from agentevals.serve.store import MemorySessionStore
from agentevals.serve.web_live import BUCKETS, live_view, rate_chart, tally
from agentevals.serve.web_ui import CSP
from support.asgi import serving
from support.chromium import Browser, find_chromium

REPO = Path(__file__).resolve().parents[4]
SAMPLES = [str(REPO / "examples/traces" / n) for n in ("helm.json", "k8s.json", "helm_3.json")]
EVAL_SET = str(REPO / "examples/evalsets/eval_set_helm.json")
GOOD, BAD = "3e289017fe03ffd7c4145316d2eb3d0d", "d497c9dd55717f2c5ecb79bda3028993"
HOSTILE = '<script>console.error("xss")</script><img src=x onerror="console.error(1)">"onerror=console.error(2) x="'

needs_chromium = pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed (apt-get install chromium)")


class _SkipSession:
    """Leaves one session out (as sampling would), so the counters show a skip beside the scored ones."""

    def __init__(self, session: str) -> None:
        self.session = session

    def skip(self, case, evaluator):
        return Skip("sampled_out", "sampled out (test)") if case.case_id == self.session else None


def evaluated_state(skip: str = "c9a03cc4e80ea7a22332db0fe4dc3adf") -> ContinuousState:
    """A ``ContinuousState`` fed by ``StateRecorder`` from a real run of the shipped samples (helm passes,
    k8s fails tool_trajectory_avg_score, one session sampled out)."""
    evaluators, options, eval_set = prepare_run(eval_set=EVAL_SET, metrics=["tool_trajectory_avg_score"],
                                                group_by="trace")
    options.admissions.append(_SkipSession(skip))
    state = ContinuousState()
    run = asyncio.run(run_evaluation(SAMPLES, evaluators, eval_set=eval_set, options=options,
                                     consumers=[StateRecorder(state)]))
    statuses = {c.case_id: c.metrics[0].status.value for c in run.cases}
    assert statuses == {GOOD: "PASSED", BAD: "FAILED", skip: "NOT_EVALUATED"}, statuses
    return state


def hostile_parts(state: ContinuousState, now: float) -> None:
    """What the pull, alerts and budget lanes put in the state, with markup wherever a text comes from outside."""
    state.sources[f"phoenix+http://127.0.0.1:1/?project={HOSTILE}"] = SourceStatus(
        f"phoenix+http://127.0.0.1:1/?project={HOSTILE}", state="backing_off", watermark=now - 600,
        last_poll=now - 5, last_success=now - 700, next_poll=now + 40, failures=3, error=f"HTTP 500: {HOSTILE}",
        traces_read=12, sessions_scored=7)
    state.sources["jaeger+http://127.0.0.1:2/?service=shop"] = SourceStatus(
        "jaeger+http://127.0.0.1:2/?service=shop", state="ok", watermark=now - 30, last_poll=now - 30,
        last_success=now - 30, next_poll=now + 30, traces_read=40, sessions_scored=40)
    rule = "tool_trajectory_avg_score pass_rate < 0.9 over 1h"
    fired = AlertEvent(rule=rule, metric="tool_trajectory_avg_score", state="firing", at=now - 1, window_seconds=3600,
                       n=2, passed=1, pass_rate=0.5, lower=0.09, upper=0.91, threshold=0.9, sessions=[BAD, HOSTILE])
    old = AlertEvent(rule=HOSTILE, metric=HOSTILE, state="cleared", at=now - 7200, window_seconds=600, n=30,
                     passed=29, pass_rate=29 / 30, lower=0.83, upper=0.99, threshold=0.8)
    state.alerts.extend([old, fired])
    state.active[rule] = fired
    state.judge_usage["response_quality"] = JudgeUsage(calls=42, input_tokens=12345, output_tokens=678,
                                                       cost_usd=0.01234, over_budget=5)


@contextmanager
def ui(ctx: ApiContext) -> Iterator[str]:
    """The API app with its web UI on an ephemeral loopback port (uvicorn on a thread); yields the base URL."""
    with serving(api_app(ctx)) as url:
        yield url


def cells(browser: Browser, selector: str) -> list[list[str]]:
    return browser.js(f"Array.from(document.querySelectorAll('{selector} tbody tr'))"
                      ".map(r => Array.from(r.cells).map(c => c.innerText.trim()))")


def test_rate_chart_geometry():
    series = [{"start": 0.0, "n": 0, "passed": 0, "rate": None, "lower": 0.0, "upper": 1.0},
              {"start": 600.0, "n": 4, "passed": 4, "rate": 1.0, "lower": 0.51, "upper": 1.0},
              {"start": 1200.0, "n": 4, "passed": 0, "rate": 0.0, "lower": 0.0, "upper": 0.49},
              {"start": 1800.0, "n": 2, "passed": 1, "rate": 0.5, "lower": 0.09, "upper": 0.91}]
    chart = rate_chart(series, 600, thresholds=[0.9, 7.0], link=lambda start: f"/drill?start={start:g}")
    top, bottom = chart["grid"][2]["y"], chart["grid"][0]["y"]  # 100% and 0%
    assert [b["y"] for b in chart["buckets"]] == [top, bottom, (top + bottom) / 2]  # the empty bucket has no point
    assert [b["href"] for b in chart["buckets"]] == ["", "/drill?start=1200", "/drill?start=1800"]  # failures only
    full, none = chart["buckets"][0], chart["buckets"][1]
    assert full["bar_y"] == top and full["bar_y"] + full["bar_h"] == pytest.approx(top + 0.49 * (bottom - top), abs=0.2)
    assert none["bar_y"] == pytest.approx(top + 0.51 * (bottom - top), abs=0.2)
    assert chart["line"].count(",") == 3
    assert [t["label"] for t in chart["thresholds"]] == ["0.9"]  # a threshold outside [0, 1] is not drawn
    assert chart["buckets"][1]["title"].startswith("00:20–00:30 UTC: 0.00% (0/4) passed, 95% interval 0.0%–49.0%")
    assert chart["buckets"][0]["x"] < chart["buckets"][1]["x"] < chart["buckets"][2]["x"]  # oldest left


def test_one_pass_tally_agrees_with_outcomes():
    """The page tallies every metric from one snapshot; each metric's buckets and window are what
    ``Outcomes.series`` and ``Outcomes.between`` say."""
    outcomes = Outcomes(clock=lambda: 10_000.0)
    for i in range(400):
        outcomes.add(f"m{i % 3}", f"s{i % 50}", i % 7 != 0, at=1_000.0 + i * 20)
    outcomes.add("old", "x", False, at=1.0)
    start, end, bucket = 3_600.0, 9_600.0, 600.0
    tallied = tally(outcomes.snapshot(), start, end, bucket)
    assert sorted(tallied) == ["m0", "m1", "m2", "old"]
    for name, (series, window) in tallied.items():
        assert series == outcomes.series(name, end - start, bucket, now=end)
        assert window == outcomes.between(name, start, end)
    assert tallied["old"][1].n == 0 and tallied["m0"][1].failed_sessions


def test_live_view_values_from_a_real_run():
    state = evaluated_state()
    now = time.time()
    view = live_view(state, 6, now=now)
    assert view["counters"] == {"scored": 2, "sampled_out": 1, "filtered_out": 0, "over_budget": 0}
    (metric,) = view["metrics"]
    assert metric["name"] == "tool_trajectory_avg_score" and metric["n"] == 2 and metric["failed"] == 1
    assert metric["rate"] == "50.00% (1/2)" and metric["failing"] == [BAD]
    assert len(metric["chart"]["buckets"]) == 1 and metric["chart"]["buckets"][0]["href"]
    assert view["sources"] == [] and view["active"] == [] and view["judges"] == []
    # buckets sit on round times: the view a refresh later has the same boundaries
    later = live_view(state, 6, now=now + 1)["metrics"][0]["chart"]
    assert later["ticks"] == metric["chart"]["ticks"] or int(now) // BUCKETS[6] != int(now + 1) // BUCKETS[6]


@needs_chromium
def test_live_view_in_chromium(tmp_path):
    state = evaluated_state()
    now = time.time()
    hostile_parts(state, now)
    ctx = ApiContext(assembler=SessionAssembler(), store=MemorySessionStore(), continuous=state)
    with ui(ctx) as base, Browser() as browser:
        browser.open(f"{base}/live")
        text = browser.js("document.body.innerText")
        assert browser.js("Array.from(document.querySelectorAll('.cards .card')).map(c => c.innerText.replace(/\\s+/g, ' ').trim())") == [
            "2 scored", "1 sampled out", "0 filtered out", "0 over budget"]
        sources = cells(browser, "table.sources")
        # the URI as text, the failure's line under it
        assert sources[0][0] == f"phoenix+http://127.0.0.1:1/?project={HOSTILE}\nHTTP 500: {HOSTILE}"
        assert sources[1][0] == "jaeger+http://127.0.0.1:2/?service=shop"
        assert sources[0][1] == "backing_off\n3 failed polls" and sources[1][1] == "ok"
        assert sources[0][3] == "10min" and re.fullmatch(r"in [1-4]?\ds", sources[0][6]) and sources[0][7:9] == ["12", "7"]
        assert time.strftime("%Y-%m-%d %H:%M", time.gmtime(now - 600)) in sources[0][2]
        firing = cells(browser, "table.alerts.active")
        assert len(firing) == 1 and firing[0][1] == "tool_trajectory_avg_score pass_rate < 0.9 over 1h"
        assert firing[0][2:5] == ["50.00% (1/2)", "9.0%–91.0%", "0.9"]
        assert [row[1] for row in cells(browser, "table.alerts.recent")] == ["firing", "cleared"]  # newest first
        assert HOSTILE in text
        judges = cells(browser, "table.judges")
        assert judges == [["response_quality", "42", "12345", "678", "$0.0123", "5"]]
        # the chart: one bucket (both sessions now), its point linked because one failed, the alert's threshold
        assert browser.js("document.querySelectorAll('svg.live-rate rect.interval').length") == 1
        assert browser.js("document.querySelectorAll('svg.live-rate line.threshold').length") == 1
        assert "50.00% (1/2) passed" in browser.js("document.querySelector('svg.live-rate rect.interval title').textContent")
        # nothing from the state became an element: no script, image or handler; nothing logged
        assert browser.js("document.scripts.length + document.images.length"
                          " + document.querySelectorAll('[onerror]').length") == 0
        # one click from the drop to the sessions behind it
        href = browser.js("document.querySelector('svg.live-rate a.drop').getAttribute('href')")
        query = parse_qs(urlparse(href).query)
        assert query["metric"] == ["tool_trajectory_avg_score"] and float(query["start"][0]) <= now
        browser.js("document.querySelector('svg.live-rate a.drop circle').dispatchEvent(new MouseEvent('click', {bubbles: true}))")
        deadline = time.monotonic() + 20
        while "/live/failures" not in browser.js("location.pathname") and time.monotonic() < deadline:
            time.sleep(0.05)
        while browser.js("document.readyState") != "complete" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert browser.js("document.querySelector('h1').innerText") == "Failing sessions of tool_trajectory_avg_score"
        assert [row[0] for row in cells(browser, "table.failures")] == [BAD]  # only the failing one
        assert "no longer kept in memory" in browser.js("document.body.innerText")  # run in-process: no session record
        browser.open(f"{base}/live?hours=1")
        assert browser.js("document.querySelector('select[name=hours]').value") == "1"
        assert browser.errors == [] and browser.messages == [], browser.messages


def test_status_codes_headers_and_escaping():
    state = ContinuousState()
    hostile_parts(state, time.time())
    state.outcomes.add(HOSTILE, HOSTILE, False)
    ctx = ApiContext(assembler=SessionAssembler(), store=MemorySessionStore(), continuous=state)
    with ui(ctx) as base:
        def get(path: str) -> requests.Response:
            response = requests.get(base + path, timeout=10)
            assert response.headers["content-security-policy"] == CSP and "script-src" not in CSP
            assert response.headers["content-type"].startswith("text/html")
            return response

        for path in ("/live", "/live?hours=48", "/live?hours=7", "/live?hours=x", "/live/failures?metric=m&start=0&end=1"):
            assert get(path).status_code == 200, path
        page = get("/live").text
        assert "<script>" not in page and "&lt;script&gt;console.error" in page
        assert 'meta http-equiv="refresh" content="10"' in page
        assert get("/live?hours=7").text.count('<option value="6" selected>') == 1  # an unknown span: the default
        drill = re.search(r'<a class="all" href="(/live/failures\?[^"]+)">all 1 failing', page)
        assert drill, page
        failing = get(drill.group(1).replace("&amp;", "&")).text
        assert "&lt;script&gt;console.error" in failing and "<script>console" not in failing
        for bad in ("start=x&end=1", "start=nan&end=1", "start=1", ""):
            response = get(f"/live/failures?metric=m&{bad}")
            assert response.status_code == 400 and "start and end must be epoch seconds" in response.text
            assert "Traceback" not in response.text


def test_empty_state_says_what_to_do():
    ctx = ApiContext(assembler=SessionAssembler(), store=MemorySessionStore())
    with ui(ctx) as base:
        page = requests.get(f"{base}/live", timeout=10).text
    assert "No pulled sources" in page and "agentevals serve --pull URI --every 1m" in page
    assert "No alert has fired (no session scored yet)." in page
    assert "No judge call recorded" in page and "<svg" not in page


@needs_chromium
def test_live_view_of_a_real_serve(tmp_path):
    """A real ``agentevals serve`` receiving a plain-OTLP agent (one passing session, one failing): the live view
    counts both, charts the failure, and the failing session is one click from the chart's drill-down."""
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from support.live_server import start_server, stop_server
    from support.weather_agent import QUESTION, run_weather_agent, weather_eval_set

    weather_eval_set(tmp_path)
    # an alert rule that needs 10 sessions: it never fires here, but its threshold is drawn on the chart
    server = start_server("--eval-sets", str(tmp_path), "--no-store",
                          "--alert", "tool_trajectory_avg_score pass_rate < 0.7 over 1h")
    try:
        base = server.api.removesuffix("/api")
        good = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"))
        bad = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"), city="Rome")
        for trace_id in (good, bad):
            server.wait_for_session(lambda s, t=trace_id: s["session_id"] == t)
        with Browser() as browser:
            deadline = time.monotonic() + 30
            while True:  # the recorder runs after the session store: wait for both to be counted
                browser.open(f"{base}/live")
                scored = browser.js("document.querySelector('.card.scored b').innerText")
                if scored == "2" or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            assert scored == "2"
            assert browser.js("document.querySelector('section.metric h3').innerText") == "tool_trajectory_avg_score"
            assert "50.00% (1/2) passed" in browser.js("document.querySelector('section.metric p').innerText")
            assert browser.js("Array.from(document.querySelectorAll('section.metric a.session')).map(a => a.innerText)") == [bad]
            assert browser.js("Array.from(document.querySelectorAll('svg.live-rate line.threshold')).length") == 1
            assert browser.js("document.querySelector('table.alerts')") is None  # nothing fired
            browser.open(base + browser.js("document.querySelector('svg.live-rate a.drop').getAttribute('href')"))
            assert [row[0] for row in cells(browser, "table.failures")] == [bad]
            assert "tool_trajectory_avg_score: FAILED" in cells(browser, "table.failures")[0][4]
            browser.open(browser.js("document.querySelector('table.failures a').href"))
            assert browser.js("location.pathname") == f"/sessions/{bad}"
            assert QUESTION in browser.js("document.body.innerText")
            assert browser.errors == [], browser.messages
    finally:
        stop_server(server.process)
