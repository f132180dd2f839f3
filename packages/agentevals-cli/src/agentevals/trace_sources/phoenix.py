"""Arize Phoenix as a trace source: a project's traces over Phoenix's REST API, results written back as
trace annotations.

``phoenix+http://HOST:6006?project=NAME&since=2h`` lists the project's traces that started in the window
(``GET /v1/projects/{project}/traces``, oldest first, cursor pages), then reads each trace's spans in
OTLP form (``GET /v1/projects/{project}/spans/otlpv1?trace_id=…``, cursor pages) and hands them on as one
OTLP JSON document per trace, so the same converters run as for files. Only one trace's spans are held at
a time: discovering trace ids first and fetching each trace whole (rather than walking the project's span
pages, which are ordered by span row and may spread one trace over many pages) keeps memory bounded and
every trace complete, even when some of its spans started outside the window.

Filters: ``trace_id=ID[,ID…]`` (those traces, whatever their time), ``attr.KEY=VALUE`` (traces with a span
whose attribute matches; Phoenix's span search ``attribute=KEY:VALUE``, the value read as JSON, so
``attr.n=3`` matches the number 3 and ``attr.id="3"`` the string; traces then come in that search's order,
newest matching span first), ``filter=`` (Phoenix's trace filter
expression), ``session_id=``. ``PHOENIX_API_KEY`` is sent as ``Authorization: Bearer …``.

Example::

    agentevals run 'phoenix+http://127.0.0.1:6006?project=shop&since=2h' --eval-set evals.json -m tool_trajectory_avg_score
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from typing import Any, ClassVar, Optional
from urllib.parse import quote

from .pull import PulledTrace, PullSource, SourceError, Verdict

__all__ = ["PhoenixSource"]

TRACE_PAGE = 100
"""Traces per page of ``/traces`` (Phoenix allows up to 1000)."""
SPAN_PAGE = 1000
"""Spans per page of ``/spans/otlpv1`` (Phoenix's maximum)."""
ANNOTATION_BATCH = 100
"""Trace annotations per ``POST /v1/trace_annotations``."""

_SCALARS = (("string_value", "stringValue"), ("bool_value", "boolValue"), ("int_value", "intValue"),
            ("double_value", "doubleValue"), ("bytes_value", "bytesValue"))


class PhoenixSource(PullSource):
    """One Phoenix project's traces (``phoenix+http://HOST:PORT?project=NAME&since=2h``)."""

    name: ClassVar[str] = "phoenix"
    summary: ClassVar[str] = "Arize Phoenix's REST API: a project's traces; --write-back adds trace annotations"
    uri_form: ClassVar[str] = "phoenix+http://HOST:PORT?project=NAME&since=2h"
    parameters: ClassVar[frozenset[str]] = frozenset({"project", "trace_id", "filter", "session_id", "attr."})
    credentials: ClassVar[tuple[str, ...]] = ("PHOENIX_API_KEY",)
    writes_back: ClassVar[str] = "trace annotations"
    default_port: ClassVar[Optional[int]] = 6006

    def __init__(self, item: str) -> None:
        super().__init__(item)
        key = os.environ.get("PHOENIX_API_KEY")
        if key:
            self.client.headers["Authorization"] = f"Bearer {key}"
        self.project = self.query.param("project") or "default"
        self._project_path = f"/v1/projects/{quote(self.project, safe='')}"

    def pull(self) -> Iterator[PulledTrace]:
        self._check_project()
        attributes = self.query.attributes()
        # attr.* alone is searched by Phoenix (span attributes); next to filter=/session_id= (a trace search)
        # it is checked here on each trace's spans.
        by_spans = bool(attributes) and not (self.query.param("filter") or self.query.param("session_id"))
        ids = self._named_ids() if self.query.param("trace_id") else \
            self._ids_by_span_attributes(attributes) if by_spans else self._ids_by_trace_search()
        for trace_id in ids:
            spans = self._spans(trace_id)
            if not spans or (attributes and not by_spans and not _matches(spans, attributes)):
                continue
            started = min((s["startTimeUnixNano"] for s in spans if s.get("startTimeUnixNano")), default=None)
            yield PulledTrace(trace_id, _document(spans, self.project), "otlp-json",
                              datetime.fromtimestamp(started / 1e9, timezone.utc) if started else None)

    def write_back(self, verdicts: Sequence[Verdict]) -> int:
        """Each verdict → a trace annotation named after the evaluator (``annotator_kind`` LLM for a judge,
        else CODE), ``{label: pass/fail, score, explanation}``, metadata with the run id, evaluator version
        and case id. Its ``identifier`` is ``agentevals:<run id>``: Phoenix upserts on (name, trace,
        identifier), so writing the same run back again updates those annotations, and another run adds
        its own beside them."""
        written = 0
        for i in range(0, len(verdicts), ANNOTATION_BATCH):
            batch = [_annotation(v) for v in verdicts[i:i + ANNOTATION_BATCH]]
            # sync: Phoenix upserts before answering, and a trace it does not hold is a 404 naming it
            # ("404 Not Found: Traces with IDs … do not exist."), not a silent drop.
            self.client.send("POST", "/v1/trace_annotations", params={"sync": "true"}, body={"data": batch})
            written += len(batch)
        return written

    def _check_project(self) -> None:
        """The project exists (by name or id), else one line naming the projects there are. (Phoenix's 404
        for an unknown project is plain text, so the list is read instead.)"""
        names: list[str] = []
        cursor: Optional[str] = None
        while True:
            page = self.client.get_json("/v1/projects", params={"limit": 100, "cursor": cursor}) or {}
            for project in page.get("data") or []:
                if self.project in (project.get("name"), project.get("id")):
                    return
                names.append(str(project.get("name")))
            cursor = page.get("next_cursor")
            if not cursor:
                break
        raise SourceError(f"{self.label}: Phoenix has no project {self.project!r} "
                          f"(projects: {', '.join(names) or 'none'})")

    def _window_params(self) -> list[tuple[str, Any]]:
        start, end = self.window
        return [("start_time", start.isoformat()), ("end_time", end.isoformat())]

    def _named_ids(self) -> Iterator[str]:
        for value in self.query.params.get("trace_id", ()):
            yield from (part.strip().lower() for part in value.split(",") if part.strip())

    def _ids_by_trace_search(self) -> Iterator[str]:
        """Traces that started in the window, oldest first (``GET …/traces``, cursor pages)."""
        params: list[tuple[str, Any]] = [*self._window_params(), ("sort", "start_time"), ("order", "asc"),
                                         ("limit", min(TRACE_PAGE, self.limit or TRACE_PAGE)),
                                         ("filter", self.query.param("filter"))]
        params += [("session_identifier", s) for s in self.query.params.get("session_id", ())]
        cursor: Optional[str] = None
        while True:
            page = self.client.get_json(f"{self._project_path}/traces", params=[*params, ("cursor", cursor)]) or {}
            for trace in page.get("data") or []:
                yield trace["trace_id"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def _ids_by_span_attributes(self, attributes: dict[str, str]) -> Iterator[str]:
        """Traces with a span that started in the window and matches every ``attr.*`` (Phoenix's span
        search, newest span first); each trace once."""
        params = [*self._window_params(), ("limit", SPAN_PAGE)]
        params += [("attribute", f"{key}:{value}") for key, value in attributes.items()]
        seen: set[str] = set()
        cursor: Optional[str] = None
        while True:
            page = self.client.get_json(f"{self._project_path}/spans/otlpv1", params=[*params, ("cursor", cursor)]) or {}
            for span in page.get("data") or []:
                if span.get("trace_id") and span["trace_id"] not in seen:
                    seen.add(span["trace_id"])
                    yield span["trace_id"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def _spans(self, trace_id: str) -> list[dict[str, Any]]:
        """Every span of one trace, as OTLP JSON spans (camelCase, as files hold them)."""
        spans: list[dict[str, Any]] = []
        cursor: Optional[str] = None
        while True:
            page = self.client.get_json(f"{self._project_path}/spans/otlpv1",
                                        params=[("trace_id", trace_id), ("limit", SPAN_PAGE), ("cursor", cursor)]) or {}
            spans.extend(_span(raw) for raw in page.get("data") or [])
            cursor = page.get("next_cursor")
            if not cursor:
                return spans


def _document(spans: list[dict[str, Any]], project: str) -> dict[str, Any]:
    """One trace's spans as an OTLP JSON document. Phoenix keeps no resource attributes but the project."""
    spans.sort(key=lambda s: (s.get("startTimeUnixNano") or 0, s["spanId"]))
    resource = {"attributes": [{"key": "openinference.project.name", "value": {"stringValue": project}}]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {}, "spans": spans}]}]}


