"""MLflow tracking server as a trace source: ``mlflow+http://HOST:PORT?experiment=ID&since=2h``, and
``--write-back`` as MLflow assessments (feedback).

Reading: ``POST /api/3.0/mlflow/traces/search`` (the experiments as locations, the window as a
``trace.timestamp_ms`` clause ANDed with ``filter=``, oldest first, page tokens), then the spans of each page
by ``GET /api/3.0/mlflow/traces/batchGet`` (ten ids a call, as MLflow's own client does). MLflow answers
spans as OpenTelemetry protobuf JSON (base64 ids, ``AnyValue`` attributes) with the resource attributes moved
to the trace's tags; they are turned back into an OTLP JSON document, so the same converters run as for a
trace file. Credentials come from ``MLFLOW_TRACKING_USERNAME``/``MLFLOW_TRACKING_PASSWORD`` (basic auth) or
``MLFLOW_TRACKING_TOKEN`` (bearer), as MLflow's client reads them.

Example::

    agentevals run 'mlflow+http://127.0.0.1:5000?experiment=1&since=2h&filter=trace.status%20%3D%20%27OK%27' \\
        --eval-set evalset.json -m tool_trajectory_avg_score

    source = source_for("mlflow+http://127.0.0.1:5000?experiment=1")
    source.write_back(verdicts)   # one feedback assessment per (trace, evaluator), updated on re-runs
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from typing import Any, ClassVar, Optional

from ..errors import ConfigError
from .pull import PulledTrace, PullQuery, PullSource, SourceError, Verdict, otlp_value, parse_time

__all__ = ["MlflowSource", "otlp_document"]

log = logging.getLogger("agentevals.engine")

SEARCH = "/api/3.0/mlflow/traces/search"
BATCH_GET = "/api/3.0/mlflow/traces/batchGet"
TRACE_ARTIFACT = "/ajax-api/2.0/mlflow/get-trace-artifact"
SPANS_LOCATION = "mlflow.trace.spansLocation"
PAGE_SIZE = 100
"""Traces per search page (MLflow allows up to 500)."""
BATCH = 10
"""Trace ids per ``batchGet`` (MLflow's own client sends at most ten)."""
SOURCE_PREFIX = "agentevals/"
"""Start of the ``source_id`` of every assessment agentevals writes (``agentevals/<evaluator>@<version>``)."""

_ANY = {"string_value": "stringValue", "bool_value": "boolValue", "int_value": "intValue",
        "double_value": "doubleValue", "bytes_value": "bytesValue"}


class MlflowSource(PullSource):
    """Traces of MLflow experiments, read through the tracking server's REST API (v3 trace endpoints)."""

    name: ClassVar[str] = "mlflow"
    summary: ClassVar[str] = "MLflow tracking server: an experiment's traces (REST API v3); --write-back as assessments"
    uri_form: ClassVar[str] = "mlflow+http://HOST:PORT?experiment=ID&since=2h"
    parameters: ClassVar[frozenset[str]] = frozenset({"experiment", "filter"})
    credentials: ClassVar[tuple[str, ...]] = ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD",
                                              "MLFLOW_TRACKING_TOKEN")
    writes_back: ClassVar[str] = "assessments (feedback, source CODE or LLM_JUDGE)"
    default_port: ClassVar[Optional[int]] = 5000

    def __init__(self, item: str) -> None:
        super().__init__(item)
        experiments = [e.strip() for e in (self.query.param("experiment") or "").split(",") if e.strip()]
        if not experiments:
            raise ConfigError(f"{item}: experiment= is required (an experiment id or name; several: "
                              "experiment=1,2)")
        self.experiments = experiments
        self.page_size = PAGE_SIZE
        self.batch_get = True
        """Read spans by ``batchGet`` where the server holds them (False: always the trace data artifact)."""
        self.client.headers.update(_auth_headers())

    @classmethod
    def parse(cls, uri: str) -> PullQuery:
        try:
            return super().parse(uri)
        except ConfigError as exc:  # the base joins every variable with "and": the token is the alternative
            raise ConfigError(str(exc).replace(" and MLFLOW_TRACKING_TOKEN", ", or MLFLOW_TRACKING_TOKEN")) from None

    def auth_hint(self) -> str:
        return "set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD, or MLFLOW_TRACKING_TOKEN"

    def experiment_ids(self) -> list[str]:
        """The URI's experiments as ids (a name is looked up); an unknown one is a ``SourceError``."""
        ids = []
        for experiment in self.experiments:
            if experiment.isdigit():
                status, answer = self.client.send("GET", "/api/2.0/mlflow/experiments/get",
                                                  params={"experiment_id": experiment}, ok=(400, 404))
            else:
                status, answer = self.client.send("GET", "/api/2.0/mlflow/experiments/get-by-name",
                                                  params={"experiment_name": experiment}, ok=(400, 404))
            found = (answer or {}).get("experiment") if status == 200 else None
            if not found or not found.get("experiment_id"):
                raise SourceError(f"{self.label}: unknown experiment {experiment!r} (no experiment with that "
                                  f"{'id' if experiment.isdigit() else 'name'} on {self.query.base_url})")
            ids.append(str(found["experiment_id"]))
        return ids

    def search_filter(self) -> str:
        """The window as MLflow's filter clause, ANDed with the URI's ``filter=`` (MLflow's filter language
        has AND only)."""
        start, end = self.window
        clause = f"trace.timestamp_ms >= {_ms(start)} AND trace.timestamp_ms <= {_ms(end)}"
        extra = (self.query.param("filter") or "").strip()
        return f"{clause} AND {extra}" if extra else clause

    def pull(self) -> Iterator[PulledTrace]:
        locations = [{"type": "MLFLOW_EXPERIMENT", "mlflow_experiment": {"experiment_id": e}}
                     for e in self.experiment_ids()]
        body: dict[str, Any] = {"locations": locations, "filter": self.search_filter(),
                                "max_results": min(self.page_size, self.limit or self.page_size),
                                "order_by": ["timestamp_ms ASC"]}
        found = 0
        while True:
            page = self.client.post_json(SEARCH, body) or {}
            infos = [t for t in page.get("traces") or () if isinstance(t, dict) and t.get("trace_id")]
            for start in range(0, len(infos), BATCH):
                chunk = infos[start:start + BATCH]
                yield from self._fetch(chunk)
                found += len(chunk)
                if self.limit is not None and found >= self.limit:
                    return
            token = page.get("next_page_token")
            if not token or not infos:
                return
            body["page_token"] = token

    def _fetch(self, infos: list[dict[str, Any]]) -> Iterator[PulledTrace]:
        """Spans of a page's traces: ``batchGet`` for those the server holds in its store (and archive); the
        trace data artifact (``get-trace-artifact``, what MLflow's UI reads) for spans logged as artifacts and
        for servers older than ``batchGet``."""
        # MLflow's client rule: spans the server holds (tag TRACKING_STORE or ARCHIVE_REPO) come from the server,
        # other traces' spans are the trace data artifact
        stored = [str(i["trace_id"]) for i in infos
                  if self.batch_get and _tag(i, SPANS_LOCATION) in ("TRACKING_STORE", "ARCHIVE_REPO")]
        fetched: dict[str, dict[str, Any]] = {}
        if stored:
            status, answer = self.client.send("GET", BATCH_GET, params=[("trace_ids", i) for i in stored], ok=(404,))
            if status == 404:  # no such endpoint: a server before batchGet
                self.batch_get = False
                stored = []
            for trace in (answer or {}).get("traces") or () if status != 404 else ():
                info = trace.get("trace_info") if isinstance(trace, dict) else None
                if isinstance(info, dict) and info.get("trace_id"):
                    fetched[str(info["trace_id"])] = trace
        for info in infos:
            trace_id = str(info["trace_id"])
            trace = fetched.get(trace_id)
            if trace is None and trace_id not in stored:
                status, data = self.client.send("GET", TRACE_ARTIFACT, params={"request_id": trace_id}, ok=(400, 404))
                if status == 200 and isinstance(data, dict) and isinstance(data.get("spans"), list):
                    trace = {"trace_info": info, "spans": data["spans"]}
            if trace is None:  # deleted between search and fetch, or its spans not stored yet
                log.info("%s: trace %s has no spans yet; skipped", self.label, trace_id)
                continue
            yield PulledTrace(trace_id, otlp_document(trace), format="otlp-json",
                              started=_started(trace.get("trace_info") or info))

    def write_back(self, verdicts: Sequence[Verdict]) -> int:
        """Each verdict as a feedback assessment on its trace: name = evaluator, value = score (or the
        pass/fail label), rationale = explanation, source ``CODE`` (``LLM_JUDGE`` for a judge) with id
        ``agentevals/<evaluator>@<version>``, metadata ``agentevals_run_id``/``case_id``/``label``. An
        assessment of the same run, evaluator and case on the trace is updated, never duplicated."""
        by_trace: dict[str, list[Verdict]] = {}
        for verdict in verdicts:
            by_trace.setdefault(mlflow_trace_id(verdict.trace_id), []).append(verdict)
        written = 0
        missing = []
        for trace_id, group in by_trace.items():
            status, answer = self.client.send("GET", f"/api/3.0/mlflow/traces/{trace_id}", ok=(404,))
            if status == 404:
                missing.append(trace_id)
                continue
            existing = [a for a in ((answer or {}).get("trace") or {}).get("trace_info", {}).get("assessments") or ()
                        if isinstance(a, dict)]
            for verdict in group:
                self._write(trace_id, verdict, existing)
                written += 1
        if missing:
            raise SourceError(f"{self.label}: {len(missing)} trace(s) not found for write-back "
                              f"({', '.join(missing[:3])}{', …' if len(missing) > 3 else ''}); wrote {written}")
        return written

    def _write(self, trace_id: str, verdict: Verdict, existing: list[dict[str, Any]]) -> None:
        wanted = assessment(trace_id, verdict)
        same = [a for a in existing if _same_result(a, verdict)]
        keep = next((a for a in same if (a.get("source") or {}).get("source_type")
                     == wanted["source"]["source_type"]), None)
        for stale in same:  # a duplicate from an interrupted write, or the source type changed (immutable)
            if stale is not keep:
                self.client.send("DELETE", f"/api/3.0/mlflow/traces/{trace_id}/assessments/"
                                 f"{stale['assessment_id']}", ok=(404,))
        if keep is None:
            created = self.client.post_json(f"/api/3.0/mlflow/traces/{trace_id}/assessments", {"assessment": wanted})
            if isinstance(created, dict) and isinstance(created.get("assessment"), dict):
                existing.append(created["assessment"])
            return
        wanted["assessment_id"] = keep["assessment_id"]
        self.client.send("PATCH", f"/api/3.0/mlflow/traces/{trace_id}/assessments/{keep['assessment_id']}",
                         body={"assessment": wanted, "update_mask": "feedback,rationale,metadata"})


