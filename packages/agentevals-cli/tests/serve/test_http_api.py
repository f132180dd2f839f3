"""The HTTP API of ``serve`` against the shipped samples: health, config, metrics, validation, conversion,
evaluation (whole and streamed), OpenAPI."""

from __future__ import annotations

import json

import pytest
import requests
from support.live_server import EXAMPLES, REPO

HELM = EXAMPLES / "traces/helm.json"
HELM_SET = EXAMPLES / "evalsets/eval_set_helm.json"


def test_health_config_metrics_openapi(serve):
    server = serve("--eval-sets", str(EXAMPLES / "evalsets"))
    health = server.get("/health").json()
    assert health["error"] is None and health["data"]["status"] == "ok"
    config = server.get("/config").json()["data"]
    assert config["eval_sets"] == ["evalset_helm_3_2026-02-23", "helm_eval_set"]
    assert config["otlp"]["http"] == server.otlp_http
    names = {m["name"]: m for m in server.get("/metrics").json()["data"]}
    assert names["tool_trajectory_avg_score"]["requires_eval_set"] is True
    assert names["token_usage_v1"]["informational"] is True
    schema = requests.get(server.api.removesuffix("/api") + "/openapi.json", timeout=10).json()
    for path in ("/api/health", "/api/config", "/api/metrics", "/api/validate/eval-set", "/api/convert",
                 "/api/evaluate", "/api/evaluate/stream", "/api/sessions", "/api/sessions/{session_id}",
                 "/api/sessions/compare", "/api/runs", "/api/runs/{run}", "/api/runs/compare"):
        assert path in schema["paths"], path


def test_validate_and_convert(serve):
    server = serve()
    with open(HELM_SET, "rb") as f:
        ok = requests.post(f"{server.api}/validate/eval-set", files={"eval_set_file": f}, timeout=10).json()["data"]
    assert ok["valid"] is True and ok["eval_set_id"] == "helm_eval_set"
    bad = requests.post(f"{server.api}/validate/eval-set", files={"eval_set_file": ("x.json", b"{}")},
                        timeout=10).json()["data"]
    assert bad["valid"] is False and "x.json" in bad["errors"][0]
    with open(HELM, "rb") as f:
        converted = requests.post(f"{server.api}/convert", files={"trace_files": f}, timeout=30).json()["data"]
    assert converted["errors"] == []
    assert converted["traces"][0]["invocations"][0]["user_content"]


def test_evaluate_matches_run(serve, tmp_path):
    import subprocess
    import sys

    server = serve()
    with open(HELM, "rb") as traces, open(HELM_SET, "rb") as golden:
        body = requests.post(f"{server.api}/evaluate", timeout=60,
                             files=[("trace_files", traces), ("eval_set_file", golden)],
                             data={"config": json.dumps({"metrics": ["tool_trajectory_avg_score"]})}).json()
    assert body["error"] is None
    api_cases = body["data"]["cases"]
    cli = subprocess.run([sys.executable, "-m", "agentevals", "run", str(HELM), "-e", str(HELM_SET), "-o", "json"],
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    cli_cases = json.loads(cli.stdout)["cases"]
    assert [(c["case_id"], c["eval_id"], [(m["name"], m["status"], m["score"]) for m in c["metrics"]])
            for c in api_cases] == [
           (c["case_id"], c["eval_id"], [(m["name"], m["status"], m["score"]) for m in c["metrics"]])
           for c in cli_cases]


def test_evaluate_stream_sends_each_case_then_the_run(serve):
    server = serve()
    with open(HELM, "rb") as traces, open(HELM_SET, "rb") as golden:
        response = requests.post(f"{server.api}/evaluate/stream", timeout=60, stream=True,
                                 files=[("trace_files", traces), ("eval_set_file", golden)])
        events = []
        for block in response.text.split("\n\n"):
            if block.strip():
                name = block.split("\n")[0].removeprefix("event: ")
                data = json.loads(block.split("\n", 1)[1].removeprefix("data: "))
                events.append((name, data))
    assert response.headers["content-type"].startswith("text/event-stream")
    names = [n for n, _ in events]
    cases = events[-1][1]["cases"]
    # per case: 0.11's performance_metrics and progress frames, then ours; 0.11's first and last progress lines
    assert names == ["progress", *["performance_metrics", "progress", "case"] * len(cases), "progress", "done"]
    assert [d["case_id"] for n, d in events if n == "case"] == [c["case_id"] for c in cases]
    messages = [d["message"] for n, d in events if n == "progress"]
    assert messages[0] == f"Evaluating {len(cases)} trace{'s' if len(cases) != 1 else ''}..."
    assert messages[1] == f"Trace 1/{len(cases)}: {cases[0]['case_id'][:12]}..." and messages[-1] == "Evaluation complete"
    performance = next(d for n, d in events if n == "performance_metrics")
    case_frame = next(d for n, d in events if n == "case")
    assert performance["traceId"] == case_frame["traceProgress"]["traceId"]
    assert performance["performanceMetrics"] == case_frame["traceProgress"]["partialResult"]["performanceMetrics"]
    assert performance["performanceMetrics"]["latency"]["overall"]["count"] >= 1


def test_bad_requests_get_one_line_errors(serve):
    server = serve("--max-upload-mb", "1")
    with open(HELM, "rb") as traces:
        unknown = requests.post(f"{server.api}/evaluate", files={"trace_files": traces}, timeout=30,
                                data={"config": json.dumps({"metrix": ["x"]})})
    assert unknown.status_code == 400 and "unknown key(s) metrix" in unknown.json()["error"]
    with open(HELM, "rb") as traces:
        metric = requests.post(f"{server.api}/evaluate", files={"trace_files": traces}, timeout=30,
                               data={"config": json.dumps({"metrics": ["tool_trajectory"]})})
    assert metric.status_code == 400 and "tool_trajectory" in metric.json()["error"]
    big = requests.post(f"{server.api}/convert", files={"trace_files": ("big.json", b" " * (2 * 2**20))}, timeout=30)
    assert big.status_code == 413 and "big.json" in big.json()["error"]
    assert server.get("/sessions/nope").status_code == 404


def test_remote_host_needs_a_token():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "agentevals", "serve", "--host", "0.0.0.0", "-p", "0",
                             "--otlp-http-port", "0", "--otlp-grpc-port", "0"],
                            capture_output=True, text=True, timeout=60, env={"PATH": "", "HOME": "/nonexistent"})
    assert result.returncode == 2
    assert "--host 0.0.0.0" in result.stderr and "--api-token" in result.stderr
    assert "Traceback" not in result.stderr


