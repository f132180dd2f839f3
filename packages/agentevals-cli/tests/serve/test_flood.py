"""A flood of 100,000 spans: the receiver sheds load with the retryable status, its buffer never goes past
the budget, and the API keeps answering throughout."""

from __future__ import annotations

import os

import pytest
import requests

pytest.importorskip("opentelemetry.proto", reason="the serve extra is not installed")

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

TOTAL = 100_000
BATCH = 1_000
BUDGET = 5_000


def batch(number: int) -> bytes:
    """1,000 root spans of 1,000 traces, all in one conversation (kept open by a long idle window)."""
    spans = []
    for i in range(BATCH):
        n = number * BATCH + i
        spans.append(Span(trace_id=n.to_bytes(16, "big"), span_id=(n + 1).to_bytes(8, "big"), name="chat",
                          start_time_unix_nano=1, end_time_unix_nano=2,
                          attributes=[KeyValue(key="gen_ai.conversation.id", value=AnyValue(string_value="flood")),
                                      KeyValue(key="payload", value=AnyValue(string_value="x" * 200))]))
    request = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])])
    return request.SerializeToString()


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def test_flood_is_shed_and_server_keeps_answering(serve):
    server = serve("--max-buffered", str(BUDGET), "--session-idle", "600", "-m", "tool_call_count_v1")
    url = f"{server.otlp_http}/v1/traces"
    statuses: dict[int, int] = {}
    peak_buffered = 0
    rss_start = rss_kib(server.process.pid) if os.path.exists("/proc") else 0
    rss_peak = rss_start
    with requests.Session() as http:
        for number in range(TOTAL // BATCH):  # bounded: 100 requests, no retries
            response = http.post(url, data=batch(number), headers={"Content-Type": "application/x-protobuf"},
                                 timeout=30)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            if response.status_code == 503:
                assert response.headers["Retry-After"].isdigit()
            health = server.get("/health")  # the API answers between every two batches
            assert health.status_code == 200
            receiver = health.json()["data"]["receiver"]
            peak_buffered = max(peak_buffered, receiver["buffered"])
            if rss_start:
                rss_peak = max(rss_peak, rss_kib(server.process.pid))
    accepted = statuses.get(200, 0)
    assert accepted * BATCH <= BUDGET
    assert statuses.get(503, 0) == TOTAL // BATCH - accepted
    assert peak_buffered <= BUDGET
    assert receiver["refused_batches"] == statuses[503]
    print(f"flood: {statuses}, peak buffered {peak_buffered}, server RSS {rss_start} KiB → {rss_peak} KiB")
