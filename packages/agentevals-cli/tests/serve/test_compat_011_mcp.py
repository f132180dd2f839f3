"""agentevals-cli 0.11's MCP tool calls, replayed through a real MCP client: its argument names are read,
its fields come back beside ours, and an argument no tool declares is an error, never ignored.

The calls and the 0.11 result shapes are recorded in ``tests/data/compat_0_11/mcp_calls.json`` from
0.11's ``src/agentevals/mcp_server.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from support.live_server import EXAMPLES
from support.shapes import mismatches

pytest.importorskip("mcp", reason="the serve extra is not installed")

from mcp import ClientSession

RECORDED = json.loads((Path(__file__).resolve().parents[1] / "data" / "compat_0_11" / "mcp_calls.json").read_text())


def _fill(value, **names):
    if isinstance(value, str):
        for key, filled in names.items():
            value = value.replace("{" + key + "}", str(filled))
        return value
    if isinstance(value, list):
        return [_fill(v, **names) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, **names) for k, v in value.items()}
    return value


def _result(result) -> tuple[bool, str]:
    """The answer as 0.11's clients read it: a list tool's ``{"result": [...]}`` list, else the one text item."""
    error = result.is_error if hasattr(result, "is_error") else result.isError
    structured = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    if not error and isinstance(structured, dict) and list(structured) == ["result"]:
        return error, json.dumps(structured["result"])
    return error, result.content[0].text


def test_0_11_tool_calls_over_streamable_http(serve, tmp_path):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from support.mcp_client import mcp_streams
    from support.weather_agent import run_weather_agent, weather_eval_set

    weather_eval_set(tmp_path)
    config = tmp_path / "eval_config.yaml"
    config.write_text("evaluators:\n  - name: tool_trajectory_avg_score\n    type: builtin\n")
    server = serve("--eval-sets", str(tmp_path), "--mcp-port", "0")
    golden = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"))
    other = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"), city="Rome")
    for trace_id in (golden, other):
        server.wait_for_session(lambda s, t=trace_id: s["session_id"] == t)
    calls = _fill(RECORDED["calls"], examples=EXAMPLES, config=config, golden=golden)

    async def talk():
        with anyio.fail_after(90):
            async with mcp_streams(server.mcp) as streams, ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                answers = {name: _result(await session.call_tool(name, args)) for name, args in calls.items()}
                answers["unknown"] = _result(await session.call_tool("evaluate_traces", {
                    **calls["evaluate_traces"], "eval_config": str(config)}))
                answers["both"] = _result(await session.call_tool("evaluate_traces", {
                    **calls["evaluate_traces"], "config_file": str(EXAMPLES / "eval_config.yaml")}))
                schema = {t.name: getattr(t, "input_schema", None) or t.inputSchema for t in (await session.list_tools()).tools}
                return answers, schema

    answers, schema = anyio.run(talk)
    for name, shape in RECORDED["shapes"].items():
        error, text = answers[name]
        assert not error, text
        assert mismatches(json.loads(text), shape) == [], name

    run = json.loads(answers["evaluate_traces"][1])
    # eval_config_file is read (its trajectory metric first), and the metrics argument adds to it, as in 0.11
    assert [m["metric"] for m in run["traces"][0]["metrics"]] == ["tool_trajectory_avg_score", "response_match_score"]
    assert [m["name"] for m in run["cases"][0]["metrics"]] == ["tool_trajectory_avg_score", "response_match_score"]
    assert run["passed"] == (run["exit_code"] == 0)

    compared = json.loads(answers["evaluate_sessions"][1])
    assert compared["eval_set_id"] == "weather-golden" and compared["golden_session_id"] == golden
    # 0.11: every completed session, the golden one included (a match against itself), oldest first
    assert [(r["session_id"], r["metric_results"][0]["evalStatus"]) for r in compared["results"]] == [
        (golden, "PASSED"), (other, "FAILED")]

    summary = json.loads(answers["summarize_session"][1])
    assert summary["invocations"][0]["tool_calls"] == [{"tool": "get_weather", "args": {"city": "Paris"}}]

    error, text = answers["unknown"]
    assert error and "unknown argument(s) eval_config;" in text and "eval_config_file" in text
    assert json.loads(answers["both"][1]) == {
        "error": "evaluate_traces: give the config as config_file or eval_config_file, not both"}
    assert all(s.get("additionalProperties") is False for s in schema.values())
