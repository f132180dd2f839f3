"""OTLP export requests (protobuf or JSON) → the internal ``Span`` model and log events.

Protobuf requests are turned into the protobuf JSON mapping and read by the same readers as trace
files (``traces.readers.otlp`` and ``otlp_logs``), so live and batch input cannot be read differently.
"""

from __future__ import annotations

from typing import Any

import orjson
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ..errors import InputFileError
from ..traces.model import Span
from ..traces.readers.otlp import batch_spans
from ..traces.readers.otlp_logs import LogEvents, add_log_events
from ._protojson import message_to_dict

__all__ = ["OtlpDecodeError", "decode_logs", "decode_spans", "logs_document", "spans_document"]


class OtlpDecodeError(ValueError):
    """The body is not a valid OTLP export request (answered with HTTP 400 / gRPC INVALID_ARGUMENT)."""


def spans_document(body: bytes, *, json: bool) -> dict[str, Any]:
    """``{"resourceSpans": […]}`` from an ``ExportTraceServiceRequest`` body."""
    return _document(body, json, ExportTraceServiceRequest, "resourceSpans")


def logs_document(body: bytes, *, json: bool) -> dict[str, Any]:
    """``{"resourceLogs": […]}`` from an ``ExportLogsServiceRequest`` body."""
    return _document(body, json, ExportLogsServiceRequest, "resourceLogs")


def decode_spans(document: dict[str, Any], source: str = "otlp") -> list[Span]:
    """Every span of a trace export document, in order."""
    try:
        return [span for b, batch in enumerate(document.get("resourceSpans") or ())
                for span in batch_spans(batch, f"{source}: resourceSpans[{b}]")]
    except InputFileError as exc:
        raise OtlpDecodeError(str(exc)) from None


def decode_logs(document: dict[str, Any], source: str = "otlp") -> LogEvents:
    """(trace id, span id) → log records as span events; records without a span are dropped."""
    out: LogEvents = {}
    try:
        add_log_events(document, source, out)
    except (InputFileError, AttributeError, TypeError, ValueError) as exc:
        raise OtlpDecodeError(str(exc)) from None
    return out


def _document(body: bytes, json: bool, message_type: type, key: str) -> dict[str, Any]:
    if json:
        try:
            document = orjson.loads(body) if body.strip() else {}
        except orjson.JSONDecodeError as exc:
            raise OtlpDecodeError(f"invalid JSON: {exc}") from None
        if not isinstance(document, dict):
            raise OtlpDecodeError(f"expected a JSON object with '{key}'")
        alt = "resource_spans" if key == "resourceSpans" else "resource_logs"
        document.setdefault(key, document.pop(alt, []))
        return document
    message = message_type()
    try:
        message.ParseFromString(body)
    except Exception as exc:  # protobuf's DecodeError and friends
        raise OtlpDecodeError(f"invalid protobuf: {exc}") from None
    return message_to_document(message)


def message_to_document(message: Any) -> dict[str, Any]:
    """A parsed export request as its JSON mapping (ids base64, 64-bit integers as strings)."""
    return message_to_dict(message)
