"""The run pages of the web UI (``/runs…``) over a run store filled by real ``agentevals run`` invocations on
the shipped samples: driven in headless Chromium (filters through their forms, drill-down, compare, the
trend chart, no console message), their status codes over plain HTTP, and stored content kept inert."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from agentevals.results import CaseResult, MetricResult, RunResult, Status
from agentevals.serve.web_ui import CSP
from agentevals.store import RunStore
from support.asgi import serving_store
from support.chromium import Browser, find_chromium
from support.stored_runs import HELM_3_ID, HELM_ID, K8S_ID

REPO = Path(__file__).resolve().parents[4]
SAMPLES = [str(REPO / "examples/traces" / n) for n in ("helm.json", "k8s.json", "helm_3.json")]
EVAL_SET = str(REPO / "examples/evalsets/eval_set_helm.json")
GOOD, BAD, UNMATCHED = HELM_ID, K8S_ID, HELM_3_ID
HOSTILE = '<script>console.error("xss")</script><img src=x onerror="console.error(1)">"onerror=console.error(2) x="'

needs_chromium = pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed (apt-get install chromium)")


def agentevals_run(store: Path, *extra: str) -> str:
    """One real ``agentevals run`` of the shipped samples into ``store``; returns the run id it recorded."""
    before = {r.run_id for r in _list(store)}
    result = subprocess.run([sys.executable, "-m", "agentevals", "run", *SAMPLES, "-e", EVAL_SET, "-m",
                             "tool_trajectory_avg_score", "-m", "response_match_score", "--store", str(store),
                             "-o", "summary", *extra], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr  # the shipped samples fail on purpose
    (new,) = {r.run_id for r in _list(store)} - before
    return new


def _list(store: Path) -> list:
    db = RunStore.open(str(store))
    try:
        return db.list_runs(limit=100)
    finally:
        db.close()


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> tuple[Path, str, str]:
    """A store with two runs of the samples: the default threshold, then ``-t 0.9`` (a regression)."""
    store = tmp_path_factory.mktemp("runs") / "runs.sqlite"
    first = agentevals_run(store)
    second = agentevals_run(store, "-t", "0.9")  # no pause: run ids sort by the microsecond
    return store, first, second


def rows(browser: Browser, selector: str) -> list[str]:
    """The first cell's text of each row of the table ``selector``."""
    return browser.js(f"Array.from(document.querySelectorAll('{selector} tbody tr')).map(r => r.cells[0].innerText.trim())")


def submit(browser: Browser, form_action: str, **fields: str) -> None:
    """Fill the form whose action ends in ``form_action`` as a user would, submit it, wait for the new page."""
    assigns = "".join(f"f.elements[{name!r}].value = {value!r};" for name, value in fields.items())
    browser.js("window.__old = true")  # gone once the submitted form's page has loaded
    browser.js(f"(() => {{ const f = Array.from(document.forms).find(f => f.getAttribute('action').endsWith({form_action!r}));"
               f" {assigns} f.querySelector('button[type=submit]').click(); }})()")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if browser.holds("window.__old === undefined && document.readyState === 'complete'"):
                return
        except RuntimeError:  # the context went away mid-navigation
            pass
        time.sleep(0.05)
    raise TimeoutError(f"the {form_action} form did not load a page")


