"""serve's protobuf → JSON mapping prints what ``MessageToDict`` prints, for every OTLP field kind."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import google.protobuf
import pytest
from agentevals.serve._protojson import message_to_dict
from google.protobuf.json_format import MessageToDict
from google.protobuf.struct_pb2 import Struct
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status


def _kv(key: str, **value) -> KeyValue:
    return KeyValue(key=key, value=AnyValue(**value))


VALUES = [
    _kv("s", string_value="héllo"), _kv("empty"), _kv("zero", int_value=0), _kv("neg", int_value=-(2**63)),
    _kv("big", int_value=2**63 - 1), _kv("f", double_value=0.1), _kv("nan", double_value=math.nan),
    _kv("inf", double_value=math.inf), _kv("-inf", double_value=-math.inf), _kv("no", bool_value=False),
    _kv("bytes", bytes_value=b"\x00\xff\x10"), _kv("none_bytes", bytes_value=b""),
    _kv("array", array_value=ArrayValue(values=[AnyValue(int_value=1), AnyValue(
        array_value=ArrayValue(values=[AnyValue(string_value="deep")]))])),
    _kv("kv", kvlist_value=KeyValueList(values=[_kv("inner", bool_value=True)])),
]


def test_spans_request_prints_as_message_to_dict() -> None:
    spans = [
        Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, parent_span_id=b"\x03" * 8, name="chat", kind=3,
             start_time_unix_nano=2**64 - 1, end_time_unix_nano=1, attributes=VALUES, trace_state="a=b", flags=257,
             dropped_attributes_count=2, events=[Span.Event(name="e", time_unix_nano=5, attributes=VALUES[:3])],
             links=[Span.Link(trace_id=b"\x04" * 16, span_id=b"\x05" * 8)], status=Status(code=2, message="boom")),
        Span(kind=99, status=Status()),  # an enum number the schema does not name; a set but empty message
        Span(),
    ]
    request = ExportTraceServiceRequest(resource_spans=[
        ResourceSpans(resource=Resource(attributes=VALUES), schema_url="u",
                      scope_spans=[ScopeSpans(spans=spans), ScopeSpans()]),
        ResourceSpans(),
    ])
    expected = MessageToDict(request)
    assert expected["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["kind"] == 99
    assert message_to_dict(request) == expected


def test_logs_request_prints_as_message_to_dict() -> None:
    records = [LogRecord(time_unix_nano=3, severity_number=9, severity_text="INFO", body=AnyValue(string_value="x"),
                         attributes=VALUES, trace_id=b"\x01" * 16, span_id=b"\x02" * 8, flags=1), LogRecord()]
    request = ExportLogsServiceRequest(resource_logs=[ResourceLogs(scope_logs=[ScopeLogs(log_records=records)])])
    assert message_to_dict(request) == MessageToDict(request)


def test_well_known_types_are_printed_by_message_to_dict() -> None:
    message = Struct()
    message.update({"a": [1, "b", None], "c": {"d": True}})
    assert message_to_dict(message) == MessageToDict(message) == {"a": [1.0, "b", None], "c": {"d": True}}


LOWEST = "protobuf==5.26.*"
"""The oldest protobuf the package allows (``protobuf>=5.26`` in its pyproject): its descriptors lack newer
properties (``FieldDescriptor.is_repeated`` came with 6), so the table is checked on it too."""


@pytest.mark.timeout(600)
def test_the_same_on_the_oldest_protobuf_the_package_allows(tmp_path) -> None:
    floor = re.search(r'"protobuf>=([\d.]+)"', (Path(__file__).parents[2] / "pyproject.toml").read_text("utf-8"))
    assert floor and LOWEST == f"protobuf=={floor[1]}.*", "LOWEST follows the pyproject's protobuf floor"
    pip = tmp_path / "pip"
    venv.create(pip, with_pip=True)  # this environment may have no pip of its own (uv)
    target = tmp_path / "lowest"
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    done = subprocess.run([pip / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", "--only-binary=:all:",
                           "--target", target, LOWEST], env=env, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, f"cannot install {LOWEST} from the package registry: {done.stderr[-2000:]}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(target), env.get("PYTHONPATH", "")]))
    env["EXPECT_PROTOBUF"] = floor[1]
    done = subprocess.run([sys.executable, "-m", "pytest", __file__, "-q", "-p", "no:cacheprovider", "-k",
                           "not oldest"], env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and re.search(r"\b4 passed", done.stdout), done.stdout[-3000:] + done.stderr[-2000:]


def test_the_protobuf_under_test_is_the_one_expected() -> None:
    expected = os.environ.get("EXPECT_PROTOBUF")  # set by the test above for its run on the oldest protobuf
    assert expected is None or google.protobuf.__version__.startswith(expected + "."), google.protobuf.__version__
