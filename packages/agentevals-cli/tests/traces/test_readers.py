"""Trace readers: real Jaeger/Tempo exports, OTLP JSON, and every kind of bad input as one clear line."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from agentevals.errors import InputFileError
from agentevals.traces.readers import detect_format, read_traces

ADK = Path(__file__).resolve().parents[1] / "data" / "adk"


@pytest.mark.parametrize(
    ("name", "trace_id", "spans"),
    [
        ("helm.json", "3e289017fe03ffd7c4145316d2eb3d0d", 96),
        ("helm_2.json", "bc07807133692d12e4268dc007ef9a19", 72),
        ("helm_3.json", "c9a03cc4e80ea7a22332db0fe4dc3adf", 125),
        ("k8s.json", "d497c9dd55717f2c5ecb79bda3028993", 73),
        ("tempo_export_with_batches.json", "dd547580319ab0312cee07f1def50dad", 86),
    ],
)
def test_real_exports_read(name, trace_id, spans):
    traces = list(read_traces(ADK / name))
    assert [(t.trace_id, len(t.spans)) for t in traces] == [(trace_id, spans)]
    assert traces[0].source.endswith(name)


def test_jaeger_fields_are_mapped():
    trace = next(read_traces(ADK / "helm.json"))
    tool = next(s for s in trace.spans if s.name == "execute_tool helm_list_releases")
    assert tool.parent_span_id == "e37fdd8f56146d31"
    assert tool.scope == "gcp.vertex.agent"
    assert tool.attributes["gen_ai.tool.call.id"] == "call_P09kjRKHTTJA02oB9HIe4u5t"
    assert tool.resource == {"service.name": "helm_agent", "service.namespace": "kagent"}
    assert tool.end_ns - tool.start_ns == 57_091_000
    llm = min((s for s in trace.spans if s.name == "call_llm"), key=lambda s: s.start_ns)
    assert llm.attributes["gen_ai.usage.input_tokens"] == 1820


def _jaeger_span(tmp_path, **fields):
    span = {"traceID": "t1", "spanID": "s1", "operationName": "call_llm", "startTime": 5, "duration": 3, **fields}
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"data": [{"traceID": "t1", "spans": [span],
                                          "processes": {"p1": {"serviceName": "svc", "tags": []}}}]}))
    return next(read_traces(path)).spans[0]


def test_jaeger_span_every_field_in_its_place(tmp_path):
    # The reader builds spans positionally (the hot path): each field must land where its name says.
    span = _jaeger_span(tmp_path, references=[{"refType": "CHILD_OF", "spanID": "p0"}], processID="p1", tags=[
        {"key": "otel.scope.name", "type": "string", "value": "scope"},
        {"key": "span.kind", "type": "string", "value": "client"},
        {"key": "otel.status_code", "type": "string", "value": "error"},
        {"key": "otel.status_description", "type": "string", "value": "boom"},
        {"key": "n", "type": "int64", "value": "7"}],
        logs=[{"timestamp": 6, "fields": [{"key": "event", "value": "e1"}, {"key": "x", "value": 1}]}])
    assert (span.trace_id, span.span_id, span.name, span.parent_span_id) == ("t1", "s1", "call_llm", "p0")
    assert (span.start_ns, span.end_ns) == (5_000, 8_000)
    assert span.attributes == {"otel.scope.name": "scope", "span.kind": "client", "otel.status_code": "error",
                               "otel.status_description": "boom", "n": 7}
    assert [(e.name, e.time_ns, e.attributes) for e in span.events] == [("e1", 6_000, {"x": 1})]
    assert span.resource == {"service.name": "svc"}
    assert (span.scope, span.kind, span.status_code, span.status_message) == ("scope", "client", "ERROR", "boom")


@pytest.mark.parametrize(("start", "duration", "times"), [
    ("5", "3", (5_000, 8_000)), (5.9, 3.2, (5_000, 8_000)), (True, 0, (1_000, 1_000)), (None, None, None)])
def test_jaeger_span_times_are_read_as_int_reads_them(tmp_path, start, duration, times):
    if times is None:
        with pytest.raises(InputFileError, match=r"data\[0\]\.spans\[0\] \(call_llm\) has a non-numeric"):
            _jaeger_span(tmp_path, startTime=start, duration=duration)
        return
    span = _jaeger_span(tmp_path, startTime=start, duration=duration)
    assert (span.start_ns, span.end_ns) == times


@pytest.mark.parametrize(("fields", "key"), [({"spanID": 5}, "spanID"), ({"traceID": ""}, "traceID"),
                                             ({"operationName": ["x"]}, "operationName"),
                                             ({"traceID": None, "spanID": 5}, "traceID")])
def test_jaeger_span_ids_must_be_text(tmp_path, fields, key):
    with pytest.raises(InputFileError, match=rf"data\[0\]\.spans\[0\] has no '{key}'"):
        _jaeger_span(tmp_path, **fields)


def test_tempo_export_maps_kind_status_and_int_times():
    trace = next(read_traces(ADK / "tempo_export_with_batches.json"))
    span = next(s for s in trace.spans if s.name.startswith("GET /api/tasks"))
    assert span.kind == "server"
    assert span.start_ns == 1777555053780274700
    assert span.attributes["server.port"] == 8083
    assert span.resource["service.name"] == "kagent-controller"
    assert span.scope is not None


def otlp_doc(**span_overrides):
    span = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "name": "invoke_agent",
        "kind": 1,
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [
            {"key": "a.s", "value": {"stringValue": "x"}},
            {"key": "a.i", "value": {"intValue": "42"}},
            {"key": "a.d", "value": {"doubleValue": 1.5}},
            {"key": "a.b", "value": {"boolValue": True}},
            {"key": "a.arr", "value": {"arrayValue": {"values": [{"stringValue": "p"}, {"intValue": 2}]}}},
            {"key": "a.kv", "value": {"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}}},
        ],
        "events": [{"name": "gen_ai.user.message", "timeUnixNano": "1700000000500000000",
                    "attributes": [{"key": "content", "value": {"stringValue": "hi"}}]}],
        "status": {"code": 2, "message": "boom"},
    }
    span.update(span_overrides)
    return {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
                               "scopeSpans": [{"scope": {"name": "my.scope"}, "spans": [span]}]}]}


def test_otlp_json_attribute_values_and_events(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(otlp_doc()))
    (trace,) = read_traces(path)
    (span,) = trace.spans
    assert span.attributes == {"a.s": "x", "a.i": 42, "a.d": 1.5, "a.b": True, "a.arr": ["p", 2], "a.kv": {"k": "v"}}
    assert (span.kind, span.status_code, span.status_message, span.scope) == ("internal", "ERROR", "boom", "my.scope")
    assert span.events[0].name == "gen_ai.user.message" and span.events[0].attributes == {"content": "hi"}
    assert span.duration_ms == 1000.0


def test_otlp_base64_ids_become_hex(tmp_path):
    trace_id = bytes.fromhex("5b8efff798038103d269b633813fc60c")
    path = tmp_path / "t.json"
    path.write_text(json.dumps(otlp_doc(traceId=base64.b64encode(trace_id).decode(),
                                        spanId=base64.b64encode(bytes.fromhex("eee19b7ec3c1b174")).decode())))
    (trace,) = read_traces(path)
    assert trace.trace_id == "5b8efff798038103d269b633813fc60c"
    assert trace.spans[0].span_id == "eee19b7ec3c1b174"


def test_otlp_json_lines(tmp_path):
    a, b = otlp_doc(), otlp_doc(traceId="aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(a) + "\n" + json.dumps(b) + "\n")
    assert [t.trace_id for t in read_traces(path)] == ["5b8efff798038103d269b633813fc60c", "a" * 32]


def test_detect_format():
    assert detect_format({"data": [{"traceID": "x", "spans": []}]}) == "jaeger-json"
    assert detect_format({"resourceSpans": []}) == "otlp-json"
    assert detect_format({"batches": []}) == "otlp-json"
    assert detect_format({"something": 1}) is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty file, expected JSON"),
        ("this is not json", ":1:1: invalid JSON: Expecting value"),
        ('{"data": [{"traceID": "x", "spans": [', "invalid JSON: Expecting value (file looks truncated)"),
        ('{"foo": 1}', "not a trace file: expected Jaeger JSON"),
        ('{"eval_set_id": "x", "eval_cases": []}', "this is an ADK eval set, not a trace file: pass it with -e/--eval-set"),
        ('{"data": [{"traceID": "x", "spans": [{"spanID": "1", "operationName": "a"}]}]}',
         "data[0].spans[0] has no 'traceID'"),
        ('{"data": [{"traceID": "x", "spans": [{"traceID": "x", "spanID": "1", "operationName": "a", '
         '"startTime": "soon"}]}]}', "data[0].spans[0] (a) has a non-numeric startTime/duration"),
        ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "5b8efff798038103d269b633813fc60c"}]}]}]}',
         "resourceSpans[0].scopeSpans[0].spans[0] has no 'spanId'"),
        ('{"data": "nope"}', "not a trace file"),
    ],
)
def test_bad_input_is_one_line_naming_the_file(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(InputFileError) as info:
        list(read_traces(path))
    text = str(info.value)
    assert text.startswith(str(path))
    assert message in text
    assert "\n" not in text


_SPAN = {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "name": "chat"}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"resourceSpans": ["x"]}, "resourceSpans[0] is not an object"),
        ({"resourceSpans": [{"scopeSpans": "x"}]}, "resourceSpans[0].scopeSpans must be a list"),
        ({"resourceSpans": [{"scopeSpans": [5]}]}, "resourceSpans[0].scopeSpans[0] is not an object"),
        ({"resourceSpans": [{"scopeSpans": [{"spans": {"a": 1}}]}]}, "resourceSpans[0].scopeSpans[0].spans must be a list"),
        ({"resourceSpans": [{"scopeSpans": [{"spans": [{**_SPAN, "attributes": [
            {"key": "n", "value": {"intValue": "x"}}]}]}]}]},
         "resourceSpans[0].scopeSpans[0].spans[0] (chat): attribute 'n': invalid intValue 'x'"),
        ({"resourceSpans": [{"scopeSpans": [{"spans": [{**_SPAN, "events": [{"name": "e", "timeUnixNano": "soon"}]}]}]}]},
         "resourceSpans[0].scopeSpans[0].spans[0] (chat) has an event with a non-numeric time"),
        ({"resourceSpans": []}, "no spans in the file"),
        ({"data": []}, "no spans in the file"),
    ],
)
def test_malformed_otlp_is_one_line_naming_the_place(tmp_path, document, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    with pytest.raises(InputFileError) as info:
        list(read_traces(path))
    assert str(info.value) == f"{path}: {message}"


def test_json_lines_error_names_the_broken_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(otlp_doc()) + "\n\n" + json.dumps(otlp_doc()) + "\n" + '{"resourceSpans": [ brok\n')
    with pytest.raises(InputFileError) as info:
        list(read_traces(path))
    assert str(info.value) == f"{path}:4:21: invalid JSON: Expecting value"


def test_utf8_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + (ADK / "helm.json").read_bytes())
    assert [t.trace_id for t in read_traces(path)] == ["3e289017fe03ffd7c4145316d2eb3d0d"]


def test_utf16_file_says_so(tmp_path):
    path = tmp_path / "u16.json"
    path.write_text(json.dumps(otlp_doc()), encoding="utf-16")
    with pytest.raises(InputFileError) as info:
        list(read_traces(path))
    assert str(info.value) == f"{path}: UTF-16 text, expected UTF-8 JSON"


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputFileError, match="no such file"):
        list(read_traces(tmp_path / "nope.json"))
    with pytest.raises(InputFileError, match="is a directory"):
        list(read_traces(tmp_path))


def test_format_override_is_applied(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(otlp_doc()))
    with pytest.raises(InputFileError, match="Jaeger trace"):
        list(read_traces(path, format="jaeger-json"))


def test_forcing_otlp_on_a_jaeger_file_says_what_is_missing():
    with pytest.raises(InputFileError) as info:
        list(read_traces(ADK / "helm.json", format="otlp-json"))
    assert str(info.value) == f"{ADK / 'helm.json'}: not OTLP JSON: no 'resourceSpans' (or Tempo 'batches') list"


def test_unforeseen_shape_is_still_one_line_naming_the_file(tmp_path):
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"data": [{"traceID": "a", "spans": [
        {"traceID": "a", "spanID": "b", "operationName": "x", "logs": [5]}]}]}))
    with pytest.raises(InputFileError) as info:
        list(read_traces(path))
    assert str(info.value) == (f"{path}: unexpected jaeger-json structure: "
                               "AttributeError: 'int' object has no attribute 'get'")
