"""Hostile input to a real ``agentevals serve`` over loopback HTTP: every malformed request gets a 4xx with
one line naming what is wrong, never a 5xx, and the server log gets at most one line, never a traceback.

- Malformed API requests (wrongly typed fields, missing fields, bodies that do not parse, huge ids).
- Upload limits that hold for chunked bodies (no ``Content-Length``), on the API and the OTLP receiver.
- Temporary uploads removed when a client disconnects mid-stream or mid-upload.
- A huge or malformed MCP session id (``serve --mcp-port``).
- A schema-driven fuzz (schemathesis): every route of the OpenAPI schema, bodies and queries generated
  from it, no 5xx and no traceback. It prints how many routes (operations) it walked.
"""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi", reason="the serve extra is not installed")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "packages" / "agentevals-cli" / "tests"))

import requests
from support.live_server import EXAMPLES, Server, start_server, stop_server

HELM = EXAMPLES / "traces" / "helm.json"
MiB = 2**20
UPLOAD_MB = 1  # --max-upload-mb: the whole request body may be 4 MiB, each uploaded file 1 MiB


# -- a server, its log, and a raw HTTP client ------------------------------------------------------


@dataclass
class Live:
    """A running serve with its own TMPDIR, and where its log was read up to."""

    server: Server
    tmp: Path
    seen: int = 0

    def new_log(self) -> str:
        """What the server wrote to stderr since the last call."""
        errors = self.server.process.errors
        errors.flush()
        errors.seek(self.seen)
        text = errors.read()
        self.seen += len(text)
        return text

    def uploads_left(self) -> list[str]:
        return sorted(p.name for p in self.tmp.iterdir() if p.name.startswith("agentevals-upload-"))


def start_live(tmp: Path, *, upload_mb: int = UPLOAD_MB) -> Live:
    tmp.mkdir(parents=True, exist_ok=True)
    server = start_server("--mcp-port", "0", "--max-upload-mb", str(upload_mb), "--store", str(tmp / "runs.sqlite"),
                          env={"TMPDIR": str(tmp)})
    live = Live(server, tmp)
    live.new_log()  # the start-up lines are not a case's
    return live


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> Iterator[Live]:
    """One serve for the request cases (they leave no state behind), with its own TMPDIR."""
    started = start_live(tmp_path_factory.mktemp("serve-input") / "tmp")
    yield started
    stop_server(started.server.process)


@pytest.fixture
def fresh(tmp_path) -> Iterator[Live]:
    """A serve of this test's own, with a TMPDIR of this test's own (the temp-file cases; 10 MiB uploads)."""
    started = start_live(tmp_path / "tmp", upload_mb=10)
    yield started
    stop_server(started.server.process)


def assert_quiet(live: Live) -> None:
    """At most one line in the server log since the case began, and no traceback."""
    text = live.new_log()
    assert "Traceback" not in text, text
    assert len(text.strip().splitlines()) <= 1, text


def one_line_error(response: requests.Response) -> str:
    body = response.json()
    message = body["error"] if "error" in body and isinstance(body["error"], str) else body["error"]["message"]
    assert "\n" not in message and len(message) < 400, message
    return message