def mlflow_trace_id(trace_id: str) -> str:
    """A scored trace's id (the OpenTelemetry trace id in hex) → MLflow's (``tr-<hex>``)."""
    return trace_id if trace_id.startswith("tr-") else f"tr-{trace_id}"


def assessment(trace_id: str, verdict: Verdict) -> dict[str, Any]:
    """The MLflow ``Assessment`` (feedback) JSON for one verdict."""
    version = f"@{verdict.evaluator_version}" if verdict.evaluator_version else ""
    value: Any = verdict.score if verdict.score is not None else verdict.label
    out: dict[str, Any] = {
        "assessment_name": verdict.evaluator,
        "trace_id": trace_id,
        "source": {"source_type": "LLM_JUDGE" if verdict.judge else "CODE",
                   "source_id": f"{SOURCE_PREFIX}{verdict.evaluator}{version}"},
        "feedback": {"value": value},
    }
    # MLflow's metadata is a string → string map: a missing value is left out, never sent as null
    metadata = {"agentevals_run_id": verdict.run_id, "case_id": verdict.case_id, "label": verdict.label}
    out["metadata"] = {k: str(v) for k, v in metadata.items() if v}
    if verdict.explanation:
        out["rationale"] = verdict.explanation
    return out


def _same_result(existing: dict[str, Any], verdict: Verdict) -> bool:
    """Written by agentevals for the same run, evaluator and case."""
    metadata = existing.get("metadata") or {}
    return (existing.get("assessment_name") == verdict.evaluator
            and str((existing.get("source") or {}).get("source_id", "")).startswith(SOURCE_PREFIX)
            and metadata.get("agentevals_run_id") == verdict.run_id
            and metadata.get("case_id", "") == (verdict.case_id or ""))


