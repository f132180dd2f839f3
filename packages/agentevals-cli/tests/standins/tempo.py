"""A stand-in for Grafana Tempo's HTTP API (Tempo 2.x, port 3200) over a ``TraceBank`` built from real
traces (the shipped Tempo export, or Jaeger traces in the OTLP form Tempo would have received).

- ``GET /api/search``: ``q`` (TraceQL: this stand-in reads the common subset ``{}``,
  ``{ resource.service.name = "x" }``, ``{ name = "x" }``, ``{ span.KEY = "x" }``, ``{ .KEY = "x" }``
  joined by ``&&``; anything else is a 400 with Tempo's text error ``invalid TraceQL query: …``), ``limit``
  (default 20), ``start``/``end`` (Unix seconds), ``spss``; answers ``{"traces": [{"traceID",
  "rootServiceName", "rootTraceName", "startTimeUnixNano", "durationMs"}], "metrics": {…}}``; traces
  overlapping the window, in no promised order (this one: oldest first, so clients cannot rely on it).
- ``GET /api/v2/traces/{id}``: ``{"trace": {"resourceSpans": […]}, "status": "COMPLETE"}`` or 404.
- ``tenant="t"``: multi-tenant mode: a request without ``X-Scope-OrgID`` is a 401 ``no org id``; another
  tenant sees no traces.

    python -m standins.tempo --traces 100000      # prints its port; serves until killed
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional, Union

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "standins"

from ._server import Reply, Request, StandIn
from ._traces import TraceBank, load_templates

__all__ = ["TempoStandIn", "parse_traceql"]

_CONDITION = re.compile(r'\s*(resource\.|span\.|\.)?([A-Za-z_][\w.]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*')


def parse_traceql(query: str) -> dict[str, str]:
    """``{ resource.service.name = "a" && name = "b" }`` → ``{"service.name": "a", "name": "b"}``;
    ``ValueError`` with Tempo's parse message for anything this stand-in does not read."""
    text = query.strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"parse error at line 1, col 1: syntax error: unexpected {text[:1]!r}, expecting '{{'")
    body = text[1:-1].strip()
    conditions: dict[str, str] = {}
    if not body:
        return conditions
    at = 2
    for part in body.split("&&"):
        m = _CONDITION.fullmatch(part)
        if not m:
            raise ValueError(f"parse error at line 1, col {at}: syntax error: unexpected IDENTIFIER")
        scope, key, value = m.groups()
        conditions[("" if scope else "@") + key if key in ("name", "status") and not scope else key] = value
        at += len(part) + 2
    return conditions


class TempoStandIn(StandIn):
    """``TempoStandIn(bank, tenant=None)``."""

    def __init__(self, bank: TraceBank, *, tenant: Optional[str] = None) -> None:
        super().__init__()
        self.bank = bank
        self.tenant = tenant

    @classmethod
    def from_files(cls, paths: Sequence[Union[str, Path]], **kwargs: Any) -> TempoStandIn:
        return cls(TraceBank(load_templates(paths)), **kwargs)

    def handle(self, request: Request) -> Reply:
        if self.tenant is not None:
            org = request.headers.get("X-Scope-OrgID")
            if not org:
                return Reply(401, "no org id\n")
            if org != self.tenant:
                return Reply(200, {"traces": [], "metrics": {}}) if request.path == "/api/search" \
                    else Reply(404, "trace not found\n")
        if request.path == "/api/search":
            return self._search(request)
        if request.path.startswith("/api/v2/traces/"):
            return self._trace(request.path.rsplit("/", 1)[1])
        if request.path == "/api/echo":
            return Reply(200, "echo")
        return Reply(404, "404 page not found\n")

    def _search(self, request: Request) -> Reply:
        try:
            conditions = parse_traceql(request.param("q") or "{}")
        except ValueError as exc:
            return Reply(400, f"invalid TraceQL query: {exc}\n")
        try:
            limit = int(request.param("limit") or 20)
            start = int(request.param("start") or 0)
            end = int(request.param("end") or 0)
        except ValueError as exc:
            return Reply(400, f"{exc}\n")
        if not start or not end:  # no window: the recent traces (ingesters)
            end = self.bank.newest_ns // 10**9 + 1
            start = end - 3600
        if start > end:
            return Reply(400, "http request failed: invalid start and end: start should be before end\n")
        service = conditions.pop("service.name", None)
        operation = conditions.pop("@name", None)
        matches = list(self.bank.search(start * 10**9, end * 10**9, service=service, operation=operation,
                                        attributes=conditions, span_in_window=False))
        hits = []
        for i in reversed(matches):  # oldest first: Tempo promises no order
            template = self.bank.template(i)
            hits.append({"traceID": self.bank.trace_id(i), "rootServiceName": template.root_service,
                         "rootTraceName": template.root_name, "startTimeUnixNano": str(self.bank.start_ns(i)),
                         "durationMs": self.bank.duration_ns(i) // 10**6})
            if len(hits) >= limit:
                break
        return Reply(200, {"traces": hits, "metrics": {"inspectedTraces": len(matches), "completedJobs": 1,
                                                       "totalJobs": 1}})

    def _trace(self, trace_id: str) -> Reply:
        i = self.bank.index(trace_id)
        if i is None:
            return Reply(404, "trace not found\n")
        return Reply(200, {"trace": {"resourceSpans": self.bank.otlp(i)}, "status": "COMPLETE"})


def main(argv: Optional[list[str]] = None) -> None:
    repo = Path(__file__).resolve().parents[4]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=None)
    parser.add_argument("--spacing", type=float, default=0.05)
    parser.add_argument("files", nargs="*", default=[str(repo / "examples/traces/helm.json"),
                                                     str(repo / "examples/traces/k8s.json")])
    args = parser.parse_args(argv)
    stand_in = TempoStandIn(TraceBank(load_templates(args.files), args.traces, spacing=args.spacing))
    stand_in.record = False
    stand_in.serve_forever()


if __name__ == "__main__":
    main()
