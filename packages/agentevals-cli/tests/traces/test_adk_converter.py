"""ADK spans → invocations, pinned on every real ADK export we ship."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentevals.traces.convert import convert_trace
from agentevals.traces.model import Span, Trace
from agentevals.traces.readers import read_traces

DATA = Path(__file__).resolve().parents[1] / "data" / "adk"
WIRE = Path(__file__).resolve().parents[4] / "examples" / "evalinput_helm_v1.1.json"


def convert(name: str):
    (trace,) = read_traces(DATA / name)
    return convert_trace(trace)


@pytest.mark.parametrize(
    ("name", "turn_id", "user", "response_start", "calls", "session", "agent"),
    [
        ("helm.json", "fd2888bee9aed2db", "list all Helm releases", "There are two Helm releases installed",
         [("helm_list_releases", {}, "call_P09kjRKHTTJA02oB9HIe4u5t")], "ctx-7ed9780f-3688-4fc0-b10b-2e4df2f83cf0",
         "helm_agent"),
        ("helm_2.json", "6c8894e5dd492596", "get me all the Helm releases", "To help you effectively, could you",
         [], "ctx-3b29a420-6082-478a-af27-404b9a588c9e", "helm_agent"),
        ("helm_3.json", "758a17c47e86aa5f", "I need all the Helm releases right now!!", "Got it — I listed all releases",
         [("helm_list_releases", {"all_namespaces": "true", "output": "json"}, "call_jLiZJa0OLDaaIpPoJzSHAnVM")],
         "ctx-9cf62851-eac3-4802-ae09-0825201ee0b4", "helm_agent"),
        ("k8s.json", "f36169ff7c6148d8", "list all Helm releases", "To list all Helm releases, I would typically",
         [], "ctx-d8251ac3-6289-464a-8404-0fc4e312e823", "k8s_agent"),
        ("tempo_export_with_batches.json", "a888122261574777", "list all helm releases\n",
         "There are two Helm releases currently deployed",
         [("helm_list_releases", {}, "call_w0eKlvnaE7S9GQJeSSs0gn05")], "ctx-eff35888-55ab-4eb0-b90d-7b21f711f91f",
         "helm_agent"),
    ],
)
def test_every_fixture_converts(name, turn_id, user, response_start, calls, session, agent):
    converted = convert(name)
    assert converted.format == "adk"
    assert converted.warnings == []
    (inv,) = converted.invocations
    assert inv.invocation_id == turn_id == inv.span_id
    assert inv.trace_id == converted.trace_id
    assert inv.user_content == user
    assert inv.final_response.startswith(response_start)
    assert [(c.name, c.args, c.id) for c in inv.intermediate_steps.tool_calls] == calls
    assert [r.name for r in inv.intermediate_steps.tool_responses] == [c[0] for c in calls]
    assert (converted.session_id, converted.agent_name) == (session, agent)


def test_helm_matches_the_real_1_1_capture_exactly():
    """The EvalInput captured from a 1.1 producer for this very trace: our conversion reproduces it."""
    captured = json.loads(WIRE.read_text())["invocations"][0]
    ours = convert("helm.json").invocations[0].model_dump(mode="json")
    assert ours["performance_metrics"] == captured["performance_metrics"]
    for key in ("invocation_id", "user_content", "final_response", "trace_id", "span_id"):
        assert ours[key] == captured[key], key
    assert ours["intermediate_steps"]["tool_calls"] == captured["intermediate_steps"]["tool_calls"]
    ours_resp = ours["intermediate_steps"]["tool_responses"][0]
    theirs = captured["intermediate_steps"]["tool_responses"][0]
    assert (ours_resp["name"], ours_resp["id"], ours_resp["status"]) == (theirs["name"], theirs["id"], theirs["status"])
    assert ours_resp["response"] == theirs["response"]
    assert json.loads(ours_resp["output"]) == json.loads(theirs["output"])


def test_trace_level_metrics_aggregate_turns():
    converted = convert("helm_3.json")
    pm = converted.performance_metrics
    assert pm["counts"] == {"llm_calls": 2, "tool_calls": 1, "invocations": 1}
    assert pm["tokens"]["total"] == 4850
    assert pm["models"] == ["gpt-5-mini"]
    assert pm["tool_names"] == ["helm_list_releases"]


def test_tempo_export_counts_adk_llm_calls_once():
    """The Tempo export nests generate_content and OpenLLMetry openai.chat spans under call_llm."""
    pm = convert("tempo_export_with_batches.json").invocations[0].performance_metrics
    assert pm["counts"]["llm_calls"] == 2


def span(name: str, span_id: str, parent: str | None = None, **attrs) -> Span:
    return Span(trace_id="t1", span_id=span_id, name=name, parent_span_id=parent, start_ns=int(span_id) * 10,
                end_ns=int(span_id) * 10 + 5, attributes=attrs, scope="gcp.vertex.agent")


def test_invocation_without_llm_span_is_explained():
    trace = Trace("t1", [span("invocation", "1"), span("invoke_agent a", "2", "1")], source="x.json")
    converted = convert_trace(trace)
    assert converted.invocations == []
    assert converted.warnings == ["turn 1: no call_llm/generate_content span under 'invocation', "
                                  "so no user input or response could be read"]


def test_trace_without_agent_spans_says_what_it_saw():
    trace = Trace("t1", [Span("t1", "1", "GET /health"), Span("t1", "2", "POST /x", parent_span_id="1")])
    converted = convert_trace(trace)
    assert converted.invocations == []
    assert "GET /health" in converted.warnings[0] and "POST /x" in converted.warnings[0]


def test_newer_adk_without_invocation_span_anchors_on_outermost_invoke_agent():
    request = json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    response = json.dumps({"content": {"role": "model", "parts": [{"text": "hello", "thought": False}]}})
    trace = Trace("t1", [
        span("invoke_agent root", "1"),
        span("invoke_agent sub", "2", "1"),
        span("generate_content m", "3", "2", **{"gcp.vertex.agent.llm_request": request,
                                               "gcp.vertex.agent.llm_response": response}),
    ])
    (inv,) = convert_trace(trace).invocations
    assert (inv.invocation_id, inv.user_content, inv.final_response) == ("1", "hi", "hello")


def test_thought_parts_are_not_the_final_response():
    response = json.dumps({"content": {"role": "model", "parts": [{"text": "thinking…", "thought": True},
                                                                  {"text": "answer"}]}})
    trace = Trace("t1", [span("invocation", "1"), span("call_llm", "2", "1", **{"gcp.vertex.agent.llm_response": response})])
    (inv,) = convert_trace(trace).invocations
    assert inv.final_response == "answer"


@pytest.mark.parametrize("response", [{"content": 5}, {"content": {"parts": [{"text": 1.5}, {"text": "answer"}]}}])
def test_malformed_llm_response_values_are_skipped(response):
    trace = Trace("t1", [span("invocation", "1"),
                         span("call_llm", "2", "1", **{"gcp.vertex.agent.llm_response": json.dumps(response)})])
    (inv,) = convert_trace(trace).invocations
    assert inv.final_response == ("answer" if isinstance(response["content"], dict) else None)


def test_final_response_is_the_models_text_byte_for_byte():
    """Text parts concatenated as they are (as agentevals-cli 0.11), trailing newline and spaces kept."""
    request = json.dumps({"contents": [{"role": "user", "parts": [{"text": "list "}, {"text": "releases\n"}]}]})
    response = json.dumps({"content": {"role": "model", "parts": [{"text": "Two releases:"},
                                                                  {"text": " helm, nginx.\n"}]}})
    trace = Trace("t1", [span("invocation", "1"), span("call_llm", "2", "1", **{
        "gcp.vertex.agent.llm_request": request, "gcp.vertex.agent.llm_response": response})])
    (inv,) = convert_trace(trace).invocations
    assert (inv.user_content, inv.final_response) == ("list releases\n", "Two releases: helm, nginx.\n")
