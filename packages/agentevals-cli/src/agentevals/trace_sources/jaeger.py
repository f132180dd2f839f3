"""Jaeger's query API as a trace source: ``jaeger+http://HOST:16686?service=NAME&since=2h``.

API v3 (the default): ``GET /api/v3/traces`` searches (``query.service_name``, ``query.operation_name``,
``query.attributes`` as a JSON map, both ``query.start_time_min``/``query.start_time_max`` in RFC 3339,
``query.search_depth``) and answers OTLP JSON wrapped in ``{"result": …}`` (newer releases stream several
such objects in one body); ``GET /api/v3/traces/{id}`` fetches one trace. ``api=v1`` uses the legacy
``/api/traces`` (Jaeger JSON, times in microseconds). A search answers whole traces, so nothing is fetched
twice; the answer is split into one trace per id. Jaeger has no cursor: when a search returns a full page,
the window is read in slices sized to the density seen (duplicates are dropped).

    agentevals run 'jaeger+http://127.0.0.1:16686?service=helm_agent&since=2h' --eval-set golden.json
    agentevals run 'jaeger+http://127.0.0.1:16686?trace_id=3e28…,d497…' -m tool_trajectory_avg_score
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any, ClassVar, Optional

from ..errors import ConfigError
from .pull import PulledTrace, PullSource, SourceError, env_credentials

__all__ = ["JaegerSource", "split_otlp", "v3_results"]

PAGE = 50
"""Traces asked for per search (``query.search_depth``/``limit``): one answer holds whole traces (≈ 100 KB
each for an agent's trace), so this bounds the memory of one answer."""
MAX_PAGE = 800
"""The most asked for when many traces overlap one narrow slice."""
NARROW = timedelta(seconds=1)
"""A slice is not halved below this: traces last seconds, so a narrower one finds the same traces."""

log = logging.getLogger("agentevals.engine")


def v3_results(body: bytes) -> list[Any]:
    """The ``result`` of every ``{"result": …}`` object in a v3 answer (one, or several streamed one after
    the other, with or without newlines between them)."""
    text = body.decode("utf-8")
    decoder = json.JSONDecoder()
    out: list[Any] = []
    at = 0
    while True:
        while at < len(text) and text[at] in " \t\r\n":
            at += 1
        if at >= len(text):
            return out
        value, at = decoder.raw_decode(text, at)
        if isinstance(value, dict) and "error" in value and "result" not in value:
            raise ValueError(str((value["error"] or {}).get("message") or value["error"]))
        out.append(value.get("result") if isinstance(value, dict) else None)


def split_otlp(result: Any) -> dict[str, list[dict[str, Any]]]:
    """OTLP ``resourceSpans`` of several traces → ``{trace_id: resourceSpans of that trace}`` in first-seen
    order (a resource's scopes and spans kept in order, split where the trace id changes)."""
    traces: dict[str, list[dict[str, Any]]] = {}
    for batch in (result or {}).get("resourceSpans") or ():
        per: dict[str, dict[str, Any]] = {}
        for scope in batch.get("scopeSpans") or ():
            for span in scope.get("spans") or ():
                trace_id = str(span.get("traceId", "")).lower()
                own = per.get(trace_id)
                if own is None:
                    own = per[trace_id] = {"resource": batch.get("resource") or {}, "scopeSpans": []}
                    traces.setdefault(trace_id, []).append(own)
                if not own["scopeSpans"] or own["scopeSpans"][-1]["_of"] is not scope:
                    own["scopeSpans"].append({"_of": scope, "scope": scope.get("scope") or {}, "spans": []})
                own["scopeSpans"][-1]["spans"].append(span)
    for batches in traces.values():
        for batch in batches:
            for scope in batch["scopeSpans"]:
                del scope["_of"]
    return traces


def _first_ns(batches: list[dict[str, Any]]) -> int:
    """The earliest span start of a trace, in ns."""
    return min(int(s.get("startTimeUnixNano") or 0) for b in batches for sc in b["scopeSpans"] for s in sc["spans"])


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _from_ns(ns: int) -> datetime:
    return datetime.fromtimestamp(ns // 10**9, timezone.utc) + timedelta(microseconds=(ns % 10**9) // 1000)


class JaegerSource(PullSource):
    """``jaeger+http://HOST:PORT?service=NAME`` (``operation=``, ``attr.KEY=VALUE``, ``trace_id=A,B``,
    ``api=v1``, and the common ``since``/``start``/``end``/``limit``/``timeout``/``retries``)."""

    name: ClassVar[str] = "jaeger"
    summary: ClassVar[str] = "Jaeger's query API (v3 OTLP JSON; api=v1: the legacy JSON API)"
    uri_form: ClassVar[str] = "jaeger+http://HOST:16686?service=NAME&since=2h"
    parameters: ClassVar[frozenset[str]] = frozenset({"service", "operation", "attr.", "trace_id", "api"})
    credentials: ClassVar[tuple[str, ...]] = ("JAEGER_TOKEN",)
    """Optional: a bearer token for a Jaeger behind an authenticating proxy."""
    default_port: ClassVar[Optional[int]] = 16686

    def __init__(self, item: str) -> None:
        super().__init__(item)
        self.api = (self.query.param("api") or "v3").lower()
        if self.api not in ("v1", "v3"):
            raise ConfigError(f"{item}: api={self.api}: say api=v3 (the default) or api=v1")
        self.trace_ids = [t.strip().lower() for v in self.query.params.get("trace_id", []) for t in v.split(",")
                          if t.strip()]
        if not self.trace_ids and not self.query.param("service"):
            raise ConfigError(f"{item}: say service=NAME (Jaeger searches one service at a time) or trace_id=ID")
        token = env_credentials("JAEGER_TOKEN")
        if token:
            self.client.headers["Authorization"] = f"Bearer {token[0]}"

    def auth_hint(self) -> str:
        return "set JAEGER_TOKEN to the bearer token your Jaeger's proxy expects"

    # -- the stream ------------------------------------------------------------------------------------
    def pull(self) -> Iterator[PulledTrace]:
        if self.trace_ids:
            yield from self._by_id()
            return
        found = 0
        for pulled in self._search():
            found += 1
            yield pulled
        if not found:
            self._check_service()

    def _by_id(self) -> Iterator[PulledTrace]:
        missing = []
        for trace_id in self.trace_ids:
            if self.api == "v1":
                status, body = self.client.send("GET", f"/api/traces/{trace_id}", ok=(404,))
                traces = (body or {}).get("data") or [] if status == 200 else []
                for trace in traces:
                    yield self._v1_trace(trace)
            else:
                status, results = self.client.send("GET", f"/api/v3/traces/{trace_id}", ok=(404,),
                                                   decode=self._decode)
                traces = [] if status == 404 else [t for r in results for t in split_otlp(r).items()]
                for tid, batches in traces:
                    yield self._v3_trace(tid, batches)
            if not traces:
                missing.append(trace_id)
        if missing:
            raise SourceError(f"{self.label}: trace not found: {', '.join(missing)}")

    def _search(self) -> Iterator[PulledTrace]:
        """Newest first, window by window. Jaeger has no cursor and a trace matches by any span starting
        in the window, so moving the end back to a page's oldest time re-reads every trace that spans it
        (a page of long traces could make no progress). Instead the window is cut into slices read from
        the newest: a slice whose search comes back full is halved; the next slice's width aims at half a
        page from the density just seen. A trace crossing a slice edge is read twice (dropped as a
        duplicate). When a slice of a second is still full, more traces are asked for at once (up to
        ``MAX_PAGE``); beyond that the page is kept as it is (logged: some traces may be lost)."""
        start, end = self.window
        width = end - start
        depth = PAGE
        previous: set[str] = set()
        read = 0
        while end > start:
            page = depth if self.limit is None else min(depth, self.limit - read)
            low = max(start, end - width)
            hits = self._search_page(low, end, page)
            fresh = [pulled for pulled in hits if pulled.trace_id not in previous]
            full = len(hits) >= page
            if full and self.limit is not None and read + len(fresh) >= self.limit:
                yield from fresh
                return
            if full and end - low > NARROW:
                width = (end - low) / 2
                continue
            if full and depth < MAX_PAGE:  # as many traces overlap a narrow slice: ask for more at once
                depth *= 2
                continue
            if full:
                log.warning("%s: more than %d traces overlap %s; some may be missed", self.label, page, NARROW)
            yield from fresh
            read += len(fresh)
            if self.limit is not None and read >= self.limit:
                return
            previous = {pulled.trace_id for pulled in hits}
            end = low
            width = width * min(4.0, (depth / 2) / max(1, len(hits)))

    def _search_page(self, start: datetime, end: datetime, page: int) -> list[PulledTrace]:
        service, operation, attributes = self.query.param("service"), self.query.param("operation"), \
            self.query.attributes()
        out: list[PulledTrace] = []
        if self.api == "v1":
            params: dict[str, Any] = {"service": service, "operation": operation,
                                      "tags": json.dumps(attributes) if attributes else None,
                                      "start": int(start.timestamp() * 1e6), "end": int(end.timestamp() * 1e6),
                                      "limit": page}
            body = self.client.get_json("/api/traces", params=params) or {}
            return [self._v1_trace(trace) for trace in body.get("data") or ()]
        params = {"query.service_name": service, "query.operation_name": operation,
                  "query.attributes": json.dumps(attributes) if attributes else None,
                  "query.start_time_min": _rfc3339(start), "query.start_time_max": _rfc3339(end),
                  "query.search_depth": page}
        status, results = self.client.send("GET", "/api/v3/traces", params=params, ok=(404,), decode=self._decode)
        if status == 404:  # Jaeger v2 answers "No traces found" with a 404
            return out
        for result in results:
            for trace_id, batches in split_otlp(result).items():
                out.append(self._v3_trace(trace_id, batches))
        return out

    def _decode(self, body: bytes) -> list[Any]:
        try:
            return v3_results(body) if body.strip() else []
        except ValueError as exc:
            raise SourceError(f"{self.label}: the v3 answer is not {{\"result\": …}} JSON: {exc}") from None

    @staticmethod
    def _v3_trace(trace_id: str, batches: list[dict[str, Any]]) -> PulledTrace:
        return PulledTrace(trace_id, {"resourceSpans": batches}, "otlp-json", _from_ns(_first_ns(batches)))

    @staticmethod
    def _v1_trace(trace: dict[str, Any]) -> PulledTrace:
        starts = [int(s.get("startTime") or 0) for s in trace.get("spans") or ()]
        started = _from_ns(min(starts) * 1000) if starts else None
        return PulledTrace(str(trace.get("traceID", "")).lower(), {"data": [trace]}, "jaeger-json", started)

    def _check_service(self) -> None:
        """Nothing found: say so when the service is unknown to Jaeger (a typo reads as an empty window)."""
        service = self.query.param("service")
        path = "/api/services" if self.api == "v1" else "/api/v3/services"
        try:
            body = self.client.get_json(path) or {}
        except SourceError:
            return  # the search itself worked: an empty window it is
        known = body.get("data") if self.api == "v1" else body.get("services")
        if isinstance(known, list) and service not in known:
            names = ", ".join(sorted(str(k) for k in known)[:20]) or "none"
            raise SourceError(f"{self.label}: unknown service {service!r} (Jaeger knows: {names})")
