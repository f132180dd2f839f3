"""Langfuse as a trace source: ``langfuse+https://HOST?since=2h`` reads traces through Langfuse's public
API v2 observations endpoint (cursor pages) and writes results back as Langfuse scores.

Search: ``GET /api/public/v2/observations?isRootObservation=true`` with ``fromStartTime``/``toStartTime``
(the window) and ``sessionId``/``name``/``environment`` → one root observation per trace. Fetch: the same
endpoint with ``traceId`` → every observation of that trace. Each trace becomes one OTLP JSON document for
the same reader and converters as files: a span that reached Langfuse over OpenTelemetry gets back its
original attributes (Langfuse keeps them in ``metadata.attributes``, the resource's in
``metadata.resourceAttributes``, the scope in ``metadata.scope``) and the input/output attributes Langfuse
moved into the observation's ``input``/``output``; an observation made with a Langfuse SDK is mapped from its
fields (GENERATION → a ``gen_ai`` chat span with model, usage and messages, TOOL → ``execute_tool``,
AGENT → ``invoke_agent``). A server without the v2 API (Langfuse v3: a 404) is read through the page-based
v1 APIs instead: ``GET /api/public/traces`` (``fromTimestamp``/``toTimestamp`` and the same filters), then
``GET /api/public/observations?traceId=…``; ``api=v1``/``api=v2`` chooses.

Trace ids: a Langfuse trace id that is an OpenTelemetry id (32 lowercase hex digits) is the converted trace
id as it is, and so is any id our OTLP reader keeps unchanged; any other id is carried as ``lf-`` + its
UTF-8 bytes in hex, so ``write_back`` (on a fresh instance) maps a ``Verdict.trace_id`` back without a lookup.

Example::

    export LANGFUSE_PUBLIC_KEY=pk-lf-… LANGFUSE_SECRET_KEY=sk-lf-…
    agentevals run 'langfuse+https://cloud.langfuse.com?since=2h&environment=production' \\
        --eval-set golden.json -m tool_trajectory_avg_score --write-back
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, ClassVar, Optional

from ..errors import ConfigError
from ..traces.readers.otlp import hex_id
from .pull import PulledTrace, PullSource, SourceError, Verdict, env_credentials, otlp_value

log = logging.getLogger("agentevals.engine")

__all__ = ["LangfuseSource", "langfuse_trace_id", "observations_to_otlp", "otel_trace_id", "score_id"]

OBSERVATIONS = "/api/public/v2/observations"
OBSERVATIONS_V1 = "/api/public/observations"
TRACES_V1 = "/api/public/traces"
SCORES = "/api/public/scores"
FIELDS = "core,basic,time,io,metadata,model,usage"
"""The v2 field groups read per trace (``core,basic`` is Langfuse's default: no input/output/metadata)."""
EXPAND_METADATA = "attributes,resourceAttributes,scope"
"""Metadata keys Langfuse returns untruncated (``expandMetadata``): the OpenTelemetry attributes."""
MAX_PAGE = 1000
"""The v2 observations API's largest ``limit``."""
MAX_PAGE_V1 = 100
"""The page-based v1 APIs' largest ``limit``."""
SCORE_NAMESPACE = uuid.UUID("5b1f3c1e-8a36-4d0e-9a53-6c1f2b9e7d41")
"""uuid5 namespace of the score ids: one id per (run, evaluator, trace), so a re-write updates."""

_HEX32 = re.compile(r"^[0-9a-f]{32}$")
_HEX16 = re.compile(r"^[0-9a-fA-F]{16}$")
_NUMBER = re.compile(r"^-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?$")
_ADK_SCOPE = "gcp.vertex.agent"


def otel_trace_id(langfuse_id: str) -> str:
    """The converted trace id of a Langfuse trace: the id itself when the OTLP reader keeps it as it is
    (OpenTelemetry's 32 hex digits, a UUID), else ``lf-`` + its UTF-8 bytes in hex (reversible)."""
    if _HEX32.match(langfuse_id) or (hex_id(langfuse_id) == langfuse_id and not langfuse_id.startswith("lf-")):
        return langfuse_id
    return "lf-" + langfuse_id.encode().hex()


def langfuse_trace_id(trace_id: str) -> str:
    """``otel_trace_id`` reversed: a ``Verdict.trace_id`` → the Langfuse trace id to score."""
    if trace_id.startswith("lf-"):
        try:
            return bytes.fromhex(trace_id[3:]).decode()
        except ValueError:
            return trace_id
    return trace_id


def score_id(verdict: Verdict) -> str:
    """The score's id (Langfuse upserts by id): the same run, evaluator and trace → the same score."""
    return str(uuid.uuid5(SCORE_NAMESPACE, "\n".join((verdict.run_id, verdict.evaluator, verdict.trace_id))))


class LangfuseSource(PullSource):
    """Langfuse's public API: v2 observations (cursor pages) in, scores out."""

    name: ClassVar[str] = "langfuse"
    summary: ClassVar[str] = "Langfuse (public API v2 observations; write-back: scores)"
    uri_form: ClassVar[str] = "langfuse+https://HOST?since=2h&session_id=ID&name=NAME&environment=ENV"
    parameters: ClassVar[frozenset[str]] = frozenset({"trace_id", "session_id", "name", "environment", "page_size",
                                                      "api"})
    credentials: ClassVar[tuple[str, ...]] = ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY")
    writes_back: ClassVar[str] = "scores"

    def __init__(self, item: str) -> None:
        super().__init__(item)
        api = self.query.param("api")
        if api not in (None, "v1", "v2"):
            raise ConfigError(f"{item}: api={api}: say api=v2 (the v2 observations API, the default) or api=v1 "
                              "(the page-based v1 traces and observations APIs of Langfuse v3)")
        self._v1: Optional[bool] = None if api is None else api == "v1"
        """None until the first request tells (a 404 from v2: a server without it, read through v1)."""

    def _authorize(self) -> None:
        keys = env_credentials(*self.credentials)
        if keys is None:
            raise SourceError(f"{self.label}: set LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY "
                              "(the project's API keys) to read Langfuse")
        token = base64.b64encode(f"{keys[0]}:{keys[1]}".encode()).decode()
        self.client.headers["Authorization"] = f"Basic {token}"

    def _page_size(self) -> int:
        size = int(self._number("page_size", 100)) or 100
        return max(1, min(size, MAX_PAGE_V1 if self._v1 else MAX_PAGE))

    def _observations(self, params: list[tuple[str, Any]]) -> Iterator[dict[str, Any]]:
        """Every observation the v2 API returns for ``params``, following ``meta.cursor`` page by page."""
        cursor: Optional[str] = None
        while True:
            query = params + ([("cursor", cursor)] if cursor else [])
            if self._v1 is None:  # the first request: does this server have the v2 API?
                status, page = self.client.send("GET", OBSERVATIONS, params=query, ok=(404,))
                if status == 404:
                    log.info("%s: no v2 observations API (404): reading the v1 traces/observations APIs", self.label)
                    self._v1 = True
                    raise _NoV2()
                self._v1 = False
            else:
                page = self.client.get_json(OBSERVATIONS, query)
            if not isinstance(page, dict) or not isinstance(page.get("data"), list):
                raise SourceError(f"{self.label}: {OBSERVATIONS} answered no 'data' list")
            yield from (o for o in page["data"] if isinstance(o, dict))
            meta = page.get("meta")
            cursor = meta.get("cursor") if isinstance(meta, dict) else None
            if not cursor:
                return

    def _pages(self, path: str, params: list[tuple[str, Any]]) -> Iterator[dict[str, Any]]:
        """Every item a page-based v1 API returns for ``params`` (``page`` 1, 2, … up to ``meta.totalPages``)."""
        number = 1
        while True:
            page = self.client.get_json(path, [*params, ("page", number)])
            if not isinstance(page, dict) or not isinstance(page.get("data"), list):
                raise SourceError(f"{self.label}: {path} answered no 'data' list")
            yield from (o for o in page["data"] if isinstance(o, dict))
            meta = page.get("meta")
            total = meta.get("totalPages") if isinstance(meta, dict) else None
            if not page["data"] or not isinstance(total, int) or number >= total:
                return
            number += 1

    def _trace(self, trace_id: str, started: Optional[datetime]) -> Optional[PulledTrace]:
        if self._v1:
            found = self._pages(OBSERVATIONS_V1, [("traceId", trace_id), ("limit", self._page_size())])
        else:
            found = self._observations([("traceId", trace_id), ("fields", FIELDS), ("expandMetadata", EXPAND_METADATA),
                                        ("limit", self._page_size())])
        observations = list(found)
        if not observations:
            return None
        if started is None:
            started = min((t for t in (_time(o.get("startTime")) for o in observations) if t), default=None)
        return PulledTrace(otel_trace_id(trace_id), observations_to_otlp(observations, trace_id), "otlp-json", started)

    def pull(self) -> Iterator[PulledTrace]:
        self._authorize()
        try:
            yield from self._pull()
        except _NoV2:  # raised by the first request, before anything was yielded
            yield from self._pull()

    def _pull(self) -> Iterator[PulledTrace]:
        ids = [t.strip() for t in (self.query.param("trace_id") or "").split(",") if t.strip()]
        if ids:
            for trace_id in ids:
                pulled = self._trace(trace_id, None)
                if pulled is None:
                    raise SourceError(f"{self.label}: trace {trace_id} not found (no observations)")
                yield pulled
            return
        start, end = self.window
        size = self._page_size() if self.limit is None else min(self._page_size(), self.limit)
        filters: list[tuple[str, Any]] = [("limit", size)]
        for key, api in (("session_id", "sessionId"), ("name", "name")):
            value = self.query.param(key)
            if value:
                filters.append((api, value))
        for value in self.query.params.get("environment", ()):  # repeated or comma-separated: any of them
            filters += [("environment", env.strip()) for env in value.split(",") if env.strip()]
        if self._v1:
            roots = self._pages(TRACES_V1, [("fromTimestamp", _iso(start)), ("toTimestamp", _iso(end)),
                                            ("orderBy", "timestamp.desc"), *filters])
            found_by = ("id", "timestamp")
        else:
            roots = self._observations([("isRootObservation", "true"), ("fields", "core,basic"),
                                        ("fromStartTime", _iso(start)), ("toStartTime", _iso(end)), *filters])
            found_by = ("traceId", "startTime")
        for root in roots:
            found = root.get(found_by[0])
            if isinstance(found, str) and found:
                pulled = self._trace(found, _time(root.get(found_by[1])))
                if pulled is not None:
                    yield pulled

    def write_back(self, verdicts: Sequence[Verdict]) -> int:
        """One score per verdict, ``POST /api/public/scores`` with a deterministic ``id`` (Langfuse upserts by
        id): NUMERIC with the score when there is one, else CATEGORICAL with the label (pass, fail,
        not_evaluated, error). The comment is the explanation; metadata carries the run id, evaluator version,
        case id, label and status."""
        if not verdicts:
            return 0
        self._authorize()
        environments = {e.strip() for v in self.query.params.get("environment", ()) for e in v.split(",") if e.strip()}
        environment = environments.pop() if len(environments) == 1 else None
        written = 0
        for verdict in verdicts:
            self.client.post_json(SCORES, score_body(verdict, environment))
            written += 1
        return written


class _NoV2(Exception):
    """The server has no v2 observations API: read again through v1."""


def score_body(verdict: Verdict, environment: Optional[str] = None) -> dict[str, Any]:
    """The ``POST /api/public/scores`` body of one verdict (``environment``: the one the URI read, so the
    score shows beside its trace when Langfuse's UI filters by environment; else Langfuse's ``default``)."""
    body: dict[str, Any] = {"id": score_id(verdict), "traceId": langfuse_trace_id(verdict.trace_id),
                            "name": verdict.evaluator}
    if environment:
        body["environment"] = environment
    if verdict.score is not None:
        body.update(dataType="NUMERIC", value=float(verdict.score))
    else:
        body.update(dataType="CATEGORICAL", value=verdict.label)
    if verdict.explanation:
        body["comment"] = verdict.explanation
    body["metadata"] = {"agentevals_run_id": verdict.run_id, "evaluator_version": verdict.evaluator_version,
                        "case_id": verdict.case_id, "label": verdict.label, "status": verdict.status}
    return body


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _time(value: Any) -> Optional[datetime]:
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _nanos(value: Any) -> Optional[str]:
    moment = _time(value)
    if moment is None:
        return None
    delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return str((delta.days * 86400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000)


def _span_id(observation_id: Any) -> str:
    """An observation id as an OTLP span id: itself when it is 16 hex digits (it came over OTLP), else 16 hex
    digits derived from it (SDK observation ids are UUIDs)."""
    text = str(observation_id)
    return text.lower() if _HEX16.match(text) else hashlib.sha256(text.encode()).hexdigest()[:16]


def _key_values(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": otlp_value(v)} for k, v in attributes.items() if v is not None]


def _restore(value: Any) -> Any:
    """A ``metadata.attributes`` value back to its type: Langfuse stores non-string attribute values as
    ``JSON.stringify`` of them (``1956``, ``true``); numbers and booleans are read back (a string attribute
    that looked like one is indistinguishable), anything else stays the string it is."""
    if not isinstance(value, str):
        return value if isinstance(value, (int, float, bool)) else json.dumps(value)
    if value in ("true", "false"):
        return value == "true"
    if _NUMBER.match(value):
        return int(value) if value.lstrip("-").isdigit() else float(value)
    return value


def _text(value: Any) -> Optional[str]:
    """An observation's input/output as the attribute string it was (the v2 API returns them raw)."""
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else json.dumps(value)


def _parsed(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    """Langfuse's nested ``gen_ai.prompt``/``gen_ai.completion`` object back to ``PREFIX.0.role`` keys."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            if item is not None:
                _flatten(f"{prefix}.{i}", item, out)
    elif isinstance(value, dict):
        for key, item in value.items():
            _flatten(f"{prefix}.{key}", item, out)
    else:
        out[prefix] = value


def _io_attributes(observation: Mapping[str, Any], attributes: Mapping[str, Any], scope: str) -> dict[str, Any]:
    """The attributes Langfuse's OpenTelemetry ingestion moved into ``input``/``output`` (and deleted from
    ``metadata.attributes``), restored under the keys the span's instrumentation writes."""
    raw_in, raw_out = observation.get("input"), observation.get("output")
    given_in, given_out = _text(raw_in), _text(raw_out)
    if given_in is None and given_out is None:
        return {}
    out: dict[str, Any] = {}
    if scope == _ADK_SCOPE or any(k.startswith("gcp.vertex.agent.") for k in attributes):
        # ADK: llm_request/llm_response on model calls; on tool spans ADK writes them as "{}" and the
        # tool's arguments/result in tool_call_args/tool_response (which Langfuse then reads instead).
        if attributes.get("gen_ai.operation.name") == "execute_tool" or "gen_ai.tool.name" in attributes:
            out.update({"gcp.vertex.agent.llm_request": "{}", "gcp.vertex.agent.llm_response": "{}",
                        "gcp.vertex.agent.tool_call_args": given_in, "gcp.vertex.agent.tool_response": given_out})
        else:
            out.update({"gcp.vertex.agent.llm_request": given_in, "gcp.vertex.agent.llm_response": given_out})
        return out
    parsed_in, parsed_out = _parsed(raw_in), _parsed(raw_out)
    if isinstance(parsed_in, list) and parsed_in and all(isinstance(m, dict) and "role" in m for m in parsed_in) \
            and any(isinstance(m, dict) and "parts" in m for m in parsed_in):
        out["gen_ai.input.messages"] = given_in
        if given_out is not None:
            out["gen_ai.output.messages"] = given_out
        return out
    if isinstance(parsed_in, list) or (isinstance(parsed_out, list) and any(
            isinstance(m, dict) and ("finish_reason" in m or "role" in m) for m in parsed_out)):
        # TraceLoop/OpenLLMetry: gen_ai.prompt.N.* / gen_ai.completion.N.* (Langfuse nests them)
        if isinstance(parsed_in, (list, dict)):
            _flatten("gen_ai.prompt", parsed_in, out)
        if isinstance(parsed_out, (list, dict)):
            _flatten("gen_ai.completion", parsed_out, out)
        return {k: v for k, v in out.items() if v is not None}
    if attributes.get("gen_ai.operation.name") == "execute_tool" or observation.get("type") == "TOOL":
        out.update({"gen_ai.tool.call.arguments": given_in, "gen_ai.tool.call.result": given_out})
    else:
        out.update({"input.value": given_in, "output.value": given_out})
    return {k: v for k, v in out.items() if v is not None}


def _native_attributes(observation: Mapping[str, Any]) -> dict[str, Any]:
    """OpenTelemetry GenAI attributes for an observation a Langfuse SDK created (no ``metadata.attributes``)."""
    kind = str(observation.get("type") or "SPAN").upper()
    name = observation.get("name") or ""
    out: dict[str, Any] = {}
    given_in, given_out = _text(observation.get("input")), _text(observation.get("output"))
    if kind == "GENERATION":
        out["gen_ai.operation.name"] = "chat"
        model = observation.get("providedModelName") or observation.get("model")
        if model:
            out["gen_ai.request.model"] = model
        usage = observation.get("usageDetails") or {}
        if isinstance(usage, dict):
            for key, attr in (("input", "gen_ai.usage.input_tokens"), ("output", "gen_ai.usage.output_tokens")):
                if isinstance(usage.get(key), (int, float)):
                    out[attr] = int(usage[key])
        messages_in, messages_out = _parsed(given_in), _parsed(given_out)
        if isinstance(messages_in, list):
            _flatten("gen_ai.prompt", messages_in, out)
        elif given_in is not None:
            out["input.value"] = given_in
        if isinstance(messages_out, dict) and "role" in messages_out:
            _flatten("gen_ai.completion.0", messages_out, out)
        elif isinstance(messages_out, str):
            out["gen_ai.completion.0.role"] = "assistant"
            out["gen_ai.completion.0.content"] = messages_out
        elif given_out is not None:
            out["output.value"] = given_out
    elif kind == "TOOL":
        out.update({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                    "gen_ai.tool.call.arguments": given_in, "gen_ai.tool.call.result": given_out})
    elif kind == "AGENT":
        out.update({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
                    "input.value": given_in, "output.value": given_out})
    else:
        out.update({"input.value": given_in, "output.value": given_out})
    return {k: v for k, v in out.items() if v is not None}


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def observations_to_otlp(observations: Sequence[Mapping[str, Any]], trace_id: str) -> dict[str, Any]:
    """The observations of one Langfuse trace → an OTLP JSON document (``{"resourceSpans": …}``)."""
    otel_id = otel_trace_id(trace_id)
    groups: dict[str, dict[str, Any]] = {}
    for observation in sorted(observations, key=lambda o: (str(o.get("startTime") or ""), str(o.get("id")))):
        metadata = _mapping(observation.get("metadata"))
        raw_attributes = metadata.get("attributes")
        resource = _mapping(metadata.get("resourceAttributes"))
        scope = _mapping(metadata.get("scope"))
        scope_name = str(scope.get("name") or "")
        if isinstance(raw_attributes, dict):
            attributes = {k: _restore(v) for k, v in raw_attributes.items()}
            attributes.update(_io_attributes(observation, attributes, scope_name))
        else:
            attributes = _native_attributes(observation)
            scope_name = scope_name or "langfuse"
        name = str(observation.get("name") or observation.get("type") or "span")
        operation = attributes.get("gen_ai.operation.name")
        if operation and attributes.get("gen_ai.tool.name") == name:
            name = f"{operation} {name}"  # Langfuse names a tool span by gen_ai.tool.name; OTel: "{op} {tool}"
        if otel_id != trace_id:
            resource = {**resource, "langfuse.trace.id": trace_id}
        span: dict[str, Any] = {"traceId": otel_id, "spanId": _span_id(observation.get("id")), "name": name,
                                "attributes": _key_values(attributes)}
        parent = observation.get("parentObservationId")
        if parent:
            span["parentSpanId"] = _span_id(parent)
        start = _nanos(observation.get("startTime"))
        end = _nanos(observation.get("endTime")) or start
        if start:
            span["startTimeUnixNano"] = start
            span["endTimeUnixNano"] = end
        if observation.get("level") == "ERROR":
            span["status"] = {"code": 2, "message": observation.get("statusMessage") or ""}
        key = json.dumps([resource, scope_name, scope.get("version")], sort_keys=True, default=str)
        batch = groups.setdefault(key, {"resource": {"attributes": _key_values(resource)},
                                        "scopeSpans": [{"scope": {"name": scope_name, "version": scope.get("version")},
                                                        "spans": []}]})
        batch["scopeSpans"][0]["spans"].append(span)
    return {"resourceSpans": list(groups.values())}
