"""OTLP JSON (``{"resourceSpans": …}``, the protobuf JSON mapping) and Tempo exports (``{"batches": …}``)."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Iterator

from ...errors import InputFileError
from ..model import Span, SpanEvent, Trace

__all__ = ["attribute_value", "read_otlp"]

_HEX = re.compile(r"^[0-9a-fA-F]+$")
_KINDS = {0: None, 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
_STATUS = {0: None, 1: "OK", 2: "ERROR", "STATUS_CODE_UNSET": None, "STATUS_CODE_OK": "OK", "STATUS_CODE_ERROR": "ERROR"}


def attribute_value(value: Any) -> Any:
    """``{"stringValue": "x"}`` → ``"x"``; arrays and kvlists recursively."""
    if not isinstance(value, dict) or not value:
        return value
    (kind, inner), *_ = value.items()
    if kind == "intValue":
        return int(inner)
    if kind == "doubleValue":
        return float(inner)
    if kind == "arrayValue":
        return [attribute_value(v) for v in (inner or {}).get("values", [])]
    if kind == "kvlistValue":
        return _attributes((inner or {}).get("values"))
    return inner


def _attributes(items: Any) -> dict[str, Any]:
    return {a["key"]: attribute_value(a.get("value")) for a in items or () if isinstance(a, dict) and "key" in a}


def _id(value: Any) -> str:
    """OTLP JSON ids are hex; some exporters (Tempo) write base64. Return lowercase hex."""
    if not isinstance(value, str) or not value:
        return ""
    if _HEX.match(value) and len(value) in (16, 32):
        return value.lower()
    try:
        return base64.b64decode(value, validate=True).hex()
    except (binascii.Error, ValueError):
        return value


def read_otlp(document: Any, source: str) -> Iterator[Trace]:
    """Group every span in the document by trace id, in first-seen order."""
    batches = document.get("resourceSpans") or document.get("resource_spans") or document.get("batches")
    if not isinstance(batches, list):
        raise InputFileError(f"{source}: OTLP JSON 'resourceSpans' must be a list")
    traces: dict[str, list[Span]] = {}
    for b, batch in enumerate(batches):
        resource = _attributes((batch.get("resource") or {}).get("attributes"))
        scopes = batch.get("scopeSpans") or batch.get("scope_spans") or batch.get("instrumentationLibrarySpans") or []
        for s, scope_spans in enumerate(scopes):
            scope = scope_spans.get("scope") or scope_spans.get("instrumentationLibrary") or {}
            for i, raw in enumerate(scope_spans.get("spans") or ()):
                span = _span(raw, resource, scope.get("name"), f"{source}: resourceSpans[{b}].scopeSpans[{s}].spans[{i}]")
                traces.setdefault(span.trace_id, []).append(span)
    for trace_id, spans in traces.items():
        yield Trace(trace_id=trace_id, spans=spans, source=source)


def _span(raw: Any, resource: dict[str, Any], scope: Any, where: str) -> Span:
    if not isinstance(raw, dict):
        raise InputFileError(f"{where} is not an object")
    trace_id, span_id = _id(raw.get("traceId") or raw.get("trace_id")), _id(raw.get("spanId") or raw.get("span_id"))
    name = raw.get("name")
    for key, value in (("traceId", trace_id), ("spanId", span_id), ("name", name)):
        if not value:
            raise InputFileError(f"{where} has no '{key}'")
    try:
        start = int(raw.get("startTimeUnixNano") or raw.get("start_time_unix_nano") or 0)
        end = int(raw.get("endTimeUnixNano") or raw.get("end_time_unix_nano") or start)
    except (TypeError, ValueError):
        raise InputFileError(f"{where} ({name}) has a non-numeric start/end time") from None
    kind = raw.get("kind")
    if isinstance(kind, str):
        kind = kind.removeprefix("SPAN_KIND_").lower() or None
    else:
        kind = _KINDS.get(kind)
    status = raw.get("status") or {}
    events = [
        SpanEvent(
            name=str(e.get("name", "")),
            time_ns=int(e.get("timeUnixNano") or e.get("time_unix_nano") or 0),
            attributes=_attributes(e.get("attributes")),
        )
        for e in raw.get("events") or ()
        if isinstance(e, dict)
    ]
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        name=name,
        parent_span_id=_id(raw.get("parentSpanId") or raw.get("parent_span_id")) or None,
        start_ns=start,
        end_ns=end,
        attributes=_attributes(raw.get("attributes")),
        events=events,
        resource=resource,
        scope=scope,
        kind=kind,
        status_code=_STATUS.get(status.get("code"), None) if isinstance(status, dict) else None,
        status_message=(status.get("message") or None) if isinstance(status, dict) else None,
    )
