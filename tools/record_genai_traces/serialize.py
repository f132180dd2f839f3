"""Serialise recorded OpenTelemetry data as OTLP JSON and Jaeger JSON.

OTLP JSON is produced with the official protobuf encoders
(``opentelemetry.exporter.otlp.proto.common``) and ``google.protobuf.json_format``,
then adjusted for the two places where the OTLP/JSON encoding deviates from the
canonical proto3 JSON mapping (see the OTLP specification, "JSON Protobuf Encoding"):

* ``traceId`` / ``spanId`` / ``parentSpanId`` are lowercase hex strings, not base64;
* enum values (``kind``, ``status.code``, ``severityNumber``) are integers.

Jaeger JSON (the ``/api/traces`` format of the Jaeger query service and UI) is derived
from the OTLP JSON with the same mapping as Jaeger's OTLP receiver / the collector's
``pkg/translator/jaeger``:

* ``service.name`` resource attribute -> ``process.serviceName``; other resource
  attributes -> process tags;
* span attributes -> tags (arrays / maps are rendered as JSON strings);
* instrumentation scope -> ``otel.scope.name`` / ``otel.scope.version`` tags;
* span kind -> ``span.kind`` tag (``client``, ``server``, ``internal``, ...);
* status -> ``otel.status_code`` (``OK`` / ``ERROR``), ``otel.status_description`` and
  ``error=true`` for errors;
* span events -> logs, the event name in an ``event`` field;
* parent -> ``CHILD_OF`` reference, links -> ``FOLLOWS_FROM`` references.
"""

from __future__ import annotations

import base64
import json
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from google.protobuf import json_format

_ID_KEYS = {"traceId", "spanId", "parentSpanId"}


def _b64_ids_to_hex(obj: Any) -> Any:
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k in _ID_KEYS and isinstance(v, str):
                out[k] = base64.b64decode(v).hex()
            else:
                out[k] = _b64_ids_to_hex(v)
        return out
    if isinstance(obj, list):
        return [_b64_ids_to_hex(v) for v in obj]
    return obj


def _message_to_otlp_json(message: Any) -> dict[str, Any]:
    as_dict = json_format.MessageToDict(message, use_integers_for_enums=True)
    return _b64_ids_to_hex(as_dict)


def spans_to_otlp_json(spans: Sequence[Any]) -> dict[str, Any]:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    spans = sorted(spans, key=lambda s: (s.start_time or 0, s.context.span_id))
    doc = _message_to_otlp_json(encode_spans(spans))
    doc.setdefault("resourceSpans", [])
    return doc


def logs_to_otlp_json(records: Sequence[Any]) -> dict[str, Any]:
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

    doc = _message_to_otlp_json(encode_logs(list(records)))
    doc.setdefault("resourceLogs", [])
    return doc


# --------------------------------------------------------------------------- Jaeger