def _span(raw: dict[str, Any]) -> dict[str, Any]:
    """Phoenix's OTLP span (snake_case, every value field present, null but one) → OTLP JSON."""
    span: dict[str, Any] = {"traceId": raw.get("trace_id"), "spanId": raw.get("span_id"), "name": raw.get("name")}
    if raw.get("parent_span_id"):
        span["parentSpanId"] = raw["parent_span_id"]
    if raw.get("kind"):
        span["kind"] = raw["kind"]
    for key, camel in (("start_time_unix_nano", "startTimeUnixNano"), ("end_time_unix_nano", "endTimeUnixNano")):
        if raw.get(key) is not None:
            span[camel] = _microseconds(raw[key])
    span["attributes"] = _key_values(raw.get("attributes"))
    span["events"] = [{"name": e.get("name") or "", "timeUnixNano": _microseconds(e.get("time_unix_nano") or 0),
                       "attributes": _key_values(e.get("attributes"))} for e in raw.get("events") or []]
    status = raw.get("status") or {}
    span["status"] = {k: v for k, v in (("code", status.get("code")), ("message", status.get("message"))) if v}
    return span


def _microseconds(ns: int) -> int:
    """Phoenix stores microseconds and answers them through a float (…48 for …00): round back."""
    return (int(ns) + 500) // 1000 * 1000


