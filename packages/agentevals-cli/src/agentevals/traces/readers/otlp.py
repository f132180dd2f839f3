"""OTLP JSON (``{"resourceSpans": …}``, the protobuf JSON mapping) and Tempo exports (``{"batches": …}``)."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import Any

from ...errors import InputFileError
from ..formats import TraceFileFormat
from ..model import Span, SpanEvent, Trace

__all__ = ["OtlpJsonFormat", "attribute_value", "batch_spans", "batch_trace_ids", "batches_key", "hex_id", "key_values",
           "read_otlp"]

_HEX = re.compile(r"^[0-9a-fA-F]+$")
_KINDS: dict[Any, str | None] = {0: None, 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
_STATUS = {0: None, 1: "OK", 2: "ERROR", "STATUS_CODE_UNSET": None, "STATUS_CODE_OK": "OK", "STATUS_CODE_ERROR": "ERROR"}


def attribute_value(value: Any) -> Any:
    """``{"stringValue": "x"}`` → ``"x"``; arrays and kvlists recursively."""
    if not isinstance(value, dict) or not value:
        return value
    (kind, inner), *_ = value.items()
    if kind in ("intValue", "doubleValue"):
        try:
            return int(inner) if kind == "intValue" else float(inner)
        except (TypeError, ValueError):
            raise ValueError(f"invalid {kind} {inner!r}") from None
    if kind == "arrayValue":
        return [attribute_value(v) for v in (inner or {}).get("values", [])]
    if kind == "kvlistValue":
        return key_values((inner or {}).get("values"))
    return inner


def key_values(items: Any, where: str = "") -> dict[str, Any]:
    """OTLP key/value list → dict; with ``where``, a bad value raises ``InputFileError`` naming the key."""
    out = {}
    for a in items if isinstance(items, list) else ():
        if isinstance(a, dict) and "key" in a:
            try:
                out[a["key"]] = attribute_value(a.get("value"))
            except ValueError as exc:
                if not where:
                    raise
                raise InputFileError(f"{where}: attribute '{a['key']}': {exc}") from None
    return out


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputFileError(f"{where} must be a list")
    return value


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputFileError(f"{where} is not an object")
    return value


def hex_id(value: Any) -> str:
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
    key = batches_key(document)
    batches = document.get(key) if isinstance(document, dict) else None
    if batches is None:
        raise InputFileError(f"{source}: not OTLP JSON: no 'resourceSpans' (or Tempo 'batches') list")
    if not isinstance(batches, list):
        raise InputFileError(f"{source}: OTLP JSON '{key}' must be a list")
    traces: dict[str, list[Span]] = {}
    for b, batch in enumerate(batches):
        for span in batch_spans(batch, f"{source}: {key}[{b}]"):
            traces.setdefault(span.trace_id, []).append(span)
    for trace_id, spans in traces.items():
        yield Trace(trace_id=trace_id, spans=spans, source=source)


def batches_key(document: Any) -> str:
    """The key holding the batches: ``resourceSpans``, ``resource_spans`` or Tempo's ``batches``."""
    return next((k for k in ("resourceSpans", "resource_spans", "batches") if k in document), "resourceSpans")


def _scopes_key(batch: dict[str, Any]) -> str:
    return next((k for k in ("scopeSpans", "scope_spans", "instrumentationLibrarySpans") if k in batch), "scopeSpans")


def batch_spans(batch: Any, at: str) -> Iterator[Span]:
    """The spans of one resource batch, in order; ``at`` (``"file: resourceSpans[3]"``) prefixes errors."""
    batch = _object(batch, at)
    resource_obj = batch.get("resource") or {}
    resource = key_values(resource_obj.get("attributes") if isinstance(resource_obj, dict) else None,
                           f"{at}.resource")
    scopes_key = _scopes_key(batch)
    for s, scope_spans in enumerate(_list(batch.get(scopes_key), f"{at}.{scopes_key}")):
        scope_spans = _object(scope_spans, f"{at}.{scopes_key}[{s}]")
        scope = scope_spans.get("scope") or scope_spans.get("instrumentationLibrary") or {}
        spans_at = f"{at}.{scopes_key}[{s}].spans"
        for i, raw in enumerate(_list(scope_spans.get("spans"), spans_at)):
            yield _span(raw, resource, scope.get("name") if isinstance(scope, dict) else None, f"{spans_at}[{i}]")


def batch_trace_ids(batch: Any) -> set[str]:
    """The trace ids of one batch's spans (as ``batch_spans`` reads them), skipping anything malformed."""
    ids: set[str] = set()
    if not isinstance(batch, dict):
        return ids
    scopes = batch.get(_scopes_key(batch))
    for scope_spans in scopes if isinstance(scopes, list) else ():
        spans = scope_spans.get("spans") if isinstance(scope_spans, dict) else None
        for raw in spans if isinstance(spans, list) else ():
            if isinstance(raw, dict):
                ids.add(_span_trace_id(raw))
    return ids


def _span_trace_id(raw: dict[str, Any]) -> str:
    return hex_id(raw.get("traceId") or raw.get("trace_id"))


def _span(raw: Any, resource: dict[str, Any], scope: Any, where: str) -> Span:
    if not isinstance(raw, dict):
        raise InputFileError(f"{where} is not an object")
    trace_id, span_id = _span_trace_id(raw), hex_id(raw.get("spanId") or raw.get("span_id"))
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
    events = []
    raw_events = raw.get("events")
    for e in raw_events if isinstance(raw_events, list) else ():
        if not isinstance(e, dict):
            continue
        try:
            time_ns = int(e.get("timeUnixNano") or e.get("time_unix_nano") or 0)
        except (TypeError, ValueError):
            raise InputFileError(f"{where} ({name}) has an event with a non-numeric time") from None
        events.append(SpanEvent(name=str(e.get("name", "")), time_ns=time_ns,
                                attributes=key_values(e.get("attributes"), f"{where} ({name}) event {e.get('name')!r}")))
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        name=str(name),
        parent_span_id=hex_id(raw.get("parentSpanId") or raw.get("parent_span_id")) or None,
        start_ns=start,
        end_ns=end,
        attributes=key_values(raw.get("attributes"), f"{where} ({name})"),
        events=events,
        resource=resource,
        scope=scope,
        kind=kind,
        status_code=_STATUS.get(status.get("code"), None) if isinstance(status, dict) else None,
        status_message=(status.get("message") or None) if isinstance(status, dict) else None,
    )


class OtlpJsonFormat(TraceFileFormat):
    """OTLP JSON (``{"resourceSpans": [...]}``), a Tempo export, OTLP JSON lines."""

    name = "otlp-json"

    def read(self, document: Any, source: str) -> Iterator[Trace]:
        return read_otlp(document, source)
