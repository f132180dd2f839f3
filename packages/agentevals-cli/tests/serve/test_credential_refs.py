"""agentevals-cli 0.11's ``credentialRefs`` on a real ``serve``: read on ``/api/evaluate/json`` (body key) and on
``/api/evaluate`` and its stream (multipart field ``credential_refs``); a malformed map is a 400 in one line; a
reference that cannot be resolved is an ERROR row of the metric naming it, in one line naming the reference and
the evaluator, and the run's other results stay. (The judge called with the resolved key: tests/adk/.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests
from support.live_server import start_server, stop_server

DATA = Path(__file__).resolve().parents[1] / "data"
TRACE = DATA / "traces" / "genai" / "openai_otel_genai_v2_latest.otlp.json"  # one turn: the weather in Paris
EVAL_SET = {"eval_set_id": "weather", "eval_cases": [{"eval_id": "paris", "conversation": [{
    "invocation_id": "golden-1",
    "user_content": {"role": "user", "parts": [{"text": "What's the weather in Paris?"}]},
    "final_response": {"role": "model", "parts": [{"text": "It is sunny in Paris, 21°C."}]},
}]}]}
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
            "config": config(credentialRef="judge", judgeBaseUrl="http://127.0.0.1:9/v1"), "credentialRefs": refs}
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