def chunked_post(url: str, body: Iterator[bytes], headers: dict[str, str], *, deadline: float = 30) -> tuple[int, bytes, int]:
    """POST ``body`` with ``Transfer-Encoding: chunked`` (no ``Content-Length``) over a raw socket, stopping
    as soon as the server answers. Returns (status, response body, bytes of body sent)."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=deadline)
    head = [f"POST {parts.path} HTTP/1.1", f"Host: {parts.hostname}:{parts.port}", "Transfer-Encoding: chunked",
            *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    sent, answered = 0, False
    end = time.monotonic() + deadline
    try:
        sock.sendall("\r\n".join(head).encode())
        for chunk in body:
            if select.select([sock], [], [], 0)[0]:
                answered = True
                break
            sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            sent += len(chunk)
            assert time.monotonic() < end, "the server neither read nor refused the body in time"
        if not answered:
            sock.sendall(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    data = b""
    try:
        while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < _length(data):
            more = sock.recv(65536)
            if not more:
                break
            data += more
    except (ConnectionResetError, TimeoutError):
        pass
    finally:
        sock.close()
    assert data.startswith(b"HTTP/1.1 "), f"no HTTP answer after {sent} bytes: {data[:200]!r}"
    head_bytes, _, rest = data.partition(b"\r\n\r\n")
    return int(head_bytes.split()[1]), rest[:_length(data)], sent


def _length(data: bytes) -> int:
    for line in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return 1 << 30


def endless(chunk: bytes, total: int, first: bytes = b"") -> Iterator[bytes]:
    """``first``, then ``chunk`` repeated until ``total`` bytes: an upload far over the limit."""
    if first:
        yield first
    for _ in range(total // len(chunk)):
        yield chunk


MULTIPART_HEAD = (b"--B\r\nContent-Disposition: form-data; name=\"trace_files\"; filename=\"big.json\"\r\n"
                  b"Content-Type: application/json\r\n\r\n")


# -- malformed API requests: 4xx, one line naming the field ----------------------------------------

TRACE = [("trace_files", ("t.json", b'{"data": []}', "application/json"))]


def evaluate(config: Any, route: str = "/evaluate") -> Callable[[Live], requests.Response]:
    def call(live: Live) -> requests.Response:
        return requests.post(live.server.api + route, files=TRACE, timeout=30,
                             data={"config": config if isinstance(config, str) else json.dumps(config)})
    return call


def get(path: str, **params: str) -> Callable[[Live], requests.Response]:
    return lambda live: requests.get(live.server.api + path, params=params, timeout=30)


def post(path: str, **kwargs: Any) -> Callable[[Live], requests.Response]:
    return lambda live: requests.post(live.server.api + path, timeout=30, **kwargs)


def ui(path: str) -> Callable[[Live], requests.Response]:
    return lambda live: requests.get(live.server.api.removesuffix("/api") + path, timeout=30)


HUGE = "a" * 100_000

MALFORMED: dict[str, tuple[Callable[[Live], requests.Response], int, str]] = {
    "evaluate threshold is a word": (evaluate({"threshold": "abc"}), 400, "threshold"),
    "evaluate metrics is a number": (evaluate({"metrics": 5}), 400, "metrics"),
    "evaluate a metric name is a number": (evaluate({"metrics": [1]}), 400, "metrics.0"),
    "evaluate metrics is an object": (evaluate({"metrics": {"a": 1}}), 400, "metrics"),
    "evaluate pass_at_k is a word": (evaluate({"pass_at_k": "x"}), 400, "pass_at_k"),
    "evaluate strict is a word": (evaluate({"strict": "maybe"}), 400, "strict"),
    "evaluate group_by is a number": (evaluate({"group_by": 3}), 400, "group_by"),
    "evaluate judge_model is a list": (evaluate({"judgeModel": ["x"]}), 400, "judge_model"),
    "evaluate evaluators is a number": (evaluate({"evaluators": 3}), 400, "evaluators"),
    "evaluate evaluators holds a number": (evaluate({"evaluators": [3]}), 400, "config"),
    "evaluate config is not JSON": (evaluate("{not json"), 400, "config"),
    "evaluate config is a list": (evaluate("[1, 2]"), 400, "config"),
    "evaluate config has an unknown key": (evaluate({"treshold": 0.5}), 400, "treshold"),
    "evaluate config is deeply nested": (evaluate("[" * 100_000 + "]" * 100_000), 400, "config"),
    "evaluate/stream metrics is a number": (evaluate({"metrics": 5}, "/evaluate/stream"), 400, "metrics"),
    "evaluate trace_files is a text field": (post("/evaluate", data={"trace_files": "x"}), 400, "trace_files"),
    "evaluate without trace_files": (post("/evaluate", files={"other": ("x", b"x")}), 400, "trace_files"),
    "evaluate with a JSON body": (post("/evaluate", json={"trace_files": []}), 400, "trace_files"),
    "evaluate multipart that does not parse": (post("/evaluate", data=b"garbage", headers={
        "content-type": "multipart/form-data; boundary=x"}), 400, "multipart"),
    "evaluate multipart without a boundary": (post("/evaluate", data=b"garbage", headers={
        "content-type": "multipart/form-data"}), 400, ""),
    "convert without files": (post("/convert", data={"trace_format": "jaeger"}), 400, "trace_files"),
    "validate eval set is a text field": (post("/validate/eval-set", data={"eval_set_file": "x"}), 400,
                                          "eval_set_file"),
    "sessions limit is a word": (get("/sessions", limit="abc"), 400, "limit"),
    "runs limit is a float": (get("/runs", limit="1e400"), 400, "limit"),
    "trend limit is a word": (get("/metrics/x/trend", limit="x"), 400, "limit"),
    "runs compare without a": (get("/runs/compare"), 400, "'a'"),
    "sessions compare without b": (get("/sessions/compare", a="x"), 400, "'b'"),
    "run id of 100k characters": (get("/runs/" + HUGE), 404, "no run"),
    "runs compare a of 100k characters": (get("/runs/compare", a=HUGE), 404, "no run"),
    "runs compare b of 100k characters": (get("/runs/compare", a="latest", b=HUGE), 404, "no run"),
    "run id that is a LIKE pattern": (get("/runs/%25"), 0, ""),
    "run id with an underscore pattern": (get("/runs/____"), 0, ""),
    "runs compare of two patterns": (get("/runs/compare", a="%", b="_"), 0, ""),
    "session id of 100k characters": (get("/sessions/" + HUGE), 404, "no session"),
    "run id that is not UTF-8": (get("/runs/%ff%fe"), 0, ""),
    "run id with a NUL byte": (get("/runs/a%00b"), 0, ""),
    "session id that is not UTF-8": (get("/sessions/%ff"), 404, ""),
    "query parameter that is not UTF-8": (get("/runs/compare?a=%ff&b=%00"), 0, ""),
    "limit far beyond any integer type": (get("/sessions", limit="9" * 5000), 0, ""),
    "trend of a 100k-character metric": (get(f"/metrics/{HUGE}/trend"), 0, ""),
    "an unknown API route": (get("/nothing-here"), 404, "Not Found"),
    "a method a route does not take": (post("/health"), 405, "Method Not Allowed"),
    "UI page of a 100k-character run id": (ui("/runs/" + HUGE), 404, ""),
    "UI case page of a run id pattern": (ui("/runs/%25/cases/x"), 0, ""),
    "UI compare of a 100k-character run id": (ui("/runs/compare?a=latest&b=" + HUGE), 404, ""),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_request_gets_a_one_line_4xx(live: Live, case: str) -> None:
    call, status, named = MALFORMED[case]
    response = call(live)
    if status:
        assert response.status_code == status, response.text[:500]
    else:  # what the store makes of it is the store's business (its own tests); a 5xx never is
        assert response.status_code < 500, response.text[:500]
    if response.status_code >= 400 and response.headers.get("content-type", "").startswith("application/json"):
        message = one_line_error(response)
        assert named in message, message
    assert_quiet(live)
    assert live.uploads_left() == []


# -- upload limits hold for streamed (chunked) bodies ----------------------------------------------

TOTAL = 64 * MiB  # what the client would send: far over the 4 MiB body limit of --max-upload-mb 1


Chunked = Callable[[Live], tuple[str, Iterator[bytes], dict[str, str], int, str]]


def api_chunked(route: str, head: bytes, status: int = 413, named: str = "limit") -> Chunked:
    return lambda live: (live.server.api + route, endless(b"x" * 65536, TOTAL, head),
                         {"Content-Type": "multipart/form-data; boundary=B"}, status, named)


def otlp_chunked(content_type: str) -> Chunked:
    return lambda live: (live.server.otlp_http + "/v1/traces", endless(b"x" * 65536, TOTAL),
                         {"Content-Type": content_type}, 413, "limit")


CHUNKED = {
    "evaluate: one endless file": api_chunked("/evaluate", MULTIPART_HEAD),
    "evaluate/stream: one endless file": api_chunked("/evaluate/stream", MULTIPART_HEAD),
    "convert: one endless file": api_chunked("/convert", MULTIPART_HEAD),
    "validate eval set: one endless file": api_chunked("/validate/eval-set", MULTIPART_HEAD.replace(
        b"trace_files", b"eval_set_file")),
    # A text field is capped at 1 MiB by the multipart parser, a body without a boundary fails at once.
    "evaluate: an endless form field": api_chunked("/evaluate", b"--B\r\nContent-Disposition: form-data; "
                                                                b"name=\"config\"\r\n\r\n", 400, "maximum size"),
    "evaluate: endless preamble": api_chunked("/evaluate", b"", 400, "multipart"),
    "OTLP/HTTP protobuf": otlp_chunked("application/x-protobuf"),
    "OTLP/HTTP JSON": otlp_chunked("application/json"),
}


@pytest.mark.parametrize("case", list(CHUNKED))
def test_chunked_upload_over_the_limit_is_refused_while_streaming(live: Live, case: str) -> None:
    url, body, headers, expected, named = CHUNKED[case](live)
    status, answer, sent = chunked_post(url, body, headers)
    assert status == expected, answer[:300]
    assert sent < TOTAL // 2, f"the server read {sent} bytes before refusing"
    if headers["Content-Type"] != "application/x-protobuf":
        document = json.loads(answer)
        assert named in (document.get("error") or document.get("message") or ""), document
    else:
        assert named.encode() in answer
    assert_quiet(live)
    assert live.uploads_left() == []


def test_declared_length_over_the_limit_is_refused_unread(live: Live) -> None:
    response = requests.post(live.server.api + "/evaluate", data=b"x" * (4 * UPLOAD_MB * MiB + 1), timeout=30,
                             headers={"Content-Type": "multipart/form-data; boundary=B"})
    assert response.status_code == 413
    assert "limit" in one_line_error(response)
    assert_quiet(live)


def test_one_file_over_the_file_limit_within_the_body_limit(live: Live) -> None:
    big = b"[" + b" " * (UPLOAD_MB * MiB + 10) + b"]"
    response = requests.post(live.server.api + "/evaluate", files=[("trace_files", ("big.json", big))], timeout=30)
    assert response.status_code == 413
    assert "big.json" in one_line_error(response)
    assert_quiet(live)
    assert live.uploads_left() == []


# -- temporary uploads are removed on disconnect -----------------------------------------------------


def _multipart(fields: list[tuple[str, str, bytes]]) -> bytes:
    out = b""
    for name, filename, content in fields:
        out += (f"--B\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\n"
                "Content-Type: application/json\r\n\r\n").encode() + content + b"\r\n"
    return out + b"--B--\r\n"


def _wait_clean(live: Live, timeout: float = 60) -> list[str]:
    deadline = time.monotonic() + timeout
    while live.uploads_left() and time.monotonic() < deadline:
        time.sleep(0.1)
    return live.uploads_left()


@pytest.mark.parametrize("then", ["the server keeps serving", "the server is stopped"])
def test_client_disconnecting_mid_stream_leaves_no_uploads(fresh: Live, then: str) -> None:
    traces = HELM.read_bytes()
    body = _multipart([("trace_files", f"helm{i}.json", traces) for i in range(30)])  # seconds of work
    parts = urlsplit(fresh.server.api)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=60)
    sock.sendall((f"POST /api/evaluate/stream HTTP/1.1\r\nHost: {parts.hostname}\r\n"
                  f"Content-Type: multipart/form-data; boundary=B\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)
    got = b""
    while b"event: case" not in got:  # the stream has begun: the first case is in
        more = sock.recv(65536)
        assert more and b"event: done" not in got and b"event: error" not in got, got[:300]
        got += more
    sock.close()  # gone mid-stream
    if then == "the server is stopped":
        process = fresh.server.process
        errors, process.errors = process.errors, None  # read after the exit: what shutting down printed
        stop_server(process)
        process.errors = errors
        assert fresh.uploads_left() == []
        assert "Traceback" not in fresh.new_log()
        errors.close()
        return
    else:
        assert _wait_clean(fresh) == []
        assert requests.get(fresh.server.api + "/health", timeout=10).json()["data"]["status"] == "ok"
    assert "Traceback" not in fresh.new_log()


def test_client_disconnecting_mid_upload_leaves_no_uploads(fresh: Live) -> None:
    parts = urlsplit(fresh.server.api)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
    sock.sendall((f"POST /api/evaluate HTTP/1.1\r\nHost: {parts.hostname}\r\n"
                  "Content-Type: multipart/form-data; boundary=B\r\nContent-Length: 3000000\r\n\r\n").encode()
                 + MULTIPART_HEAD + b"x" * 500_000)
    time.sleep(0.2)  # let the server read part of it (not a deadline: the outcome is checked below)
    sock.close()
    assert _wait_clean(fresh) == []
    assert requests.get(fresh.server.api + "/health", timeout=10).json()["data"]["status"] == "ok"
    assert "Traceback" not in fresh.new_log()


def test_evaluation_error_leaves_no_uploads(fresh: Live) -> None:
    response = requests.post(fresh.server.api + "/evaluate/stream", timeout=60, files=TRACE,
                             data={"config": json.dumps({"metrics": ["no_such_metric"]})})
    assert response.status_code in (200, 400)
    assert _wait_clean(fresh) == []
    assert "Traceback" not in fresh.new_log()


# -- MCP over HTTP: the session id header ------------------------------------------------------------

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}}

MCP_SESSION_IDS = {
    "100k characters": ("x" * 100_000, 400),
    "500k characters": ("x" * 500_000, 0),  # over uvicorn's header limit: its 400, or the connection closed
    "129 characters": ("a" * 129, 400),
    "a space inside": ("a b", 400),
    "latin-1 bytes": ("\u00e9\u00e9", 400),
    "empty": ("", 400),
    "well formed but unknown": ("0123456789abcdef0123456789abcdef", 404),
}


@pytest.mark.parametrize("case", list(MCP_SESSION_IDS))
@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
def test_bad_mcp_session_id_is_a_one_line_4xx(live: Live, case: str, method: str) -> None:
    value, status = MCP_SESSION_IDS[case]
    try:
        response = requests.request(method, live.server.mcp, timeout=30,
                                    headers={**MCP_HEADERS, "mcp-session-id": value.encode("latin-1")},
                                    data=json.dumps(INITIALIZE) if method == "POST" else None)
    except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError):  # refused by the HTTP server itself while the client was still sending
        assert status == 0
    else:
        assert response.status_code == (status or 400), response.text[:300]
        assert "\n" not in response.text.strip() and len(response.text) < 400
    assert_quiet(live)


MCP_BODIES = {
    "not JSON": b"{x",
    "a JSON array": b"[1, 2]",
    "a number": b"5",
    "100k-deep JSON": b"[" * 100_000 + b"]" * 100_000,
    "a method without a session": json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode(),
    "initialize with params that are a number": json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                                             "params": 5}).encode(),
}


@pytest.mark.parametrize("case", list(MCP_BODIES))
def test_malformed_mcp_body_is_a_one_line_4xx(live: Live, case: str) -> None:
    response = requests.post(live.server.mcp, data=MCP_BODIES[case], headers=MCP_HEADERS, timeout=30)
    assert 400 <= response.status_code < 500, response.text[:300]
    assert "\n" not in response.text.strip()
    assert_quiet(live)


OTLP_REQUESTS: dict[str, tuple[str, str, bytes, dict[str, str]]] = {
    "GET on the traces route": ("GET", "/v1/traces", b"", {}),
    "an unknown route": ("POST", "/v1/metrics-nope", b"{}", {"Content-Type": "application/json"}),
    "protobuf that does not decode": ("POST", "/v1/traces", b"\xff" * 64, {"Content-Type": "application/x-protobuf"}),
    "JSON that is a list": ("POST", "/v1/traces", b"[1]", {"Content-Type": "application/json"}),
    "JSON with wrongly typed spans": ("POST", "/v1/traces", b'{"resourceSpans": [{"scopeSpans": 5}]}',
                                      {"Content-Type": "application/json"}),
    "an unknown content encoding": ("POST", "/v1/traces", b"{}", {"Content-Type": "application/json",
                                                                   "Content-Encoding": "br"}),
    "gzip that is not gzip": ("POST", "/v1/logs", b"not gzip", {"Content-Type": "application/json",
                                                                "Content-Encoding": "gzip"}),
}


@pytest.mark.parametrize("case", list(OTLP_REQUESTS))
def test_malformed_otlp_http_request_is_a_4xx(live: Live, case: str) -> None:
    method, path, body, headers = OTLP_REQUESTS[case]
    response = requests.request(method, live.server.otlp_http + path, data=body, headers=headers, timeout=30)
    assert 400 <= response.status_code < 500, response.text[:300]
    assert_quiet(live)


# -- schema-driven fuzz of every route ---------------------------------------------------------------


def test_fuzz_every_route_from_the_openapi_schema(live: Live, capsys) -> None:
    """Bodies, queries and path parameters generated from the OpenAPI schema, valid ones and invalid ones
    (schemathesis' positive and negative modes), a bounded number of examples per route."""
    import schemathesis  # a test dependency (hatch.toml): never skipped, so CI always fuzzes
    from hypothesis import HealthCheck, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis import GenerationMode

    base = live.server.api.removesuffix("/api")
    schema = schemathesis.openapi.from_url(base + "/openapi.json")
    examples = int(os.environ.get("AGENTEVALS_API_FUZZ_EXAMPLES", "8"))
    walked: list[str] = []
    failures: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()
        walked.append(operation.label)
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
                      suppress_health_check=list(HealthCheck))
            @given(case=operation.as_strategy(generation_mode=mode))
            def fuzz(case: Any) -> None:
                response = case.call(base_url=base, timeout=30)
                if response.status_code >= 500:
                    failures.append(f"{case.method} {case.formatted_path}: {response.status_code} "
                                    f"{response.text[:200]}")

            try:
                fuzz()
            except Unsatisfiable:  # no parameters to get wrong (/api/health): nothing negative to send
                assert mode is GenerationMode.NEGATIVE, operation.label
        log = live.new_log()
        assert "Traceback" not in log, f"{operation.label}:\n{log}"
        assert len(log.strip().splitlines()) <= 2 * examples, f"{operation.label}:\n{log}"
    with capsys.disabled():
        print(f"\nAPI fuzz: {len(walked)} routes walked, {examples} positive and {examples} negative examples "
              f"each: {', '.join(walked)}")
    assert failures == []
    assert len(walked) >= 13  # every /api route (a route missing from the schema is a bug too)
    assert live.uploads_left() == []


