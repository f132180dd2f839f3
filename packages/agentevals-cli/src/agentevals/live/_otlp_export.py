"""Minimal OTLP/HTTP protobuf exporters for ``AgentEvals``: only the endpoint they are given, no environment.

The SDK's own exporters fall back on ``OTEL_EXPORTER_OTLP_*`` (headers, certificates, endpoint) for
anything not passed; these read nothing from the environment, so credentials meant for another backend
are never sent to the agentevals receiver. Encoding is the SDK's (``opentelemetry-exporter-otlp-proto-common``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

try:
    from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
except ImportError:  # SDKs before 1.39 name them LogExporter / LogExportResult
    from opentelemetry.sdk._logs.export import LogExporter as LogRecordExporter
    from opentelemetry.sdk._logs.export import (  # type: ignore[assignment]  # the same enum, older name
        LogExportResult as LogRecordExportResult,
    )

from ..core._http import HttpError, request

__all__ = ["OtlpHttpLogExporter", "OtlpHttpSpanExporter"]

log = logging.getLogger(__name__)

_RETRYABLE = {429, 502, 503, 504}


def _post(url: str, body: bytes, timeout: float) -> bool:
    """POST with the OTLP retry rule (retryable statuses, honouring Retry-After) until ``timeout`` is spent.

    No proxy from the environment: the spans go to the endpoint given, nowhere else."""
    deadline = time.monotonic() + timeout
    delay = 0.5
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        try:
            response = request("POST", url, body=body, timeout=left, deadline=left, proxies=False,
                               headers={"Content-Type": "application/x-protobuf"})
        except HttpError as exc:
            log.warning("agentevals: cannot export to %s: %s", url, exc)
            return False
        if response.ok:
            return True
        if response.status not in _RETRYABLE:
            log.warning("agentevals: %s answered HTTP %s", url, response.status)
            return False
        retry_after = response.headers.get("Retry-After", "")
        wait = float(retry_after) if retry_after.isdigit() else delay
        delay = min(delay * 2, 5.0)
        time.sleep(max(0.0, min(wait, deadline - time.monotonic())))


class _Exporter:
    def __init__(self, url: str, encode: Callable[[Any], Any], *, timeout: float = 10.0) -> None:
        self.url, self.encode, self.timeout = url, encode, timeout

    def send(self, items: Sequence[Any]) -> bool:
        return _post(self.url, self.encode(items).SerializeToString(), self.timeout)

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


class OtlpHttpSpanExporter(_Exporter, SpanExporter):
    """Spans as ``ExportTraceServiceRequest`` protobuf to ``url`` (``…/v1/traces``)."""

    def __init__(self, url: str, *, timeout: float = 10.0) -> None:
        super().__init__(url, encode_spans, timeout=timeout)

    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        return SpanExportResult.SUCCESS if self.send(spans) else SpanExportResult.FAILURE


class OtlpHttpLogExporter(_Exporter, LogRecordExporter):
    """Log records as ``ExportLogsServiceRequest`` protobuf to ``url`` (``…/v1/logs``)."""

    def __init__(self, url: str, *, timeout: float = 10.0) -> None:
        super().__init__(url, encode_logs, timeout=timeout)

    def export(self, batch: Sequence[Any]) -> LogRecordExportResult:
        return LogRecordExportResult.SUCCESS if self.send(batch) else LogRecordExportResult.FAILURE
