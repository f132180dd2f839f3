"""Live-mode figures: a flood of spans against `agentevals serve`, its memory, shedding and API latency.

    hatch run bench:python tools/bench/serve_flood.py [--spans 100000] [--batch 1000] [--budget 50000] [--no-store]

Each span is the root of its own trace (a session of its own, evaluated with tool_call_count_v1). Batches
are sent back to back; a refused batch (503) is retried after its Retry-After, up to --seconds in all.
Prints: batches accepted/refused, sessions evaluated, server peak RSS and CPU, /api/health latency, and how
many sessions the live run recorded in the run store (a fresh SQLite file; ``--no-store`` for none) and how
many per second. Figures only.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

ROOT = Path(__file__).resolve().parents[2]


def batch(number: int, size: int) -> bytes:
    spans = [Span(trace_id=(number * size + i + 1).to_bytes(16, "big"), span_id=(i + 1).to_bytes(8, "big"),
                  name="chat", start_time_unix_nano=1, end_time_unix_nano=2,
                  attributes=[KeyValue(key="gen_ai.operation.name", value=AnyValue(string_value="chat")),
                              KeyValue(key="payload", value=AnyValue(string_value="x" * 200))])
             for i in range(size)]
    return ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])]).SerializeToString()


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (/proc/PID/stat; its evaluator processes aside)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--budget", type=int, default=50_000)
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--no-store", action="store_true", help="serve --no-store (no live run recorded)")
    args = parser.parse_args()
    store = str(Path(tempfile.mkdtemp(prefix="agentevals-flood-")) / "runs.sqlite")
    store_args = ["--no-store"] if args.no_store else ["--store", store]
    proc = subprocess.Popen([sys.executable, "-m", "agentevals", "serve", "-p", "0", "--otlp-http-port", "0",
                             "--otlp-grpc-port", "0", "-m", "tool_call_count_v1", "--max-buffered", str(args.budget),
                             *store_args],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT, start_new_session=True)
    try:
        out = ""
        while "OTLP gRPC" not in out:
            out += proc.stdout.readline()
        api = re.search(r"API:\s+(\S+)", out).group(1)
        otlp = re.search(r"OTLP HTTP:\s+(\S+)", out).group(1)
        http = requests.Session()
        cpu_before = cpu_seconds(proc.pid)
        accepted = refused = 0
        peak = rss_mib(proc.pid)
        latencies = []
        start = time.monotonic()
        number = 0
        while number < args.spans // args.batch and time.monotonic() - start < args.seconds:
            response = http.post(f"{otlp}/v1/traces", data=batch(number, args.batch), timeout=30,
                                 headers={"Content-Type": "application/x-protobuf"})
            t = time.perf_counter()
            health = http.get(f"{api}/health", timeout=30).json()["data"]["receiver"]
            latencies.append((time.perf_counter() - t) * 1000)
            peak = max(peak, rss_mib(proc.pid))
            if response.status_code == 200:
                accepted += 1
                number += 1
            else:
                refused += 1
                time.sleep(min(float(response.headers.get("Retry-After", "1")), 1.0))
        sent = time.monotonic() - start
        expected = accepted * args.batch

        def recorded() -> int:
            if args.no_store:
                return expected
            (run,) = http.get(f"{api}/runs", timeout=30).json()["data"]
            return run["totals"]["cases"]["total"]

        while (health["buffered"] or recorded() < expected) and time.monotonic() - start < args.seconds:
            time.sleep(0.1)
            health = http.get(f"{api}/health", timeout=30).json()["data"]["receiver"]
            peak = max(peak, rss_mib(proc.pid))
        total = time.monotonic() - start
        server_cpu = cpu_seconds(proc.pid) - cpu_before
        print(f"spans sent: {accepted * args.batch:,} in {sent:.1f}s ({accepted} batches accepted, {refused} refused "
              f"with 503); all evaluated after {total:.1f}s ({accepted * args.batch / total:,.0f} sessions/s)")
        print(f"server peak RSS: {peak:.0f} MiB (budget {args.budget:,} spans)")
        print(f"/api/health during the flood: median {statistics.median(latencies):.1f} ms, "
              f"max {max(latencies):.1f} ms")
        print(f"server CPU: {server_cpu:.1f} s ({server_cpu / max(expected, 1) * 1000:.2f} ms per session)")
        print("run store: off (--no-store)" if args.no_store else
              f"run store: the live run recorded {recorded():,} sessions ({os.path.getsize(store) / 2**20:.0f} MiB), "
              f"{recorded() / total:,.0f} sessions recorded/s (first batch sent to last session recorded)")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)


if __name__ == "__main__":
    main()
