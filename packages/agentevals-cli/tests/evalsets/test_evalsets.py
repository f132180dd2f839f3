"""ADK eval sets without google-adk, and the rule that matches traces to cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentevals.errors import InputFileError
from agentevals.evalsets import load_eval_set, match_case, parse_eval_set
from agentevals.protocol import InvocationData

DATA = Path(__file__).resolve().parents[1] / "data" / "adk"


def test_real_eval_sets_load():
    es = load_eval_set(DATA / "evalset_helm_3_2026-02-23.json")
    (case,) = es.eval_cases
    (turn,) = case.conversation
    assert (es.eval_set_id, case.eval_id, turn.invocation_id) == ("evalset_helm_3_2026-02-23", "c9a03cc4_case_1",
                                                                  "304b7df7e81946d0")
    assert turn.user_content == "I need all the Helm releases right now!!"
    assert turn.final_response.startswith("Got it")
    call = turn.intermediate_steps.tool_calls[0]
    assert (call.name, call.args) == ("helm_list_releases", {"all_namespaces": "true", "output": "json"})
    response = turn.intermediate_steps.tool_responses[0]
    assert response.response["is_error"] is False
    assert json.loads(response.output) == response.response


def test_camel_case_inside_cases_but_user_data_keys_kept():
    data = {"eval_set_id": "s", "eval_cases": [{
        "evalId": "c1",
        "conversation": [{
            "invocationId": "i1",
            "userContent": {"role": "user", "parts": [{"text": "a"}, {"text": "b"}]},
            "finalResponse": {"role": "model", "parts": [{"text": "ok"}]},
            "intermediateData": {"toolUses": [{"name": "t", "args": {"someArg": 1}}]},
        }],
        "sessionInput": {"appName": "x", "userId": "u", "state": {"keepMe": 1}},
    }]}
    case = parse_eval_set(data).eval_cases[0]
    turn = case.conversation[0]
    assert (case.eval_id, turn.invocation_id, turn.user_content, turn.final_response) == ("c1", "i1", "a\nb", "ok")
    assert turn.intermediate_steps.tool_calls[0].args == {"someArg": 1}
    assert case.session_input == {"app_name": "x", "user_id": "u", "state": {"keepMe": 1}}


def test_invocation_events_form():
    data = {"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [{
        "user_content": {"parts": [{"text": "q"}]},
        "intermediate_data": {"invocation_events": [
            {"author": "agent", "content": {"parts": [{"function_call": {"name": "f", "args": {"x": 1}}}]}},
            {"author": "tool", "content": {"parts": [{"function_response": {"name": "f", "response": {"r": 2}}}]}},
        ]},
    }]}]}
    steps = parse_eval_set(data).eval_cases[0].conversation[0].intermediate_steps
    assert [(c.name, c.args) for c in steps.tool_calls] == [("f", {"x": 1})]
    assert steps.tool_responses[0].response == {"r": 2}


def test_legacy_test_json_list():
    es = parse_eval_set([{"query": "hi", "expected_tool_use": [{"tool_name": "t", "tool_input": {"a": 1}}],
                          "reference": "hello"}], "x.test.json")
    turn = es.eval_cases[0].conversation[0]
    assert (turn.user_content, turn.final_response, turn.intermediate_steps.tool_calls[0].args) == ("hi", "hello", {"a": 1})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"foo": 1}, "not an ADK eval set: no 'eval_cases' list (found foo)"),
        ({"data": []}, "this is a trace file, not an eval set"),
        ({"eval_cases": [{"conversation": []}]}, "eval_cases[0] has no 'eval_id'"),
        ({"eval_cases": [{"eval_id": "a"}]}, "eval_cases[0] ('a') has neither 'conversation' nor 'conversation_scenario'"),
        ({"eval_cases": [{"eval_id": "a", "conversation": [{}]}]}, "eval_cases[0].conversation[0] has no 'user_content'"),
        ({"eval_cases": [{"eval_id": "a", "conversation": []}, {"eval_id": "a", "conversation": []}]},
         "duplicate eval_id 'a'"),
        ("just a string", "not an ADK eval set"),
    ],
)
def test_not_an_eval_set(data, message):
    with pytest.raises(InputFileError) as info:
        parse_eval_set(data, "es.json")
    assert str(info.value).startswith("es.json: ")
    assert message in str(info.value)


def _case_with_turn(**turn):
    return {"eval_cases": [{"eval_id": "a", "conversation": [{"user_content": "hi", **turn}]}]}


_TURN = "eval_cases[0].conversation[0]"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_case_with_turn(intermediate_data={"tool_uses": ["helm_list_releases"]}),
         f"{_TURN}.intermediate_data.tool_uses[0] must be an object with 'name' and 'args', got 'helm_list_releases'"),
        (_case_with_turn(intermediate_data={"tool_uses": {"name": "x"}}),
         f"{_TURN}.intermediate_data.tool_uses must be a list, got {{'name': 'x'}}"),
        (_case_with_turn(intermediate_data={"tool_uses": [{"name": "x", "args": "none"}]}),
         f"{_TURN}.intermediate_data.tool_uses[0].args must be an object, got 'none'"),
        (_case_with_turn(intermediate_data={"tool_uses": [{"name": None, "args": {}}]}),
         f"{_TURN}.intermediate_data.tool_uses[0] has no 'name'"),
        (_case_with_turn(intermediate_data={"tool_responses": [5]}),
         f"{_TURN}.intermediate_data.tool_responses[0] must be an object with 'name' and 'response', got 5"),
        (_case_with_turn(intermediate_data={"invocation_events": [{"content": {"parts": ["text"]}}]}),
         f"{_TURN}.intermediate_data.invocation_events[0].content.parts[0] must be an object, got 'text'"),
        (_case_with_turn(user_content=["a"]),
         f"{_TURN}.user_content must be text or a Content object ({{\"role\", \"parts\"}}), got ['a']"),
        (_case_with_turn(final_response=42),
         f"{_TURN}.final_response must be text or a Content object ({{\"role\", \"parts\"}}), got 42"),
        (_case_with_turn(user_content={"parts": "hello"}), f"{_TURN}.user_content.parts must be a list, got 'hello'"),
        ({"eval_cases": [{"eval_id": 7, "conversation": []}]}, "eval_cases[0].eval_id must be a non-empty string, got 7"),
        ({"eval_cases": [{"eval_id": "a", "conversation": [], "rubrics": 5}]},
         "eval_cases[0] ('a'): 'rubrics' must be a list, got 5"),
        ({"eval_cases": [{"eval_id": "a", "conversation": [], "session_input": "x"}]},
         "eval_cases[0] ('a'): 'session_input' must be an object, got 'x'"),
        ({"eval_cases": {}}, "not an ADK eval set: 'eval_cases' must be a list, got {}"),
        ([], "not an ADK eval set: an empty list"),
        ([{"query": "hi", "expected_tool_use": ["t"]}], "[0].expected_tool_use[0] must be an object with 'tool_name' and 'tool_input', got 't'"),
    ],
)
def test_malformed_eval_set_is_one_line_naming_the_place(data, message):
    with pytest.raises(InputFileError) as info:
        parse_eval_set(data, "es.json")
    assert str(info.value) == f"es.json: {message}"


def test_truncated_eval_set_file_names_position(tmp_path):
    path = tmp_path / "es.json"
    path.write_text('{"eval_set_id": "x",\n "eval_cases": [')
    with pytest.raises(InputFileError, match=r"es.json:2:\d+: invalid JSON"):
        load_eval_set(path)


def turn(user: str, inv_id: str = "") -> InvocationData:
    return InvocationData(invocation_id=inv_id, user_content=user)


def two_cases():
    return parse_eval_set({"eval_set_id": "s", "eval_cases": [
        {"eval_id": "weather", "conversation": [{"invocation_id": "w1", "user_content": {"parts": [{"text": "Weather in  PARIS?"}]}}]},
        {"eval_id": "time", "conversation": [{"invocation_id": "t1", "user_content": {"parts": [{"text": "What time is it?"}]}}]},
    ]}, "s.json")


def test_match_by_recorded_eval_id_first():
    case, why = match_case(two_cases(), [turn("What time is it?")], eval_id="weather")
    assert (case.eval_id, why) == ("weather", "eval id 'weather' recorded in the trace")


def test_match_by_invocation_id():
    case, why = match_case(two_cases(), [turn("anything", "t1")])
    assert (case.eval_id, why) == ("time", "invocation id")


def test_match_by_first_user_message_normalized():
    case, why = match_case(two_cases(), [turn("weather in paris?")])
    assert (case.eval_id, why) == ("weather", "first user message")


def test_no_match_with_several_cases():
    case, why = match_case(two_cases(), [turn("something else")])
    assert case is None
    assert why.startswith("no eval case matches (first user message: 'something else'; 2 cases in s.json)")


def test_only_case_matches_the_only_trace():
    es = load_eval_set(DATA / "eval_set_helm.json")
    case, why = match_case(es, [turn("get me the releases")])
    assert (case.eval_id, why) == ("helm_list_releases", "only case in the eval set, only trace in the run")


def test_only_case_does_not_take_one_of_several_traces():
    """With several traces, one that matches by no rule stays unmatched (agentevals-cli 0.11's rule)."""
    es = load_eval_set(DATA / "eval_set_helm.json")
    case, why = match_case(es, [turn("get me the releases")], only_trace=False)
    assert case is None
    assert why.startswith("no eval case matches (first user message: 'get me the releases'; 1 cases in ")


@pytest.mark.parametrize("metadata", ["note", ["a"], None])
def test_a_case_metadata_that_is_not_a_mapping_has_no_provenance_and_no_labels(metadata):
    (case,) = parse_eval_set({"eval_set_id": "s", "eval_cases": [
        {"eval_id": "c", "conversation": [], "metadata": metadata}]}).eval_cases
    assert (case.provenance, case.human_labels()) == (None, ([], []))