def otlp_document(trace: dict[str, Any]) -> dict[str, Any]:
    """One MLflow trace (``{"trace_info": …, "spans": [...]}``, spans as ``batchGet`` or the trace data
    artifact gives them) → an OTLP JSON document.

    MLflow keeps what the span had (ids, times, status, events, attributes) but stores attributes as JSON
    and stores an attribute that was a JSON string (``gcp.vertex.agent.llm_request``) as that JSON itself,
    so ``batchGet`` answers it as a map or a list of maps: such a value becomes a JSON string again
    (OpenTelemetry attributes hold no maps; the same JSON, in MLflow's whitespace; the trace data artifact
    gives the exact text). A list of plain values stays a list. The resource attributes come back from the
    trace's tags (MLflow stores them there); spans are grouped by their ``otel.scope.name`` attribute when
    they carry one (MLflow keeps no instrumentation scope)."""
    info = trace.get("trace_info") or {}
    tags = info.get("tags") or {}
    resource = [{"key": k, "value": {"stringValue": str(v)}} for k, v in tags.items() if not k.startswith("mlflow.")]
    scopes: dict[str, list[dict[str, Any]]] = {}
    for raw in trace.get("spans") or ():
        if isinstance(raw, dict):
            scope, span = _otlp_span(raw)
            scopes.setdefault(scope, []).append(span)
    return {"resourceSpans": [{
        "resource": {"attributes": resource},
        "scopeSpans": [{"scope": {"name": name} if name else {}, "spans": spans} for name, spans in scopes.items()],
    }]}


