"""A loopback OTLP/HTTP receiver for tests (a stand-in collector): answers 200 to every POST and records it.

    with OtlpRecorder() as recorder:
        ... OTEL_EXPORTER_OTLP_ENDPOINT=recorder.url ...
    recorder.requests            # Received(path, headers, body), in arrival order
    recorder.bodies("/v1/logs")  # the protobuf bodies received there
    recorder.log_events()        # those bodies decoded: one dict per log record
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    """One request the receiver got (header names lower-cased)."""

    path: str
    headers: dict[str, str]
    body: bytes


class OtlpRecorder:
    """Records every POST; started on 127.0.0.1 with an OS-chosen port."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                recorder.requests.append(Received(self.path, headers, body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> OtlpRecorder:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def bodies(self, path: str) -> list[bytes]:
        return [r.body for r in list(self.requests) if r.path == path]

    def log_events(self, path: str = "/v1/logs") -> list[dict[str, Any]]:
        """Every log record received on ``path``: ``{event_name, trace_id, span_id, attributes}``."""
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

        events = []
        for body in self.bodies(path):
            message = ExportLogsServiceRequest()
            message.ParseFromString(body)
            for resource_logs in message.resource_logs:
                for scope_logs in resource_logs.scope_logs:
                    for record in scope_logs.log_records:
                        attributes = {kv.key: getattr(kv.value, kv.value.WhichOneof("value"))
                                      for kv in record.attributes}
                        events.append({"event_name": record.event_name, "trace_id": record.trace_id.hex(),
                                       "span_id": record.span_id.hex(), "attributes": attributes})
        return events
