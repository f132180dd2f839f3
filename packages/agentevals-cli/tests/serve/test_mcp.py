"""A real MCP client session: ``agentevals mcp`` over stdio, and ``serve --mcp-port`` over Streamable HTTP."""

from __future__ import annotations

import json
import os
import sys

import anyio
import pytest
from support.live_server import EXAMPLES, REPO, agentevals, listed_runs

pytest.importorskip("mcp", reason="the serve extra is not installed")

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def _payload(result):
    """The tool's answer: a dict, or for the list tools (0.11's shape) the list in ``{"result": [...]}``."""
    assert not result.is_error if hasattr(result, "is_error") else not result.isError, result
    structured = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    if isinstance(structured, dict) and list(structured) == ["result"] and isinstance(structured["result"], list):
        assert [json.loads(item.text) for item in result.content] == structured["result"]  # one text per item
        return structured["result"]
    return json.loads(result.content[0].text)


def _error(result) -> str:
    assert result.is_error if hasattr(result, "is_error") else result.isError, result
    return result.content[0].text


async def _stdio_session(calls, *, env=None):
    params = StdioServerParameters(command=sys.executable, args=["-m", "agentevals", "mcp", *(env or [])],
                                   cwd=str(REPO), env={"PATH": os.environ.get("PATH", "")})
    with anyio.fail_after(120):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name for t in (await session.list_tools()).tools}
            return tools, [_error(answer) if name.startswith("!") else _payload(answer)
                           for name, args in calls for answer in [await session.call_tool(name.lstrip("!"), args)]]


def test_stdio_evaluate_traces_on_the_shipped_samples():
    tools, (metrics, run) = anyio.run(_stdio_session, [
        ("list_metrics", {}),
        ("evaluate_traces", {"trace_files": [str(EXAMPLES / "traces/helm.json")],
                             "eval_set_file": str(EXAMPLES / "evalsets/eval_set_helm.json"),
                             "metrics": ["tool_trajectory_avg_score"]}),
    ])
    assert tools == {"list_metrics", "evaluate_traces", "list_sessions", "summarize_session", "evaluate_sessions",
                     "list_runs", "show_run", "compare_runs"}
    assert "tool_trajectory_avg_score" in {m["name"] for m in metrics}
    assert {"category", "requires_eval_set", "requires_llm", "working"} <= set(metrics[0])  # 0.11's MetricInfo
    from agentevals import evaluate

    expected = evaluate([EXAMPLES / "traces/helm.json"], eval_set=EXAMPLES / "evalsets/eval_set_helm.json",
                        metrics=["tool_trajectory_avg_score"])
    assert run["exit_code"] == expected.exit_code()
    assert [(c["case_id"], c["eval_id"], c["metrics"][0]["status"], c["metrics"][0]["score"]) for c in run["cases"]] == [
        (c.case_id, c.eval_id, c.metrics[0].status.value, c.metrics[0].score) for c in expected.cases]


def test_stdio_session_tools_without_a_server_say_so():
    _, (listed,) = anyio.run(lambda: _stdio_session([("!list_sessions", {})],
                                                    env=["--server-url", "http://127.0.0.1:9"]))
    assert "cannot reach agentevals serve at http://127.0.0.1:9" in listed and "\n" not in listed.strip()


def test_stdio_run_tools_read_the_store(filled_store):
    store, first, second = filled_store
    _, (runs, brief, full, compared, missing) = anyio.run(lambda: _stdio_session([
        ("list_runs", {"limit": 5}),
        ("show_run", {"run": "latest", "rows": 1}),
        ("show_run", {"run": first, "full": True}),
        ("compare_runs", {"a": first, "b": second}),
        ("show_run", {"run": "nope"}),
    ], env=["--store", store]))
    assert runs["runs"] == listed_runs(store)
    assert brief["run_id"] == second and brief["status"] == "completed"
    assert brief["totals"]["cases"] == {"total": 1, "PASSED": 0, "FAILED": 1, "NOT_EVALUATED": 0, "ERROR": 0,
                                        "INFORMATIONAL": 0}
    assert brief["rows"][0]["status"] == "FAILED" and brief["rows_left_off"] == 1  # failing rows first, one asked
    shown = json.loads(agentevals("runs", "show", second, "-o", "json", "--store", store).stdout)
    assert brief["intervals"]["pass_rate"] == shown["intervals"]["pass_rate"]  # the pass rate with its interval
    assert brief["intervals"]["pass_rate"]["evaluated"] == 1 and 0 < brief["intervals"]["pass_rate"]["upper"] < 1
    assert brief["rows"][0]["score"] < brief["rows"][0]["threshold"]
    assert full["run"] == json.loads(agentevals("runs", "show", first, "-o", "json", "--store", store).stdout)
    cli = json.loads(agentevals("runs", "compare", first, second, "--json", "--store", store).stdout)
    assert {k: v for k, v in compared.items() if k != "headline"} == cli
    assert compared["headline"] == f"baseline {first}: 2 regressions, 0 fixes, 2 score changes"
    assert missing["error"] == f"no run 'nope' in the run store {store} (see 'agentevals runs list')"


def test_stdio_run_tools_with_a_store_that_cannot_open_say_so_and_the_rest_works(tmp_path):
    (tmp_path / "file").write_text("")
    store = str(tmp_path / "file" / "runs.sqlite")
    _, (runs, metrics) = anyio.run(lambda: _stdio_session([("list_runs", {}), ("list_metrics", {})],
                                                          env=["--store", store]))
    assert runs["error"].startswith(f"run store {store}: cannot open")
    assert metrics and metrics[0]["name"]


def test_session_tools_over_streamable_http(serve, tmp_path):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from support.mcp_client import mcp_streams
    from support.weather_agent import run_weather_agent, weather_eval_set

    weather_eval_set(tmp_path)
    server = serve("--eval-sets", str(tmp_path), "--mcp-port", "0")
    first = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"))
    second = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"), city="Rome")
    for trace_id in (first, second):
        server.wait_for_session(lambda s, t=trace_id: s["session_id"] == t)

    async def talk():
        with anyio.fail_after(60):
            async with mcp_streams(server.mcp) as streams, ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                listed = _payload(await session.call_tool("list_sessions", {}))
                summary = _payload(await session.call_tool("summarize_session", {"session_id": first}))
                compared = _payload(await session.call_tool("evaluate_sessions", {
                    "golden_session_id": first, "session_ids": [second]}))
                run = _payload(await session.call_tool("show_run", {}))
                return listed, summary, compared, run

    listed, summary, compared, run = anyio.run(talk)
    assert run["status"] == "live" and run["totals"]["cases"]["total"] == 2  # serve's own run, in its store
    assert [r["case_id"] for r in run["rows"]] == [second, first]  # the failing one first
    assert {first, second} <= {s["session_id"] for s in listed}
    assert summary["turns"][0]["tool_calls"] == [{"name": "get_weather", "args": {"city": "Paris"}}]
    assert summary["results"][0]["status"] == "PASSED"
    assert compared["cases"][0]["metrics"][0]["status"] == "FAILED"  # Rome is not the golden Paris call
