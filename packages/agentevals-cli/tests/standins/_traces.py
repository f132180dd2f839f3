"""Trace data for the stand-ins, BUILT FROM the real shipped payloads: Jaeger JSON traces (and their OTLP
form, converted the way Jaeger's query service does for API v3) or OTLP/Tempo exports, with fresh ids and
times moved into the query window.

A ``TraceBank`` serves ``count`` traces made lazily from its templates: trace ``i`` is template
``i % len(templates)`` starting ``i * spacing`` seconds before ``newest`` (trace 0 is the newest). Nothing
is built until a search or fetch asks for it, so 100,000 traces cost no memory.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional, Union

__all__ = ["Template", "TraceBank", "jaeger_to_otlp", "load_templates"]

_KIND = {"internal": 1, "server": 2, "client": 3, "producer": 4, "consumer": 5}
_DROPPED = {"span.kind", "otel.scope.name", "otel.scope.version", "otel.library.name", "otel.library.version",
            "otel.status_code", "otel.status_description", "w3c.tracestate", "internal.span.format"}
"""Jaeger tags the v3 translator turns into OTLP fields (kind, scope, status, trace state) or drops."""
SESSION_KEYS = ("gen_ai.conversation.id", "gcp.vertex.agent.session_id")
"""Attributes holding the conversation id: a generated trace gets its own (``session-I``), else every copy
would join one conversation of N turns."""


def _value(tag: dict[str, Any]) -> dict[str, Any]:
    kind, value = tag.get("type", "string"), tag.get("value")
    if kind == "bool":
        return {"boolValue": value if isinstance(value, bool) else str(value).lower() == "true"}
    if kind == "int64":
        return {"intValue": str(int(value))}
    if kind == "float64":
        return {"doubleValue": float(value)}
    if kind == "binary":
        return {"bytesValue": value if isinstance(value, str) else base64.b64encode(bytes(value)).decode()}
    return {"stringValue": str(value)}


def _attributes(tags: Any) -> list[dict[str, Any]]:
    return [{"key": t["key"], "value": _value(t)} for t in tags or () if t.get("key") not in _DROPPED]


def jaeger_to_otlp(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """One Jaeger JSON trace → OTLP JSON ``resourceSpans``, as Jaeger's v3 API renders it: one resource per
    process (``service.name`` + process tags), one scope per ``otel.scope.name``; ``span.kind`` → ``kind``
    (an int, as the query service's JSON marshaler writes enums), ``otel.status_code``/``error`` →
    ``status``, the first CHILD_OF/FOLLOWS_FROM reference → ``parentSpanId``, logs → events (``event`` →
    the event name), times in nanoseconds as strings, ids in hex."""
    resources: dict[str, dict[tuple[str, str], list[dict[str, Any]]]] = {}
    for span in trace["spans"]:
        tags = {t["key"]: t.get("value") for t in span.get("tags") or ()}
        scope = (str(tags.get("otel.scope.name") or tags.get("otel.library.name") or ""),
                 str(tags.get("otel.scope.version") or tags.get("otel.library.version") or ""))
        attributes = _attributes(span.get("tags"))
        status: dict[str, Any] = {}
        code = str(tags.get("otel.status_code") or "").upper()
        if code in ("OK", "ERROR"):
            status["code"] = 1 if code == "OK" else 2
        elif tags.get("error") in (True, "true"):
            status["code"] = 2
            attributes = [a for a in attributes if a["key"] != "error"]
        if tags.get("otel.status_description"):
            status["message"] = str(tags["otel.status_description"])
        parent = next((r["spanID"] for r in span.get("references") or ()
                       if r.get("refType", "CHILD_OF") in ("CHILD_OF", "FOLLOWS_FROM") and r.get("spanID")), "")
        start_ns = int(span["startTime"]) * 1000
        events = []
        for log in span.get("logs") or ():
            fields = log.get("fields") or []
            name = next((str(f.get("value")) for f in fields if f.get("key") == "event"), "")
            events.append({"timeUnixNano": str(int(log["timestamp"]) * 1000), "name": name,
                           "attributes": _attributes([f for f in fields if f.get("key") != "event"])})
        out: dict[str, Any] = {"traceId": span["traceID"], "spanId": span["spanID"], "parentSpanId": parent,
                               "name": span["operationName"], "kind": _KIND.get(str(tags.get("span.kind")), 0),
                               "startTimeUnixNano": str(start_ns),
                               "endTimeUnixNano": str(start_ns + int(span.get("duration", 0)) * 1000),
                               "attributes": attributes, "status": status}
        if events:
            out["events"] = events
        resources.setdefault(span.get("processID", ""), {}).setdefault(scope, []).append(out)
    batches = []
    for pid, scopes in resources.items():
        process = (trace.get("processes") or {}).get(pid) or {}
        resource = [{"key": "service.name", "value": {"stringValue": process.get("serviceName", "")}},
                    *_attributes(process.get("tags"))]
        batches.append({"resource": {"attributes": resource},
                        "scopeSpans": [{"scope": {"name": n, "version": v} if n else {}, "spans": spans}
                                       for (n, v), spans in scopes.items()]})
    return batches


def _otlp_v1(batches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An old Tempo export (``instrumentationLibrarySpans``) → today's OTLP JSON names (``scopeSpans``),
    as Tempo's v2 API answers."""
    out = []
    for batch in batches:
        batch = dict(batch)
        if "instrumentationLibrarySpans" in batch:
            batch["scopeSpans"] = [{"scope": s.get("instrumentationLibrary") or {}, "spans": s.get("spans", [])}
                                   for s in batch.pop("instrumentationLibrarySpans")]
        out.append(batch)
    return out


def _kv(items: Any) -> dict[str, str]:
    out = {}
    for a in items or ():
        (_, v), *_ = (a.get("value") or {"stringValue": ""}).items()
        out[a["key"]] = str(v).lower() if isinstance(v, bool) else str(v)
    return out


@dataclass
class _SpanInfo:
    service: str
    name: str
    offset_ns: int
    """Start relative to the trace's start."""
    attributes: dict[str, str]
    """Span and resource attributes as strings (how Jaeger and TraceQL compare them)."""


class Template:
    """One real trace: its Jaeger JSON (when it came as Jaeger) and its OTLP ``resourceSpans``."""

    def __init__(self, trace_id: str, otlp: list[dict[str, Any]], jaeger: Optional[dict[str, Any]] = None) -> None:
        self.trace_id = trace_id
        self.otlp = otlp
        self.jaeger = jaeger
        spans = [(batch, s) for batch in otlp for scope in batch.get("scopeSpans", []) for s in scope["spans"]]
        self.start_ns = min(int(s["startTimeUnixNano"]) for _, s in spans)
        self.end_ns = max(int(s["endTimeUnixNano"]) for _, s in spans)
        self.spans = []
        for batch, s in spans:
            resource = _kv((batch.get("resource") or {}).get("attributes"))
            self.spans.append(_SpanInfo(service=resource.get("service.name", ""), name=s["name"],
                                        offset_ns=int(s["startTimeUnixNano"]) - self.start_ns,
                                        attributes={**resource, **_kv(s.get("attributes"))}))
        root = next((s for _, s in spans if not s.get("parentSpanId")), spans[0][1])
        root_batch = next(b for b, s in spans if s is root)
        self.root_service = _kv((root_batch.get("resource") or {}).get("attributes")).get("service.name", "")
        self.root_name = root["name"]

    def jaeger_at(self, trace_id: str, delta_ns: int, session: Optional[str] = None) -> dict[str, Any]:
        assert self.jaeger is not None, "an OTLP template has no Jaeger JSON"
        trace = copy.deepcopy(self.jaeger)
        delta_us = delta_ns // 1000
        trace["traceID"] = trace_id
        for span in trace["spans"]:
            span["traceID"] = trace_id
            span["startTime"] = int(span["startTime"]) + delta_us
            for ref in span.get("references") or ():
                if ref.get("traceID") == self.trace_id:
                    ref["traceID"] = trace_id
            for log in span.get("logs") or ():
                log["timestamp"] = int(log["timestamp"]) + delta_us
            for tag in span.get("tags") or () if session else ():
                if tag.get("key") in SESSION_KEYS:
                    tag["value"] = session
        return trace

    def otlp_at(self, trace_id: str, delta_ns: int, session: Optional[str] = None) -> list[dict[str, Any]]:
        batches = copy.deepcopy(self.otlp)
        for batch in batches:
            for scope in batch.get("scopeSpans", []):
                for span in scope["spans"]:
                    span["traceId"] = trace_id
                    for key in ("startTimeUnixNano", "endTimeUnixNano"):
                        span[key] = str(int(span[key]) + delta_ns)
                    for event in span.get("events") or ():
                        event["timeUnixNano"] = str(int(event["timeUnixNano"]) + delta_ns)
                    for attribute in span.get("attributes") or () if session else ():
                        if attribute.get("key") in SESSION_KEYS:
                            attribute["value"] = {"stringValue": session}
        return batches


def load_templates(paths: Sequence[Union[str, Path]]) -> list[Template]:
    """Jaeger JSON files (``{"data": [...]}``) and OTLP/Tempo exports (``resourceSpans``/``batches``)."""
    out: list[Template] = []
    for path in paths:
        document = json.loads(Path(path).read_text())
        if "data" in document:
            out.extend(Template(t["traceID"], jaeger_to_otlp(t), t) for t in document["data"])
            continue
        batches = _otlp_v1(document.get("resourceSpans") or document.get("batches") or [])
        by_trace: dict[str, list[dict[str, Any]]] = {}
        for batch in batches:
            for scope in batch.get("scopeSpans", []):
                for span in scope["spans"]:
                    kept = by_trace.setdefault(span["traceId"], [])
                    if not kept or kept[-1]["_of"] is not batch:
                        kept.append({"_of": batch, "resource": batch.get("resource", {}), "scopeSpans": []})
                    kept[-1]["scopeSpans"].append({"scope": scope.get("scope", {}), "spans": [span]})
        for trace_id, kept in by_trace.items():
            out.append(Template(trace_id, [{k: v for k, v in b.items() if k != "_of"} for b in kept]))
    return out


class TraceBank:
    """``count`` traces made from ``templates`` (default: one of each, keeping their own ids), the newest
    starting at ``newest`` (default: now minus one minute), each ``spacing`` seconds older than the one
    before. ``fresh_ids``: trace ``i`` gets id ``ae…i`` and conversation ``session-i`` (always when
    ``count`` exceeds the templates)."""

    def __init__(self, templates: Sequence[Template], count: Optional[int] = None, *, spacing: float = 30.0,
                 newest: Optional[datetime] = None, fresh_ids: bool = False) -> None:
        self.templates = list(templates)
        self.count = len(self.templates) if count is None else count
        self.spacing_ns = int(spacing * 1e9)
        moment = newest or datetime.now(timezone.utc).replace(microsecond=0)
        self.newest_ns = int(moment.timestamp()) * 10**9 - 60 * 10**9 * (newest is None)
        self.fresh_ids = fresh_ids or self.count > len(self.templates)
        self._by_id = {self.trace_id(i): i for i in range(min(self.count, len(self.templates)))}

    def template(self, i: int) -> Template:
        return self.templates[i % len(self.templates)]

    def trace_id(self, i: int) -> str:
        return f"ae{i:030x}" if self.fresh_ids else self.template(i).trace_id

    def index(self, trace_id: str) -> Optional[int]:
        """The index of ``trace_id`` (``None``: not in the bank)."""
        if trace_id.lower() in self._by_id:
            return self._by_id[trace_id.lower()]
        if self.fresh_ids and len(trace_id) == 32 and trace_id.lower().startswith("ae"):
            try:
                i = int(trace_id[2:], 16)
            except ValueError:
                return None
            return i if 0 <= i < self.count else None
        return None

    def start_ns(self, i: int) -> int:
        return self.newest_ns - i * self.spacing_ns

    def delta_ns(self, i: int) -> int:
        return self.start_ns(i) - self.template(i).start_ns

    def session(self, i: int) -> Optional[str]:
        return f"session-{i}" if self.fresh_ids else None

    def jaeger(self, i: int) -> dict[str, Any]:
        return self.template(i).jaeger_at(self.trace_id(i), self.delta_ns(i), self.session(i))

    def otlp(self, i: int) -> list[dict[str, Any]]:
        return self.template(i).otlp_at(self.trace_id(i), self.delta_ns(i), self.session(i))

    def duration_ns(self, i: int) -> int:
        t = self.template(i)
        return t.end_ns - t.start_ns

    def search(self, min_ns: int, max_ns: int, *, service: Optional[str] = None, operation: Optional[str] = None,
               attributes: Optional[dict[str, str]] = None, span_in_window: bool = True) -> Iterator[int]:
        """Indices of the matching traces, newest first. ``span_in_window``: a matching span must start in
        the window (Jaeger); otherwise the trace must overlap it (Tempo)."""
        if self.count == 0 or max_ns < min_ns:
            return
        longest = max(t.end_ns - t.start_ns for t in self.templates)
        # trace i starts at newest - i*spacing: the first i whose trace can reach back to max_ns, the last
        # whose start is not before min_ns - longest
        first = max(0, -(-(self.newest_ns - max_ns) // self.spacing_ns) - 1) if self.spacing_ns else 0
        last = self.count - 1 if not self.spacing_ns else min(self.count - 1, (self.newest_ns - min_ns + longest)
                                                              // self.spacing_ns + 1)
        for i in range(first, last + 1):
            start = self.start_ns(i)
            template = self.template(i)
            if not span_in_window:
                if start > max_ns or start + template.end_ns - template.start_ns < min_ns:
                    continue
            for span in template.spans:
                if service and span.service != service:
                    continue
                if operation and span.name != operation:
                    continue
                if attributes and any(span.attributes.get(k) != v for k, v in attributes.items()):
                    continue
                if span_in_window and not min_ns <= start + span.offset_ns <= max_ns:
                    continue
                yield i
                break

    def services(self) -> list[str]:
        return sorted({s.service for t in self.templates for s in t.spans})