@needs_chromium
def test_run_pages_in_chromium(two_runs):
    store, first, second = two_runs
    with serving_store(str(store)) as base, Browser() as browser:
        # /runs: newest first, each with its counts; the filters are a plain GET form
        browser.open(f"{base}/runs")
        assert rows(browser, "table.runs") == [second, first]
        cells = browser.js("Array.from(document.querySelectorAll('table.runs tbody tr')[1].cells).map(c => c.innerText)")
        assert cells[2:7] == ["completed", "3", "1", "50.00% (1/2, 95% CI 9.45–90.55%)", "1"]
        submit(browser, "/runs", q="-t 0.9")
        assert browser.js("location.search") == "?q=-t+0.9&status=&result="
        assert rows(browser, "table.runs") == [second]
        submit(browser, "/runs", q="", status="completed", result="passed")
        assert browser.js("document.querySelector('table.runs')") is None
        assert "No run matches these filters." in browser.js("document.body.innerText")
        submit(browser, "/runs", result="failed")
        assert rows(browser, "table.runs") == [second, first]

        # /runs/{run}: totals, failures first, filters by status, evaluator and text
        browser.open(f"{base}/runs/{first}")
        text = browser.js("document.body.innerText")
        assert "pass rate\n50.00% (1/2, 95% CI 9.45–90.55%)" in text
        assert "response_match_score\n50.00% (1/2, 95% CI 9.45–90.55%)" in text
        assert rows(browser, "table.cases") == [BAD, GOOD, UNMATCHED]
        submit(browser, f"/runs/{first}", status="FAILING")
        assert rows(browser, "table.cases") == [BAD]
        submit(browser, f"/runs/{first}", status="PASSED", metric="response_match_score")
        assert rows(browser, "table.cases") == [GOOD]
        submit(browser, f"/runs/{first}", status="", metric="", q="c9a03cc4")
        assert rows(browser, "table.cases") == [UNMATCHED]

        # a case's drill-down: results with reasons, expected vs actual trajectory, the conversation
        browser.open(f"{base}/runs/{first}?status=FAILING")
        browser.open(browser.js("document.querySelector('table.cases tbody a').href"))
        assert re.fullmatch(rf"{re.escape(base)}/runs/{first}/cases/\d+", browser.js("location.href"))
        text = browser.js("document.body.innerText")
        assert f"Case {BAD}" in text and "eval case helm_list_releases" in text
        assert browser.js("Array.from(document.querySelector('table.trajectory tr.differs').cells)"
                          ".map(c => c.innerText.trim())") == ["1", "helm_list_releases({})", "(none)"]
        assert "tool_trajectory_avg_score\tFAILED\t0.000" in text
        assert "Turn 1\nUSER\n" in text and "AGENT\n" in text
        browser.open(f"{base}/runs/{first}?q={GOOD}")
        browser.open(browser.js("document.querySelector('table.cases tbody a').href"))
        text = browser.js("document.body.innerText")
        assert "TOOL CALL\nhelm_list_releases({})" in text and "TOOL RESPONSE · HELM_LIST_RELEASES\n{\"content\"" in text
        assert browser.js("document.querySelector('table.trajectory tr.same')") is not None

        # compare: the two newest runs are preselected and compared at once, without pressing Compare
        browser.open(f"{base}/runs/compare")
        assert browser.js("document.forms[0].elements.a.value") == first
        assert browser.js("document.forms[0].elements.b.value") == second
        assert browser.js("document.querySelector('h2.headline').innerText") == (
            f"baseline {first}: 1 regression, 0 fixes, 0 score changes")
        assert browser.js("document.querySelector('p.paired').innerText").startswith("paired (α 0.05): ")
        assert browser.js("document.querySelector('table.regression tbody tr').innerText").split("\t")[:4] == [
            GOOD, "response_match_score", "PASSED", "FAILED"]
        submit(browser, "/runs/compare")  # pressing Compare shows the same
        assert browser.js("document.querySelector('h2.headline').innerText") == (
            f"baseline {first}: 1 regression, 0 fixes, 0 score changes")

        # the trend: one point per run for each series, the picker lists the stored metrics
        browser.open(f"{base}/runs/trend?metric=response_match_score")
        assert browser.js("Array.from(document.querySelectorAll('select[name=metric] option')).map(o => o.value)") == [
            "response_match_score", "tool_trajectory_avg_score"]
        rate = "figure.metric g.series.s1 circle.dot"
        assert browser.js(f"document.querySelectorAll('{rate}').length") == 2
        ticks = browser.js("Object.fromEntries(Array.from(document.querySelectorAll('figure.metric text.tick.y'))"
                           ".map(t => [t.textContent, Number(t.getAttribute('y')) - 4]))")
        cys = browser.js(f"Array.from(document.querySelectorAll('{rate}')).map(c => Number(c.getAttribute('cy')))")
        assert cys == [(ticks["0"] + ticks["1"]) / 2, ticks["0"]]  # pass rate 1/2 then 0/2, on the y axis' scale
        rates = browser.js("Array.from(document.querySelectorAll('table.trend tbody tr')).map(r => r.cells[3].innerText)")
        assert rates == ["0.00% (0/2, 95% CI 0.00–65.77%)", "50.00% (1/2, 95% CI 9.45–90.55%)"]  # newest first
        assert browser.js("document.querySelector('figure.metric text.axis-title.y').textContent") == (
            "pass rate · mean score (0–1)")
        submit(browser, "/runs/trend", metric="tool_trajectory_avg_score")
        assert browser.js("document.querySelectorAll('figure.metric g.series.s2 circle.dot').length") == 2

        # navigation: Sessions, Live and Runs from every page
        assert browser.js("Array.from(document.querySelectorAll('header nav a')).map(a => a.getAttribute('href'))") == [
            "/", "/compare", "/trend", "/live", "/runs", "/runs/compare", "/runs/trend", "/review", "/upload",
            "/openapi.json"]
        assert browser.errors == [], browser.messages
        assert browser.messages == []


