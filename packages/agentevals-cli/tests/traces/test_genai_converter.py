"""The OTel GenAI converter on every real recording (OTLP and Jaeger, with and without log records)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from agentevals.errors import InputFileError
from agentevals.traces.convert import convert_trace
from agentevals.traces.convert._common import as_json
from agentevals.traces.convert.aliases import ALIASES, INPUT_MESSAGE_EVENTS, OUTPUT_MESSAGE_EVENTS, indexed
from agentevals.traces.model import ConvertedTrace, Span, SpanEvent, Trace
from agentevals.traces.readers import read_traces
from agentevals.traces.readers.otlp_logs import attach_log_events, read_log_events

DATA = Path(__file__).parents[1] / "data" / "traces" / "genai"
ROOT = Path(__file__).parents[4]
CONVERT = ROOT / "packages" / "agentevals-cli" / "src" / "agentevals" / "traces" / "convert"

USER = "What's the weather in Paris?"
FINAL = "It is sunny in Paris, 21°C."
ARGS = {"city": "Paris"}
CC = "call_wX7kQ2pParisWeather01"  # chat-completions call id
RESP = "call_rT9mZ4pParisWeather02"  # Responses API call id
SESSION = "conv-weather-paris-0001"
MODELS = ["gpt-4o-mini"]

# name → (user, final, call id, (tool output, response id, status), (prompt, output tokens), models,
#         session, warnings that must appear (substrings, one per warning))
EXPECTED: dict[str, tuple[Any, ...]] = {
    "langchain_openinference": (USER, FINAL, CC, ("sunny, 21°C", CC, "OK"), (149, 27), MODELS, SESSION, []),
    "langchain_openllmetry": (USER, FINAL, CC, ("sunny, 21°C", CC, None), (149, 27), MODELS, SESSION, []),
    "langchain_openllmetry_events": ("", FINAL, CC, ("", CC, None), (149, 27), MODELS, SESSION,
                                     ["has no input messages: content capture is off", "has no result"]),
    "langchain_openllmetry_legacy": (USER, FINAL, CC, ("sunny, 21°C", CC, None), (149, 27), MODELS, SESSION, []),
    "openai_agents_chatcompletions_openinference": (USER, FINAL, CC, ("sunny, 21°C", CC, "OK"), (149, 27), MODELS,
                                                    SESSION, []),
    "openai_agents_chatcompletions_openllmetry": (USER, None, CC, ("sunny, 21°C", CC, "OK"), (0, 0), MODELS, None,
                                                  ["has no output messages"]),
    "openai_agents_chatcompletions_otel_genai": (USER, FINAL, CC, ("sunny, 21°C", CC, "OK"), (149, 27), MODELS, None,
                                                 ["output is a Python repr"]),
    "openai_agents_chatcompletions_otel_processor": (USER, FINAL, CC, ("sunny, 21°C", CC, "OK"), (149, 27), MODELS,
                                                     SESSION, []),
    "openai_agents_openinference": (USER, FINAL, RESP, ("sunny, 21°C", RESP, "OK"), (149, 27), MODELS, SESSION, []),
    "openai_agents_openllmetry": (USER, FINAL, RESP, ("sunny, 21°C", RESP, "OK"), (149, 27), MODELS, None,
                                  ["pairs tool call id(s) 'fc_68a1b2c3d4e5f60718293a4b5c6d7e8f' with tool response "
                                   "id(s) 'call_rT9mZ4pParisWeather02'"]),
    "openai_agents_otel_genai": (USER, FINAL, RESP, ("sunny, 21°C", RESP, "OK"), (149, 27), MODELS, None,
                                 ["output is a Python repr, not messages: ResponseFunctionToolCall("]),
    "openai_agents_otel_processor": ("", None, None, ("sunny, 21°C", None, "OK"), (0, 0), [], SESSION,
                                     ["has no input messages", "has no output messages"]),
    "openai_otel_genai_v2_latest": (USER, FINAL, CC, ("sunny, 21°C", CC, None), (149, 27), MODELS, SESSION, []),
    # pre-1.37 per-message span events with Bedrock-style content blocks (Strands' default tracer)
    # the agent span's answer, as recorded: Strands ends it with a newline (its model call's text has none)
    "strands_legacy": (USER, FINAL + "\n", CC, ("sunny, 21°C", CC, "OK"), (149, 27), MODELS, SESSION, []),
}
RECORDINGS = sorted(p.name.removesuffix(".otlp.json") for p in DATA.glob("*.otlp.json"))


def load(name: str, fmt: str = "otlp", *, logs: bool = False) -> Trace:
    (trace,) = read_traces(DATA / f"{name}.{fmt}.json")
    if logs:
        attach_log_events(trace, read_log_events(DATA / f"{name}.otlp-logs.json"))
    return trace


def comparable(converted: ConvertedTrace) -> dict[str, Any]:
    """Everything but latencies (Jaeger keeps microseconds, OTLP nanoseconds)."""
    invocations = []
    for inv in converted.invocations:
        data = inv.model_dump()
        data["performance_metrics"].pop("latency")
        invocations.append(data)
    metrics = dict(converted.performance_metrics or {})
    metrics.pop("latency", None)
    return {"invocations": invocations, "metrics": metrics, "warnings": converted.warnings, "format": converted.format,
            "session": converted.session_id, "agent": converted.agent_name,
            # Jaeger stores array attributes as JSON text
            "attributes": {k: as_json(v) for k, v in converted.attributes.items()}}


def test_every_recording_has_an_expectation():
    assert len(RECORDINGS) == 15
    assert set(RECORDINGS) == set(EXPECTED) | {"openai_otel_genai_v2_legacy"}


@pytest.mark.parametrize("fmt", ["otlp", "jaeger"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recording(name, fmt):
    user, final, call_id, (output, response_id, status), tokens, models, session, warnings = EXPECTED[name]
    converted = convert_trace(load(name, fmt))
    assert converted.format == "genai"
    assert converted.agent_name == "weather_agent"
    assert converted.session_id == session
    (inv,) = converted.invocations
    assert inv.user_content == user
    assert inv.final_response == final
    assert [(c.name, c.args, c.id) for c in inv.intermediate_steps.tool_calls] == [("get_weather", ARGS, call_id)]
    assert [(r.name, r.output, r.id, r.status, r.response) for r in inv.intermediate_steps.tool_responses] == [
        ("get_weather", output, response_id, status, None)]
    metrics = inv.performance_metrics
    assert (metrics["tokens"]["total_prompt"], metrics["tokens"]["total_output"]) == tokens
    assert metrics["counts"] == {"llm_calls": 2, "tool_calls": 1, "invocations": 1}
    assert metrics["models"] == models
    assert metrics["tool_names"] == ["get_weather"]
    assert converted.performance_metrics["counts"] == metrics["counts"]
    assert len(converted.warnings) == len(warnings), converted.warnings
    for expected, warning in zip(warnings, converted.warnings, strict=True):
        assert expected in warning
        assert warning.startswith(f"turn {inv.invocation_id} (")


@pytest.mark.parametrize("name", RECORDINGS)
def test_otlp_and_jaeger_agree(name):
    assert comparable(convert_trace(load(name, "otlp"))) == comparable(convert_trace(load(name, "jaeger")))


# -- log records -------------------------------------------------------------------------------------


def test_logs_fill_in_openllmetry_langchain_events():
    converted = convert_trace(load("langchain_openllmetry_events", logs=True))
    assert converted.warnings == []
    (inv,) = converted.invocations
    assert (inv.user_content, inv.final_response) == (USER, FINAL)
    assert [(r.output, r.id) for r in inv.intermediate_steps.tool_responses] == [("sunny, 21°C", CC)]


def test_logs_are_the_only_content_of_openai_v2_legacy():
    without = convert_trace(load("openai_otel_genai_v2_legacy"))
    assert without.invocations == []
    (warning,) = without.warnings
    assert warning.startswith("turn ")
    assert "('weather_agent'): no invocation: LLM span 'chat gpt-4o-mini' (and 1 more) has no input messages" in warning
    assert "has no input messages: content capture is off (set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)" \
        in warning
    assert "attach the *.otlp-logs.json" in warning

    converted = convert_trace(load("openai_otel_genai_v2_legacy", logs=True))
    assert converted.warnings == []
    (inv,) = converted.invocations
    assert (inv.user_content, inv.final_response) == (USER, FINAL)
    assert [(c.name, c.args, c.id) for c in inv.intermediate_steps.tool_calls] == [("get_weather", ARGS, CC)]
    assert [(r.name, r.output, r.id) for r in inv.intermediate_steps.tool_responses] == [("get_weather", "sunny, 21°C", CC)]
    assert inv.performance_metrics["tokens"]["total"] == 176
    assert inv.performance_metrics["tool_names"] == ["get_weather"]


def test_logs_repeating_span_attributes_change_nothing():
    plain = comparable(convert_trace(load("openai_otel_genai_v2_latest")))
    assert comparable(convert_trace(load("openai_otel_genai_v2_latest", logs=True))) == plain


def test_read_log_events_links_records_to_spans():
    events = read_log_events(DATA / "openai_otel_genai_v2_legacy.otlp-logs.json")
    trace = load("openai_otel_genai_v2_legacy")
    assert attach_log_events(trace, events) == 8
    chat = next(s for s in trace.spans if s.events)
    assert [e.name for e in chat.events] == ["gen_ai.system.message", "gen_ai.user.message", "gen_ai.choice"]
    assert chat.events[1].attributes == {"gen_ai.system": "openai", "content": USER}


def test_read_log_events_rejects_a_span_file():
    with pytest.raises(InputFileError, match=r"not an OTLP logs file"):
        read_log_events(DATA / "openai_otel_genai_v2_legacy.otlp.json")


# -- synthetic traces: turn rules and warnings --------------------------------------------------------


MS = 1_000_000


def span(span_id: str, name: str, parent: str | None = None, start: int = 0, end: int = 100,
         events: tuple[SpanEvent, ...] = (), status: str | None = None, **attributes: Any) -> Span:
    """Times in ms; keyword attributes use ``__`` for dots: ``gen_ai__operation__name="chat"``."""
    return Span(trace_id="t1", span_id=span_id, name=name, parent_span_id=parent, start_ns=start * MS, end_ns=end * MS,
                attributes={k.replace("__", "."): v for k, v in attributes.items()}, events=list(events),
                status_code=status)


def msgs(*items: tuple[str, Any]) -> str:
    """Parts-format messages: ("user", "text"), ("assistant", "text"), ("call", (id, name, args)), ("tool", (id, out))."""
    out = []
    for role, value in items:
        if role == "call":
            out.append({"role": "assistant", "parts": [{"type": "tool_call", "id": value[0], "name": value[1],
                                                        "arguments": value[2]}]})
        elif role == "tool":
            out.append({"role": "tool", "parts": [{"type": "tool_call_response", "id": value[0], "response": value[1]}]})
        else:
            out.append({"role": role, "parts": [{"type": "text", "content": value}]})
    return json.dumps(out)


def chat(span_id: str, parent: str | None, start: int, inputs: str | None, outputs: str | None, **extra: Any) -> Span:
    attrs = {"gen_ai__operation__name": "chat", "gen_ai__request__model": "m", **extra}
    if inputs is not None:
        attrs["gen_ai__input__messages"] = inputs
    if outputs is not None:
        attrs["gen_ai__output__messages"] = outputs
    return span(span_id, "chat m", parent, start, start + 10, **attrs)


def convert(*spans: Span) -> ConvertedTrace:
    return convert_trace(Trace(trace_id="t1", spans=list(spans), source="synthetic"))


def test_a_plain_root_around_two_user_turns_gives_two_invocations():
    converted = convert(
        span("root", "session"),
        chat("c1", "root", 10, msgs(("user", "Q1")), msgs(("assistant", "A1"))),
        chat("c2", "root", 50, msgs(("user", "Q1"), ("assistant", "A1"), ("user", "Q2")), msgs(("assistant", "A2"))),
    )
    assert [(i.invocation_id, i.user_content, i.final_response) for i in converted.invocations] == [
        ("c1", "Q1", "A1"), ("c2", "Q2", "A2")]
    assert converted.performance_metrics["counts"]["invocations"] == 2
    assert converted.warnings == []


def test_top_level_chat_spans_of_one_tool_loop_are_one_turn():
    converted = convert(
        chat("c1", None, 10, msgs(("user", "Q")), msgs(("call", ("call_1", "f", {"x": 1})))),
        span("t", "execute_tool f", None, 30, 40, gen_ai__operation__name="execute_tool", gen_ai__tool__name="f",
             gen_ai__tool__call__id="call_1", gen_ai__tool__call__result='{"ok": true}'),
        chat("c2", None, 50, msgs(("user", "Q"), ("call", ("call_1", "f", {"x": 1})), ("tool", ("call_1", "ok"))),
             msgs(("assistant", "done"))),
    )
    (inv,) = converted.invocations
    assert (inv.invocation_id, inv.user_content, inv.final_response) == ("c1", "Q", "done")
    assert [(c.name, c.args, c.id) for c in inv.intermediate_steps.tool_calls] == [("f", {"x": 1}, "call_1")]
    (response,) = inv.intermediate_steps.tool_responses  # the tool span is a root of its own: not in the turn
    assert (response.name, response.output, response.id) == ("f", "ok", "call_1")


def test_agent_handoff_with_the_same_user_message_is_one_turn():
    converted = convert(
        span("root", "workflow"),
        span("a1", "invoke_agent triage", "root", 0, 40, gen_ai__operation__name="invoke_agent", gen_ai__agent__name="triage"),
        chat("c1", "a1", 10, msgs(("user", "Q")), msgs(("call", ("call_h", "transfer", {})))),
        span("a2", "invoke_agent expert", "root", 50, 90, gen_ai__operation__name="invoke_agent"),
        chat("c2", "a2", 60, msgs(("user", "Q"), ("call", ("call_h", "transfer", {})), ("tool", ("call_h", "ok"))),
             msgs(("assistant", "A"))),
        span("a3", "invoke_agent triage", "root", 100, 140, gen_ai__operation__name="invoke_agent"),
        chat("c3", "a3", 110, msgs(("user", "Q"), ("assistant", "A"), ("user", "Q2")), msgs(("assistant", "A2"))),
    )
    assert [(i.invocation_id, i.user_content, i.final_response) for i in converted.invocations] == [
        ("a1", "Q", "A"), ("a3", "Q2", "A2")]
    assert converted.agent_name == "triage"
    first = converted.invocations[0]
    assert [c.name for c in first.intermediate_steps.tool_calls] == ["transfer"]
    assert first.performance_metrics["counts"]["llm_calls"] == 2
    assert first.performance_metrics["latency"]["overall"]["max"] == 90.0  # a1 start to a2 end


def test_nested_llm_spans_of_one_call_are_counted_once():
    converted = convert(
        span("a", "agent", None, 0, 100, openinference__span__kind="AGENT"),
        span("llm", "ChatOpenAI", "a", 10, 60, openinference__span__kind="LLM", llm__model_name="gpt",
             **{"llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "Q"}),
        chat("inner", "llm", 20, None, msgs(("assistant", "A")), gen_ai__usage__input_tokens=10,
             gen_ai__usage__output_tokens=5),
    )
    (inv,) = converted.invocations
    assert (inv.user_content, inv.final_response) == ("Q", "A")
    metrics = inv.performance_metrics
    assert metrics["counts"]["llm_calls"] == 1
    assert (metrics["tokens"]["total_prompt"], metrics["tokens"]["total_output"]) == (10, 5)
    assert len(metrics["models"]) == 1
    assert converted.agent_name == "agent"


def test_tool_response_id_matching_no_call_is_a_warning():
    converted = convert(
        span("a", "invoke_agent x", None, 0, 100, gen_ai__operation__name="invoke_agent"),
        chat("c1", "a", 10, msgs(("user", "Q")), msgs(("call", ("call_A", "f", {})))),
        span("t", "execute_tool f", "a", 30, 40, gen_ai__operation__name="execute_tool", gen_ai__tool__name="f",
             gen_ai__tool__call__id="call_B", gen_ai__tool__call__result="r", status="ERROR"),
        chat("c2", "a", 50, msgs(("user", "Q")), msgs(("assistant", "A"))),
    )
    (inv,) = converted.invocations
    assert [(r.id, r.status) for r in inv.intermediate_steps.tool_responses] == [("call_B", "ERROR")]
    assert converted.warnings == ["turn a ('invoke_agent x'): tool response id(s) 'call_B' match no tool call id "
                                  "(calls: 'call_A')"]


def test_tool_arguments_that_are_not_an_object_are_a_warning():
    converted = convert(
        span("a", "invoke_agent x", None, 0, 100, gen_ai__operation__name="invoke_agent"),
        chat("c1", "a", 10, msgs(("user", "Q")), None),
        span("t", "get_weather", "a", 30, 40, openinference__span__kind="TOOL", tool__name="get_weather",
             input__value="Paris", output__value='{"sky": "sunny"}'),
    )
    (inv,) = converted.invocations
    assert [(c.name, c.args) for c in inv.intermediate_steps.tool_calls] == [("get_weather", {})]
    assert inv.intermediate_steps.tool_responses[0].response == {"sky": "sunny"}
    assert converted.warnings == [
        "turn a ('invoke_agent x'): tool span 'get_weather' arguments are not a JSON object: Paris",
        "turn a ('invoke_agent x'): LLM span 'chat m' has no output messages (not captured by this instrumentation); "
        "final_response is empty; tool calls read from tool spans",
    ]


def test_input_without_a_user_message_is_a_warning():
    converted = convert(chat("c1", None, 10, msgs(("system", "be brief")), msgs(("assistant", "A"))))
    assert converted.invocations[0].final_response == "A"
    assert converted.warnings == ["turn c1 ('chat m'): LLM span 'chat m' input has no user message; user_content is empty"]


def test_malformed_attributes_do_not_raise():
    converted = convert(
        span("a", "invoke_agent x", "a", 0, 100, gen_ai__operation__name="invoke_agent"),  # its own parent
        chat("c1", "a", 10, json.dumps([{"role": ["x"], "parts": 5}, {"role": "user", "content": "Q"}]),
             json.dumps([{"role": "assistant", "tool_calls": {"id": 1}, "parts": [{"type": "tool_call", "name": 7}]}]),
             gen_ai__usage__input_tokens={"n": 1}, gen_ai__usage__output_tokens="12"),
        span("t", "execute_tool f", "a", 30, 40, gen_ai__operation__name="execute_tool", gen_ai__tool__call__id=42),
    )
    (inv,) = converted.invocations
    assert inv.user_content == "Q"
    assert [(c.name, c.id) for c in inv.intermediate_steps.tool_calls] == [("f", "42")]
    tokens = inv.performance_metrics["tokens"]
    assert (tokens["total_prompt"], tokens["total_output"]) == (0, 12)
    assert converted.warnings[0] == "trace t1: span a ('invoke_agent x') is its own parent; it is read as a root span"

    cycle = convert(span("a", "invoke_agent x", "b", gen_ai__operation__name="invoke_agent"),
                    span("b", "invoke_agent y", "a", gen_ai__operation__name="invoke_agent"))
    assert cycle.invocations == []
    assert cycle.warnings[0] == "trace t1: span a ('invoke_agent x') is in a parent cycle; it is read as a root span"


def test_unrecognised_spans_are_explained():
    converted = convert(span("r", "GET /weather", http__method="GET"))
    assert converted.invocations == []
    (warning,) = converted.warnings
    assert "no ADK 'invocation' or 'invoke_agent' span found among 1 spans (saw: GET /weather)" in warning
    assert "no GenAI agent, LLM or tool span found among 1 spans (saw: GET /weather); spans are recognised by " \
           "gen_ai.operation.name / openinference.span.kind" in warning


def test_genai_spans_without_a_turn_are_explained():
    converted = convert(span("t", "execute_tool f", gen_ai__operation__name="execute_tool"))
    assert converted.format == "genai" and converted.invocations == []
    assert converted.warnings == ["no turn found: none of the 1 spans is an agent or workflow span or a root that "
                                  "contains an LLM call"]


def test_adk_keeps_winning_over_nested_openllmetry_chat_spans():
    request = json.dumps({"contents": [{"role": "user", "parts": [{"text": "Q"}]}]})
    converted = convert(
        span("inv", "invocation", None, 0, 100),
        span("llm", "call_llm", "inv", 10, 50, gcp__vertex__agent__llm_request=request),
        chat("chat", "llm", 20, msgs(("user", "Q")), msgs(("assistant", "A"))),
    )
    assert converted.format == "adk"
    assert converted.invocations[0].user_content == "Q"


# -- the alias table ---------------------------------------------------------------------------------


def _code_strings(path: Path) -> set[str]:
    """String constants of a module, without docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    return {n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings}


