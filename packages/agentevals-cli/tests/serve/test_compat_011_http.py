"""agentevals-cli 0.11's HTTP requests, replayed against a real ``serve`` over HTTP.

Every request in ``tests/data/compat_0_11/http_requests.json`` is copied from 0.11's own clients and tests
(its ``origin`` names the file and line); the answer must carry every key of 0.11's response model with its
JSON type (``support.shapes``), SSE frames included, or be the documented ``410 Gone``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests
from support.live_server import REPO
from support.shapes import mismatches

RECORDED = json.loads((Path(__file__).resolve().parents[1] / "data" / "compat_0_11" / "http_requests.json").read_text())
NAMES = [r["name"] for r in RECORDED["requests"]]


def _fill(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        for key, filled in names.items():
            value = value.replace("{" + key + "}", filled)
        return value
    if isinstance(value, list):
        return [_fill(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, names) for k, v in value.items()}
    return value


def _files(files: dict[str, list]) -> list[tuple[str, tuple[str, bytes]]]:
    out = []
    for field, (filename, content) in files.items():
        if isinstance(content, str) and content.startswith("@"):
            data = (REPO / content[1:]).read_bytes()
        else:
            data = content.encode() if isinstance(content, str) else json.dumps(content).encode()
        out.append((field, (filename, data)))
    return out


def _sse(response: requests.Response, *, until_synced: bool = False) -> list[dict]:
    """The JSON of every ``data:`` line, as 0.11's UI reads them (``event:`` lines aside)."""
    frames = []
    for line in response.iter_lines(decode_unicode=True):
        if line and line.startswith("data: "):
            frames.append(json.loads(line[6:]))
            if until_synced and "synced" in frames[-1]:
                break
    return frames


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """A serve with a run store and two evaluated live sessions (the weather agent: Paris, then Rome)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from support.live_server import start_server, stop_server
    from support.weather_agent import run_weather_agent, weather_eval_set

    folder = tmp_path_factory.mktemp("sets")
    weather_eval_set(folder)
    server = start_server("--eval-sets", str(folder), "--store", str(folder / "runs.sqlite"))
    try:
        golden = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"))
        other = run_weather_agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces"), city="Rome")
        for trace_id in (golden, other):
            server.wait_for_session(lambda s, t=trace_id: s["session_id"] == t)
        run = server.get("/runs").json()["data"][0]["run_id"]
        yield server, {"golden": golden, "golden12": golden[:12], "other": other, "run": run}
    finally:
        stop_server(server.process)


def _send(server, request: dict, names: dict[str, str]) -> requests.Response:
    base = server.api.removesuffix("/api")
    kwargs: dict[str, Any] = {"timeout": 120, "params": request.get("params")}
    if "json" in request:
        kwargs["json"] = _fill(request["json"], names)
    if "files" in request:
        kwargs["files"] = _files(request["files"])
        kwargs["data"] = request.get("form", {})
    if "sse" in request or "sse_until_synced" in request:
        kwargs["stream"] = True
    return requests.request(request["method"], base + _fill(request["path"], names), **kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_0_11_request_gets_0_11_answer(live, name):
    server, names = live
    request = next(r for r in RECORDED["requests"] if r["name"] == name)
    response = _send(server, request, names)
    if "status" in request:  # a route that cannot return: 410 and one line naming what replaces it
        assert response.status_code == request["status"], response.text
        body = response.json()
        assert body["data"] is None and "410 Gone: " in body["error"] and "\n" not in body["error"]
        return
    assert response.status_code == 200, response.text
    if "sse" in request or "sse_until_synced" in request:
        frames = _sse(response, until_synced="sse_until_synced" in request)
        response.close()
        expected = request.get("sse") or {"upsert": request["sse_until_synced"]}
        for key, shape in expected.items():
            found = [f for f in frames if key in f]
            assert found, f"no frame with {key!r} in {[sorted(f) for f in frames]}"
            assert [m for f in found for m in mismatches(f, shape)] == []
        assert not [f for f in frames if f.get("error")], frames
        return
    assert mismatches(response.json(), request["shape"]) == []


def test_0_11_ui_live_evaluation_round_trip(live):
    """What 0.11's live view does (LiveStreamingView.tsx): create an eval set from the golden session, fetch
    each session's trace as ``trace_<id>.jsonl``, upload both to /api/evaluate/stream; the golden session
    passes its own eval set and Rome fails it, the turns coming back intact."""
    server, names = live
    base = server.api
    eval_set = requests.post(f"{base}/streaming/create-eval-set", timeout=30, json={
        "session_id": names["golden"], "eval_set_id": f"golden_{names['golden']}"}).json()["data"]["evalSet"]
    files = [("eval_set_file", (f"eval_set_{names['golden']}.json", json.dumps(eval_set).encode()))]
    for sid in (names["golden"], names["other"]):
        trace = requests.post(f"{base}/streaming/get-trace", json={"session_id": sid}, timeout=30).json()["data"]
        files.append(("trace_files", (f"trace_{sid}.jsonl", trace["traceContent"].encode())))
    config = {"evaluators": [{"type": "builtin", "name": "tool_trajectory_avg_score", "judgeModel": "gemini-2.5-flash",
                              "threshold": 0.8, "trajectoryMatchType": "EXACT"}]}
    with requests.post(f"{base}/evaluate/stream", files=files, data={"config": json.dumps(config)}, timeout=120,
                       stream=True) as response:
        frames = _sse(response)
    done = next(f for f in frames if f.get("done"))
    statuses = sorted(m["evalStatus"] for t in done["result"]["traceResults"] for m in t["metricResults"])
    assert statuses == ["FAILED", "PASSED"], done["result"]


def test_max_concurrent_keys_of_a_0_11_config_are_accepted(live):
    server, _ = live
    config = {"evaluators": [{"name": "tool_trajectory_avg_score", "type": "builtin"}], "maxConcurrentTraces": 2,
              "maxConcurrentEvals": 3}
    response = requests.post(f"{server.api}/evaluate", timeout=120, data={"config": json.dumps(config)},
                             files=_files({"trace_files": ["helm.json", "@examples/traces/helm.json"]}))
    assert response.status_code == 200, response.text
    assert response.json()["data"]["traceResults"][0]["metricResults"][0]["metricName"] == "tool_trajectory_avg_score"


def test_0_11_prepare_evaluation_files_download(live):
    server, names = live
    prepared = requests.post(f"{server.api}/streaming/prepare-evaluation", timeout=30, json={
        "golden_session_id": names["golden"], "session_ids": [names["golden"], names["other"], "unknown"]}).json()["data"]
    assert prepared["numTraces"] == 2 == len(prepared["traceUrls"])
    base = server.api.removesuffix("/api")
    eval_set = requests.get(base + prepared["evalSetUrl"], timeout=30).json()
    assert eval_set["eval_set_id"] == f"golden_{names['golden']}"
    turns = eval_set["eval_cases"][0]["conversation"]
    assert turns[0]["intermediate_data"]["tool_uses"] == [{"id": "call-1", "args": {"city": "Paris"}, "name": "get_weather"}]
    for url in prepared["traceUrls"]:
        assert requests.get(base + url, timeout=30).json()["resourceSpans"]


def test_convert_group_by_auto_merges_the_traces_of_a_conversation(live, tmp_path):
    """0.11's UI posts ``group_by=auto``: traces that share a session id come back as one entry (as
    ``run --group-by auto`` makes them one case), and ``trace`` keeps one entry per trace."""
    server, _ = live
    adk = Path(__file__).resolve().parents[1] / "data" / "adk"
    first, second = (json.loads((adk / name).read_text()) for name in ("helm.json", "helm_2.json"))
    conversation = "ctx-7ed9780f-3688-4fc0-b10b-2e4df2f83cf0"
    for span in second["data"][0]["spans"]:
        for tag in span["tags"]:
            if tag["key"] in ("gen_ai.conversation.id", "gcp.vertex.agent.session_id"):
                tag["value"] = conversation

    def convert(group_by: str) -> list[dict]:
        files = [("trace_files", (name, json.dumps(doc), "application/json"))
                 for name, doc in (("a.json", first), ("b.json", second))]
        answer = requests.post(server.api + "/convert", files=files, data={"group_by": group_by}, timeout=60)
        assert answer.status_code == 200, answer.text
        return answer.json()["data"]["traces"]

    merged = convert("auto")
    assert [(len(e["traceIds"]), len(e["invocations"])) for e in merged] == [(2, 2)]
    assert merged == convert("conversation")
    assert [len(e["traceIds"]) for e in convert("trace")] == [1, 1]
