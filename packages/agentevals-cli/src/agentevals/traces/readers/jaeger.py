"""Jaeger JSON (the query API / UI export: ``{"data": [{traceID, spans, processes}]}``) → Traces."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import InputFileError
from ..formats import TraceFileFormat
from ..model import Span, SpanEvent, Trace

__all__ = ["JaegerJsonFormat", "read_jaeger", "read_jaeger_trace"]

_NUMERIC = {"int64": int, "float64": float}
_TYPED = frozenset(("int64", "float64", "bool"))
"""Tag types whose string values are converted (anything else is kept as it is)."""


def _tag_value(kind: Any, value: str) -> Any:
    if kind == "bool":
        return value.lower() == "true"
    try:
        return _NUMERIC[kind](value)
    except ValueError:
        return value


def _tags(tags: Any) -> dict[str, Any]:
    # The hot loop of reading (about 7 tags per span): a plain loop with the common case (a string tag)
    # first costs half of a comprehension calling a function per tag. Later duplicates win, as in a dict.
    out: dict[str, Any] = {}
    for t in tags or ():
        if isinstance(t, dict) and "key" in t:
            value = t.get("value")
            if isinstance(value, str) and t.get("type") in _TYPED:
                value = _tag_value(t["type"], value)
            out[t["key"]] = value
    return out


def read_jaeger(document: Any, source: str) -> Iterator[Trace]:
    """Yield one Trace per entry of ``data`` (also accepts a bare trace or a list of traces)."""
    if isinstance(document, dict) and "data" in document:
        entries = document["data"]
    elif isinstance(document, list):
        entries = document
    else:
        entries = [document]
    if not isinstance(entries, list):
        raise InputFileError(f"{source}: Jaeger JSON 'data' must be a list, got {type(entries).__name__}")
    for t_index, entry in enumerate(entries):
        yield read_jaeger_trace(entry, source, t_index)


def read_jaeger_trace(entry: Any, source: str, t_index: int) -> Trace:
    """The Trace of ``data[t_index]`` (also used by the streaming reader, one entry at a time)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("spans"), list):
        raise InputFileError(f"{source}: data[{t_index}] is not a Jaeger trace (no 'spans' list)")
    processes = {
        pid: {"service.name": p.get("serviceName"), **_tags(p.get("tags"))}
        for pid, p in (entry.get("processes") or {}).items()
        if isinstance(p, dict)
    }
    spans = [_span(raw, processes, source, t_index, s_index) for s_index, raw in enumerate(entry["spans"])]
    trace_id = entry.get("traceID") or (spans[0].trace_id if spans else "")
    return Trace(trace_id=trace_id, spans=spans, source=source)


def _span(raw: Any, processes: dict[str, dict[str, Any]], source: str, t: int, s: int) -> Span:
    # Run for every span of every trace: the common case (string ids, integer times) is checked first.
    if not isinstance(raw, dict):
        raise InputFileError(f"{source}: data[{t}].spans[{s}] is not an object")
    trace_id: Any = raw.get("traceID")
    span_id: Any = raw.get("spanID")
    name: Any = raw.get("operationName")
    if not (trace_id and span_id and name and isinstance(trace_id, str) and isinstance(span_id, str)
            and isinstance(name, str)):
        for key, value in (("traceID", trace_id), ("spanID", span_id), ("operationName", name)):
            if not value or not isinstance(value, str):
                raise InputFileError(f"{source}: data[{t}].spans[{s}] has no '{key}'")
    start_us, duration_us = raw.get("startTime", 0), raw.get("duration", 0)
    if type(start_us) is not int or type(duration_us) is not int:  # exactly int: a bool is not a time
        try:
            start_us, duration_us = int(start_us), int(duration_us)
        except (TypeError, ValueError):
            raise InputFileError(f"{source}: data[{t}].spans[{s}] ({name}) has a non-numeric "
                                 "startTime/duration") from None
    parent = None
    for ref in raw.get("references") or ():
        if isinstance(ref, dict) and ref.get("spanID") and ref.get("refType", "CHILD_OF") in ("CHILD_OF", "FOLLOWS_FROM"):
            parent = ref["spanID"]
            break
    parent = parent or raw.get("parentSpanID") or None
    attributes = _tags(raw.get("tags"))
    status = attributes.get("otel.status_code")
    if status is None and attributes.get("error") is True:
        status = "ERROR"
    events = []
    for log in raw.get("logs") or ():
        fields = _tags(log.get("fields"))
        event = fields.pop("event", None) or fields.pop("message", None) or "log"
        events.append(SpanEvent(name=str(event), time_ns=int(log.get("timestamp", 0)) * 1000, attributes=fields))
    # Positional: keywords cost twice as much, on every span of every trace (the order of ``Span``'s fields).
    return Span(trace_id, span_id, name, parent, start_us * 1000, (start_us + duration_us) * 1000, attributes, events,
                processes.get(raw.get("processID", ""), {}), attributes.get("otel.scope.name"),
                attributes.get("span.kind"), str(status).upper() if status else None,
                attributes.get("otel.status_description"))


class JaegerJsonFormat(TraceFileFormat):
    """Jaeger JSON (``{"data": [...]}``, the Jaeger UI/API export)."""

    name = "jaeger-json"

    def read(self, document: Any, source: str) -> Iterator[Trace]:
        return read_jaeger(document, source)
