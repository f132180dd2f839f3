"""Hostile requests to the agentevals 0.11 routes ``serve`` answers (``serve/compat_011_http.py``): each ends
in its documented status with a one-line error, never a 5xx, a traceback or a file outside the export folder."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import pytest

pytest.importorskip("fastapi", reason="the serve extra is not installed")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "packages" / "agentevals-cli" / "tests"))

import requests
from support.live_server import start_server, stop_server

OTLP = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [{
    "traceId": "ab" * 16, "spanId": "cd" * 8, "name": "invoke_agent a", "startTimeUnixNano": "1",
    "endTimeUnixNano": "2", "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}]}]}]}]}


@dataclass
class Case:
    id: str
    method: str
    path: str
    status: int
    message: str
    json: Any = None
    data: Optional[bytes] = None
    extra: dict[str, Any] = field(default_factory=dict)


def deep(n: int) -> bytes:
    return b'{"traces": ' + b"[" * n + b"]" * n + b"}"


CASES = [
    Case("evaluate-json-not-json", "POST", "/api/evaluate/json", 400, "not JSON", data=b"{nope"),
    Case("evaluate-json-array", "POST", "/api/evaluate/json", 400, "expected a JSON object", json=[1, 2]),
    Case("evaluate-json-no-traces", "POST", "/api/evaluate/json", 400, "missing field(s) traces", json={"config": {}}),
    Case("evaluate-json-traces-not-otlp", "POST", "/api/evaluate/json", 400, "resourceSpans", json={"traces": {"a": 1}}),
    Case("evaluate-json-traces-a-string", "POST", "/api/evaluate/json", 400, "resourceSpans", json={"traces": "x"}),
    Case("evaluate-json-unknown-field", "POST", "/api/evaluate/json", 400, "unknown field(s) evil",
         json={"traces": OTLP, "evil": 1}),
    Case("evaluate-json-unknown-config-key", "POST", "/api/evaluate/json", 400, "unknown key(s) bogus",
         json={"traces": OTLP, "config": {"bogus": 1}}),
    Case("evaluate-json-config-not-object", "POST", "/api/evaluate/json", 400, "expected a JSON object",
         json={"traces": OTLP, "config": [1]}),
    Case("evaluate-json-evaluators-not-a-list", "POST", "/api/evaluate/json", 400, "evaluators",
         json={"traces": OTLP, "config": {"evaluators": "tool_trajectory_avg_score"}}),
    Case("evaluate-json-zero-concurrency", "POST", "/api/evaluate/json", 400, "concurrency",
         json={"traces": OTLP, "config": {"maxConcurrentEvals": 0}}),
    Case("evaluate-json-eval-set-not-object", "POST", "/api/evaluate/json", 400, "evalSet",
         json={"traces": OTLP, "evalSet": "golden"}),
    Case("evaluate-json-deep-nesting", "POST", "/api/evaluate/json", 400, "not JSON", data=deep(100_000)),
    Case("evaluate-json-chunked-over-limit", "POST", "/api/evaluate/json", 413, "request body is over",
         extra={"data": lambda: (b"x" * 65536 for _ in range(65)),  # chunked, 64 KiB over serve's 4 MiB
                "headers": {"Content-Type": "application/json"}}),
    Case("evaluate-json-stream-no-traces", "POST", "/api/evaluate/json/stream", 400, "missing field(s) traces",
         json={}),
    Case("create-eval-set-unknown-session", "POST", "/api/streaming/create-eval-set", 404, "Session not found",
         json={"session_id": "nope", "eval_set_id": "x"}),
    Case("create-eval-set-missing-field", "POST", "/api/streaming/create-eval-set", 400, "missing field(s) eval_set_id",
         json={"session_id": "nope"}),
    Case("get-trace-huge-session-id", "POST", "/api/streaming/get-trace", 404, "Session not found",
         json={"session_id": "s" * 100_000}),
    Case("get-trace-session-id-not-a-string", "POST", "/api/streaming/get-trace", 400, "session_id: expected a string",
         json={"session_id": {"$ne": None}}),
    Case("prepare-session-ids-not-strings", "POST", "/api/streaming/prepare-evaluation", 400,
         "session_ids: expected a list of strings", json={"golden_session_id": "g", "session_ids": [1]}),
    # decoded to a path no route matches: not served (the router's own 404)
    Case("download-traversal", "GET", "/api/streaming/download/..%2F..%2F..%2Fetc%2Fpasswd", 404, ""),
    Case("download-dotdot", "GET", "/api/streaming/download/..", 404, ""),
    Case("download-backslash", "GET", "/api/streaming/download/..%5C..%5Cetc%5Cpasswd", 400, "Invalid filename"),
    Case("download-missing", "GET", "/api/streaming/download/nope.json", 404, "File not found"),
    Case("prepare-unknown-golden", "POST", "/api/streaming/prepare-evaluation", 404, "Golden session not found",
         json={"golden_session_id": "nope", "session_ids": ["a"]}),
    Case("evaluate-sessions-unknown-golden", "POST", "/api/streaming/evaluate-sessions", 404,
         "Golden session not found", json={"golden_session_id": "nope", "eval_set_id": "x"}),
    Case("evaluate-sessions-extra-field", "POST", "/api/streaming/evaluate-sessions", 400, "unknown field(s) shell",
         json={"golden_session_id": "nope", "eval_set_id": "x", "shell": "rm -rf /"}),
    Case("session-otlp-unknown", "GET", "/api/streaming/sessions/nope/otlp", 404, "Session not found"),
    Case("run-results-unknown-run", "GET", "/api/runs/nope/results", 404, "no run 'nope'"),
    Case("debug-bundle-gone", "POST", "/api/debug/bundle", 410, "410 Gone: the debug bundle is gone",
         json={"logs": ["x" * 1000]}),
    Case("debug-load-gone", "POST", "/api/debug/load", 410, "410 Gone", data=b"PK\x03\x04 not a zip"),
    Case("submit-run-gone", "POST", "/api/runs", 410, "410 Gone: the Postgres run queue is gone",
         json={"spec": {"target": {"kind": "http", "base_url": "http://169.254.169.254/"}}}),
    Case("cancel-run-gone", "POST", "/api/runs/anything/cancel", 410, "410 Gone"),
    Case("evaluate-form-bad-max-concurrent", "POST", "/api/evaluate", 400, "concurrency",
         extra={"files": {"trace_files": ("t.json", json.dumps(OTLP).encode())},
                "data": {"config": json.dumps({"maxConcurrentEvals": "many"})}}),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    started = start_server("--store", str(tmp_path_factory.mktemp("store") / "runs.sqlite"), "--headless",
                           "--max-upload-mb", "1")  # request bodies up to 4 MiB
    yield started
    stop_server(started.process)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_0_11_request(server, case: Case) -> None:
    base = server.api.removesuffix("/api")
    kwargs: dict[str, Any] = {"timeout": 60, **case.extra}
    if callable(kwargs.get("data")):
        kwargs["data"] = kwargs["data"]()
    if case.json is not None:
        kwargs["json"] = case.json
    if case.data is not None:
        kwargs["data"] = case.data
    response = requests.request(case.method, base + case.path, **kwargs)
    assert response.status_code == case.status, response.text[:500]
    assert "root:" not in response.text and "Traceback" not in response.text
    if case.message:
        error = response.json()["error"]
        assert case.message in error and "\n" not in error


def test_the_cases_are_unique():
    assert len({c.id for c in CASES}) == len(CASES) >= 25


def test_no_traceback_in_the_server_log(server):
    """Runs after the cases (same module server): nothing above printed a traceback."""
    server.process.errors.seek(0)
    log = server.process.errors.read()
    assert "Traceback" not in log, log[-3000:]
