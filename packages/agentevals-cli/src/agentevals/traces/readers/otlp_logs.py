"""OTLP JSON log records (``{"resourceLogs": …}``) → span events, attached to their span by span id.

GenAI instrumentations that emit content through the OTel Logs API (semconv 1.28 to 1.36 events such as
``gen_ai.user.message`` / ``gen_ai.choice``, or ``gen_ai.client.inference.operation.details``) leave the
spans without messages. Jaeger cannot hold log records, so they only exist in OTLP log exports::

    events = read_log_events("run.otlp-logs.json")
    for trace in read_traces("run.otlp.json"):
        attach_log_events(trace, events)
        converted = convert_trace(trace)

Each record becomes a ``SpanEvent`` named by its ``eventName`` (or ``event.name`` attribute) whose
attributes are the record's attributes plus, when the body is a map, the body's keys (otherwise the body
under ``body``): the same shape a span event of that name has.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...core._files import regular_path
from ...errors import InputFileError
from ..model import SpanEvent, Trace
from ._json import load_json_documents
from .otlp import attribute_value, hex_id, key_values

__all__ = ["LogEvents", "add_log_events", "attach_log_events", "is_logs_document", "is_logs_file", "read_log_events"]


LogEvents = dict[tuple[str, str], list[SpanEvent]]

_LOGS_HEAD = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"(?:resourceLogs|resource_logs)"')


def is_logs_document(document: Any) -> bool:
    """A logs-only document: ``resourceLogs`` and no spans (agentevals 0.11's session exports carry both
    keys, ``"resourceLogs": []`` included; they are trace files)."""
    return (isinstance(document, dict) and ("resourceLogs" in document or "resource_logs" in document)
            and not (document.get("resourceSpans") or document.get("resource_spans")))


def is_logs_file(path: str | Path) -> bool:
    """Whether ``path`` starts like an OTLP logs export (``{"resourceLogs": …``), from its first bytes only.

    A sniff: False for unreadable files and for logs files whose first key is another one."""
    try:
        with open(regular_path(path, json=True), "rb") as f:  # a pipe is copied first: the sniff takes nothing
            return bool(_LOGS_HEAD.match(f.read(4096)))
    except (OSError, InputFileError):
        return False


def read_log_events(path: str | Path) -> LogEvents:
    """(trace id, span id) → the log records linked to that span, as events in time order."""
    out: LogEvents = {}
    for document in load_json_documents(Path(path)):
        add_log_events(document, str(path), out)
    return out


def add_log_events(document: Any, source: str, out: LogEvents) -> None:
    """Add the records of one ``{"resourceLogs": …}`` document to ``out`` (kept in time order)."""
    batches = (document.get("resourceLogs") or document.get("resource_logs")) if isinstance(document, dict) else None
    if not isinstance(batches, list):
        raise InputFileError(f"{source}: not an OTLP logs file: expected {{\"resourceLogs\": [...]}}")
    for batch in batches:
        for scope_logs in batch.get("scopeLogs") or batch.get("scope_logs") or ():
            for record in scope_logs.get("logRecords") or scope_logs.get("log_records") or ():
                key = (hex_id(record.get("traceId") or record.get("trace_id")),
                       hex_id(record.get("spanId") or record.get("span_id")))
                if all(key):
                    events = out.setdefault(key, [])
                    events.append(_event(record))
                    events.sort(key=lambda e: e.time_ns)


def _event(record: dict[str, Any]) -> SpanEvent:
    attributes = key_values(record.get("attributes"))
    body = attribute_value(record.get("body"))
    name = record.get("eventName") or record.get("event_name") or attributes.pop("event.name", None) or "log"
    if isinstance(body, dict):
        attributes.update(body)
    elif body not in (None, ""):
        attributes["body"] = body
    time_ns = record.get("timeUnixNano") or record.get("observedTimeUnixNano") or record.get("time_unix_nano") or 0
    return SpanEvent(name=str(name), time_ns=int(time_ns), attributes=attributes)


def attach_log_events(trace: Trace, events: LogEvents) -> int:
    """Append the log events of each span of ``trace`` to ``span.events``; returns how many were attached."""
    attached = 0
    for span in trace.spans:
        found = events.get((span.trace_id, span.span_id))
        if found:
            span.events = sorted(span.events + found, key=lambda e: e.time_ns)
            attached += len(found)
    return attached