def test_fuzz_the_evaluate_config_field(live: Live) -> None:
    """The ``config`` form field is JSON inside a string, so the schema cannot describe its values: hypothesis
    draws objects with the known keys (camelCase too) and any JSON values; each is run or refused (4xx)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    keys = st.sampled_from(["metrics", "evaluators", "threshold", "trajectory_match_type", "trajectoryMatchType",
                            "judge_model", "group_by", "strict", "repeat_key", "pass_at_k", "passAtK",
                            "trace_format", "unknown"])
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False),
                        st.text(max_size=12), st.sampled_from(["tool_trajectory_avg_score", "EXACT", "trace",
                                                               "jaeger", "0.5", "-1"]))
    values = st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)), max_leaves=8)
    examples = int(os.environ.get("AGENTEVALS_API_FUZZ_EXAMPLES", "8")) * 4
    seen: list[int] = []

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(config=st.dictionaries(keys, values, max_size=4))
    def fuzz(config: dict[str, Any]) -> None:
        response = evaluate(config)(live)
        seen.append(response.status_code)
        assert response.status_code < 500, (config, response.text[:300])
        if response.status_code >= 400:
            one_line_error(response)

    fuzz()
    assert_quiet_log = live.new_log()
    assert "Traceback" not in assert_quiet_log, assert_quiet_log
    assert any(code >= 400 for code in seen) and any(code == 200 for code in seen), seen
    assert live.uploads_left() == []
