"""Fixtures for live mode: ``serve`` starts real ``agentevals serve`` processes, ``otlp_recorder`` a
loopback OTLP backend stand-in."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the serve extra is not installed")
pytest.importorskip("grpc", reason="the serve extra is not installed")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ → `support` is importable

from support.live_server import Received, Recorder, Server, start_server, stop_server


@pytest.fixture
def serve(request) -> Iterator[Callable[..., Server]]:
    """Factory: ``server = serve("--eval-sets", dir, …)``; every server started is stopped after the test."""
    started: list[Server] = []

    def factory(*args: str, **kwargs: Any) -> Server:
        server = start_server(*args, **kwargs)
        started.append(server)
        return server

    yield factory
    for server in started:
        stop_server(server.process)


@pytest.fixture
def otlp_recorder() -> Iterator[Recorder]:
    """A loopback HTTP server that answers 200 to every POST and records it (an OTLP backend stand-in)."""
    recorder = Recorder("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            recorder.requests.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    recorder.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield recorder
    httpd.shutdown()
    httpd.server_close()