def _otlp_span(raw: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """One span → ``(scope name, OTLP JSON span)``. Takes MLflow's protobuf JSON (``batchGet``: attributes as
    a list of ``AnyValue``) and its span dict (the trace data artifact: attributes as a map of the JSON text
    MLflow stored; MLflow 2's ``context``/``parent_id`` with ``0x`` ids included)."""
    stored = raw.get("attributes")
    if isinstance(stored, dict):
        attributes = [a for a in (_stored_attribute(k, v) for k, v in stored.items()) if a is not None]
    else:
        attributes = [a for a in (_attribute(kv) for kv in stored or ()) if a is not None]
    context: dict[str, Any] = raw["context"] if isinstance(raw.get("context"), dict) else {}
    start = raw.get("start_time_unix_nano") or raw.get("start_time") or 0
    status = raw.get("status")
    if not isinstance(status, dict):
        code = raw.get("status_code")
        status = {"code": f"STATUS_CODE_{code}", "message": raw.get("status_message") or ""} if code else {}
    span: dict[str, Any] = {
        "traceId": _hex(raw.get("trace_id") or context.get("trace_id")),
        "spanId": _hex(raw.get("span_id") or context.get("span_id")),
        "name": raw.get("name", ""),
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(raw.get("end_time_unix_nano") or raw.get("end_time") or start),
        "attributes": attributes,
        "events": [_event(e) for e in raw.get("events") or () if isinstance(e, dict)],
        "status": status,
    }
    parent = _hex(raw.get("parent_span_id") or raw.get("parent_id"))
    if parent:
        span["parentSpanId"] = parent
    scope = next((a["value"].get("stringValue", "") for a in attributes if a["key"] == "otel.scope.name"), "")
    return scope, span


def _event(raw: dict[str, Any]) -> dict[str, Any]:
    stored = raw.get("attributes")
    if isinstance(stored, dict):  # the span dict keeps event attributes as plain values
        attributes = [{"key": k, "value": otlp_value(v)} for k, v in stored.items() if v is not None]
    else:
        attributes = [a for a in (_attribute(kv) for kv in stored or ()) if a is not None]
    return {"name": raw.get("name", ""), "timeUnixNano": str(raw.get("time_unix_nano") or raw.get("timestamp") or 0),
            "attributes": attributes}


def _stored_attribute(key: str, text: Any) -> Optional[dict[str, Any]]:
    """An attribute as MLflow stores it → OTLP. MLflow stores ``json.dumps(value)``, except a string that is
    itself JSON (an object or array), which it stores as it is: JSON text holding a map (or a list of maps or
    lists) was such a string, and comes back as exactly that text."""
    if not isinstance(text, str):
        return None if text is None else {"key": key, "value": otlp_value(text)}
    try:
        value = json.loads(text)
    except ValueError:
        return {"key": key, "value": {"stringValue": text}}
    if isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value)):
        return {"key": key, "value": {"stringValue": text}}
    return None if value is None else {"key": key, "value": otlp_value(value)}


