"""A loopback OTLP/HTTP receiver for tests: answers 200 to every POST and records its path and body.

    with OtlpRecorder() as recorder:
        ... OTEL_EXPORTER_OTLP_ENDPOINT=recorder.url ...
    recorder.bodies("/v1/logs")   # the protobuf bodies received there
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class OtlpRecorder:
    """Records ``(path, body)`` of every POST; started on 127.0.0.1 with an OS-chosen port."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, bytes]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                recorder.requests.append((self.path, body))
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
        return [body for got, body in self.requests if got == path]