READERS = ["adk.py", "genai.py", "_messages.py", "_common.py"]


def test_every_alias_field_is_read_by_a_converter():
    used = set().union(*(_code_strings(CONVERT / name) for name in READERS))
    assert sorted(set(ALIASES) - used) == []


def test_converters_name_no_attribute_literally():
    names = {n for aliases in ALIASES.values() for n in aliases} | set(INPUT_MESSAGE_EVENTS) | set(OUTPUT_MESSAGE_EVENTS)
    for module in READERS:
        literal = _code_strings(CONVERT / module)
        assert sorted(literal & names) == [], module
        assert sorted(s for s in literal if s.startswith(("gen_ai.", "llm.", "openinference.", "traceloop."))) == [], module


def test_indexed_rebuilds_flattened_lists():
    attrs = {"llm.input_messages.1.message.content": "b", "llm.input_messages.0.message.role": "user",
             "llm.input_messages.0.message.tool_calls.0.tool_call.function.name": "f", "llm.input_messages.x": 1}
    assert indexed(attrs, "input_messages_indexed") == [
        {"message": {"role": "user", "tool_calls": [{"tool_call": {"function": {"name": "f"}}}]}},
        {"message": {"content": "b"}},
    ]


def alias_table() -> str:
    rows = ["| field | attribute names, in lookup order |", "| --- | --- |"]
    rows += [f"| `{field}` | {', '.join(f'`{a}`' for a in aliases)} |" for field, aliases in ALIASES.items()]
    return "\n".join(rows)


