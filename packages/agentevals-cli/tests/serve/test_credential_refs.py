"""agentevals-cli 0.11's ``credentialRefs`` on a real ``serve``: read on ``/api/evaluate/json`` (body key) and on
``/api/evaluate`` and its stream (multipart field ``credential_refs``); a malformed map is a 400 in one line; a
reference that cannot be resolved is an ERROR row of the metric naming it, in one line naming the reference and
the evaluator, and the run's other results stay; a config sent with references may not choose where the judge
sends them (``judge_base_url``) unless ``serve --allow-code-evaluators``. (The judge called with the resolved key:
tests/adk/test_judge_credentials.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests
from support.live_server import start_server, stop_server

DATA = Path(__file__).resolve().parents[1] / "data"
TRACE = DATA / "traces" / "genai" / "openai_otel_genai_v2_latest.otlp.json"  # one turn: the weather in Paris
EVAL_SET = json.loads((DATA / "credentials" / "weather_eval_set.json").read_text())  # its golden answer
UNRESOLVED = ("evaluator 'final_response_match_v2': credential_ref 'judge' could not be resolved: env: environment "
              "variable 'AE_TEST_NO_SUCH_KEY' is not set")


@pytest.fixture(scope="module")
def server():
    started = start_server("--no-store")
    try:
        yield started
    finally:
        stop_server(started.process)


def config(**judge):
    """0.11's camelCase config: a judged metric naming the reference, and a metric without a judge."""
    return {"evaluators": [
        {"name": "final_response_match_v2", "type": "builtin", "judgeModel": "openai/gpt-4o-mini", **judge},
        {"name": "response_match_score", "type": "builtin"},
    ]}


def rows(answer: dict) -> dict[str, tuple[str, object]]:
    """Our rows, name → (status, error); 0.11's ``traceResults`` carry the same errors (an ERROR row is 0.11's
    ``evalStatus: NOT_EVALUATED`` with its ``error``)."""
    (case,) = answer["data"]["cases"]
    ours = {m["name"]: (m["status"], m["error"]) for m in case["metrics"]}
    (trace,) = answer["data"]["traceResults"]
    legacy = {m["metricName"]: (m["evalStatus"], m["error"]) for m in trace["metricResults"]}
    assert legacy == {name: ("NOT_EVALUATED" if status == "ERROR" else status, error)
                      for name, (status, error) in ours.items()}
    return ours


def test_an_unresolvable_reference_is_its_metrics_error_and_the_rest_of_the_run_stays(server):
    refs = {"judge": {"kind": "env", "name": "AE_TEST_NO_SUCH_KEY"}}
    body = {"traces": json.loads(TRACE.read_text()), "evalSet": EVAL_SET,
            "config": config(credentialRef="judge"), "credentialRefs": refs}
    answer = requests.post(f"{server.api}/evaluate/json", json=body, timeout=120)
    assert answer.status_code == 200, answer.text
    got = rows(answer.json())
    assert got["final_response_match_v2"] == ("ERROR", UNRESOLVED)
    assert got["response_match_score"][0] == "PASSED"  # the same text: scored as without the reference

    files = [("trace_files", ("weather.json", TRACE.read_bytes())),
             ("eval_set_file", ("weather_set.json", json.dumps(EVAL_SET).encode()))]
    form = {"config": json.dumps(config(credentialRef="judge")), "credential_refs": json.dumps(refs)}
    answer = requests.post(f"{server.api}/evaluate", files=files, data=form, timeout=120)
    assert answer.status_code == 200, answer.text
    got = rows(answer.json())
    assert got["final_response_match_v2"] == ("ERROR", UNRESOLVED)
    assert got["response_match_score"][0] == "PASSED"

    with requests.post(f"{server.api}/evaluate/stream", files=files, data=form, timeout=120, stream=True) as streamed:
        frames = [json.loads(line[6:]) for line in streamed.iter_lines(decode_unicode=True)
                  if line and line.startswith("data: ")]
    done = frames[-1]
    assert done["done"] is True
    (case,) = done["cases"]
    assert next((m["name"], m["status"], m["error"]) for m in case["metrics"]) == (
        "final_response_match_v2", "ERROR", UNRESOLVED)