def hostile_runs(store: RunStore) -> tuple[str, str]:
    """Two stored runs whose command, case id, metric name, reason and transcript all carry markup: the
    case passes in the first and fails in the second (so compare shows it)."""
    ids = []
    for n, status in enumerate((Status.PASSED, Status.FAILED)):
        run_id = f"2026010{n + 1}-000000-abcdef"
        case = CaseResult(case_id=f"case {HOSTILE}", trace_ids=["t"], sources=[f"{HOSTILE}.json"], eval_id=HOSTILE,
                          metrics=[MetricResult(name=f"m{HOSTILE}", status=status, score=1.0 - n, threshold=0.5,
                                                reason=HOSTILE, reasoning=HOSTILE)])
        case._transcript = [{"user": HOSTILE, "response": HOSTILE,
                             "tool_calls": [{"name": HOSTILE, "args": {"x": HOSTILE}}],
                             "tool_responses": [{"name": HOSTILE, "output": HOSTILE, "status": HOSTILE}],
                             "expected_tool_calls": [{"name": HOSTILE, "args": {}}], "expected_response": HOSTILE}]
        store.begin_run(run_id, command=f"agentevals run {HOSTILE}", cwd=None, config_digest=None,
                        eval_set_digest=None, versions={}, options={}, started_at=f"2026-01-0{n + 1}T00:00:00Z")
        store.record_case(run_id, 0, case, {})
        run = RunResult(cases=[case], run_id=run_id, notes=[HOSTILE])
        store.finish_run(run, status="completed", exit_code=run.exit_code(), totals=run.totals())
        ids.append(run_id)
    return ids[0], ids[1]


@needs_chromium
def test_stored_markup_is_shown_as_text_and_never_runs(tmp_path):
    location = str(tmp_path / "runs.sqlite")
    db = RunStore.open(location)
    before, run_id = hostile_runs(db)
    db.close()
    pages = ["/runs", f"/runs/{run_id}", f"/runs/{run_id}/cases/0", "/runs/trend",
             f"/runs/compare?a={before}&b={run_id}", f"/runs/{run_id}?q=%3Cscript%3E"]
    with serving_store(location) as base, Browser() as browser:
        for path in pages:
            browser.open(base + path)
            # no element came from the stored text: no script, no image, no event handler attribute
            assert browser.js("document.scripts.length + document.images.length"
                              " + document.querySelectorAll('[onerror]').length") == 0, path
            assert HOSTILE[:60] in browser.js("document.body.innerText"), path  # shown, as text (the list cuts it)
        assert browser.js("document.querySelector('input[name=q]').value") == "<script>"
        assert browser.messages == []  # nothing ran, nothing was even attempted (a blocked script logs)
    with serving_store(location) as base:
        html = requests.get(f"{base}/runs/{run_id}/cases/0", timeout=10).text
    assert "<script>console" not in html and "&lt;script&gt;console.error" in html