_SPAN_KIND = {0: None, 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
_STATUS = {1: "OK", 2: "ERROR"}


def _any_value_to_python(value: dict[str, Any]) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "bytesValue" in value:
        return value["bytesValue"]
    if "arrayValue" in value:
        return [_any_value_to_python(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return {kv["key"]: _any_value_to_python(kv.get("value", {})) for kv in value["kvlistValue"].get("values", [])}
    return None


def _tag(key: str, value: dict[str, Any]) -> dict[str, Any]:
    """One OTLP attribute as a Jaeger tag (type names as in Jaeger's JSON model)."""
    if "stringValue" in value:
        return {"key": key, "type": "string", "value": value["stringValue"]}
    if "boolValue" in value:
        return {"key": key, "type": "bool", "value": value["boolValue"]}
    if "intValue" in value:
        return {"key": key, "type": "int64", "value": int(value["intValue"])}
    if "doubleValue" in value:
        return {"key": key, "type": "float64", "value": float(value["doubleValue"])}
    if "bytesValue" in value:
        return {"key": key, "type": "binary", "value": value["bytesValue"]}
    # Arrays and maps: the translator stores their JSON rendering as a string tag.
    rendered = json.dumps(_any_value_to_python(value), ensure_ascii=False, separators=(",", ":"))
    return {"key": key, "type": "string", "value": rendered}


def _tags(attributes: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [_tag(a["key"], a.get("value", {})) for a in attributes]


def otlp_to_jaeger(otlp: dict[str, Any]) -> dict[str, Any]:
    traces: OrderedDict[str, dict[str, Any]] = OrderedDict()
    for rs in otlp.get("resourceSpans", []):
        resource_attrs = rs.get("resource", {}).get("attributes", [])
        service_name = "unknown_service"
        process_tags = []
        for attr in resource_attrs:
            if attr["key"] == "service.name":
                service_name = _any_value_to_python(attr.get("value", {}))
            else:
                process_tags.append(_tag(attr["key"], attr.get("value", {})))
        process = {"serviceName": service_name, "tags": process_tags}
        for ss in rs.get("scopeSpans", []):
            scope = ss.get("scope", {})
            for span in ss.get("spans", []):
                trace_id = span["traceId"]
                entry = traces.setdefault(trace_id, {"traceID": trace_id, "spans": [], "processes": OrderedDict()})
                process_id = None
                for pid, existing in entry["processes"].items():
                    if existing == process:
                        process_id = pid
                if process_id is None:
                    process_id = f"p{len(entry['processes']) + 1}"
                    entry["processes"][process_id] = process
                entry["spans"].append(_span_to_jaeger(span, scope, process_id))
    data = []
    for entry in traces.values():
        entry["spans"].sort(key=lambda s: (s["startTime"], s["spanID"]))
        data.append({"traceID": entry["traceID"], "spans": entry["spans"],
                     "processes": dict(entry["processes"]), "warnings": None})
    return {"data": data, "total": 0, "limit": 0, "offset": 0, "errors": None}


def _span_to_jaeger(span: dict[str, Any], scope: dict[str, Any], process_id: str) -> dict[str, Any]:
    start = int(span.get("startTimeUnixNano", 0))
    end = int(span.get("endTimeUnixNano", 0))
    references = []
    if span.get("parentSpanId"):
        references.append({"refType": "CHILD_OF", "traceID": span["traceId"], "spanID": span["parentSpanId"]})
    for link in span.get("links", []):
        references.append({"refType": "FOLLOWS_FROM", "traceID": link["traceId"], "spanID": link["spanId"]})

    tags = _tags(span.get("attributes", []))
    if scope.get("name"):
        tags.append({"key": "otel.scope.name", "type": "string", "value": scope["name"]})
    if scope.get("version"):
        tags.append({"key": "otel.scope.version", "type": "string", "value": scope["version"]})
    kind = _SPAN_KIND.get(int(span.get("kind", 0)))
    if kind:
        tags.append({"key": "span.kind", "type": "string", "value": kind})
    status = span.get("status", {})
    code = _STATUS.get(int(status.get("code", 0)))
    if code:
        tags.append({"key": "otel.status_code", "type": "string", "value": code})
    if code == "ERROR":
        tags.append({"key": "error", "type": "bool", "value": True})
    if status.get("message"):
        tags.append({"key": "otel.status_description", "type": "string", "value": status["message"]})
    if span.get("traceState"):
        tags.append({"key": "w3c.tracestate", "type": "string", "value": span["traceState"]})
    if span.get("droppedAttributesCount"):
        tags.append({"key": "otel.dropped_attributes_count", "type": "int64",
                     "value": int(span["droppedAttributesCount"])})

    logs = []
    for event in span.get("events", []):
        fields = _tags(event.get("attributes", []))
        if event.get("name"):
            fields.append({"key": "event", "type": "string", "value": event["name"]})
        logs.append({"timestamp": int(event.get("timeUnixNano", 0)) // 1000, "fields": fields})

    return {
        "traceID": span["traceId"],
        "spanID": span["spanId"],
        "flags": int(span.get("flags", 1)) & 0xFF or 1,
        "operationName": span.get("name", ""),
        "references": references,
        "startTime": start // 1000,
        "duration": max(0, end - start) // 1000,
        "tags": tags,
        "logs": logs,
        "processID": process_id,
        "warnings": None,
    }
