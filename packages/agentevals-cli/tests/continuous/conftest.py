"""Fixtures of the continuous-evaluation tests: a loopback webhook receiver."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ → `support`, `standins` are importable


@dataclass
class Hook:
    """A loopback webhook receiver: answers each POST with the next of ``statuses`` (then 200)."""

    url: str = ""
    statuses: list[int] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    attempts: int = 0

    def wait(self, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.bodies) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.bodies


@pytest.fixture
def hook() -> Iterator[Hook]:
    received = Hook()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with lock:
                received.attempts += 1
                status = received.statuses.pop(0) if received.statuses else 200
                if status == 200:
                    received.bodies.append(json.loads(body))
                    received.headers.append({k.lower(): v for k, v in self.headers.items()})
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    received.url = f"http://127.0.0.1:{httpd.server_address[1]}/hook/s3cr3t-path"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield received
    httpd.shutdown()
    httpd.server_close()
