"""Fuzzing (hypothesis) of everything that reads outside input: no exception but our own escapes.

Targets: the trace readers (bytes and JSON shaped like Jaeger / OTLP), the converters (random span trees
with GenAI attributes), the eval-set loader, the config loader, the EVAL.yaml reader (transpile) and the
result validator. Each must either succeed or raise an ``AgentevalsError`` (a one-line message), never a
``KeyError``, ``RecursionError`` or the like.

The ``ci`` profile (default) is short, for every ``hatch run test``; ``python tools/fuzz.py`` runs the long
one (``AGENTEVALS_FUZZ_PROFILE=long``: many more examples per target).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml
from agentevals.config import parse_config
from agentevals.errors import AgentevalsError
from agentevals.evalsets.loader import parse_eval_set
from agentevals.protocol import decode_result
from agentevals.traces.convert import convert_trace
from agentevals.traces.model import Span, SpanEvent, Trace
from agentevals.traces.readers import read_traces
from agentevals.transpile import transpile_file
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

settings.register_profile("ci", max_examples=60, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=4000, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
FUZZ = settings.get_profile(os.environ.get("AGENTEVALS_FUZZ_PROFILE", "ci"))

# -- strategies ---------------------------------------------------------------------------------------

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=10), inner, max_size=5)), max_leaves=30)
ids = st.sampled_from(["", "a", "b", "c", "0" * 16, "ab" * 8, "x1"])
GENAI_KEYS = ["gen_ai.operation.name", "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.name",
              "gen_ai.tool.call.id", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
              "gen_ai.usage.input_tokens", "gen_ai.request.model", "gen_ai.conversation.id", "gen_ai.agent.name",
              "gcp.vertex.agent.llm_request", "gcp.vertex.agent.llm_response", "gcp.vertex.agent.tool_call_args",
              "gcp.vertex.agent.tool_response", "gcp.vertex.agent.invocation_id", "session.id"]
OPERATIONS = ["invoke_agent", "chat", "execute_tool", "generate_content", "call_llm", "text_completion", "x"]
attribute_values = st.one_of(scalars, st.sampled_from(OPERATIONS),
                             json_values.map(lambda v: json.dumps(v)), st.lists(st.text(max_size=5), max_size=3))
attributes = st.dictionaries(st.sampled_from(GENAI_KEYS), attribute_values, max_size=6)


@st.composite
def spans(draw: Any) -> Span:
    start = draw(st.integers(0, 10**6))
    return Span(trace_id="t", span_id=draw(ids), name=draw(st.sampled_from(
                    ["invoke_agent a", "chat m", "execute_tool f", "call_llm", "agent_run", "x"])),
                parent_span_id=draw(st.one_of(st.none(), ids)), start_ns=start,
                end_ns=start + draw(st.integers(-10, 10**6)), attributes=draw(attributes),
                events=draw(st.lists(st.builds(SpanEvent, name=st.sampled_from(
                    ["gen_ai.user.message", "gen_ai.choice", "x"]), attributes=attributes), max_size=2)))


def jaeger_docs() -> st.SearchStrategy[Any]:
    tag = st.fixed_dictionaries({"key": st.sampled_from(GENAI_KEYS), "value": attribute_values},
                                optional={"type": st.sampled_from(["string", "int64", "bool", "float64", "x"])})
    span = st.fixed_dictionaries({}, optional={
        "traceID": ids, "spanID": ids, "operationName": st.text(max_size=10), "startTime": scalars,
        "duration": scalars, "tags": st.one_of(st.lists(tag, max_size=4), json_values),
        "references": st.lists(st.fixed_dictionaries({"refType": st.just("CHILD_OF"), "spanID": ids}), max_size=2),
        "processID": st.text(max_size=3)})
    trace = st.fixed_dictionaries({"spans": st.one_of(st.lists(span, max_size=5), json_values)},
                                  optional={"traceID": ids, "processes": json_values})
    return st.fixed_dictionaries({"data": st.one_of(st.lists(trace, max_size=3), json_values)})


def otlp_docs() -> st.SearchStrategy[Any]:
    value = st.one_of(st.fixed_dictionaries({"stringValue": st.text(max_size=10)}),
                      st.fixed_dictionaries({"intValue": st.one_of(st.integers(), st.text(max_size=5))}), json_values)
    attr = st.fixed_dictionaries({"key": st.sampled_from(GENAI_KEYS), "value": value})
    span = st.fixed_dictionaries({}, optional={
        "traceId": ids, "spanId": ids, "parentSpanId": ids, "name": st.text(max_size=10),
        "startTimeUnixNano": scalars, "endTimeUnixNano": scalars, "attributes": st.lists(attr, max_size=4),
        "events": json_values, "status": json_values})
    scope = st.fixed_dictionaries({"spans": st.one_of(st.lists(span, max_size=4), json_values)})
    batch = st.fixed_dictionaries({"scopeSpans": st.one_of(st.lists(scope, max_size=2), json_values)},
                                  optional={"resource": json_values})
    return st.fixed_dictionaries({"resourceSpans": st.one_of(st.lists(batch, max_size=3), json_values)})


def _file(data: bytes, suffix: str = ".json") -> Path:
    handle, name = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(handle, "wb") as f:
        f.write(data)
    return Path(name)


def _read_all(data: bytes) -> None:
    path = _file(data)
    try:
        list(read_traces(path))
    except AgentevalsError:
        pass
    finally:
        path.unlink()


# -- targets ------------------------------------------------------------------------------------------

@FUZZ
@given(st.binary(max_size=300))
def test_trace_readers_on_bytes(data: bytes) -> None:
    _read_all(data)


@FUZZ
@given(st.one_of(jaeger_docs(), otlp_docs(), json_values))
def test_trace_readers_on_trace_shaped_json(document: Any) -> None:
    _read_all(json.dumps(document).encode())


@FUZZ
@given(st.lists(st.one_of(otlp_docs(), json_values), min_size=2, max_size=3))
def test_trace_readers_on_json_lines(documents: list[Any]) -> None:
    _read_all("\n".join(json.dumps(d) for d in documents).encode())


@FUZZ
@given(st.lists(spans(), max_size=8))
def test_converters(span_list: list[Span]) -> None:
    try:
        convert_trace(Trace(trace_id="t", spans=span_list, source="fuzz.json"))
    except AgentevalsError:
        pass


eval_set_docs = st.one_of(json_values, st.fixed_dictionaries({}, optional={
    "eval_set_id": scalars, "evalSetId": scalars, "name": scalars,
    "eval_cases": st.one_of(json_values, st.lists(st.fixed_dictionaries({}, optional={
        "eval_id": scalars, "conversation": st.one_of(json_values, st.lists(st.fixed_dictionaries({}, optional={
            "user_content": json_values, "final_response": json_values, "intermediate_data": json_values,
            "invocation_id": scalars}), max_size=3)),
        "session_input": json_values}), max_size=3))}))


@FUZZ
@given(eval_set_docs)
def test_eval_set_loader(document: Any) -> None:
    try:
        parse_eval_set(document, "fuzz.json")
    except AgentevalsError:
        pass


config_entries = st.fixed_dictionaries({}, optional={
    "name": scalars, "type": st.one_of(st.sampled_from(["builtin", "code", "python", "contains", "regex",
                                                        "tool_trajectory", "composite", "openai_eval", "x"]), scalars),
    "threshold": scalars, "weight": scalars, "required": scalars, "timeout": scalars, "path": scalars,
    "value": json_values, "env": json_values, "config": json_values, "flags": scalars})
config_docs = st.one_of(json_values, st.fixed_dictionaries({}, optional={
    "evaluators": st.one_of(json_values, st.lists(config_entries, max_size=3)), "pass_at_k": json_values,
    "judge_model": scalars, "repeat_key": scalars}))


@FUZZ
@given(config_docs)
def test_config_loader_on_structures(document: Any) -> None:
    try:
        parse_config(yaml.safe_dump(document), source="fuzz.yaml", base_dir=Path(tempfile.gettempdir()))
    except AgentevalsError:
        pass


@FUZZ
@given(st.text(alphabet=st.sampled_from([*"evaluators:- &*[]{}\n name:type!x0.5#'\"|>?,", "\t"]), max_size=80))
def test_config_loader_on_yaml_text(text: str) -> None:
    try:
        parse_config(text, source="fuzz.yaml", base_dir=Path(tempfile.gettempdir()))
    except AgentevalsError:
        pass


eval_yaml_docs = st.one_of(json_values, st.fixed_dictionaries({}, optional={
    "description": scalars, "execution": json_values, "assertions": json_values, "assert": json_values,
    "tests": st.one_of(json_values, st.lists(st.fixed_dictionaries({}, optional={
        "id": scalars, "input": json_values, "criteria": scalars, "expected_output": json_values,
        "assertions": st.one_of(json_values, st.lists(st.fixed_dictionaries({}, optional={
            "type": st.sampled_from(["contains", "regex", "llm-judge", "code-judge", "equals", "is-json", "x"]),
            "value": json_values, "name": scalars, "command": json_values}), max_size=3))}), max_size=3))}))


@FUZZ
@given(st.one_of(eval_yaml_docs.map(lambda d: yaml.safe_dump(d).encode()), st.binary(max_size=200)))
def test_eval_yaml_reader(data: bytes) -> None:
    path = _file(data, suffix=".yaml")
    try:
        transpile_file(path, source="EVAL.yaml")
    except AgentevalsError:
        pass
    finally:
        path.unlink()


result_docs = st.one_of(json_values, st.fixed_dictionaries({}, optional={
    "score": st.one_of(scalars, st.floats()), "status": st.one_of(st.sampled_from(
        ["PASSED", "FAILED", "NOT_EVALUATED", "ERROR", "passed"]), scalars),
    "per_invocation_scores": json_values, "details": json_values, "protocol_version": st.one_of(
        st.sampled_from(["1.0", "1.1", "1.9", "2.0", "x", ""]), scalars)}))


@FUZZ
@given(result_docs, st.integers(0, 3))
def test_result_validator(document: Any, n_invocations: int) -> None:
    # What arrives on the wire is text; a backend may hand over a parsed object.
    for form in (json.dumps(document), *([document] if isinstance(document, dict) else [])):
        try:
            decode_result(form, threshold=0.5, n_invocations=n_invocations, name="fuzz")  # type: ignore[arg-type]
        except AgentevalsError:
            pass
