"""Source URIs through ``serve``: the API's ``sources`` field and MCP ``evaluate_traces`` read a trace backend on
a host given to ``serve --allow-source-host`` and give the same results as the same traces uploaded as files;
a URI naming any other host, a ``file://`` URI and a plain URL are refused with one line; without
``--allow-source-host`` every source URI is; a cross-origin post or one without the API token never gets
that far. The backend is ``support.writeback_source``'s loopback stand-in (a test-only ``PullSource`` plugin
installed by entry point, serving the real shipped Jaeger traces)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from support.live_server import EXAMPLES, start_server, stop_server
from support.writeback_source import Backend, install_plugin

pytest.importorskip("fastapi", reason="the serve extra is not installed")

TRACES = [EXAMPLES / "traces/helm.json", EXAMPLES / "traces/k8s.json"]
EVAL_SET = EXAMPLES / "evalsets/eval_set_helm.json"
TOKEN = "surfaces-token"
CONFIG = '{"metrics": ["tool_trajectory_avg_score", "tool_call_count_v1"]}'


@pytest.fixture
def backend() -> Iterator[Backend]:
    server = Backend.start(TRACES)
    yield server
    server.stop()


def plugin_env(tmp_path: Path) -> dict[str, str]:
    site = install_plugin(tmp_path / "site")
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CACHE_HOME": str(tmp_path / "cache")}


def view(run: dict) -> list[tuple]:
    return [(c["trace_ids"], [(m["name"], m["status"], m["score"]) for m in c["metrics"]]) for c in run["cases"]]


def post(server, *, token: str | None = TOKEN, sources: list[str] = (), uploads: list[Path] = (),
         headers: dict[str, str] | None = None) -> requests.Response:
    files = [("eval_set_file", (EVAL_SET.name, EVAL_SET.read_bytes(), "application/json")),
             *[("trace_files", (p.name, p.read_bytes(), "application/json")) for p in uploads]]
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    return requests.post(f"{server.api}/evaluate", files=files, data={"config": CONFIG, "sources": list(sources)},
                         headers={**auth, **(headers or {})}, timeout=120)


@pytest.mark.timeout(300)
def test_api_and_mcp_read_an_allowed_source_and_refuse_the_others(backend, tmp_path):
    from support.serve_guard import mcp_call

    server = start_server("--no-store", "--mcp-port", "0", "--api-token", TOKEN, "--allow-source-host",
                          f"127.0.0.1:{backend.port}", env=plugin_env(tmp_path), token=TOKEN)
    try:
        files = post(server, uploads=TRACES)
        assert files.status_code == 200, files.text
        expected = view(files.json()["data"])
        assert len(expected) == 2

        sourced = post(server, sources=[backend.uri()])
        assert sourced.status_code == 200, sourced.text
        assert view(sourced.json()["data"]) == expected
        assert {s for c in sourced.json()["data"]["cases"] for s in c["sources"]} == {backend.uri()}

        other_port = post(server, sources=[f"acme+http://127.0.0.1:{backend.port + 1}?project=demo"])
        assert other_port.status_code == 403
        line = (f"sources: acme+http://127.0.0.1:{backend.port + 1}?project=demo: host 127.0.0.1:{backend.port + 1} "
                f"is not allowed (serve --allow-source-host 127.0.0.1:{backend.port + 1} allows it)")
        assert other_port.json() == {"data": None, "error": line, "detail": line}
        internal = post(server, sources=["acme+http://169.254.169.254?project=demo"])
        assert internal.status_code == 403 and "host 169.254.169.254 is not allowed" in internal.json()["error"]
        for local in ("file:///etc/passwd", f"http://127.0.0.1:{backend.port}/api/traces"):
            refused = post(server, sources=[local])
            assert refused.status_code == 400, refused.text
            assert refused.json()["error"] == (f"sources: {local}: not a trace backend URI "
                                               "(jaeger+http://HOST:PORT?…); send trace files as uploads")
        assert post(server, sources=[]).status_code == 400  # neither uploads nor sources
        streamed = requests.post(f"{server.api}/evaluate/stream", headers={"Authorization": f"Bearer {TOKEN}"},
                                 data={"config": CONFIG, "sources": [backend.uri()]}, timeout=120)
        assert streamed.status_code == 200 and "event: done" in streamed.text, streamed.text
        assert streamed.text.count("event: case") == 2
        stream_refused = requests.post(f"{server.api}/evaluate/stream", headers={"Authorization": f"Bearer {TOKEN}"},
                                       data={"sources": ["acme+http://10.0.0.7:80?project=demo"]}, timeout=60)
        assert stream_refused.status_code == 403 and "10.0.0.7:80 is not allowed" in stream_refused.json()["error"]

        cross_site = post(server, token=None, sources=[backend.uri()], headers={"Origin": "http://evil.example"})
        assert cross_site.status_code == 403, cross_site.text
        assert "Traceback" not in cross_site.text and "\n" not in cross_site.json()["error"]
        no_token = post(server, token=None, sources=[backend.uri()])
        assert no_token.status_code == 401
        assert backend.verdicts == {}  # evaluating from serve never writes back

        auth = {"Authorization": f"Bearer {TOKEN}"}
        status, answer = mcp_call(server.mcp, "evaluate_traces", {
            "trace_files": [backend.uri()], "eval_set_file": str(EVAL_SET),
            "metrics": ["tool_trajectory_avg_score", "tool_call_count_v1"]}, headers=auth)
        assert status == 200, answer
        assert view(answer) == expected
        status, answer = mcp_call(server.mcp, "evaluate_traces", {
            "trace_files": ["acme+http://10.0.0.7:80?project=demo"], "eval_set_file": str(EVAL_SET)}, headers=auth)
        assert status == 200
        assert answer == {"error": "trace_files: acme+http://10.0.0.7:80?project=demo: host 10.0.0.7:80 is not "
                                   "allowed (serve --allow-source-host 10.0.0.7:80 allows it)"}
    finally:
        stop_server(server.process)


def test_without_allow_source_host_serve_takes_no_source_uri(backend, tmp_path):
    server = start_server("--no-store", "--headless", env=plugin_env(tmp_path))
    try:
        refused = post(server, token=None, sources=[backend.uri()])
        assert refused.status_code == 403
        assert refused.json()["error"] == (f"sources: {backend.uri()}: this server takes no source URIs "
                                           "(start it with --allow-source-host 127.0.0.1)")
        assert backend.traces and backend.posts == 0
    finally:
        stop_server(server.process)


@pytest.mark.timeout(300)
def test_api_and_mcp_since_sets_the_window_of_uris_that_name_none(tmp_path):
    """A loopback STAND-IN for Jaeger (API v3; the shipped helm trace, placed ten minutes ago): the config's
    ``since`` (API) and ``since`` (MCP ``evaluate_traces``) are ``run --since``: a window that holds the trace
    scores it, one that starts after it scores nothing; ``last`` and a non-time are one-line refusals."""
    from datetime import datetime, timedelta, timezone

    from standins._traces import TraceBank, load_templates
    from standins.cli import HELM
    from standins.jaeger import JaegerStandIn
    from support.serve_guard import mcp_call

    ten_minutes_ago = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=10)
    with JaegerStandIn(TraceBank(load_templates([HELM]), newest=ten_minutes_ago)) as jaeger:
        uri = f"jaeger+{jaeger.url}?service=helm_agent"
        host = jaeger.url.split("//", 1)[1]
        server = start_server("--no-store", "--mcp-port", "0", "--allow-source-host", host)
        try:
            def cases(since: str) -> requests.Response:
                config = json.dumps({"metrics": ["tool_trajectory_avg_score"], "since": since})
                return requests.post(f"{server.api}/evaluate", data={"config": config, "sources": [uri]}, timeout=120)

            later = (ten_minutes_ago + timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
            assert len(cases("2h").json()["data"]["cases"]) == 1
            assert cases("5m").json()["data"]["cases"] == []
            assert cases(later).json()["data"]["cases"] == []
            for bad, words in (("last", "since: 'last' needs the run store"), ("soon", "since soon: not a duration")):
                refused = cases(bad)
                assert refused.status_code == 400 and refused.json()["error"].startswith(words), refused.text
            status, answer = mcp_call(server.mcp, "evaluate_traces", {"trace_files": [uri], "since": "2h"})
            assert status == 200 and len(answer["cases"]) == 1, answer
            status, answer = mcp_call(server.mcp, "evaluate_traces", {"trace_files": [uri], "since": later})
            assert status == 200 and answer["cases"] == [], answer
        finally:
            stop_server(server.process)
