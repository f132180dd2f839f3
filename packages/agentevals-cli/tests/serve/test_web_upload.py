"""The upload page (``/upload``, ``serve/web_upload``) against real ``agentevals serve`` processes: a shipped trace
and eval set uploaded through the form become a stored run (303 to its page), or results on the page without a run
store; bad files, fields and sizes give the form again with one line naming them, and record no run; configs that
run code are refused without ``--allow-code-evaluators`` and nothing runs. In headless Chromium: the form filled
and sent as a person would (files chosen over DevTools), landing on the run's page; with ``AGENTEVALS_SCREENSHOTS``
set to a folder, the upload and review pages are captured there (``docs/img/`` keeps them)."""

from __future__ import annotations

import html
import os
import re
import sys
import time
from pathlib import Path

import pytest
import requests
import yaml
from agentevals.serve import web_upload
from agentevals.store import RunStore
from support.asgi import serving_store
from support.chromium import Browser, find_chromium
from support.live_server import EXAMPLES, Server, listed_runs
from support.polling import wait_for
from support.serve_guard import code_configs, csrf_token, root
from support.stored_runs import HELM_3_ID, HELM_ID, K8S_ID

HELM = EXAMPLES / "traces" / "helm.json"
K8S = EXAMPLES / "traces" / "k8s.json"
HELM_3 = EXAMPLES / "traces" / "helm_3.json"
EVAL_SET = EXAMPLES / "evalsets" / "eval_set_helm.json"
GOOD, BAD, UNMATCHED = HELM_ID, K8S_ID, HELM_3_ID

needs_chromium = pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed (apt-get install chromium)")


def form_session(server: Server) -> tuple[requests.Session, str]:
    """A browser-like session that opened ``/upload`` (its CSRF cookie set) and the form's CSRF token."""
    session = requests.Session()
    page = session.get(f"{root(server)}/upload", timeout=30)
    assert page.status_code == 200
    return session, csrf_token(page.text)


def upload(server: Server, files: dict[str, tuple[str, bytes]], **fields: object) -> requests.Response:
    session, token = form_session(server)
    return session.post(f"{root(server)}/upload", data={"csrf_token": token, **fields}, files=files,
                        allow_redirects=False, timeout=120)


def error_line(page: requests.Response) -> str:
    found = re.search(r'<p class="error upload-error" role="alert">([^<]*)</p>', page.text)
    assert found, page.text[:2000]
    return html.unescape(found.group(1))


def test_an_uploaded_trace_becomes_a_stored_run_and_opens(serve, tmp_path):
    store = str(tmp_path / "runs.sqlite")
    server = serve("--store", store)
    answer = upload(server, {"trace_files": ("k8s.json", K8S.read_bytes()),
                             "eval_set_file": ("eval_set_helm.json", EVAL_SET.read_bytes())},
                    metrics=["tool_trajectory_avg_score", "response_match_score"], threshold="0.6")
    assert answer.status_code == 303, answer.text[:2000]
    run_id = answer.headers["location"].removeprefix("/runs/")
    page = requests.get(f"{root(server)}{answer.headers['location']}", timeout=30)
    assert page.status_code == 200
    assert BAD in page.text and "tool_trajectory_avg_score" in page.text and 'class="badge failed"' in page.text
    (stored,) = [r for r in listed_runs(store) if r["run_id"] == run_id]
    assert stored["command"] == ("agentevals serve: upload k8s.json -e eval_set_helm.json -m tool_trajectory_avg_score "
                                 "-m response_match_score -t 0.6")
    assert stored["status"] == "completed"
    document = requests.get(f"{root(server)}/api/runs/{run_id}", timeout=30).json()["data"]
    (case,) = document["cases"]
    assert case["sources"] == ["k8s.json"]  # the server's temporary folder is not recorded
    assert {m["name"]: (m["status"], m["threshold"]) for m in case["metrics"]} == {
        "tool_trajectory_avg_score": ("FAILED", 0.6), "response_match_score": ("FAILED", 0.6)}


def test_without_a_run_store_the_results_are_on_the_page(serve):
    server = serve("--no-store")
    answer = upload(server, {"trace_files": ("helm.json", HELM.read_bytes()),
                             "eval_set_file": ("eval_set_helm.json", EVAL_SET.read_bytes())},
                    metrics=["tool_trajectory_avg_score"])
    assert answer.status_code == 200
    results = answer.text.split("<h2>Results</h2>")[1]
    assert GOOD in results and 'class="badge passed"' in results and "helm.json" in results
    assert "agentevals-upload-" not in answer.text
    assert 'value="tool_trajectory_avg_score" checked' in answer.text  # the form keeps what was chosen


