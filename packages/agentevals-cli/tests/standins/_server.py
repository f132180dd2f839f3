"""A small reusable loopback HTTP server for stand-ins: a ``ThreadingHTTPServer`` on ``127.0.0.1:0`` in a
daemon thread, with the fault knobs tests need (a status N times, 429 with ``Retry-After``, a hang, auth).

    class Echo(StandIn):
        def handle(self, request: Request) -> Reply:
            return Reply(200, {"path": request.path, "q": request.query})

    with Echo() as server:          # or server = Echo().start(); …; server.stop()
        server.fail(500, times=2)   # the next two requests answer 500
        server.hang(5)              # the next request sleeps 5 s before answering
        requests.get(server.url + "/x")
        server.requests             # what was asked: [Request(method, path, query, headers, body), …]
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional, Union
from urllib.parse import parse_qs, urlsplit

__all__ = ["Reply", "Request", "StandIn"]


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes = b""

    def param(self, key: str, default: Optional[str] = None) -> Optional[str]:
        values = self.query.get(key)
        return values[-1] if values else default


@dataclass
class Reply:
    """``body``: bytes, str, or anything JSON-able; ``chunks``: an iterator of bytes sent one by one
    (HTTP/1.1 chunked), for streamed answers that must not be built in memory."""

    status: int = 200
    body: Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    chunks: Optional[Iterable[bytes]] = None

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body, separators=(",", ":")).encode()


@dataclass
class _Fault:
    times: int
    status: int = 0
    body: Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    sleep: float = 0.0
    path: str = ""


class StandIn:
    """Subclasses implement ``handle``. Faults queued with ``fail``/``hang`` come first, in order; an
    ``auth`` (``("Authorization", "Bearer t")``) answers 401 (``auth_reply``) to requests without it."""

    auth: Optional[tuple[str, str]] = None

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._faults: list[_Fault] = []
        self._lock = threading.Lock()
        self._server: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None
        self.record = True
        """Keep every request in ``requests`` (off for benchmarks)."""

    # -- what a subclass writes ------------------------------------------------------------------------
    def handle(self, request: Request) -> Reply:
        raise NotImplementedError

    def auth_reply(self) -> Reply:
        return Reply(401, "Unauthorized\n", {"Content-Type": "text/plain"})

    # -- fault knobs -----------------------------------------------------------------------------------
    def fail(self, status: int, times: int = 1, *, body: Any = b"", retry_after: Optional[Union[int, str]] = None,
             path: str = "") -> None:
        """The next ``times`` requests (under ``path`` when given) answer ``status``."""
        headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
        with self._lock:
            self._faults.append(_Fault(times=times, status=status, body=body, headers=headers, path=path))

    def hang(self, seconds: float, times: int = 1, path: str = "") -> None:
        """The next ``times`` requests sleep ``seconds`` before they are answered normally."""
        with self._lock:
            self._faults.append(_Fault(times=times, sleep=seconds, path=path))

    def _fault(self, path: str) -> Optional[_Fault]:
        with self._lock:
            for fault in self._faults:
                if path.startswith(fault.path):
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                    return fault
        return None

    # -- life ------------------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._server is not None, "not started"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, port: int = 0) -> StandIn:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                stand_in._serve(self)

            do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=type(self).__name__, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> StandIn:
        return self.start() if self._server is None else self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def serve_forever(self, port: int = 0) -> None:
        """Run in this process until killed, printing ``PORT`` first (for a stand-in in a subprocess)."""
        self.start(port)
        print(self.port, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    # -- one request -----------------------------------------------------------------------------------
    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        request = Request(method=h.command, path=parts.path, query=parse_qs(parts.query, keep_blank_values=True),
                          headers={k: v for k, v in h.headers.items()}, body=h.rfile.read(length) if length else b"")
        if self.record:
            with self._lock:
                self.requests.append(request)
        reply: Optional[Reply] = None
        fault = self._fault(request.path)
        if fault is not None and fault.sleep:
            time.sleep(fault.sleep)
        elif fault is not None:
            reply = Reply(fault.status, fault.body, fault.headers)
        if reply is None and self.auth is not None and request.headers.get(self.auth[0]) != self.auth[1]:
            reply = self.auth_reply()
        if reply is None:
            try:
                reply = self.handle(request)
            except Exception as exc:  # a stand-in bug must show, not hang the client
                reply = Reply(500, f"stand-in error: {exc!r}\n", {"Content-Type": "text/plain"})
        try:
            _write(h, reply)
        except (BrokenPipeError, ConnectionResetError):
            pass


def _write(h: BaseHTTPRequestHandler, reply: Reply) -> None:
    h.send_response(reply.status)
    headers = dict(reply.headers)
    if reply.chunks is None:
        data = reply.payload()
        headers.setdefault("Content-Type", "application/json" if not isinstance(reply.body, (bytes, str)) else
                           "text/plain")
        headers["Content-Length"] = str(len(data))
        for k, v in headers.items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)
        return
    headers.setdefault("Content-Type", "application/json")
    headers["Transfer-Encoding"] = "chunked"
    for k, v in headers.items():
        h.send_header(k, v)
    h.end_headers()
    for chunk in _nonempty(reply.chunks):
        h.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
    h.wfile.write(b"0\r\n\r\n")


def _nonempty(chunks: Iterable[bytes]) -> Iterator[bytes]:
    return (c for c in chunks if c)
