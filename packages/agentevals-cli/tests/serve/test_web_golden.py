"""Golden data from the browser (``serve/web_golden``): "Label" and "Add to eval set" on a live session and a
run's case, against a real ``agentevals serve`` (its run store and ``--eval-sets`` directory in a temporary
folder) fed a recorded OTLP JSON trace over its OTLP/HTTP receiver; then a real ``agentevals run`` of the same
trace file with the saved set. The browser loop drives the same pages in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
import requests
from support.chromium import Browser, find_chromium
from support.live_server import REPO, Server, start_server, stop_server
from support.serve_guard import csrf_token

needs_chromium = pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed (apt-get install chromium)")
METRIC = "tool_trajectory_avg_score"


def weather_trace(path: Path, trace_id: str, *, city: str = "Paris") -> Path:
    """One GenAI agent turn (official semconv: an agent span and its tool call) as an OTLP JSON file that closes
    its session, as an OpenTelemetry SDK would export it."""
    now = time.time_ns()

    def attr(key: str, value: object) -> dict:
        return {"key": key, "value": {"boolValue": value} if isinstance(value, bool) else {"stringValue": value}}

    def messages(role: str, text: str) -> str:
        return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])

    root = trace_id[:16]
    tool = root[:-1] + ("1" if root[-1] == "0" else "0")  # a span id of its own
    spans = [
        {"traceId": trace_id, "spanId": root, "name": "invoke_agent weather", "kind": 1,
         "startTimeUnixNano": str(now), "endTimeUnixNano": str(now + 3_000_000),
         "attributes": [attr("gen_ai.operation.name", "invoke_agent"), attr("gen_ai.agent.name", "weather"),
                        attr("gen_ai.input.messages", messages("user", f"What's the weather in {city}?")),
                        attr("gen_ai.output.messages", messages("assistant", f"It is sunny in {city}.")),
                        attr("agentevals.session.complete", True)]},
        {"traceId": trace_id, "spanId": tool, "parentSpanId": root, "name": "execute_tool get_weather", "kind": 1,
         "startTimeUnixNano": str(now + 1_000_000), "endTimeUnixNano": str(now + 2_000_000),
         "attributes": [attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.tool.name", "get_weather"),
                        attr("gen_ai.tool.call.id", "call-1"),
                        attr("gen_ai.tool.call.arguments", json.dumps({"city": city})),
                        attr("gen_ai.tool.call.result", "sunny")]},
    ]
    path.write_text(json.dumps({"resourceSpans": [{"resource": {"attributes": [attr("service.name", "weather")]},
                                                   "scopeSpans": [{"scope": {"name": "weather"}, "spans": spans}]}]}))
    return path


def send(server: Server, trace: Path) -> str:
    """POST the OTLP JSON file to serve's receiver; the session id once it is evaluated."""
    session_id = json.loads(trace.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    response = requests.post(f"{server.otlp_http}/v1/traces", data=trace.read_bytes(),
                             headers={"content-type": "application/json"}, timeout=10)
    assert response.status_code == 200, response.text
    server.wait_for_session(lambda s: s["session_id"] == session_id)
    return session_id


def ui(server: Server) -> str:
    return server.api.removesuffix("/api")


class Tab:
    """A browser's cookie jar over plain HTTP: opens pages, posts their forms with the page's CSRF field."""

    def __init__(self, server: Server) -> None:
        self.base = ui(server)
        self.http = requests.Session()
        self.token = ""

    def open(self, path: str) -> requests.Response:
        page = self.http.get(self.base + path, timeout=10)
        self.token = csrf_token(page.text, default=self.token)
        return page

    def post(self, path: str, **fields: str) -> requests.Response:
        return self.http.post(self.base + path, data={"csrf_token": self.token, **fields}, timeout=30,
                              allow_redirects=False)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentevals", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300, env={**os.environ, "NO_COLOR": "1"})


def stored_labels(store: Path) -> list[dict]:
    from agentevals.store import RunStore

    runs = RunStore.open(str(store))
    try:
        return [r.as_row() for r in runs.labels()]
    finally:
        runs.close()


@pytest.fixture
def golden(tmp_path):
    """serve with a run store and an empty --eval-sets directory, one live session evaluated."""
    sets = tmp_path / "sets"
    sets.mkdir()
    store = tmp_path / "runs.sqlite"
    server = start_server("--store", str(store), "--eval-sets", str(sets), "-m", METRIC)
    try:
        trace = weather_trace(tmp_path / "paris.json", "ab12" * 8)
        server.session = send(server, trace)
        server.sets, server.store, server.trace = sets, store, trace
        yield server
    finally:
        stop_server(server.process)


def test_a_live_session_becomes_a_labelled_golden_case_that_scores_the_next_run(golden, tmp_path):
    tab = Tab(golden)
    page = tab.open(f"/sessions/{golden.session}").text
    assert f'action="/sessions/{golden.session}/label"' in page and f'action="/sessions/{golden.session}/evalset"' in page
    assert "It is sunny in Paris." in page and "{&#34;name&#34;: &#34;get_weather&#34;" in page  # prefilled
    assert f'<option value="{METRIC}">' in page and "No human label yet." in page

    # Add to a new set, with an edited expectation
    saved = tab.post(f"/sessions/{golden.session}/evalset", set="", new_set="golden", eval_id="paris_weather",
                     response_0="It is sunny in Paris.",
                     trajectory_0='{"name": "get_weather", "args": {"city": "Paris"}}\n\n')
    assert saved.status_code == 303, saved.text[:300]
    assert saved.headers["location"].endswith(f"/sessions/{golden.session}?saved=golden.evalset.json%3Aparis_weather#evalset")
    path = golden.sets / "golden.evalset.json"
    data = json.loads(path.read_text())
    (case,) = data["eval_cases"]
    assert data["eval_set_id"] == "golden" and case["eval_id"] == "paris_weather"
    assert case["conversation"][0]["intermediate_data"] == {  # the tool's recorded answer stays with the case
        "tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}}],
        "tool_responses": [{"name": "get_weather", "response": {"result": "sunny"}}]}
    prov = case["metadata"]["provenance"]
    assert prov["case_id"] == golden.session and prov["trace_ids"] == [golden.session] and prov["run_id"]
    assert "labels" not in case["metadata"]
    shown = tab.open(saved.headers["location"].split("#")[0].removeprefix(ui(golden))).text
    assert "Saved eval case <code>paris_weather</code> in <code>golden.evalset.json</code>" in shown
    assert '<option value="golden.evalset.json">' in shown

    # Label: stored, shown on the page, and carried into the set case made from this session
    labelled = tab.post(f"/sessions/{golden.session}/label", verdict="fail", score="0.25", metric=METRIC,
                        note="wrong city for the user", labeler="ana")
    assert labelled.status_code == 303 and labelled.headers["location"].endswith("?labelled=1#label")
    page = tab.open(f"/sessions/{golden.session}?labelled=1").text
    assert "Label saved." in page and '<span class="badge failed">fail</span> 0.25 (ana): wrong city for the user' in page
    assert 'name="labeler" size="14" placeholder="your name" value="ana"' in page  # remembered (a cookie)
    assert "≠ evaluator" not in page  # no eval set yet: NOT_EVALUATED, no verdict to disagree with
    labels = json.loads(path.read_text())["eval_cases"][0]["metadata"]["labels"]
    assert [{k: v for k, v in lb.items() if k != "created_at"} for lb in labels] == [
        {"verdict": "fail", "score": 0.25, "metric": METRIC, "note": "wrong city for the user", "labeler": "ana"}]
    assert [r["case"] for r in stored_labels(golden.store)] == [golden.session]

    # the same case on the live run's case page: the same label, the same forms
    run_id = prov["run_id"]
    case_page = tab.open(f"/runs/{run_id}/cases/{prov['case_index']}").text
    assert "</span> 0.25 (ana): wrong city for the user" in case_page and f'action="/runs/{run_id}/cases/0/label"' in case_page

    # serve reloaded the sets: the next session of that agent matches the new case, no restart
    again = send(golden, weather_trace(tmp_path / "again.json", "cd34" * 8))
    summary = golden.wait_for_session(lambda s: s["session_id"] == again)
    assert (summary["eval_set_id"], summary["eval_id"], summary["metrics"]) == ("golden", "paris_weather", {METRIC: "PASSED"})

    # the file passes validate and scores the next `run` of the same trace, which shows and stores the label
    assert cli("evalset", "validate", str(path), cwd=tmp_path).returncode == 0
    other = tmp_path / "next.sqlite"
    ran = cli("run", str(golden.trace), "-e", str(path), "-m", METRIC, "--store", str(other), cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "eval case paris_weather" in ran.stdout and "≠ fail 0.25 (ana)" in ran.stdout, ran.stdout  # HUMAN
    shown = cli("runs", "show", "latest", "--store", str(other), "-o", "json", cwd=tmp_path)
    (result,) = json.loads(shown.stdout)["cases"]
    assert result["eval_id"] == "paris_weather"
    assert [(lb["verdict"], lb["score"], lb["metric"], lb["labeler"]) for lb in result["labels"]] == [
        ("fail", 0.25, METRIC, "ana")]
    disagree = cli("runs", "show", "latest", "--store", str(other), "--disagreements", cwd=tmp_path)
    assert "human fail 0.25 (ana): wrong city for the user" in disagree.stdout


def test_editing_a_saved_case_replaces_it_and_a_new_set_id_may_not_clash(golden):
    tab = Tab(golden)
    tab.open(f"/sessions/{golden.session}")
    first = tab.post(f"/sessions/{golden.session}/evalset", new_set="golden", eval_id="paris",
                     response_0="It is sunny.", trajectory_0="")
    assert first.status_code == 303
    second = tab.post(f"/sessions/{golden.session}/evalset", set="golden.evalset.json", eval_id="paris_v2",
                      response_0="", trajectory_0='{"name": "get_weather"}')
    assert second.status_code == 303
    (case,) = json.loads((golden.sets / "golden.evalset.json").read_text())["eval_cases"]
    turn = case["conversation"][0]
    assert case["eval_id"] == "paris_v2" and "final_response" not in turn  # cleared: nothing expected
    assert turn["intermediate_data"] == {"tool_uses": [{"name": "get_weather", "args": {}}],  # same tool, edited args
                                         "tool_responses": [{"name": "get_weather", "response": {"result": "sunny"}}]}
    third = tab.post(f"/sessions/{golden.session}/evalset", set="golden.evalset.json", eval_id="paris_v3",
                     response_0="", trajectory_0='{"name": "get_time"}')
    assert third.status_code == 303  # another tool: get_weather's answer no longer belongs to the case
    (case,) = json.loads((golden.sets / "golden.evalset.json").read_text())["eval_cases"]
    assert case["conversation"][0]["intermediate_data"] == {"tool_uses": [{"name": "get_time", "args": {}}]}
    # the same case from its run's case page: the same stored case, so the same set entry is replaced again
    run_id = case["metadata"]["provenance"]["run_id"]
    tab.open(f"/runs/{run_id}/cases/0")
    third = tab.post(f"/runs/{run_id}/cases/0/evalset", set="golden.evalset.json", eval_id="paris_v3",
                     response_0="Sunny.", trajectory_0="")
    assert third.status_code == 303 and third.headers["location"] == (
        f"/runs/{run_id}/cases/0?saved=golden.evalset.json%3Aparis_v3#evalset")
    (case,) = json.loads((golden.sets / "golden.evalset.json").read_text())["eval_cases"]
    assert case["eval_id"] == "paris_v3" and case["conversation"][0]["final_response"]["parts"] == [{"text": "Sunny."}]
    (golden.sets / "team.json").write_text(json.dumps({"eval_set_id": "golden_2", "eval_cases": []}))
    clash = tab.post(f"/sessions/{golden.session}/evalset", new_set="golden_2", eval_id="x", trajectory_0="")
    assert clash.status_code == 400 and "eval set id &#39;golden_2&#39; of golden_2.evalset.json is already the id of team.json" in clash.text
    assert not (golden.sets / "golden_2.evalset.json").exists()
    # a broken file dropped into the directory: the case is saved, the page says the sets were not reloaded
    (golden.sets / "team.json").write_text("{not json")
    saved = tab.post(f"/sessions/{golden.session}/evalset", set="golden.evalset.json", eval_id="paris_v4",
                     trajectory_0="")
    assert saved.status_code == 303 and "problem=" in saved.headers["location"]
    page = tab.open(saved.headers["location"].split("#")[0]).text
    (said,) = re.findall(r'<p class="error">(.*?)</p>', page)
    assert said.startswith("saved, but the eval sets were not reloaded: --eval-sets: ") and "team.json" in said
    assert json.loads((golden.sets / "golden.evalset.json").read_text())["eval_cases"][0]["eval_id"] == "paris_v4"


BAD_FORMS = [
    ("label", {"verdict": "maybe"}, "verdict &#39;maybe&#39; is not pass or fail"),
    ("label", {"score": "1.5"}, "score &#39;1.5&#39; is not a number in [0, 1]"),
    ("label", {"score": "nan", "verdict": "pass"}, "score &#39;nan&#39; is not a number in [0, 1]"),
    ("label", {}, "a label needs a verdict (pass or fail) or a score"),
    ("label", {"verdict": "pass", "metric": "tool_trajectory"}, "has no metric &#39;tool_trajectory&#39;"),
    ("evalset", {"new_set": "../escape"}, "new eval set name &#39;../escape&#39;: use letters"),
    ("evalset", {"new_set": "/tmp/abs"}, "new eval set name &#39;/tmp/abs&#39;: use letters"),
    ("evalset", {"new_set": "a/b"}, "new eval set name &#39;a/b&#39;"),
    ("evalset", {"new_set": "..json"}, "new eval set name &#39;..json&#39;"),
    ("evalset", {"set": "missing.json"}, "eval set &#39;missing.json&#39; is not a set file of --eval-sets"),
    ("evalset", {"set": "outside.json"}, "eval set &#39;outside.json&#39; is not a set file of --eval-sets"),
    ("evalset", {"new_set": "outside.json"}, "eval set &#39;outside.json&#39; is a link or not a plain file"),
    ("evalset", {}, "choose an eval set or name a new one"),
    ("evalset", {"new_set": "g", "eval_id": "no spaces"}, "eval id &#39;no spaces&#39;: use letters, digits and &#39;_&#39;"),
    ("evalset", {"new_set": "g", "trajectory_0": '{"name": "a"}\n{"name": "b", "args": [1]}'},
     "turn 1, trajectory line 2: args must be an object, got [1]"),
    ("evalset", {"new_set": "g", "trajectory_0": "get_weather(city=Paris)"},
     "turn 1, trajectory line 1: not JSON (Expecting value at column 1): get_weather(city=Paris)"),
    ("evalset", {"new_set": "g", "trajectory_0": '{"name": "a", "arguments": {}}'},
     "turn 1, trajectory line 1: unknown key &#39;arguments&#39;"),
    ("evalset", {"new_set": "g", "trajectory_0": '["get_weather"]'},
     'turn 1, trajectory line 1: expected {&#34;name&#34;: &#34;tool&#34;'),
]


def test_bad_input_is_the_page_again_with_one_line_and_nothing_stored(golden, tmp_path):
    outside = tmp_path / "outside-target.json"
    outside.write_text('{"eval_set_id": "outside", "eval_cases": []}')
    (golden.sets / "outside.json").symlink_to(outside)  # a link out of --eval-sets: never written through
    tab = Tab(golden)
    run_id = golden.get("/runs").json()["data"][0]["run_id"]
    for page in (f"/sessions/{golden.session}", f"/runs/{run_id}/cases/0"):
        tab.open(page)
        for what, fields, message in BAD_FORMS:
            if what == "evalset":
                fields = {"eval_id": "paris", "response_0": "It is sunny in Paris.", "trajectory_0": "", **fields}
            response = tab.post(f"{page}/{what}", **fields)
            assert response.status_code == 400, (page, fields, response.status_code)
            errors = re.findall(r'<p class="error form-error">(.*?)</p>', response.text)
            assert len(errors) == 1 and message in errors[0], (fields, errors)
            assert "Traceback" not in response.text and 'name="csrf_token"' in response.text  # the form is there
        # what was typed is kept
        kept = tab.post(f"{page}/evalset", new_set="g", eval_id="kept_id", response_0="edited answer",
                        trajectory_0="{bad")
        assert 'value="kept_id"' in kept.text and ">edited answer</textarea>" in kept.text and ">{bad</textarea>" in kept.text
    assert stored_labels(golden.store) == []
    assert sorted(p.name for p in golden.sets.iterdir()) == ["outside.json"]
    assert json.loads(outside.read_text())["eval_cases"] == []
    unknown = tab.post(f"/runs/{run_id}/cases/7/label", verdict="pass")
    assert unknown.status_code == 404 and f"run {run_id} has no case #7" in unknown.text
    gone = tab.post("/sessions/not-a-session/label", verdict="pass")
    assert gone.status_code == 404 and "session not-a-session is not in the run store yet" in gone.text


def test_without_a_store_or_eval_sets_the_page_says_why(tmp_path):
    server = start_server("--no-store", "-m", METRIC)
    try:
        session = send(server, weather_trace(tmp_path / "t.json", "ef56" * 8))
        tab = Tab(server)
        page = tab.open(f"/sessions/{session}").text
        assert "Labels and eval sets need the run store: this server keeps none (serve --no-store)." in page
        assert "<form" not in page
        refused = tab.post(f"/sessions/{session}/label", verdict="pass")  # no form, so no CSRF field to send
        assert refused.status_code == 403
    finally:
        stop_server(server.process)
    server = start_server("--store", str(tmp_path / "runs.sqlite"), "-m", METRIC)
    try:
        session = send(server, weather_trace(tmp_path / "t.json", "ef56" * 8))
        tab = Tab(server)
        page = tab.open(f"/sessions/{session}").text
        assert "To save this case into an eval set, start serve with <code>--eval-sets DIR</code>." in page
        assert "/evalset" not in page and f'action="/sessions/{session}/label"' in page
        refused = tab.post(f"/sessions/{session}/evalset", new_set="g", eval_id="x")
        assert refused.status_code == 400 and "start serve with --eval-sets DIR" in refused.text
    finally:
        stop_server(server.process)


# -- the browser loop --------------------------------------------------------------------------------------


def _fill_and_submit(browser: Browser, form: str, values: dict[str, str]) -> None:
    """Set the fields of ``form`` (a CSS selector) as a person would, then press its submit button."""
    browser.js(f"""(() => {{
        const form = document.querySelector({json.dumps(form)});
        for (const [name, value] of Object.entries({json.dumps(values)})) {{
            const field = form.elements[name];
            field.value = value;
            field.dispatchEvent(new Event('input', {{bubbles: true}}));
        }}
        form.querySelector('button[type=submit]').click();
    }})()""")


def _wait_for(browser: Browser, condition: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if browser.holds(f"document.readyState === 'complete' && ({condition})"):
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout}s: {condition}; page: {browser.js('location.href')}: "
                         f"{browser.js('document.body.innerText')[:500]}")


def _shoot(browser: Browser, name: str) -> None:
    """A screenshot into $AGENTEVALS_SCREENSHOTS (docs/img when refreshing the docs), when it is set."""
    folder = os.environ.get("AGENTEVALS_SCREENSHOTS")
    if folder:
        browser.call("Emulation.setDeviceMetricsOverride", width=1200, height=900, deviceScaleFactor=1, mobile=False)
        height = browser.js("document.documentElement.scrollHeight")
        browser.call("Emulation.setDeviceMetricsOverride", width=1200, height=min(int(height), 2400),
                     deviceScaleFactor=1, mobile=False)
        browser.screenshot(str(Path(folder) / name))
        browser.call("Emulation.clearDeviceMetricsOverride")


@needs_chromium
def test_the_browser_loop(golden, tmp_path):
    """A live session arrives → its page in Chromium → Add to eval set → Label → ``agentevals run`` of the same
    trace with the saved set matches the case and ``runs show -o json`` shows the label."""
    base = ui(golden)
    with Browser() as browser:
        browser.open(f"{base}/sessions/{quote(golden.session, safe='')}")
        assert browser.js("document.querySelectorAll('form.golden-form').length") == 2
        assert browser.js("document.querySelector('form.set-form textarea[name=trajectory_0]').value") == (
            '{"name": "get_weather", "args": {"city": "Paris"}}')
        _shoot(browser, "golden-session-forms.png")
        _fill_and_submit(browser, "form.set-form", {"new_set": "weather_golden", "eval_id": "paris_sunny",
                                                    "response_0": "It is sunny in Paris."})
        _wait_for(browser, "location.search.includes('saved=')")
        assert "Saved eval case paris_sunny in weather_golden.evalset.json" in browser.js("document.body.innerText")
        _fill_and_submit(browser, "form.label-form", {"verdict": "pass", "metric": METRIC, "labeler": "ana",
                                                      "note": "right tool, right city"})
        _wait_for(browser, "location.search.includes('labelled=')")
        rows = browser.js("Array.from(document.querySelectorAll('table.labels tbody tr')).map(r => r.innerText.replace(/\\s+/g, ' ').trim())")
        assert rows == [f"{METRIC} pass (ana): right tool, right city"]
        # an invalid label: the page again, one line, the typed note kept
        _fill_and_submit(browser, "form.label-form", {"verdict": "", "score": "2", "note": "typed"})
        _wait_for(browser, "document.querySelector('.form-error') !== null")
        assert browser.js("document.querySelector('.form-error').innerText") == "score '2' is not a number in [0, 1]"
        assert browser.js("document.querySelector('form.label-form textarea[name=note]').value") == "typed"
        run_id = json.loads((golden.sets / "weather_golden.evalset.json").read_text())["eval_cases"][0]["metadata"][
            "provenance"]["run_id"]
        browser.open(f"{base}/runs/{run_id}/cases/0")
        assert "pass (ana): right tool, right city" in browser.js("document.querySelector('table.labels').innerText")
        # the agent runs again: serve matches it to the saved case, scores it, and its case carries the label
        again = send(golden, weather_trace(tmp_path / "again.json", "cd34" * 8))
        browser.open(f"{base}/runs/{run_id}/cases/1")
        assert browser.js("document.querySelector('h1').innerText").startswith(f"Case {again}")
        assert browser.js("document.querySelector('h1 .badge').innerText") == "PASSED"
        assert browser.js("document.querySelector('table.labels tbody tr').innerText.replace(/\\s+/g, ' ').trim()") == (
            f"{METRIC} pass (ana): right tool, right city")
        _shoot(browser, "golden-case-labelled.png")
        # nothing failed but the invalid label's answer (a 400 the browser logs as a failed load)
        assert [(e["text"].split(" (")[0], e.get("url", "").rsplit("/", 1)[-1]) for e in browser.errors] == [
            ("Failed to load resource: the server responded with a status of 400", "label")], browser.messages
    saved = golden.sets / "weather_golden.evalset.json"
    other = tmp_path / "next.sqlite"
    ran = cli("run", str(golden.trace), "-e", str(saved), "-m", METRIC, "--store", str(other), cwd=REPO)
    assert ran.returncode == 0 and "eval case paris_sunny" in ran.stdout, ran.stdout + ran.stderr
    (case,) = json.loads(cli("runs", "show", "latest", "--store", str(other), "-o", "json", cwd=REPO).stdout)["cases"]
    assert case["eval_id"] == "paris_sunny" and case["metrics"][0]["status"] == "PASSED"
    assert [(lb["verdict"], lb["metric"], lb["labeler"], lb["note"]) for lb in case["labels"]] == [
        ("pass", METRIC, "ana", "right tool, right city")]


@pytest.mark.parametrize("table", ["metric_results", "cases"])
def test_a_broken_run_store_leaves_the_session_page_up_with_one_line(golden, table):
    """The session page looks its case up in the run store once; when the store cannot be read (here a table
    dropped by someone else's hands: ``cases`` breaks the lookup, ``metric_results`` loading the case) the page
    still renders (200), saying so in one line instead of the forms, never a traceback."""
    import sqlite3

    tab = Tab(golden)
    assert f'action="/sessions/{golden.session}/label"' in tab.open(f"/sessions/{golden.session}").text
    other = sqlite3.connect(golden.store)
    other.execute(f"DROP TABLE {table}")
    other.commit()
    other.close()
    page = tab.open(f"/sessions/{golden.session}")
    assert page.status_code == 200, page.text[:500]
    why = re.search(r'<p class="muted why-no-forms">([^<]*)</p>', page.text)
    assert why and why.group(1) == f"The run store could not be read: OperationalError: no such table: {table}"
    assert "/label" not in page.text and "Traceback" not in page.text