def test_without_a_run_store_a_failed_row_says_why_as_the_cli_does(serve):
    from agentevals.report._format import reason_lines
    from agentevals.results import MetricResult, Status

    server = serve("--no-store")
    answer = upload(server, {"trace_files": ("helm.json", HELM.read_bytes()),
                             "eval_set_file": ("eval_set_helm.json", EVAL_SET.read_bytes())},
                    metrics=["response_match_score"], threshold="1")
    assert answer.status_code == 200, answer.text[:500]
    results = html.unescape(answer.text.split("<h2>Results</h2>")[1])
    assert 'class="badge failed"' in results
    score = float(re.search(r"response_match_score ([0-9.]+)</span>", results).group(1))
    row = MetricResult(name="response_match_score", status=Status.FAILED, score=score, threshold=1.0)
    assert reason_lines(row) and reason_lines(row)[0] in results  # the same line the table report prints


@pytest.mark.parametrize(("files", "fields", "status", "line"), [
    ({"trace_files": ("broken.json", b"{nope")}, {}, 400,
     "broken.json:1:2: invalid JSON: Expecting property name enclosed in double quotes"),
    ({"trace_files": ("empty.json", b'{"data": []}')}, {}, 400, "empty.json: no spans in the file"),
    ({"trace_files": ("helm.json", HELM.read_bytes()), "eval_set_file": ("set.json", b"[1]")}, {}, 400,
     "set.json: not an ADK eval set: item [0] has no 'query' (expected 'eval_cases')"),
    ({"trace_files": ("helm.json", HELM.read_bytes())}, {"metrics": ["no_such_metric"]}, 400,
     "-m no_such_metric: unknown builtin metric 'no_such_metric'"),
    ({"trace_files": ("helm.json", HELM.read_bytes())}, {"threshold": "high"}, 400,
     "threshold: 'high' is not a number between 0 and 1"),
    ({"trace_files": ("", b"")}, {}, 400, "trace files: choose a trace file (Jaeger JSON or OTLP JSON)"),
    ({"trace_files": ("huge.json", b" " * (1 << 20) + b"{}")}, {}, 413, "huge.json: over the 1048576-byte upload limit"),
], ids=["not-json", "no-spans", "bad-eval-set", "unknown-metric", "bad-threshold", "no-file", "over-limit"])
def test_bad_input_gives_the_form_again_with_one_line_and_records_no_run(serve, tmp_path, files, fields, status, line):
    store = str(tmp_path / "runs.sqlite")
    server = serve("--store", store, "--max-upload-mb", "1")
    before = listed_runs(store)
    answer = upload(server, files, **fields)
    assert answer.status_code == status
    assert error_line(answer).startswith(line)
    assert "Traceback" not in answer.text and "agentevals-upload-" not in answer.text
    assert '<form class="upload" method="post"' in answer.text
    assert listed_runs(store) == before


def test_a_config_that_runs_code_is_refused_and_nothing_runs(serve, tmp_path):
    server = serve("--no-store")
    marker = tmp_path / "marker"
    for kind, config in code_configs(marker).items():
        answer = upload(server, {"trace_files": ("helm.json", HELM.read_bytes()),
                                 "config_file": ("eval_config.yaml", yaml.safe_dump(config).encode())})
        assert answer.status_code == 403, kind
        assert "configs sent to this server may not run code on it" in error_line(answer)
    assert not marker.exists()
    # A config of builtin evaluators only runs: the policy refuses code, not configs.
    builtin = {"evaluators": [{"name": "tool_trajectory_avg_score", "type": "builtin"}]}
    answer = upload(server, {"trace_files": ("helm.json", HELM.read_bytes()),
                             "eval_set_file": ("eval_set_helm.json", EVAL_SET.read_bytes()),
                             "config_file": ("eval_config.yaml", yaml.safe_dump(builtin).encode())})
    assert answer.status_code == 200 and 'class="badge passed"' in answer.text