def _key_values(items: Any) -> list[dict[str, Any]]:
    out = []
    for item in items or []:
        value = _value(item.get("value") or {})
        if value is not None:
            out.append({"key": item.get("key"), "value": value})
    return out


def _value(value: dict[str, Any]) -> Optional[dict[str, Any]]:
    for key, camel in _SCALARS:
        if value.get(key) is not None:
            return {camel: value[key]}
    if value.get("array_value") is not None:
        values = [v for v in (_value(x) for x in value["array_value"].get("values") or []) if v is not None]
        return {"arrayValue": {"values": values}}
    if value.get("kvlist_value") is not None:
        return {"kvlistValue": {"values": _key_values(value["kvlist_value"].get("values"))}}
    return None


def _matches(spans: list[dict[str, Any]], attributes: dict[str, str]) -> bool:
    """A span carries every ``attr.*`` (compared as Phoenix does: the value read as JSON, else as text)."""
    for span in spans:
        have = {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes") or []}
        if all(key in have and _same(have[key], wanted) for key, wanted in attributes.items()):
            return True
    return False


def _same(have: Any, wanted: str) -> bool:
    try:
        parsed = json.loads(wanted)
    except ValueError:
        parsed = wanted
    if isinstance(parsed, (int, float)) and not isinstance(parsed, bool) and isinstance(have, (str, int, float)):
        try:
            return float(have) == float(parsed)
        except ValueError:
            return False
    return have == parsed if not isinstance(parsed, str) else str(have) == parsed


def _annotation(verdict: Verdict) -> dict[str, Any]:
    metadata = {"agentevals_run_id": verdict.run_id, "evaluator_version": verdict.evaluator_version,
                "case_id": verdict.case_id, "status": verdict.status}
    return {
        "trace_id": verdict.trace_id.lower(),
        "name": verdict.evaluator,
        "annotator_kind": "LLM" if verdict.judge else "CODE",
        "result": {"label": verdict.label, "score": verdict.score, "explanation": verdict.explanation},
        "metadata": {k: v for k, v in metadata.items() if v is not None},
        "identifier": f"agentevals:{verdict.run_id}",
    }
