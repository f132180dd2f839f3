"""A loopback stand-in for Langfuse's public API (Langfuse cannot be installed here), following the
langfuse/langfuse sources as of v4.16.0 (August 2026):

- ``GET /api/public/v2/observations`` (web/src/pages/api/public/v2/observations/index.ts): Basic auth,
  ``limit`` 0..1000 (default 50), ``cursor`` = base64 of ``{"lastStartTimeTo", "lastTraceId", "lastId"}``,
  order ``startTime DESC, hash(traceId) DESC, id DESC``, ``meta.cursor`` only when there is more, field
  groups ``fields`` (default ``core,basic``), filters ``traceId``, ``sessionId``, ``name``, ``type``,
  ``environment``, ``isRootObservation``, ``fromStartTime``/``toStartTime``; ``input``/``output`` as raw
  strings; metadata values truncated unless named in ``expandMetadata``; a 404 when the server is not in
  Langfuse v4 mode.
- ``GET /api/public/traces`` and ``GET /api/public/observations`` (v1, page-based: ``page``, ``limit``
  1..100, ``meta.totalPages``), which a Langfuse v3 server (no v2 observations API) answers.
- ``POST /api/public/scores`` (upsert by ``id``) and ``GET /api/public/v2/scores`` (page-based).
- Errors as ``withMiddlewares`` writes them: ``{"message": …, "error": …}``; 401 ``{"message": …}``.

The data are built from real trace files: a Jaeger export is turned into the OTLP a client sends
(``jaeger_to_otlp``), then into observations the way Langfuse's OpenTelemetry ingestion does
(``ingest_otlp``, after packages/shared/src/server/otel/OtelIngestionProcessor.ts: name, type, model, usage,
input/output extraction for the frameworks of the shipped traces, ``metadata.attributes`` with the input/output
keys removed and non-string values JSON-stringified, ``metadata.resourceAttributes``, ``metadata.scope``).

Example::

    with LangfuseStandIn.from_files(["examples/traces/helm.json"]) as lf:
        os.environ.update(LANGFUSE_PUBLIC_KEY=lf.public_key, LANGFUSE_SECRET_KEY=lf.secret_key)
        uri = f"langfuse+{lf.url}?since=3650d"
"""

from __future__ import annotations

import base64
import json
import threading
import time
import zlib
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qs, urlsplit

__all__ = ["LangfuseStandIn", "ingest_otlp", "jaeger_to_otlp"]

API_VERSION = "langfuse v4.16.0 public API (v2 observations, scores)"
METADATA_CAP = 200
"""Characters of a metadata value served when its key is not in ``expandMetadata`` (events_core)."""

_STATUS = {"OK": 1, "ERROR": 2}
_KIND = {"internal": 1, "server": 2, "client": 3, "producer": 4, "consumer": 5}
_IO_KEYS = {
    "langfuse.trace.input", "langfuse.trace.output", "langfuse.observation.input", "langfuse.observation.output",
    "gcp.vertex.agent.llm_request", "gcp.vertex.agent.llm_response", "gcp.vertex.agent.tool_call_args",
    "gcp.vertex.agent.tool_response", "traceloop.entity.input", "traceloop.entity.output", "input.value",
    "output.value", "input", "output", "gen_ai.input.messages", "gen_ai.output.messages",
    "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.system_instructions", "mlflow.spanInputs",
    "mlflow.spanOutputs",
}
"""A subset of ``potentialInputOutputKeys`` in ``extractInputAndOutput``: those any shipped trace can carry."""
_IO_PREFIXES = ("gen_ai.prompt", "gen_ai.completion", "llm.input_messages", "llm.output_messages",
                "langfuse.trace.metadata", "langfuse.observation.metadata")
_GENERATION_OPS = {"chat", "completion", "text_completion", "generate_content", "generate"}


# --- a Jaeger export → the OTLP JSON its spans were sent as -------------------------------------------

