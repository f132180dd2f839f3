"""Grafana Tempo as a trace source: ``tempo+http://HOST:3200?q=TRACEQL&since=2h``.

``GET /api/search`` (``q`` = TraceQL, ``limit``, ``start``/``end`` in Unix seconds, ``spss``) lists trace
ids; each is then fetched with ``GET /api/v2/traces/{id}`` (OTLP JSON under ``{"trace": …}``), one at a
time. Tempo's search has no cursor and no guaranteed order: when a search returns a full page, the window
is split in two and each half searched (newest half first), down to one second; ids already read are
skipped. ``tenant=`` sends ``X-Scope-OrgID``; ``TEMPO_TOKEN`` (optional) a bearer token.

    agentevals run 'tempo+http://127.0.0.1:3200?q={resource.service.name="helm_agent"}&since=2h' -m …
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any, ClassVar, Optional

from .pull import PulledTrace, PullSource, SourceError, env_credentials

__all__ = ["TempoSource"]

PAGE = 500
"""Trace ids asked for per search (``limit``): a search answers summaries only, so a page is cheap."""


class TempoSource(PullSource):
    """``tempo+http://HOST:PORT?q=TRACEQL`` (``tenant=``, ``spss=``, and the common parameters)."""

    name: ClassVar[str] = "tempo"
    summary: ClassVar[str] = "Grafana Tempo: TraceQL search, then each trace by id (OTLP JSON)"
    uri_form: ClassVar[str] = "tempo+http://HOST:3200?q={TRACEQL}&since=2h"
    parameters: ClassVar[frozenset[str]] = frozenset({"q", "tenant", "spss"})
    credentials: ClassVar[tuple[str, ...]] = ("TEMPO_TOKEN",)
    """Optional: a bearer token for a Tempo behind an authenticating gateway."""
    default_port: ClassVar[Optional[int]] = 3200

    def __init__(self, item: str) -> None:
        super().__init__(item)
        tenant = self.query.param("tenant")
        if tenant:
            self.client.headers["X-Scope-OrgID"] = tenant
        token = env_credentials("TEMPO_TOKEN")
        if token:
            self.client.headers["Authorization"] = f"Bearer {token[0]}"

    def auth_hint(self) -> str:
        return "set tenant= (X-Scope-OrgID) or TEMPO_TOKEN"

    def pull(self) -> Iterator[PulledTrace]:
        seen: set[str] = set()
        for trace_id, started in self._ids(*self.window, seen):
            yield self._fetch(trace_id, started)

    def _ids(self, start: datetime, end: datetime, seen: set[str]) -> Iterator[tuple[str, Optional[datetime]]]:
        """Ids of the traces in [start, end], newest window first, each once."""
        page = PAGE if self.limit is None else min(PAGE, self.limit)
        params: dict[str, Any] = {"q": self.query.param("q") or "{}", "limit": page,
                                  "start": int(start.timestamp()), "end": int(-(-end.timestamp() // 1)),
                                  "spss": self.query.param("spss")}
        body = self.client.get_json("/api/search", params=params) or {}
        hits = body.get("traces") or []
        if len(hits) >= page and end - start > timedelta(seconds=1):
            middle = start + (end - start) / 2
            yield from self._ids(middle, end, seen)
            yield from self._ids(start, middle, seen)
            return
        for hit in hits:
            trace_id = str(hit.get("traceID", "")).lower()
            if not trace_id or trace_id in seen:
                continue
            seen.add(trace_id)
            started = None
            if hit.get("startTimeUnixNano"):
                ns = int(hit["startTimeUnixNano"])
                started = datetime.fromtimestamp(ns // 10**9, timezone.utc) + timedelta(microseconds=ns % 10**9 // 1000)
            yield trace_id, started

    def _fetch(self, trace_id: str, started: Optional[datetime]) -> PulledTrace:
        status, body = self.client.send("GET", f"/api/v2/traces/{trace_id}", ok=(404,))
        if status == 404:
            raise SourceError(f"{self.label}: trace {trace_id} was found by the search but not by "
                              f"/api/v2/traces/{trace_id} (404)")
        trace = (body or {}).get("trace") if isinstance(body, dict) else None
        if not isinstance(trace, dict):
            raise SourceError(f"{self.label}: /api/v2/traces/{trace_id} answered no 'trace' object")
        batches = trace.get("resourceSpans") if "resourceSpans" in trace else trace.get("batches") or []
        return PulledTrace(trace_id, {"resourceSpans": batches}, "otlp-json", started)