def test_startup_errors_are_one_line_usage_errors(tmp_path):
    import socket
    import subprocess
    import sys

    def serve_exit(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "agentevals", "serve", "-p", "0", "--otlp-http-port", "0",
                               "--otlp-grpc-port", "0", *args], capture_output=True, text=True, timeout=60)

    typo = serve_exit("-m", "tool_trajectory_avg_scor")
    assert typo.returncode == 2 and "did you mean 'tool_trajectory_avg_score'" in typo.stderr
    missing = serve_exit("--eval-sets", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "not a directory" in missing.stderr
    (tmp_path / "bad.json").write_text("{")
    bad = serve_exit("--eval-sets", str(tmp_path))
    assert bad.returncode == 2 and "bad.json" in bad.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        busy = serve_exit("--otlp-grpc-port", port)
        assert busy.returncode == 2 and f"127.0.0.1:{port}" in busy.stderr
    for result in (typo, missing, bad, busy):
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_evaluate_with_evaluator_entries_in_camel_case_config(serve):
    server = serve()
    config = {"evaluators": [{"name": "tool_trajectory_avg_score", "type": "builtin", "threshold": 0.5}],
              "trajectoryMatchType": "any_order"}
    with open(HELM, "rb") as traces, open(HELM_SET, "rb") as golden:
        body = requests.post(f"{server.api}/evaluate", timeout=60, data={"config": json.dumps(config)},
                             files=[("trace_files", traces), ("eval_set_file", golden)]).json()
    assert body["error"] is None, body
    assert {m["name"] for c in body["data"]["cases"] for m in c["metrics"]} == {"tool_trajectory_avg_score"}
    assert {s for c in body["data"]["cases"] for s in c["sources"]} == {"helm.json"}  # no server paths
    bad = requests.post(f"{server.api}/evaluate", timeout=60, files={"trace_files": HELM.open("rb")},
                        data={"config": json.dumps({"evaluators": [{"name": "x", "type": "builtin", "treshold": 1}]})})
    assert bad.status_code == 400 and bad.json()["error"].startswith("config.json:1:")
    assert "treshold" in bad.json()["error"]


@pytest.mark.parametrize(("argv", "blocked", "extra"), [
    (["serve"], "fastapi", "serve"), (["mcp"], "mcp", "serve"),
    (["run", "examples/traces/helm.json", "--emit-otel"], "opentelemetry", "otel")])
def test_missing_extra_names_the_pip_command(argv, blocked, extra):
    import subprocess
    import sys

    code = (f"import sys\nsys.modules[{blocked!r}] = None\nfrom agentevals.cli import main\nmain({argv!r})")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 1
    assert result.stderr.strip().endswith(f'pip install "agentevals-cli[{extra}]"'), result.stderr