def _any(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def jaeger_to_otlp(document: Any) -> list[dict[str, Any]]:
    """A Jaeger JSON export → OTLP ``resourceSpans`` (what Jaeger's own OTLP translation does: the
    ``otel.scope.*``, ``span.kind`` and ``otel.status_*`` tags go back to the scope, kind and status)."""
    out: list[dict[str, Any]] = []
    typed = {"int64": int, "float64": float, "bool": lambda v: str(v).lower() == "true"}
    for trace in document["data"]:
        batches: dict[tuple[str, str, str], dict[str, Any]] = {}
        for span in trace["spans"]:
            tags = {t["key"]: typed.get(t.get("type"), lambda v: v)(t["value"]) for t in span.get("tags", [])}
            process = trace["processes"][span["processID"]]
            scope = (span["processID"], str(tags.pop("otel.scope.name", "")), str(tags.pop("otel.scope.version", "")))
            kind = _KIND.get(str(tags.pop("span.kind", "")), 0)
            status = {"code": _STATUS.get(str(tags.pop("otel.status_code", "")), 0)}
            if "otel.status_description" in tags:
                status["message"] = tags.pop("otel.status_description")
            batch = batches.setdefault(scope, {"resource": {"attributes": [
                {"key": "service.name", "value": _any(process["serviceName"])},
                *({"key": t["key"], "value": _any(t["value"])} for t in process.get("tags", []))]},
                "scopeSpans": [{"scope": {"name": scope[1], "version": scope[2]}, "spans": []}]})
            parent = next((r["spanID"] for r in span.get("references", []) if r.get("refType") == "CHILD_OF"), None)
            start_ns = int(span["startTime"]) * 1000
            otlp = {"traceId": span["traceID"], "spanId": span["spanID"], "name": span["operationName"],
                    "kind": kind, "startTimeUnixNano": str(start_ns),
                    "endTimeUnixNano": str(start_ns + int(span["duration"]) * 1000),
                    "attributes": [{"key": k, "value": _any(v)} for k, v in tags.items()], "status": status,
                    "events": [{"timeUnixNano": str(int(log["timestamp"]) * 1000),
                                "name": str(next((f["value"] for f in log.get("fields", []) if f["key"] == "event"), "log")),
                                "attributes": [{"key": f["key"], "value": _any(f["value"])}
                                               for f in log.get("fields", []) if f["key"] != "event"]}
                               for log in span.get("logs", [])]}
            if parent:
                otlp["parentSpanId"] = parent
            batch["scopeSpans"][0]["spans"].append(otlp)
        out.extend(batches.values())
    return out


# --- OTLP → Langfuse observations (OtelIngestionProcessor) --------------------------------------------

def _plain(value: dict[str, Any]) -> Any:
    """``convertValueToPlainJavascript``."""
    if "stringValue" in value:
        return value["stringValue"]
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        return [_plain(v) for v in value["arrayValue"].get("values", [])]
    if "intValue" in value:
        return int(value["intValue"])
    return json.dumps(value)


def _attrs(items: Iterable[dict[str, Any]]) -> dict[str, Any]:
    return {a["key"]: _plain(a["value"]) for a in items or ()}


def _iso(nanos: str) -> str:
    """``convertNanoTimestampToISO``: millisecond precision."""
    millis = int(nanos) // 1_000_000
    return datetime.fromtimestamp(millis / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


def _nest(attributes: dict[str, Any], prefix: str) -> Any:
    """``convertKeyPathToNestedObject``: ``gen_ai.prompt.0.role`` … → ``[{"role": …}]`` (a level whose keys
    are indexes is a list)."""
    tree: dict[str, Any] = {}
    for key, value in attributes.items():
        if key.startswith(prefix + "."):
            *path, last = key[len(prefix) + 1:].split(".")
            node = tree
            for part in path:
                node = node.setdefault(part, {})
            node[last] = value

    def listify(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        if node and all(k.isdigit() for k in node):
            items: list[Any] = [None] * (max(int(k) for k in node) + 1)
            for k, v in node.items():
                items[int(k)] = listify(v)
            return items
        return {k: listify(v) for k, v in node.items()}

    return listify(tree)


def _input_output(attributes: dict[str, Any]) -> tuple[Any, Any]:
    """``extractInputAndOutput`` for the paths the shipped traces take (Langfuse, ADK, gen_ai.*, TraceLoop)."""
    value_in = attributes.get("langfuse.observation.input")
    value_out = attributes.get("langfuse.observation.output")
    if value_in is not None or value_out is not None:
        return value_in, value_out
    value_in, value_out = attributes.get("gcp.vertex.agent.llm_request"), attributes.get("gcp.vertex.agent.llm_response")
    if value_in == "{}" or not value_in:
        value_in = attributes.get("gcp.vertex.agent.tool_call_args")
    if value_out == "{}" or not value_out:
        value_out = attributes.get("gcp.vertex.agent.tool_response")
    if value_in or value_out:
        return value_in, value_out
    for key_in, key_out in (("mlflow.spanInputs", "mlflow.spanOutputs"), ("traceloop.entity.input", "traceloop.entity.output"),
                            ("input.value", "output.value"), ("input", "output")):
        if attributes.get(key_in) or attributes.get(key_out):
            return attributes.get(key_in), attributes.get(key_out)
    if any(k.startswith(("gen_ai.prompt", "gen_ai.completion")) for k in attributes):
        return _nest(attributes, "gen_ai.prompt"), _nest(attributes, "gen_ai.completion")
    if attributes.get("gen_ai.input.messages") or attributes.get("gen_ai.output.messages"):
        return attributes.get("gen_ai.input.messages"), attributes.get("gen_ai.output.messages")
    if attributes.get("gen_ai.tool.call.arguments") or attributes.get("gen_ai.tool.call.result"):
        return attributes.get("gen_ai.tool.call.arguments"), attributes.get("gen_ai.tool.call.result")
    return None, None


def _type(attributes: dict[str, Any]) -> str:
    """``ObservationTypeMapper`` (the mappers the shipped traces reach)."""
    explicit = attributes.get("langfuse.observation.type")
    if isinstance(explicit, str) and explicit.upper() in ("GENERATION", "AGENT", "TOOL", "SPAN", "EVENT", "CHAIN"):
        return explicit.upper()
    operation = attributes.get("gen_ai.operation.name")
    if operation in _GENERATION_OPS:
        return "GENERATION"
    if operation in ("invoke_agent", "create_agent"):
        return "AGENT"
    if operation == "execute_tool" or attributes.get("gen_ai.tool.name") or attributes.get("gen_ai.tool.call.id"):
        return "TOOL"
    if any(attributes.get(k) for k in ("gen_ai.request.model", "gen_ai.response.model")):
        return "GENERATION"
    return "SPAN"


def _model(attributes: dict[str, Any]) -> Optional[str]:
    for key in ("langfuse.observation.model.name", "gen_ai.response.model", "gen_ai.request.model",
                "llm.response.model", "llm.model_name", "model"):
        if attributes.get(key):
            return str(attributes[key])
    return None


def _usage(attributes: dict[str, Any]) -> dict[str, int]:
    usage: dict[str, int] = {}
    for key, names in (("input", ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")),
                       ("output", ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"))):
        value = next((attributes[n] for n in names if isinstance(attributes.get(n), (int, float))), None)
        if value is not None:
            usage[key] = int(value)
    if usage:
        usage["total"] = sum(usage.values())
    return usage


def _stored(value: Any) -> Optional[str]:
    """Input/output as stored (and served raw by v2): strings as they are, anything else as JSON."""
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


def ingest_otlp(resource_spans: Sequence[dict[str, Any]], project_id: str = "standin-project") -> list[dict[str, Any]]:
    """OTLP ``resourceSpans`` → Langfuse observations (the v2 API's shape, all field groups)."""
    observations: list[dict[str, Any]] = []
    sessions: dict[str, str] = {}
    for batch in resource_spans:
        resource = _attrs(batch.get("resource", {}).get("attributes", []))
        for scope_spans in batch.get("scopeSpans", []):
            scope = scope_spans.get("scope") or {}
            for span in scope_spans.get("spans", []):
                attributes = _attrs(span.get("attributes", []))
                value_in, value_out = _input_output(attributes)
                filtered = {k: (v if isinstance(v, str) else json.dumps(v)) for k, v in attributes.items()
                            if k not in _IO_KEYS and not k.startswith(_IO_PREFIXES)}
                kind = _type(attributes)
                name = str(attributes["gen_ai.tool.name"]) if attributes.get("gen_ai.tool.name") else span["name"]
                environment = next((str(src[k]) for k in ("langfuse.environment", "deployment.environment.name",
                                                           "deployment.environment")
                                    for src in (attributes, resource) if src.get(k)), "default")
                for key in ("langfuse.session.id", "session.id", "gen_ai.conversation.id"):
                    if attributes.get(key):
                        sessions.setdefault(span["traceId"], str(attributes[key]))
                        break
                status = span.get("status") or {}
                model = _model(attributes) if kind == "GENERATION" else None
                start, end = _iso(span["startTimeUnixNano"]), _iso(span["endTimeUnixNano"])
                observations.append({
                    "id": span["spanId"], "traceId": span["traceId"], "projectId": project_id,
                    "parentObservationId": span.get("parentSpanId") or None, "type": kind, "name": name,
                    "startTime": start, "endTime": end, "isRootObservation": not span.get("parentSpanId"),
                    "level": "ERROR" if status.get("code") == 2 else "DEFAULT",
                    "statusMessage": status.get("message"), "version": resource.get("service.version"),
                    "environment": environment, "userId": None, "sessionId": None, "bookmarked": False,
                    "public": False, "completionStartTime": None, "createdAt": end, "updatedAt": end,
                    "input": _stored(value_in), "output": _stored(value_out),
                    "metadata": {"attributes": filtered, "resourceAttributes": resource,
                                 "scope": {**scope, "attributes": _attrs(scope.get("attributes", []))}},
                    "providedModelName": model, "internalModelId": None, "modelParameters": {},
                    "usageDetails": _usage(attributes) if kind == "GENERATION" else {}, "costDetails": {},
                    "totalCost": 0, "usagePricingTierName": None, "promptId": None, "promptName": None,
                    "promptVersion": None, "modelId": None, "inputPrice": None, "outputPrice": None,
                    "totalPrice": None, "traceName": None, "tags": [], "release": None,
                })
    roots = {o["traceId"]: o["name"] for o in observations if o["isRootObservation"]}
    for o in observations:
        o["sessionId"] = sessions.get(o["traceId"])  # a trace-level property, denormalised onto its events
        o["traceName"] = roots.get(o["traceId"])
    return observations


# --- the HTTP server -----------------------------------------------------------------------------------

_GROUPS = {
    "core": ("id", "traceId", "startTime", "endTime", "projectId", "parentObservationId", "type"),
    "basic": ("name", "level", "statusMessage", "version", "environment", "bookmarked", "public", "userId",
              "sessionId", "isRootObservation"),
    "time": ("completionStartTime", "createdAt", "updatedAt"),
    "io": ("input", "output"),
    "metadata": ("metadata",),
    "model": ("providedModelName", "internalModelId", "modelParameters"),
    "usage": ("usageDetails", "costDetails", "totalCost", "usagePricingTierName"),
    "prompt": ("promptId", "promptName", "promptVersion"),
    "metrics": (),
    "trace_context": ("tags", "release", "traceName"),
}
_TYPES = {"GENERATION", "SPAN", "EVENT", "AGENT", "TOOL", "CHAIN", "RETRIEVER", "EVALUATOR", "EMBEDDING", "GUARDRAIL"}


class _Invalid(Exception):
    def __init__(self, issues: list[dict[str, Any]]) -> None:
        super().__init__("invalid")
        self.issues = issues


def _parse_time(text: str, path: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise _Invalid([{"code": "invalid_string", "validation": "datetime", "message": "Invalid datetime",
                         "path": [path]}]) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _order_key(o: dict[str, Any]) -> tuple[str, int, str]:
    # Langfuse orders by (start_time, xxHash32(trace_id), span_id) DESC; crc32 stands in for xxHash32.
    return (o["startTime"], zlib.crc32(str(o["traceId"]).encode()), o["id"])


class LangfuseStandIn:
    """The stand-in server on 127.0.0.1 (an OS-chosen port), serving ``observations``. Fault knobs:
    ``fail_times`` (that many 500s first), ``rate_limit_times`` (429 with ``Retry-After: retry_after``),
    ``hang_seconds`` (every request waits that long), ``v4_mode=False`` (the v2 API answers 404)."""

    def __init__(self, observations: list[dict[str, Any]], *, public_key: str = "pk-lf-standin",
                 secret_key: str = "sk-lf-standin") -> None:
        self.observations = observations
        self.public_key, self.secret_key = public_key, secret_key
        self.scores: dict[str, dict[str, Any]] = {}
        self.requests: list[tuple[str, str]] = []
        self.fail_times = 0
        self.rate_limit_times = 0
        self.retry_after = "1"
        self.hang_seconds = 0.0
        self.v4_mode = True
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @classmethod
    def from_files(cls, paths: Iterable[str | Path], **kwargs: Any) -> LangfuseStandIn:
        """Observations built from Jaeger JSON trace files, as Langfuse stores them after OTLP ingestion."""
        observations: list[dict[str, Any]] = []
        for path in paths:
            observations += ingest_otlp(jaeger_to_otlp(json.loads(Path(path).read_text())))
        return cls(observations, **kwargs)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> LangfuseStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _by_trace(self) -> dict[str, list[dict[str, Any]]]:
        """Observations by trace id (ClickHouse's primary key starts with the trace's; a scan of every
        observation per request would make large stand-ins slow, not different)."""
        if getattr(self, "_indexed", -1) != len(self.observations):
            index: dict[str, list[dict[str, Any]]] = {}
            for o in self.observations:
                index.setdefault(o["traceId"], []).append(o)
            self._index, self._indexed = index, len(self.observations)
        return self._index

    # -- endpoints

    def list_observations(self, query: dict[str, list[str]]) -> dict[str, Any]:
        one = {k: v[-1] for k, v in query.items() if v}
        issues = []
        try:
            limit = int(one.get("limit", "50"))
            if not 0 <= limit <= 1000:
                raise ValueError
        except ValueError:
            issues.append({"code": "too_big", "maximum": 1000, "message": "Number must be less than or equal to 1000",
                           "path": ["limit"]})
            limit = 50
        kind = one.get("type")
        if kind is not None and kind not in _TYPES:
            issues.append({"code": "invalid_enum_value", "options": sorted(_TYPES), "path": ["type"],
                           "message": f"Invalid enum value. Expected one of {sorted(_TYPES)}, received '{kind}'"})
        if issues:
            raise _Invalid(issues)
        start = _parse_time(one["fromStartTime"], "fromStartTime") if "fromStartTime" in one else None
        end = _parse_time(one["toStartTime"], "toStartTime") if "toStartTime" in one else None
        fields = [f for f in (one.get("fields") or "core,basic").split(",") if f.strip() in _GROUPS] or ["core", "basic"]
        expand = set(filter(None, (one.get("expandMetadata") or "").split(",")))
        cursor = None
        if "cursor" in one:
            try:
                cursor = json.loads(base64.b64decode(one["cursor"]).decode())
                cursor_key = (cursor["lastStartTimeTo"], zlib.crc32(cursor["lastTraceId"].encode()), cursor["lastId"])
            except (ValueError, KeyError, TypeError):
                raise _BadRequest("Invalid cursor format") from None
        environments = set(query.get("environment", []))
        rows = []
        for o in self._by_trace().get(one["traceId"], []) if "traceId" in one else self.observations:
            moment = _parse_time(o["startTime"], "startTime")
            if (("traceId" in one and o["traceId"] != one["traceId"])
                    or ("sessionId" in one and o["sessionId"] != one["sessionId"])
                    or ("name" in one and o["name"] != one["name"])
                    or (kind and o["type"] != kind)
                    or (environments and o["environment"] not in environments)
                    or ("isRootObservation" in one and o["isRootObservation"] != (one["isRootObservation"] == "true"))
                    or (start and moment < start) or (end and moment > end)
                    or (cursor and _order_key(o) >= cursor_key)):
                continue
            rows.append(o)
        rows.sort(key=_order_key, reverse=True)
        page = rows[:limit + 1]
        more = len(page) > limit
        page = page[:limit]
        data = []
        for o in page:
            item: dict[str, Any] = {"modelId": None, "inputPrice": None, "outputPrice": None, "totalPrice": None}
            for group in ["core", *fields]:
                for key in _GROUPS[group]:
                    item[key] = o[key]
            if "metadata" in item:
                item["metadata"] = {k: (v if k in expand or len(json.dumps(v)) <= METADATA_CAP
                                        else json.dumps(v)[:METADATA_CAP]) for k, v in o["metadata"].items()}
            data.append(item)
        meta: dict[str, Any] = {}
        if more and page:
            last = page[-1]
            meta["cursor"] = base64.b64encode(json.dumps({"lastStartTimeTo": last["startTime"],
                                                          "lastTraceId": last["traceId"],
                                                          "lastId": last["id"]}).encode()).decode()
        return {"data": data, "meta": meta}

    def _page_query(self, one: dict[str, str]) -> tuple[int, int]:
        """``publicApiPaginationZod``: ``page`` > 0 (default 1), ``limit`` 1..100 (default 50)."""
        try:
            page, limit = int(one.get("page") or 1), int(one.get("limit") or 50)
        except ValueError:
            raise _Invalid([{"code": "invalid_type", "expected": "number", "received": "nan", "path": ["limit"],
                             "message": "Expected number, received nan"}]) from None
        if page < 1:
            raise _Invalid([{"code": "too_small", "minimum": 0, "path": ["page"],
                             "message": "Number must be greater than 0"}])
        if not 1 <= limit <= 100:
            raise _Invalid([{"code": "too_big" if limit > 100 else "too_small", "path": ["limit"],
                             "message": "Number must be less than or equal to 100" if limit > 100
                             else "Number must be greater than or equal to 1"}])
        return page, limit

    @staticmethod
    def _paged(rows: list[dict[str, Any]], page: int, limit: int) -> dict[str, Any]:
        return {"data": rows[(page - 1) * limit:page * limit],
                "meta": {"page": page, "limit": limit, "totalItems": len(rows), "totalPages": -(-len(rows) // limit)}}

    def list_traces_v1(self, query: dict[str, list[str]]) -> dict[str, Any]:
        """``GET /api/public/traces`` (page-based; a trace is its root observation's start, name, session)."""
        one = {k: v[-1] for k, v in query.items() if v}
        page, limit = self._page_query(one)
        start = _parse_time(one["fromTimestamp"], "fromTimestamp") if "fromTimestamp" in one else None
        end = _parse_time(one["toTimestamp"], "toTimestamp") if "toTimestamp" in one else None
        environments = set(query.get("environment", []))
        rows = []
        for o in self.observations:
            if not o["isRootObservation"]:
                continue
            moment = _parse_time(o["startTime"], "timestamp")
            if (("sessionId" in one and o["sessionId"] != one["sessionId"]) or ("name" in one and o["name"] != one["name"])
                    or (environments and o["environment"] not in environments)
                    or (start and moment < start) or (end and moment >= end)):
                continue
            rows.append({"id": o["traceId"], "externalId": None, "timestamp": o["startTime"], "name": o["name"],
                         "userId": None, "metadata": {}, "release": None, "version": o["version"],
                         "projectId": o["projectId"], "environment": o["environment"], "public": False,
                         "bookmarked": False, "tags": [], "input": o["input"], "output": o["output"],
                         "sessionId": o["sessionId"], "createdAt": o["createdAt"], "updatedAt": o["updatedAt"],
                         "htmlPath": f"/project/{o['projectId']}/traces/{o['traceId']}"})
        rows.sort(key=lambda t: t["timestamp"], reverse=one.get("orderBy", "timestamp.desc") != "timestamp.asc")
        return self._paged(rows, page, limit)

    def list_observations_v1(self, query: dict[str, list[str]]) -> dict[str, Any]:
        """``GET /api/public/observations`` (page-based; input/output parsed as JSON where they are JSON)."""
        one = {k: v[-1] for k, v in query.items() if v}
        page, limit = self._page_query(one)
        rows = [o for o in self.observations if all(o[k] == one[k] for k in ("traceId", "name", "type") if k in one)]
        rows.sort(key=_order_key, reverse=True)
        out = []
        for o in rows:
            item = {k: v for k, v in o.items() if k not in ("isRootObservation", "sessionId", "userId", "bookmarked",
                                                              "public", "traceName", "tags", "providedModelName",
                                                              "internalModelId", "totalCost", "usagePricingTierName")}
            for key in ("input", "output"):
                try:
                    item[key] = json.loads(o[key]) if isinstance(o[key], str) else o[key]
                except ValueError:
                    pass
            usage = o["usageDetails"]
            item.update(model=o["providedModelName"], usage={"unit": "TOKENS", "input": usage.get("input", 0),
                                                             "output": usage.get("output", 0),
                                                             "total": usage.get("total", 0)})
            out.append(item)
        return self._paged(out, page, limit)

    def upsert_score(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict) or not body.get("name"):
            raise _Invalid([{"code": "invalid_type", "expected": "string", "received": "undefined",
                             "path": ["name"], "message": "Required"}])
        data_type = body.get("dataType")
        value = body.get("value")
        if data_type not in ("NUMERIC", "CATEGORICAL", "BOOLEAN") or (
                data_type == "CATEGORICAL") != isinstance(value, str):
            raise _Invalid([{"code": "invalid_union_discriminator", "path": ["dataType"],
                             "message": "Invalid discriminator value. Expected 'NUMERIC' | 'CATEGORICAL' | 'BOOLEAN'"}])
        score_id = body.get("id") or f"standin-{len(self.scores) + 1}"
        now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        with self._lock:
            old = self.scores.get(score_id)
            self.scores[score_id] = {
                "id": score_id, "projectId": "standin-project", "traceId": body.get("traceId"),
                "observationId": body.get("observationId"), "sessionId": body.get("sessionId"), "name": body["name"],
                "value": value if data_type != "CATEGORICAL" else 0,
                "stringValue": value if data_type == "CATEGORICAL" else None, "dataType": data_type,
                "comment": body.get("comment"), "metadata": body.get("metadata") or {}, "source": "API",
                "environment": body.get("environment") or "default", "configId": body.get("configId"),
                "timestamp": old["timestamp"] if old else now, "createdAt": old["createdAt"] if old else now,
                "updatedAt": now,
            }
        return {"id": score_id}

    def list_scores(self, query: dict[str, list[str]]) -> dict[str, Any]:
        one = {k: v[-1] for k, v in query.items() if v}
        page, limit = int(one.get("page", "1")), int(one.get("limit", "50"))
        rows = [s for s in self.scores.values()
                if all(s.get(k) == one[k] for k in ("traceId", "name", "dataType") if k in one)]
        rows.sort(key=lambda s: s["timestamp"], reverse=True)
        total = len(rows)
        return {"data": rows[(page - 1) * limit:page * limit],
                "meta": {"page": page, "limit": limit, "totalItems": total, "totalPages": -(-total // limit)}}

    # -- HTTP plumbing

    def _authorized(self, header: Optional[str]) -> Optional[str]:
        """None when the Basic credentials are the project's keys, else the 401 message Langfuse sends."""
        if not header:
            return "No authorization header"
        if not header.startswith("Basic "):
            return "Invalid authorization header"
        try:
            user, _, password = base64.b64decode(header[6:]).decode().partition(":")
        except ValueError:
            return "Invalid authorization header"
        if (user, password) != (self.public_key, self.secret_key):
            return "Invalid credentials. Confirm that you've configured the correct host."
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any, headers: Optional[dict[str, str]] = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _route(self, method: str) -> None:
                parts = urlsplit(self.path)
                standin.requests.append((method, self.path))
                if standin.hang_seconds:
                    time.sleep(standin.hang_seconds)
                with standin._lock:
                    if standin.rate_limit_times > 0:
                        standin.rate_limit_times -= 1
                        return self._send(429, {"message": "Rate limit exceeded"}, {"Retry-After": standin.retry_after})
                    if standin.fail_times > 0:
                        standin.fail_times -= 1
                        return self._send(500, {"message": "Internal Server Error", "error": "An unknown error occurred"})
                problem = standin._authorized(self.headers.get("Authorization"))
                if problem:
                    return self._send(401, {"message": problem})
                query = parse_qs(parts.query, keep_blank_values=True)
                try:
                    if method == "GET" and parts.path == "/api/public/v2/observations":
                        if not standin.v4_mode:
                            return self._send(404, {"message": "The observations v2 API is only available in a "
                                                    "Langfuse v4 write mode. Learn more at: https://langfuse.com/docs/v4",
                                                    "error": "LangfuseNotFoundError"})
                        return self._send(200, standin.list_observations(query))
                    if method == "GET" and parts.path == "/api/public/traces":
                        return self._send(200, standin.list_traces_v1(query))
                    if method == "GET" and parts.path == "/api/public/observations":
                        return self._send(200, standin.list_observations_v1(query))
                    if method == "POST" and parts.path == "/api/public/scores":
                        length = int(self.headers.get("Content-Length") or 0)
                        try:
                            body = json.loads(self.rfile.read(length) or b"null")
                        except ValueError:
                            raise _BadRequest("Invalid JSON body") from None
                        return self._send(200, standin.upsert_score(body))
                    if method == "GET" and parts.path == "/api/public/v2/scores":
                        return self._send(200, standin.list_scores(query))
                except _Invalid as exc:
                    return self._send(400, {"message": "Invalid request data", "error": exc.issues})
                except _BadRequest as exc:
                    return self._send(400, {"message": str(exc), "error": "InvalidRequestError"})
                return self._send(404, {"message": "Not Found", "error": "LangfuseNotFoundError"})

            def do_GET(self) -> None:
                self._route("GET")

            def do_POST(self) -> None:
                self._route("POST")

        return Handler


class _BadRequest(Exception):
    pass