def _tag(info: dict[str, Any], key: str) -> Optional[str]:
    tags = info.get("tags")
    return tags.get(key) if isinstance(tags, dict) else None


def _attribute(kv: Any) -> Optional[dict[str, Any]]:
    if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
        return None
    value = kv.get("value") or {}
    if not value:  # MLflow answers a null attribute as an empty AnyValue
        return None
    if "kvlist_value" in value or ("array_value" in value and any(
            "kvlist_value" in v or "array_value" in v for v in value["array_value"].get("values") or ())):
        return {"key": kv["key"], "value": {"stringValue": json.dumps(_plain(value), ensure_ascii=False)}}
    return {"key": kv["key"], "value": _any(value)}


def _any(value: dict[str, Any]) -> dict[str, Any]:
    """MLflow's protobuf JSON (``string_value``) → OTLP JSON (``stringValue``)."""
    if "array_value" in value:
        return {"arrayValue": {"values": [_any(v) for v in value["array_value"].get("values") or ()]}}
    if "kvlist_value" in value:
        return {"kvlistValue": {"values": [{"key": kv.get("key", ""), "value": _any(kv.get("value") or {})}
                                           for kv in value["kvlist_value"].get("values") or ()]}}
    for key, otlp_key in _ANY.items():
        if key in value:
            return {otlp_key: value[key]}
    return {}


def _plain(value: dict[str, Any]) -> Any:
    """A protobuf JSON ``AnyValue`` → the plain JSON value."""
    if "array_value" in value:
        return [_plain(v) for v in value["array_value"].get("values") or ()]
    if "kvlist_value" in value:
        return {kv.get("key", ""): _plain(kv.get("value") or {}) for kv in value["kvlist_value"].get("values") or ()}
    if "int_value" in value:
        return int(value["int_value"])
    for key in ("string_value", "bool_value", "double_value", "bytes_value"):
        if key in value:
            return value[key]
    return None


def _hex(value: Any) -> str:
    """A protobuf JSON id (base64) → hex; hex (or nothing) passes through."""
    if not value or not isinstance(value, str):
        return ""
    value = value.removeprefix("0x")  # MLflow 2's span context
    if len(value) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in value):
        return value.lower()
    try:
        return base64.b64decode(value, validate=True).hex()
    except (binascii.Error, ValueError):
        return value


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _started(info: dict[str, Any]) -> Optional[datetime]:
    when = info.get("request_time")
    if isinstance(when, (int, float)) or (isinstance(when, str) and when.isdigit()):
        return datetime.fromtimestamp(int(when) / 1000, tz=timezone.utc)
    if isinstance(when, str):
        try:
            return parse_time(when)
        except ValueError:
            return None
    return None


def _auth_headers() -> dict[str, str]:
    """MLflow client's rule: basic auth from ``MLFLOW_TRACKING_USERNAME``/``MLFLOW_TRACKING_PASSWORD``,
    else a bearer ``MLFLOW_TRACKING_TOKEN``; nothing when unset."""
    user, password = os.environ.get("MLFLOW_TRACKING_USERNAME"), os.environ.get("MLFLOW_TRACKING_PASSWORD")
    if user and password:
        return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}
    token = os.environ.get("MLFLOW_TRACKING_TOKEN")
    return {"Authorization": f"Bearer {token}"} if token else {}