def test_status_codes_and_headers(two_runs):
    store, first, second = two_runs
    with serving_store(str(store)) as base:
        def get(path: str) -> requests.Response:
            response = requests.get(base + path, timeout=10)
            assert response.headers["content-security-policy"] == CSP and "script-src" not in CSP
            assert response.headers["content-type"].startswith("text/html")
            return response

        for path in ("/runs", "/runs?status=running", f"/runs/{first}", f"/runs/{first[:24]}", "/runs/latest",
                     f"/runs/{first}/cases/0", "/runs/compare", f"/runs/compare?a={first}&b=latest",
                     "/runs/trend", "/runs/trend?metric=response_match_score&limit=1", "/runs/trend?metric=nope"):
            assert get(path).status_code == 200, path
        assert "No run has a result of nope." in get("/runs/trend?metric=nope").text
        missing = get("/runs/nope")
        assert missing.status_code == 404 and "no run &#39;nope&#39; in the run store" in missing.text
        assert "Traceback" not in missing.text
        assert get("/runs/2026").status_code == 404  # a prefix of both runs: ambiguous
        assert "is ambiguous" in get("/runs/2026").text
        assert get(f"/runs/{first}/cases/99").status_code == 404
        assert f"run {first} has no case #99" in get(f"/runs/{first}/cases/99").text
        assert get(f"/runs/compare?a=nope&b={second}").status_code == 404
        assert get(f"/runs/{first}/cases/x").status_code == 404  # not an index: the same page, not FastAPI's JSON
        assert get("/runs/trend?limit=x").status_code == 200  # the default number of runs


def test_without_a_run_store_the_pages_say_so(tmp_path):
    with serving_store(None) as base:
        for path, status in (("/runs", 200), ("/runs/compare?a=x&b=y", 200), ("/runs/trend", 200),
                             ("/runs/latest", 404), ("/runs/latest/cases/0", 404)):
            response = requests.get(base + path, timeout=10)
            assert response.status_code == status, path
            assert "No run store: this server records no runs (serve --no-store)" in response.text, path
        assert requests.get(f"{base}/", timeout=10).status_code == 200  # the sessions page is unaffected


def test_a_broken_store_is_one_line_not_a_traceback(tmp_path):
    import sqlite3

    location = str(tmp_path / "runs.sqlite")
    db = RunStore.open(location)
    _, run_id = hostile_runs(db)
    db.close()
    with serving_store(location) as base:
        other = sqlite3.connect(location)  # someone else's hands on the database
        other.execute("DROP TABLE metric_results")
        other.commit()
        other.close()
        response = requests.get(f"{base}/runs/{run_id}", timeout=10)
    assert response.status_code == 503
    assert "The run store could not be read: OperationalError: no such table: metric_results" in response.text
    assert "Traceback" not in response.text


@needs_chromium
def test_live_sessions_and_batch_runs_side_by_side(serve, tmp_path):
    """A real ``serve --store`` receiving a plain-OTLP agent, beside a real ``agentevals run`` in the same store."""
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from support.weather_agent import QUESTION, run_weather_agent, weather_eval_set

    store = tmp_path / "runs.sqlite"
    batch = agentevals_run(store)
    weather_eval_set(tmp_path)
    server = serve("--eval-sets", str(tmp_path), "--store", str(store))
    ui_base = server.api.removesuffix("/api")
    trace_id = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"))
    server.wait_for_session(lambda s: s["session_id"] == trace_id)
    with Browser() as browser:
        deadline = time.monotonic() + 30
        while True:  # the live run's row counts the session once it is recorded
            browser.open(f"{ui_base}/runs?status=live")
            live = browser.js("Array.from(document.querySelectorAll('table.runs tbody tr')).map(r => Array.from(r.cells).map(c => c.innerText.trim()))")
            if (live and live[0][3] == "1") or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert len(live) == 1 and live[0][2:6] == ["live", "1", "0", "100.00% (1/1, 95% CI 20.65–100.00%)"], live
        assert browser.js("document.querySelector('meta[http-equiv=refresh]').content") == "10"
        browser.open(f"{ui_base}/runs")
        assert rows(browser, "table.runs") == [live[0][0], batch]  # live and batch results together
        browser.open(f"{ui_base}/runs/{live[0][0]}")
        assert rows(browser, "table.cases") == [trace_id]
        browser.open(browser.js("document.querySelector('table.cases tbody a').href"))
        text = browser.js("document.body.innerText")
        assert QUESTION in text and "TOOL RESPONSE · GET_WEATHER\nsunny" in text
        assert browser.js("document.querySelector('table.trajectory tr.same')") is not None
        browser.open(f"{ui_base}/runs/trend?metric=tool_trajectory_avg_score")
        assert browser.js("document.querySelectorAll('figure.metric g.series.s1 circle.dot').length") == 2  # batch, live
        assert browser.errors == [], browser.messages
