"""One reading path: the same late-logs inputs (an OTLP trace file, then a logs file the sniff cannot
recognise) give the same converted traces through every caller: ``load_traces`` / ``iter_traces``, the
Python API, ``agentevals run``, serve's HTTP API (``/api/convert``, ``/api/evaluate``) and its MCP
``evaluate_traces``. (The Ray pool's side is in ``execution/test_ray_executor.py``.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import agentevals
import pytest
import requests
from agentevals.trace_sources import iter_traces, load_traces, resolve

DATA = Path(__file__).resolve().parents[1] / "data" / "traces" / "genai"
OTLP = DATA / "langchain_openllmetry_events.otlp.json"
LOGS = DATA / "langchain_openllmetry_events.otlp-logs.json"
ASKED = "What's the weather in Paris?"  # the user's message is only in the log records
TOKEN = "one-reading-path-token"


def late_inputs(tmp_path: Path) -> tuple[list[str], Path]:
    """The trace file, then a logs file whose first key is not ``resourceLogs``; and a config."""
    logs = tmp_path / "late-logs.json"
    logs.write_text(json.dumps({"schema": "x", **json.loads(LOGS.read_text())}))
    config = tmp_path / "eval_config.yaml"
    config.write_text("evaluators:\n  - type: contains\n    value: sunny\n")
    return [str(OTLP), str(logs)], config


def expected_invocations() -> list[dict]:
    (trace,), errors = load_traces([LOGS, OTLP])  # logs first: the plain case
    assert not errors
    return [inv.model_dump(mode="json") for inv in trace.invocations]


def turn(invocation: dict) -> tuple:
    """An agent turn's content (answers add their own keys beside it, e.g. agentevals 0.11's camelCase ones)."""
    return (invocation["invocation_id"], invocation["user_content"], invocation["final_response"],
            invocation["intermediate_steps"]["tool_calls"])


def case_view(run: dict) -> list[tuple]:
    """What each caller's run result says of its cases (sources and run ids differ between callers)."""
    return [(c["trace_ids"], c["user_contents"], [(m["name"], m["status"], m["score"]) for m in c["metrics"]])
            for c in run["cases"]]


def test_late_logs_reach_the_traces_before_them_through_every_function(tmp_path):
    inputs, _ = late_inputs(tmp_path)
    expected = expected_invocations()
    assert expected[0]["user_content"] == ASKED
    (alone,), _ = load_traces([OTLP])
    assert alone.invocations[0].user_content != ASKED  # the logs file is what brings it
    (loaded,), errors = load_traces(inputs)
    assert not errors
    streamed = [item for item in iter_traces(inputs)]
    positioned = [item for item, _ in resolve(inputs)]
    for trace in (loaded, *streamed, *positioned):
        assert [inv.model_dump(mode="json") for inv in trace.invocations] == expected
    from agentevals.engine import iter_traces as old_iter_traces
    from agentevals.engine import load_traces as old_load_traces  # the deprecated path is the same function

    assert old_load_traces is load_traces and old_iter_traces is iter_traces


@pytest.mark.timeout(300)
def test_late_logs_give_the_same_run_through_api_cli_serve_and_mcp(tmp_path):
    pytest.importorskip("fastapi", reason="the serve extra is not installed")
    from support.live_server import start_server, stop_server
    from support.serve_guard import mcp_call

    inputs, config = late_inputs(tmp_path)
    api = agentevals.evaluate(inputs, config=config).model_dump(mode="json")
    assert api["cases"][0]["user_contents"] == [ASKED]
    assert [m["status"] for m in api["cases"][0]["metrics"]] == ["PASSED"]

    cli = subprocess.run([sys.executable, "-m", "agentevals", "run", *inputs, "-c", str(config), "-o", "json"],
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr
    assert case_view(json.loads(cli.stdout)) == case_view(api)

    server = start_server("--store", str(tmp_path / "runs.sqlite"), "--mcp-port", "0", "--api-token", TOKEN,
                          token=TOKEN)
    try:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        base = server.api.removesuffix("/api")
        uploads = [("trace_files", (Path(p).name, Path(p).read_bytes(), "application/json")) for p in inputs]
        converted = requests.post(f"{base}/api/convert", files=uploads, headers=auth, timeout=60)
        assert converted.status_code == 200, converted.text
        traces = converted.json()["data"]["traces"]
        assert [[turn(inv) for inv in t["invocations"]] for t in traces] == [[turn(inv) for inv in expected_invocations()]]
        evaluated = requests.post(f"{base}/api/evaluate", headers=auth, timeout=120, files=[
            *uploads, ("config_file", ("eval_config.yaml", config.read_bytes(), "application/x-yaml"))])
        assert evaluated.status_code == 200, evaluated.text
        assert case_view(evaluated.json()["data"]) == case_view(api)
        status, answer = mcp_call(server.mcp, "evaluate_traces", {"trace_files": inputs, "config_file": str(config)},
                                  headers=auth)
        assert status == 200, answer
        assert case_view(answer) == case_view(api)
    finally:
        stop_server(server.process)


def test_traces_in_memory_give_what_the_stream_gives():
    """``load_traces`` of ``Trace`` objects (serve's sessions) converts them directly: the same traces, and the
    same error for one that cannot be converted, as the reading path's stream gives."""
    from agentevals.traces.model import Span, Trace
    from agentevals.traces.readers.otlp import read_otlp

    traces = list(read_otlp(json.loads(OTLP.read_text()), str(OTLP)))
    broken = Trace("ff" * 16, [Span("ff" * 16, "01" * 8, "chat", attributes=None)], source="memory:broken")  # type: ignore[arg-type]
    inputs = [traces[0], broken, *traces[1:]]
    for keep_spans in (True, False):
        loaded, errors = load_traces(inputs, keep_spans=keep_spans)
        streamed = list(iter_traces(inputs, keep_spans=keep_spans))
        assert [e.error for e in errors] == [e.error for e in streamed if not hasattr(e, "invocations")]
        assert "memory:broken: trace ffff" in errors[0].error
        assert [(t.trace_id, t.source, [i.model_dump() for i in t.invocations], t.warnings, t.trace is None)
                for t in loaded] == [(t.trace_id, t.source, [i.model_dump() for i in t.invocations], t.warnings,
                                      t.trace is None) for t in streamed if hasattr(t, "invocations")]
        assert all((t.trace is None) is not keep_spans for t in loaded)