def test_docs_list_every_alias():
    docs = (ROOT / "docs" / "traces.md").read_text(encoding="utf-8")
    assert alias_table() in docs, "docs/traces.md: the alias table is stale; replace it with:\n" + alias_table()


# -- legacy-convention traces score like the others ---------------------------------------------------


@pytest.mark.parametrize("fmt", ["otlp", "jaeger"])
def test_strands_legacy_events_score_trajectory_and_answer(fmt):
    """Pre-1.37 per-message events with Bedrock content (Strands' default): trajectory and answer match."""
    from agentevals import evaluate

    run = evaluate(str(DATA / f"strands_legacy.{fmt}.json"), eval_set=str(DATA / "weather_eval_set.json"),
                   metrics=["tool_trajectory_avg_score", "response_match_score"])
    (case,) = run.cases
    assert case.eval_id == "paris_weather"
    assert [(m.name, m.status.value, m.score) for m in case.metrics] == [
        ("tool_trajectory_avg_score", "PASSED", 1.0), ("response_match_score", "PASSED", 1.0)]


def test_strands_tool_spans_alone_give_the_call_and_its_result(tmp_path):
    """Without the model calls' events, the tool span's own pre-1.37 events carry arguments and result."""
    document = json.loads((DATA / "strands_legacy.otlp.json").read_text("utf-8"))
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                if span["name"] in ("chat", "execute_event_loop_cycle"):
                    span["events"] = []
    (tmp_path / "t.otlp.json").write_text(json.dumps(document))
    (trace,) = read_traces(tmp_path / "t.otlp.json")
    (inv,) = convert_trace(trace).invocations
    assert (inv.user_content, inv.final_response) == (USER, FINAL + "\n")
    assert [(c.name, c.args, c.id) for c in inv.intermediate_steps.tool_calls] == [("get_weather", ARGS, CC)]
    assert [(r.output, r.id) for r in inv.intermediate_steps.tool_responses] == [("sunny, 21°C", CC)]


@pytest.mark.parametrize("answer", [FINAL + "\n", FINAL + "\n\n", "  " + FINAL])
def test_the_agent_spans_answer_is_the_final_response_byte_for_byte(tmp_path, answer):
    """As agentevals-cli 0.11: the turn's agent span output wins over its last model call's, and its text is
    kept as recorded (a trailing newline changes what string-distance evaluators score)."""
    document = json.loads((DATA / "openai_otel_genai_v2_latest.otlp.json").read_text("utf-8"))
    spans = [sp for r in document["resourceSpans"] for s in r["scopeSpans"] for sp in s["spans"]]
    (agent,) = [sp for sp in spans if sp["name"].startswith("invoke_agent")]
    (attr,) = [a for a in agent["attributes"] if a["key"] == "gen_ai.output.messages"]
    attr["value"] = {"stringValue": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": answer}]}])}
    (tmp_path / "t.otlp.json").write_text(json.dumps(document))
    (trace,) = read_traces(tmp_path / "t.otlp.json")
    (inv,) = convert_trace(trace).invocations
    assert inv.final_response == answer
