"""A stand-in for Jaeger's query service (Jaeger v2, ``jaeger-query`` HTTP port 16686): API v3 (OTLP JSON
in ``{"result": …}``) and the legacy API v1 (``/api/traces``, Jaeger JSON), over a ``TraceBank`` built from
the real shipped Jaeger traces.

API v3 (``cmd/query/app/apiv3`` in jaegertracing/jaeger), as it answers:
- ``GET /api/v3/traces``: ``query.service_name`` (required by the span store), ``query.operation_name``,
  ``query.attributes`` (a JSON map), ``query.start_time_min``/``query.start_time_max`` (RFC 3339, BOTH
  required: else 400), ``query.search_depth`` (how many traces); the camelCase names of newer releases
  (``query.serviceName``, …) are read too. Newest traces first. Nothing found → 404 "No traces found".
- ``GET /api/v3/traces/{trace_id}`` → the trace, or 404 "trace not found".
- ``GET /api/v3/services`` → ``{"services": [...]}``.
- Errors: ``{"error": {"httpCode": N, "message": "…"}}`` with that status.
- ``stream=True``: the answer is several ``{"result": …}`` objects, one per trace (newer releases stream).

API v1 (``cmd/query/app/http_handler.go``): ``GET /api/traces`` (``service`` required, ``operation``,
``tags`` JSON map, ``start``/``end`` in microseconds, ``limit`` default 20, ``lookback``), ``GET
/api/traces/{id}``, ``GET /api/services``; answers ``{"data": …, "total", "limit", "offset", "errors"}``,
errors ``{"data": null, …, "errors": [{"code": N, "msg": "…"}]}``.

    python -m standins.jaeger --traces 100000     # prints its port; serves until killed
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Optional, Union

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "standins"

from ._server import Reply, Request, StandIn
from ._traces import TraceBank, load_templates

__all__ = ["JaegerStandIn"]

_V3_ALIASES = {"query.service_name": "query.serviceName", "query.operation_name": "query.operationName",
               "query.start_time_min": "query.startTimeMin", "query.start_time_max": "query.startTimeMax",
               "query.search_depth": "query.searchDepth"}


def _rfc3339_ns(text: str) -> int:
    value = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    fraction = ""
    if "." in value:  # Python's fromisoformat keeps microseconds only
        head, tail = value.split(".", 1)
        digits = re.match(r"\d*", tail).group(0)  # type: ignore[union-attr]
        fraction, value = digits, head + tail[len(digits):]
    moment = datetime.fromisoformat(value)
    return int(moment.timestamp()) * 10**9 + int((fraction + "000000000")[:9] or 0)


class JaegerStandIn(StandIn):
    """``JaegerStandIn(bank)``; ``stream=True`` answers v3 searches as one ``{"result": …}`` per trace."""

    def __init__(self, bank: TraceBank, *, stream: bool = False) -> None:
        super().__init__()
        self.bank = bank
        self.stream = stream

    @classmethod
    def from_files(cls, paths: Sequence[Union[str, Path]], **kwargs: Any) -> JaegerStandIn:
        return cls(TraceBank(load_templates(paths)), **kwargs)

    def handle(self, request: Request) -> Reply:
        path = request.path.rstrip("/")
        if path == "/api/v3/traces":
            return self._v3_search(request)
        if path.startswith("/api/v3/traces/"):
            return self._v3_trace(path.rsplit("/", 1)[1])
        if path == "/api/v3/services":
            return Reply(200, {"services": self.bank.services()})
        if path == "/api/traces":
            return self._v1_search(request)
        if path.startswith("/api/traces/"):
            return self._v1_trace(path.rsplit("/", 1)[1])
        if path == "/api/services":
            names = self.bank.services()
            return Reply(200, {"data": names, "total": len(names), "limit": 0, "offset": 0, "errors": None})
        return Reply(404, "404 page not found\n")

    # -- v3 --------------------------------------------------------------------------------------------
    @staticmethod
    def _v3_error(status: int, message: str) -> Reply:
        return Reply(status, {"error": {"httpCode": status, "message": message}})

    def _v3_result(self, indices: list[int]) -> Reply:
        if self.stream:
            return Reply(200, chunks=(json.dumps({"result": {"resourceSpans": self.bank.otlp(i)}}).encode() + b"\n"
                                      for i in indices))
        return Reply(200, {"result": {"resourceSpans": [b for i in indices for b in self.bank.otlp(i)]}})

    def _v3_search(self, request: Request) -> Reply:
        def param(name: str) -> tuple[str, str]:
            canonical = _V3_ALIASES.get(name, name)
            if request.param(canonical):
                return request.param(canonical) or "", canonical
            return request.param(name, "") or "", name

        (tmin, tmin_name), (tmax, tmax_name) = param("query.start_time_min"), param("query.start_time_max")
        if not tmin or not tmax:
            return self._v3_error(400, "query.start_time_min and query.start_time_max are required")
        try:
            min_ns = _rfc3339_ns(tmin)
        except ValueError as exc:
            return self._v3_error(400, f"malformed parameter {tmin_name}: {exc}")
        try:
            max_ns = _rfc3339_ns(tmax)
        except ValueError as exc:
            return self._v3_error(400, f"malformed parameter {tmax_name}: {exc}")
        attributes: dict[str, str] = {}
        if request.param("query.attributes"):
            try:
                attributes = json.loads(request.param("query.attributes") or "{}")
                assert isinstance(attributes, dict)
            except (ValueError, AssertionError) as exc:
                return self._v3_error(400, f"malformed parameter query.attributes: {exc}")
        depth_text, depth_name = param("query.search_depth")
        try:
            depth = int(depth_text) if depth_text else 0
        except ValueError:
            return self._v3_error(400, f"malformed parameter {depth_name}: strconv.ParseInt: parsing "
                                       f"{depth_text!r}: invalid syntax")
        service, operation = param("query.service_name")[0], param("query.operation_name")[0]
        if not service:
            return self._v3_error(400, "service name must be set")  # the span store's own check
        found = self._search(min_ns, max_ns, service, operation, attributes, depth or 100)
        if not found:
            return self._v3_error(404, "No traces found")
        return self._v3_result(found)

    def _search(self, min_ns: int, max_ns: int, service: str, operation: str, attributes: dict[str, str],
                depth: int) -> list[int]:
        found: list[int] = []
        for i in self.bank.search(min_ns, max_ns, service=service, operation=operation or None,
                                  attributes={k: str(v) for k, v in attributes.items()}):
            found.append(i)
            if len(found) >= depth:
                break
        return found

    def _v3_trace(self, trace_id: str) -> Reply:
        try:
            int(trace_id, 16)
        except ValueError:
            return self._v3_error(400, f"malformed parameter trace_id: strconv.ParseUint: parsing {trace_id!r}: "
                                       "invalid syntax")
        i = self.bank.index(trace_id)
        if i is None:
            return self._v3_error(404, "trace not found")
        return self._v3_result([i])

    # -- v1 --------------------------------------------------------------------------------------------
    @staticmethod
    def _v1(data: Any, status: int = 200, errors: Optional[list[dict[str, Any]]] = None) -> Reply:
        total = len(data) if isinstance(data, list) else 0
        return Reply(status, {"data": data, "total": total, "limit": 0, "offset": 0, "errors": errors})

    def _v1_error(self, status: int, message: str) -> Reply:
        return self._v1(None, status, [{"code": status, "msg": message}])

    def _v1_search(self, request: Request) -> Reply:
        service = request.param("service")
        if not service:
            return self._v1_error(400, "parameter 'service' is required")
        try:
            end_us = int(request.param("end") or 0) or None
            start_us = int(request.param("start") or 0) or None
            limit = int(request.param("limit") or 20)
        except ValueError as exc:
            return self._v1_error(400, f"unable to parse param: {exc}")
        tags: dict[str, str] = {}
        for text in request.query.get("tags", []):
            try:
                tags.update(json.loads(text))
            except ValueError:
                return self._v1_error(400, f"malformed 'tags' parameter: {text}")
        now_us = self.bank.newest_ns // 1000 + 3600 * 10**6
        end_us = end_us or now_us
        start_us = start_us or end_us - 3600 * 10**6  # the default lookback: 1h
        found = self._search(start_us * 1000, end_us * 1000, service, request.param("operation") or "", tags, limit)
        return self._v1([self.bank.jaeger(i) for i in found])

    def _v1_trace(self, trace_id: str) -> Reply:
        i = self.bank.index(trace_id)
        if i is None:
            return self._v1_error(404, "trace not found")
        return self._v1([self.bank.jaeger(i)])


def main(argv: Optional[list[str]] = None) -> None:
    here = Path(__file__).resolve()
    repo = here.parents[4]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=None, help="how many traces (default: one per template)")
    parser.add_argument("--spacing", type=float, default=0.05, help="seconds between trace starts")
    parser.add_argument("--stream", action="store_true", help="v3 answers as one {result} per trace")
    parser.add_argument("files", nargs="*", default=[str(repo / "examples/traces/helm.json"),
                                                     str(repo / "examples/traces/k8s.json")])
    args = parser.parse_args(argv)
    bank = TraceBank(load_templates(args.files), args.traces, spacing=args.spacing)
    stand_in = JaegerStandIn(bank, stream=args.stream)
    stand_in.record = False
    stand_in.serve_forever()


if __name__ == "__main__":
    main()
