"""agentevals.core._http: statuses come back, failures are one line naming the host, every call ends by its deadline."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from agentevals.core._http import HttpError, request


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/ok":
            self._answer(200, b"hello")
        elif self.path == "/big":
            self._answer(200, b"x" * (3 * 1024 * 1024))
        elif self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/ok")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/drip":  # a byte every 0.1 s for 10 s: each read is quick, the whole is not
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            try:
                for _ in range(100):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    self.server.dripped += 1  # type: ignore[attr-defined]
                    time.sleep(0.1)
            except OSError:
                pass
            finally:
                self.server.drip_done.set()  # type: ignore[attr-defined]
        else:
            self._answer(404, b'{"error": "nothing here"}')

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self._answer(200, body[::-1])

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[tuple[str, ThreadingHTTPServer]]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.dripped, httpd.drip_done = 0, threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def silent() -> Iterator[str]:
    """A port that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


def test_a_status_is_an_answer_not_an_error(server):
    server, _ = server
    ok = request("GET", f"{server}/ok", timeout=5, deadline=5)
    assert (ok.status, ok.ok, ok.body) == (200, True, b"hello")
    missing = request("GET", f"{server}/missing", timeout=5, deadline=5)
    assert (missing.status, missing.ok, missing.body) == (404, False, b'{"error": "nothing here"}')


def test_a_body_is_posted(server):
    server, _ = server
    assert request("POST", f"{server}/echo", body=b"abc", timeout=5, deadline=5).body == b"cba"


def test_redirects_are_returned_unless_followed(server):
    server, _ = server
    moved = request("GET", f"{server}/moved", timeout=5, deadline=5)
    assert (moved.status, moved.headers["Location"]) == (302, "/ok")
    assert request("GET", f"{server}/moved", timeout=5, deadline=5, follow_redirects=True).body == b"hello"


def test_a_refused_connection_is_one_line_naming_the_host():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(HttpError) as caught:
        request("GET", f"http://127.0.0.1:{port}/x", timeout=5, deadline=5)
    assert str(caught.value).startswith(f"cannot reach 127.0.0.1:{port}: ")
    assert "\n" not in str(caught.value)


def test_a_server_that_never_answers_ends_at_the_timeout(silent):
    with pytest.raises(HttpError, match=r"^no answer from 127\.0\.0\.1:\d+ within 0\.3s$"):
        request("GET", f"{silent}/x", timeout=0.3, deadline=0.3)


def test_a_dripping_body_ends_at_the_deadline(server):
    url, httpd = server
    with pytest.raises(HttpError, match=r"within 0\.5s$") as caught:
        request("GET", f"{url}/drip", timeout=5, deadline=0.5)
    assert caught.value.detail == "no answer within 0.5s"
    assert httpd.drip_done.wait(30)
    assert httpd.dripped < 50  # the client hung up long before the 100 bytes (10 s) were sent


def test_a_body_larger_than_allowed_is_refused(server):
    server, _ = server
    with pytest.raises(HttpError, match=r"/big: larger than 1 MiB$"):
        request("GET", f"{server}/big", timeout=5, deadline=5, max_bytes=1024 * 1024)


def test_a_body_streams_into_a_file(server, tmp_path):
    server, _ = server
    path = tmp_path / "body"
    with path.open("wb") as out:
        response = request("GET", f"{server}/big", timeout=5, deadline=None, into=out)
    assert (response.body, path.stat().st_size) == (b"", 3 * 1024 * 1024)


def test_proxies_from_the_environment_are_ignored_when_asked(server, silent, monkeypatch):
    server, _ = server
    monkeypatch.setenv("http_proxy", silent)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    with pytest.raises(HttpError):  # through the (silent) proxy
        request("GET", f"{server}/ok", timeout=0.3, deadline=0.3)
    assert request("GET", f"{server}/ok", timeout=5, deadline=5, proxies=False).body == b"hello"