def test_a_reference_missing_from_the_map_is_that_metrics_error(server):
    body = {"traces": json.loads(TRACE.read_text()), "evalSet": EVAL_SET, "config": config(credentialRef="judge"),
            "credentialRefs": {"other": {"kind": "env", "name": "HOME"}}}
    answer = requests.post(f"{server.api}/evaluate/json", json=body, timeout=120)
    assert answer.status_code == 200, answer.text
    assert rows(answer.json())["final_response_match_v2"] == (
        "ERROR", "evaluator 'final_response_match_v2': credential_ref 'judge' is not in the run's credential_refs "
                 "(names given: other)")


@pytest.mark.parametrize(("route", "value", "message"), [
    ("evaluate/json", ["not", "a", "map"], 'credentialRefs: expected an object of name → reference, e.g. '
                                           '{"judge": {"kind": "env", "name": "OPENAI_API_KEY"}}, got list'),
    ("evaluate/json", {"judge": {"name": "X"}}, "credentialRefs: 'judge': missing 'kind' (e.g. \"env\")"),
    ("evaluate", "{not json", "credential_refs: not JSON: "),
    ("evaluate", '{"judge": "OPENAI_API_KEY"}', "credential_refs: 'judge': expected a reference object such as "
                                                '{"kind": "env", "name": "OPENAI_API_KEY"}, got str'),
])
def test_a_malformed_map_is_a_400_in_one_line(server, route, value, message):
    if route == "evaluate/json":
        answer = requests.post(f"{server.api}/{route}", timeout=60, json={
            "traces": json.loads(TRACE.read_text()), "config": config(), "credentialRefs": value})
    else:
        answer = requests.post(f"{server.api}/{route}", timeout=60, data={"credential_refs": value},
                               files=[("trace_files", ("weather.json", TRACE.read_bytes()))])
    assert answer.status_code == 400
    assert answer.json()["error"].startswith(message)
    assert "\n" not in answer.json()["error"]


def test_a_sent_config_may_not_choose_where_the_resolved_secret_goes(server):
    """``credentialRefs`` may name any environment variable of the server, so with them a config sent over
    the network may not set ``judge_base_url`` (403, as ``base_url``); without them it is only a note."""
    refs = {"judge": {"kind": "env", "name": "HOME"}}
    body = {"traces": json.loads(TRACE.read_text()), "evalSet": EVAL_SET,
            "config": config(credentialRef="judge", judgeBaseUrl="http://127.0.0.1:9/v1"), "credentialRefs": refs}
    answer = requests.post(f"{server.api}/evaluate/json", json=body, timeout=60)
    assert answer.status_code == 403
    assert answer.json()["error"] == (
        "config.json: evaluator 'final_response_match_v2' sets judge_base_url (where the judge sends the secret of "
        "the request's credential_refs): configs sent to this server may not run code on it (start serve with "
        "--allow-code-evaluators to allow it)")
    form = {"config": json.dumps(body["config"]), "credential_refs": json.dumps(refs)}
    files = [("trace_files", ("weather.json", TRACE.read_bytes()))]
    assert requests.post(f"{server.api}/evaluate", files=files, data=form, timeout=60).status_code == 403
    yaml_config = ("evaluators:\n  - {name: final_response_match_v2, type: builtin, credentialRef: judge,\n"
                   "     judgeBaseUrl: 'http://127.0.0.1:9/v1'}\n")
    answer = requests.post(f"{server.api}/evaluate", timeout=60, data={"credential_refs": json.dumps(refs)},
                           files=[*files, ("config_file", ("eval_config.yaml", yaml_config.encode()))])
    assert answer.status_code == 403
    assert "sets judgeBaseUrl (where the judge sends the secret" in answer.json()["error"]

    del body["credentialRefs"]  # no secret to send: judge_base_url is not used, and a note says so
    answer = requests.post(f"{server.api}/evaluate/json", json=body, timeout=120)
    assert answer.status_code == 200, answer.text
    assert any("'credential_ref' and 'judge_base_url' not read" in note for note in answer.json()["data"]["notes"])


def test_a_camel_case_base_url_is_refused_like_base_url(server):
    """The loader reads an uploaded eval_config.yaml's ``baseUrl`` as ``base_url``, so the check does too."""
    yaml_config = ("evaluators:\n  - {name: judge, type: llm_judge, prompt: 'Is it good?',\n"
                   "     baseUrl: 'http://127.0.0.1:9/v1'}\n")
    answer = requests.post(f"{server.api}/evaluate", timeout=60, files=[
        ("trace_files", ("weather.json", TRACE.read_bytes())),
        ("config_file", ("eval_config.yaml", yaml_config.encode()))])
    assert answer.status_code == 403
    assert "evaluator 'judge' sets baseUrl (where this server's API keys are sent)" in answer.json()["error"]
