"""The pull-source base (``trace_sources/pull.py``) against a real loopback HTTP server: URIs checked before
any request, the window, retries after 429/5xx honouring ``Retry-After``, a hang ended by the deadline, one-line
errors naming the source, and search → fetch → convert with de-duplication and ``limit``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from agentevals.errors import ConfigError
from agentevals.results import InputError
from agentevals.trace_sources import TRACE_SOURCES, ReadContext, resolve
from agentevals.trace_sources.pull import (
    PullClient,
    PulledTrace,
    PullSource,
    SourceError,
    Verdict,
    parse_duration,
    parse_time,
)
from agentevals.traces.model import ConvertedTrace

HELM = Path(__file__).resolve().parents[4] / "examples" / "traces" / "helm.json"


class Server:
    """A loopback server answering from a list of ``(status, headers, body, delay)`` per path, in order
    (the last answer repeats); records every request."""

    def __init__(self) -> None:
        self.answers: dict[str, list[tuple[int, dict[str, str], bytes, float]]] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                server.requests.append(("GET", self.path, dict(self.headers)))
                queue = server.answers.get(path) or [(404, {}, b'{"error": "no such path"}', 0.0)]
                status, headers, body, delay = queue.pop(0) if len(queue) > 1 else queue[0]
                if delay:
                    server.release.wait(delay)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, path: str, *answers: tuple[int, dict[str, str], bytes, float]) -> None:
        self.answers[path] = list(answers)

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


def jaeger_traces() -> list[dict[str, Any]]:
    return json.loads(HELM.read_text())["data"]


class DemoPull(PullSource):
    """Search ``/search`` (ids), fetch ``/traces/{id}`` (a Jaeger document): the shape of most backends."""

    name: ClassVar[str] = "demopull"
    parameters: ClassVar[frozenset[str]] = frozenset({"app", "attr."})
    credentials: ClassVar[tuple[str, ...]] = ("DEMO_TOKEN",)

    def pull(self) -> Iterator[PulledTrace]:
        start, end = self.window
        ids = self.client.get_json("/search", {"app": self.query.param("app"), "start": start.isoformat(),
                                               "end": end.isoformat()})
        for trace_id in ids:
            yield PulledTrace(trace_id, self.client.get_json(f"/traces/{trace_id}"))


def ok(body: Any, delay: float = 0.0, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes, float]:
    return 200, {"Content-Type": "application/json", **(headers or {})}, json.dumps(body).encode(), delay


def test_parse_duration_and_time() -> None:
    assert parse_duration("2h") == timedelta(hours=2)
    assert parse_duration("90s") == timedelta(seconds=90)
    assert parse_duration("7d") == timedelta(days=7)
    assert parse_time("2026-11-26T08:00:00Z") == datetime(2026, 11, 26, 8, tzinfo=timezone.utc)
    with pytest.raises(ValueError):
        parse_duration("2 hours")
    with pytest.raises(ValueError):
        parse_time("yesterday")


def test_uri_problems_are_one_line_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"credentials in the URI are refused .* set DEMO_TOKEN") as err:
        DemoPull("demopull+https://alice:s3cret@example.test?app=a")
    assert "s3cret" not in str(err.value) and "alice" not in str(err.value)
    with pytest.raises(ConfigError, match="unknown parameter 'aap'"):
        DemoPull("demopull+http://127.0.0.1:1?aap=a")
    with pytest.raises(ConfigError, match="since=3x"):
        DemoPull("demopull+http://127.0.0.1:1?since=3x")
    with pytest.raises(ConfigError, match="unknown transport"):
        DemoPull("demopull+ftp://127.0.0.1:1")
    with pytest.raises(ConfigError, match="starts after it ends"):
        DemoPull("demopull+http://127.0.0.1:1?start=2026-11-26T10:00:00Z&end=2026-11-26T09:00:00Z")


def test_window_and_key() -> None:
    src = DemoPull("demopull+http://127.0.0.1:1/p?app=a&start=2026-11-26T08:00:00Z&end=2026-11-26T10:00:00Z&limit=5")
    assert src.window == (datetime(2026, 11, 26, 8, tzinfo=timezone.utc), datetime(2026, 11, 26, 10, tzinfo=timezone.utc))
    assert src.limit == 5
    assert src.query.base_url == "http://127.0.0.1:1/p"
    assert src.query.key == "demopull+http://127.0.0.1:1/p?app=a"  # the window is not part of the source's key
    since = DemoPull("demopull+http://127.0.0.1:1?since=2h&attr.env=prod")
    assert since.window[1] - since.window[0] == timedelta(hours=2)
    assert since.query.attributes() == {"env": "prod"}


def test_retries_after_5xx_and_honours_retry_after(server: Server) -> None:
    server.answer("/x", (503, {}, b"busy", 0.0), (429, {"Retry-After": "1"}, b"", 0.0), ok({"fine": True}))
    client = PullClient("demo+http://h", server.url, timeout=5, retries=3, backoff=0.01)
    assert client.get_json("/x") == {"fine": True}
    assert len(server.requests) == 3


def test_gives_up_after_the_retries_with_one_line(server: Server) -> None:
    server.answer("/x", (500, {}, json.dumps({"error": {"message": "storage down\nat line 2"}}).encode(), 0.0))
    client = PullClient("demo+http://h", server.url, timeout=5, retries=2, backoff=0.01)
    with pytest.raises(SourceError) as err:
        client.get_json("/x")
    text = str(err.value)
    assert text.startswith("demo+http://h: 500") and "after 3 attempts" in text and "\n" not in text
    assert "storage down" in text
    assert len(server.requests) == 3


def test_401_is_not_retried_and_names_the_variables(server: Server) -> None:
    server.answer("/x", (401, {}, b'{"message": "invalid token"}', 0.0))
    client = PullClient("demo+http://h", server.url, timeout=5, retries=3, auth_hint="set DEMO_TOKEN")
    with pytest.raises(SourceError, match=r"^demo\+http://h: 401 Unauthorized: invalid token \(set DEMO_TOKEN\)$"):
        client.get_json("/x")
    assert len(server.requests) == 1


def test_a_hang_ends_within_the_deadline(server: Server) -> None:
    server.answer("/x", ok({}, delay=30))
    client = PullClient("demo+http://h", server.url, timeout=0.5, retries=1, backoff=0.01)
    with pytest.raises(SourceError, match="no answer within"):
        client.get_json("/x")
    assert len(server.requests) == 2


@pytest.fixture
def demopull() -> Iterator[None]:
    """``demopull`` registered for one test (as a plugin's entry point would register it)."""
    TRACE_SOURCES.register("demopull", DemoPull)
    yield
    TRACE_SOURCES._loaded.pop("demopull", None)


def test_search_fetch_convert_dedup_and_limit(server: Server, demopull: None) -> None:
    traces = jaeger_traces()
    ids = [t["traceID"] for t in traces]
    server.answer("/search", ok(ids + ids[:1]))  # a trace found twice (time paging) is read once
    for t in traces:
        server.answer(f"/traces/{t['traceID']}", ok({"data": [t]}))
    uri = f"demopull+{server.url}?app=helm&since=2h"
    ctx = ReadContext()
    items = [item for item, _ in resolve([uri], context=ctx)]
    got = [i.trace_id for i in items if isinstance(i, ConvertedTrace)]
    assert sorted(got) == sorted(ids) and len(got) == len(set(got))
    assert all(i.source == uri for i in items if isinstance(i, ConvertedTrace))
    window = ctx.windows[uri]
    assert window.traces == len(ids) and window.key == f"demopull+{server.url}?app=helm"
    assert window.end - window.start == timedelta(hours=2)
    searched = [path for method, path, _ in server.requests if path.startswith("/search")]
    assert "app=helm" in searched[0]
    limited = [item for item, _ in resolve([uri + "&limit=1"])]
    assert len([i for i in limited if isinstance(i, ConvertedTrace)]) == 1


def test_since_and_watermark_from_the_context(server: Server, demopull: None) -> None:
    server.answer("/search", ok([]))
    uri = f"demopull+{server.url}?app=a"
    ctx = ReadContext(since="3h")
    list(resolve([uri], context=ctx))
    assert ctx.windows[uri].end - ctx.windows[uri].start == timedelta(hours=3)
    mark = datetime.now(timezone.utc) - timedelta(minutes=10)
    ctx = ReadContext(since="last", watermarks={f"demopull+{server.url}?app=a": mark})
    list(resolve([uri], context=ctx))
    assert ctx.windows[uri].start == mark


def test_a_failing_source_is_one_input_error_beside_a_readable_file(server: Server, demopull: None) -> None:
    server.answer("/search", (403, {}, b"forbidden", 0.0))
    items = [item for item, _ in resolve([f"demopull+{server.url}?app=a", str(HELM)])]
    errors = [i for i in items if isinstance(i, InputError)]
    assert len(errors) == 1 and errors[0].error.startswith(f"demopull+{server.url}?app=a: 403 Forbidden: forbidden")
    assert "(set DEMO_TOKEN)" in errors[0].error
    assert len([i for i in items if isinstance(i, ConvertedTrace)]) == len(jaeger_traces())


def test_verdict_label() -> None:
    v = Verdict(trace_id="t", evaluator="m", score=1.0, passed=True, status="PASSED", run_id="r")
    assert v.label == "pass"
    assert Verdict(trace_id="t", evaluator="m", score=None, passed=None, status="ERROR", run_id="r").label == "error"