def test_with_the_opt_in_an_uploaded_code_config_runs(serve, tmp_path):
    """The control of the refusal above: the same form does run code when serve allows it."""
    server = serve("--no-store", "--allow-code-evaluators")
    marker = tmp_path / "marker"
    answer = upload(server, {"trace_files": ("helm.json", HELM.read_bytes()),
                             "config_file": ("eval_config.yaml", yaml.safe_dump(code_configs(marker)["code_judge"]).encode())})
    assert answer.status_code == 200, answer.text[:2000]
    assert marker.read_text() == "ran"


def _choose_files(browser: Browser, selector: str, *paths: Path) -> None:
    """Choose ``paths`` in the file input ``selector``, as a person does in the file dialog."""
    found = browser.call("Runtime.evaluate", expression=f"document.querySelector({selector!r})")
    browser.call("DOM.setFileInputFiles", files=[str(p) for p in paths], objectId=found["result"]["objectId"])


def _wait(browser: Browser, expression: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if browser.holds(expression):
            return
        time.sleep(0.1)
    raise AssertionError(f"not true within {timeout:g}s: {expression}")


@needs_chromium
def test_chromium_uploads_traces_through_the_form_and_lands_on_the_run_then_reviews_it(serve, tmp_path):
    store = str(tmp_path / "runs.sqlite")
    server = serve("--store", store)
    shots = os.environ.get("AGENTEVALS_SCREENSHOTS")
    with Browser() as browser:
        browser.open(f"{root(server)}/upload")
        assert browser.js("document.querySelector('form.upload').method") == "post"
        _choose_files(browser, "input[name=trace_files]", HELM, K8S, HELM_3)
        _choose_files(browser, "input[name=eval_set_file]", EVAL_SET)
        browser.js("document.querySelector('input[value=tool_trajectory_avg_score]').checked = true")
        browser.js("document.querySelector('input[value=response_match_score]').checked = true")
        browser.js("document.querySelector('input[name=threshold]').value = '0.75'")
        if shots:
            browser.screenshot(str(Path(shots) / "upload.png"))
        browser.js("document.querySelector('form.upload button[type=submit]').click()")
        _wait(browser, "location.pathname.startsWith('/runs/') && document.readyState === 'complete'")
        run_id = browser.js("location.pathname").removeprefix("/runs/")
        assert run_id == listed_runs(store)[0]["run_id"]
        assert browser.js("Array.from(document.querySelectorAll('table.cases tbody tr code')).map(c => c.innerText)"
                          ) == [BAD, GOOD, UNMATCHED]  # failures first
        assert browser.js("document.querySelector('table.cases tbody tr .badge').innerText") == "FAILED"
        # Its review queue: the failure, the score near its threshold, then the sample.
        browser.open(f"{root(server)}/review?run={run_id}")
        assert browser.js("Array.from(document.querySelectorAll('table.queue tbody tr')).map(r => r.className)") == [
            "queue-failure", "queue-near", "queue-sample"]
        # Labels (as the case page's Label form or `agentevals labels import` store them): the one that contradicts
        # the evaluator moves its case up as a disagreement; the agreeing one is marked (hidden by default).
        runs = RunStore.open(store)
        try:
            runs.add_label(run_id, GOOD, verdict="fail", metric="response_match_score", note="misses the namespace",
                           labeler="ana")
            runs.add_label(run_id, UNMATCHED, verdict="pass", labeler="ana")
        finally:
            runs.close()
        browser.open(f"{root(server)}/review?run={run_id}&show=all")
        assert browser.js("Array.from(document.querySelectorAll('table.queue tbody tr')).map(r => r.className)") == [
            "queue-failure", "queue-disagreement labelled", "queue-sample labelled"]
        if shots:
            browser.screenshot(str(Path(shots) / "review-queue.png"))
        browser.open(f"{root(server)}/review?run={run_id}")
        assert browser.js("document.querySelectorAll('table.queue tbody tr').length") == 2  # the agreeing label hides
        browser.js("document.querySelector('a.start').click()")
        _wait(browser, "document.querySelector('nav.queue-nav') !== null")
        assert browser.js("document.querySelector('nav.queue-nav').innerText").startswith("← previous")
        browser.js("document.querySelector('a[rel=next][accesskey=n]').click()")  # what the access key follows
        _wait(browser, "(document.querySelector('nav.queue-nav') || {innerText: ''}).innerText.includes('2 of 2')")
        if shots:
            browser.screenshot(str(Path(shots) / "review-case.png"))
        assert browser.errors == []


def _slow_judge(monkeypatch, *, seconds: int) -> tuple[str, bytes]:
    """The upload page's deadline cut to 1 s, and an uploaded config whose judge takes ``seconds`` per case."""
    monkeypatch.setattr(web_upload, "UPLOAD_DEADLINE", 1.0)
    slow = [sys.executable, "-c", f"import time; time.sleep({seconds}); print('{{\"score\": 1}}')"]
    config = {"evaluators": [{"name": "slow", "type": "code_judge", "command": slow}]}
    return "eval_config.yaml", yaml.safe_dump(config).encode()


def test_an_evaluation_past_the_page_deadline_goes_on_and_is_recorded(tmp_path, monkeypatch):
    """The page answers at its deadline (504, one line naming the run) while the evaluation, on its worker thread,
    runs to its end and is recorded: in-process, with the deadline cut to 1 s and a judge that takes 4 s."""
    config = _slow_judge(monkeypatch, seconds=4)
    location = str(tmp_path / "runs.sqlite")
    with serving_store(location, allow_code=True) as url:
        browser = requests.Session()
        token = csrf_token(browser.get(f"{url}/upload", timeout=30).text)
        answer = browser.post(f"{url}/upload", data={"csrf_token": token}, allow_redirects=False, timeout=60,
                              files={"trace_files": ("helm.json", HELM.read_bytes()), "config_file": config})
        assert answer.status_code == 504
        line = error_line(answer)
        found = re.fullmatch(r"the evaluation did not finish within 1s: it goes on and is recorded as run (\S+) "
                             r"\(see Runs\)", line)
        assert found, line
        runs = RunStore.open(location)  # a reader beside the app's own handle
        try:
            run_id = found.group(1)

            def status() -> str | None:
                return next((r.status for r in runs.list_runs(limit=5) if r.run_id == run_id), None)

            wait_for(lambda: status() == "completed", timeout=60, what=f"run {run_id} completed")
            ((_, case),) = runs.load_cases(run_id)
            assert [(m.name, m.status.value) for m in case.metrics] == [("slow", "PASSED")]
        finally:
            runs.close()


def test_a_multi_file_upload_past_the_page_deadline_still_evaluates_every_file(tmp_path, monkeypatch):
    """At the page's deadline the uploads stay until the evaluation ends (the evaluation removes them, not the
    504 answer): three trace files with a judge that takes 2 s per case, the deadline cut to 1 s; the recorded
    run holds the cases of all three files and no input error."""
    config = _slow_judge(monkeypatch, seconds=2)
    location = str(tmp_path / "runs.sqlite")
    with serving_store(location, allow_code=True) as url:
        browser = requests.Session()
        token = csrf_token(browser.get(f"{url}/upload", timeout=30).text)
        files = [("trace_files", (p.name, p.read_bytes())) for p in (HELM, K8S, HELM_3)]
        files.append(("config_file", config))
        answer = browser.post(f"{url}/upload", data={"csrf_token": token}, files=files, allow_redirects=False,
                              timeout=60)
        assert answer.status_code == 504
        run_id = re.search(r"recorded as run (\S+) ", error_line(answer)).group(1)
        runs = RunStore.open(location)  # a reader beside the app's own handle
        try:
            record = wait_for(lambda: next((r for r in runs.list_runs(limit=5)
                                            if r.run_id == run_id and r.status == "completed"), None),
                              timeout=120, what=f"run {run_id} completed")
            assert record is not None and record.status == "completed"
            cases = [case for _, case in runs.load_cases(run_id)]
            assert {Path(s).name for case in cases for s in case.sources} == {"helm.json", "k8s.json", "helm_3.json"}
            assert all([m.status.value for m in case.metrics] == ["PASSED"] for case in cases)
            assert runs.load_run(run_id).input_errors == []
        finally:
            runs.close()


def test_without_a_run_store_an_input_error_on_the_page_names_the_file_not_the_server_path(serve):
    """A good and a broken trace file, no run store: the page shows the good file's cases and the broken one's
    error by its uploaded name; the server's temporary upload folder is never shown."""
    server = serve("--no-store")
    answer = upload(server, [("trace_files", ("helm.json", HELM.read_bytes())),
                             ("trace_files", ("broken.json", b"{nope"))])
    assert answer.status_code == 200, answer.text[:500]
    results = html.unescape(answer.text.split("<h2>Results</h2>")[1])
    assert "input error: broken.json:1:2: invalid JSON" in results and "helm.json" in results
    assert "agentevals-upload-" not in answer.text
