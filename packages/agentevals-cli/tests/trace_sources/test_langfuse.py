"""``langfuse+http(s)://`` URIs against a stand-in: Langfuse cannot be installed here, so these tests run a
loopback server (``standins.langfuse``) following Langfuse's public API v2 observations and scores as of
Langfuse v4.16.0 (langfuse/langfuse sources, August 2026), whose observations are built from the shipped
Jaeger traces the way Langfuse's OpenTelemetry ingestion stores them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from agentevals.trace_sources import load_traces, source_for
from agentevals.trace_sources.langfuse import langfuse_trace_id, otel_trace_id, score_id
from agentevals.trace_sources.pull import SourceError, Verdict
from standins.langfuse import API_VERSION, LangfuseStandIn

ROOT = Path(__file__).resolve().parents[4]
HELM = ROOT / "examples" / "traces" / "helm.json"
K8S = ROOT / "examples" / "traces" / "k8s.json"
EVAL_SET = ROOT / "examples" / "evalsets" / "eval_set_helm.json"
HELM_ID, K8S_ID = "3e289017fe03ffd7c4145316d2eb3d0d", "d497c9dd55717f2c5ecb79bda3028993"
WIDE = "since=3650d"  # the shipped traces are from 2026-02; the window must reach them


@pytest.fixture
def langfuse(monkeypatch: pytest.MonkeyPatch) -> Iterator[LangfuseStandIn]:
    with LangfuseStandIn.from_files([HELM, K8S]) as standin:
        monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", standin.public_key)
        monkeypatch.setenv("LANGFUSE_SECRET_KEY", standin.secret_key)
        yield standin


def uri(standin: LangfuseStandIn, query: str = WIDE) -> str:
    return f"langfuse+{standin.url}?{query}"


def run_cli(*inputs: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "agentevals", "run", *inputs, "--eval-set", str(EVAL_SET),
                           "-m", "tool_trajectory_avg_score", "-o", "json"],
                          capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout)


def case_view(run: dict) -> list[tuple]:
    """Per case: what was scored and how (the source and timings differ by design)."""
    return sorted((c["trace_ids"], c["eval_id"], c["user_contents"],
                   [(m["name"], m["status"], m["score"], m["details"]) for m in c["metrics"]]) for c in run["cases"])


def ids(items: list) -> list[str]:
    return sorted(t.trace_id for t in items)


def test_the_cli_scores_the_same_traces_from_files_and_from_langfuse(langfuse):
    """A stand-in (Langfuse v4.16.0 public API v2 observations): the CLI on the files and on the URI."""
    from_files = run_cli(str(HELM), str(K8S))
    from_langfuse = run_cli(uri(langfuse))
    assert from_langfuse["errors"] == []
    assert case_view(from_langfuse) == case_view(from_files)
    assert sorted(m["status"] for c in from_langfuse["cases"] for m in c["metrics"]) == ["FAILED", "PASSED"]
    assert all(c["sources"] == [uri(langfuse)] for c in from_langfuse["cases"])


def test_traces_rebuilt_from_observations_convert_like_their_files(langfuse):
    """A stand-in (Langfuse v4.16.0): the converted turns equal the file's (Langfuse keeps milliseconds,
    so only the latency figures may differ)."""
    (helm,), errors = load_traces([uri(langfuse, f"trace_id={HELM_ID}")])
    (expected,), _ = load_traces([HELM])
    assert not errors
    assert helm.trace_id == expected.trace_id and helm.format == expected.format == "adk"
    assert [i.model_dump(exclude={"performance_metrics"}) for i in helm.invocations] == \
           [i.model_dump(exclude={"performance_metrics"}) for i in expected.invocations]
    tool = next(s for s in helm.trace.spans if s.name.startswith("execute_tool"))
    assert tool.name == "execute_tool helm_list_releases"  # Langfuse names it by gen_ai.tool.name alone
    assert tool.attributes["gcp.vertex.agent.tool_response"].startswith('{"content"')
    llm = next(s for s in helm.trace.spans if s.name == "call_llm")
    assert isinstance(llm.attributes["gen_ai.usage.input_tokens"], int)  # JSON-stringified by Langfuse, read back


def test_pages_are_followed_by_cursor(langfuse):
    """A stand-in (Langfuse v4.16.0 v2 observations, ``meta.cursor``): five observations a page."""
    traces, errors = load_traces([uri(langfuse, f"{WIDE}&page_size=5")])
    assert not errors and ids(traces) == sorted([HELM_ID, K8S_ID])
    fetched = [path for method, path in langfuse.requests if f"traceId={HELM_ID}" in path]
    assert len(fetched) == -(-sum(o["traceId"] == HELM_ID for o in langfuse.observations) // 5)
    assert all("cursor=" in path for path in fetched[1:])
    (whole,), _ = load_traces([HELM])
    assert len(next(t for t in traces if t.trace_id == HELM_ID).trace.spans) == len(whole.trace.spans)


@pytest.mark.parametrize(("query", "expected"), [
    ("session_id=ctx-7ed9780f-3688-4fc0-b10b-2e4df2f83cf0", [HELM_ID]),
    ("name=POST%20%2F", [HELM_ID, K8S_ID]),
    ("name=nothing-called-so", []),
    ("environment=default", [HELM_ID, K8S_ID]),
    ("environment=production", []),
    (f"trace_id={K8S_ID}", [K8S_ID]),
    (f"trace_id={K8S_ID},{HELM_ID}", [HELM_ID, K8S_ID]),
    ("limit=1", None),
    ("start=2020-01-01T00:00:00Z&end=2020-01-02T00:00:00Z", []),
])
def test_filters(langfuse, query, expected):
    """A stand-in (Langfuse v4.16.0 v2 observations filters sessionId, name, environment, traceId, time)."""
    full = query if query.startswith(("start=", "trace_id=")) else f"{WIDE}&{query}"
    traces, errors = load_traces([uri(langfuse, full)])
    assert not errors
    if expected is None:
        assert len(traces) == 1
    else:
        assert ids(traces) == expected


def test_missing_keys_name_the_variables(langfuse, monkeypatch):
    """A stand-in (Langfuse v4.16.0): no request is made without both keys."""
    monkeypatch.delenv("LANGFUSE_SECRET_KEY")
    traces, errors = load_traces([uri(langfuse)])
    assert not traces and len(errors) == 1
    assert "LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY" in errors[0].error and "\n" not in errors[0].error
    assert langfuse.requests == []


def test_wrong_keys_are_one_line_and_never_printed(langfuse, monkeypatch):
    """A stand-in (Langfuse v4.16.0 401 body ``{"message": …}``)."""
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-wrong-secret")
    run = run_cli(uri(langfuse))
    (error,) = run["errors"]
    assert "401" in error and "Invalid credentials" in error and "LANGFUSE_SECRET_KEY" in error
    assert "sk-lf-wrong-secret" not in json.dumps(run)


def test_credentials_in_the_uri_are_refused(langfuse):
    with pytest.raises(Exception, match="LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY"):
        source_for(f"langfuse+http://pk:sk@127.0.0.1:{langfuse.url.rsplit(':', 1)[1]}?{WIDE}")


def test_a_server_without_the_v2_api_is_read_through_v1(langfuse):
    """A stand-in (Langfuse v4.16.0: the v2 observations API answers 404 outside v4 mode, as a Langfuse v3
    server does; the v1 traces and observations APIs are page-based)."""
    langfuse.v4_mode = False
    traces, errors = load_traces([uri(langfuse, f"{WIDE}&page_size=5")])
    assert not errors and ids(traces) == sorted([HELM_ID, K8S_ID])
    paths = [path.split("?")[0] for _, path in langfuse.requests]
    assert paths[0] == "/api/public/v2/observations" and set(paths[1:]) == {"/api/public/traces",
                                                                            "/api/public/observations"}
    assert any("page=2" in path for _, path in langfuse.requests if path.startswith("/api/public/observations"))
    (expected,), _ = load_traces([HELM])
    helm = next(t for t in traces if t.trace_id == HELM_ID)
    assert [i.model_dump(exclude={"performance_metrics"}) for i in helm.invocations] == \
           [i.model_dump(exclude={"performance_metrics"}) for i in expected.invocations]


def test_api_v1_is_asked_for_and_filters(langfuse):
    """A stand-in (Langfuse v4.16.0 v1 ``GET /api/public/traces`` filters sessionId, time; v1 observations)."""
    traces, errors = load_traces([uri(langfuse, f"{WIDE}&api=v1&session_id=ctx-7ed9780f-3688-4fc0-b10b-2e4df2f83cf0")])
    assert not errors and ids(traces) == [HELM_ID]
    assert not any(path.startswith("/api/public/v2/") for _, path in langfuse.requests)
    traces, errors = load_traces([uri(langfuse, f"api=v1&trace_id={K8S_ID}")])
    assert not errors and ids(traces) == [K8S_ID]


def test_api_v2_asked_for_on_a_server_without_it_says_so(langfuse):
    """A stand-in (Langfuse v4.16.0: 404 "only available in a Langfuse v4 write mode")."""
    langfuse.v4_mode = False
    _, (error,) = load_traces([uri(langfuse, f"{WIDE}&api=v2")])
    assert "404" in error.error and "only available in a Langfuse v4" in error.error


def test_an_unknown_api_is_a_config_error(langfuse):
    with pytest.raises(Exception, match="api=v3"):
        source_for(uri(langfuse, "api=v3"))


def test_500s_and_429s_are_retried(langfuse):
    """A stand-in (Langfuse v4.16.0): two 500s, then a 429 with Retry-After, then the answers."""
    langfuse.fail_times, langfuse.rate_limit_times, langfuse.retry_after = 2, 1, "0"
    traces, errors = load_traces([uri(langfuse, f"{WIDE}&retries=3")])
    assert not errors and ids(traces) == sorted([HELM_ID, K8S_ID])


def test_a_hanging_server_ends_in_one_line_within_its_deadline(langfuse):
    """A stand-in (Langfuse v4.16.0) that does not answer: one line after the per-request deadline."""
    langfuse.hang_seconds = 5
    started = time.monotonic()
    _, (error,) = load_traces([uri(langfuse, f"{WIDE}&timeout=1&retries=0")])
    assert time.monotonic() - started < 4.5
    assert error.error.startswith(uri(langfuse, f"{WIDE}&timeout=1&retries=0")) and "\n" not in error.error


def test_a_failing_langfuse_keeps_the_other_inputs_results(langfuse):
    """A stand-in (Langfuse v4.16.0) answering 500 to everything: one line, and the file's case is scored."""
    langfuse.fail_times = 1000
    run = run_cli(str(HELM), uri(langfuse, f"{WIDE}&retries=1"))
    (error,) = run["errors"]
    assert error.startswith(uri(langfuse, f"{WIDE}&retries=1")) and "500" in error and "(after 2 attempts)" in error
    assert [c["trace_ids"] for c in run["cases"]] == [[HELM_ID]]
    assert [c["sources"] for c in run["cases"]] == [[str(HELM)]]


def verdicts_of(run: dict) -> list[Verdict]:
    return [Verdict(trace_id=c["trace_ids"][0], evaluator=m["name"], score=m["score"],
                    passed={"PASSED": True, "FAILED": False}.get(m["status"]), status=m["status"],
                    run_id=run["run_id"], evaluator_version="builtin", explanation=m["reason"],
                    case_id=c["case_id"]) for c in run["cases"] for m in c["metrics"]]


def read_scores(standin: LangfuseStandIn, trace_id: str) -> list[dict]:
    answer = requests.get(f"{standin.url}/api/public/v2/scores", params={"traceId": trace_id},
                          auth=(standin.public_key, standin.secret_key), timeout=10)
    answer.raise_for_status()
    return answer.json()["data"]


def test_write_back_twice_upserts_the_scores_of_the_run(langfuse):
    """A stand-in (Langfuse v4.16.0 ``POST /api/public/scores``, upsert by ``id``; read back through
    ``GET /api/public/v2/scores``)."""
    run = run_cli(uri(langfuse, f"trace_id={HELM_ID}"))
    verdicts = verdicts_of(run)
    assert len(verdicts) == 1
    assert source_for(uri(langfuse)).write_back(verdicts) == 1
    assert source_for(uri(langfuse)).write_back(verdicts) == 1  # a fresh instance, as --write-back makes
    (score,) = read_scores(langfuse, HELM_ID)
    assert score["id"] == score_id(verdicts[0])
    assert (score["name"], score["dataType"], score["value"]) == ("tool_trajectory_avg_score", "NUMERIC",
                                                                  run["cases"][0]["metrics"][0]["score"])
    assert score["metadata"] == {"agentevals_run_id": run["run_id"], "evaluator_version": "builtin",
                                 "case_id": HELM_ID, "label": "pass", "status": "PASSED"}
    assert score["createdAt"] <= score["updatedAt"]
    # another run's result is its own score (the history of runs stays in Langfuse)
    source_for(uri(langfuse)).write_back([Verdict(**{**verdicts[0].__dict__, "run_id": "another-run"})])
    assert len(read_scores(langfuse, HELM_ID)) == 2


def test_write_back_without_a_score_sends_the_label(langfuse):
    """A stand-in (Langfuse v4.16.0 CATEGORICAL scores)."""
    verdict = Verdict(trace_id=HELM_ID, evaluator="judge", score=None, passed=None, status="ERROR", run_id="r1",
                      explanation="the judge did not answer")
    source_for(uri(langfuse)).write_back([verdict])
    (score,) = read_scores(langfuse, HELM_ID)
    assert (score["dataType"], score["stringValue"], score["comment"]) == ("CATEGORICAL", "error",
                                                                           "the judge did not answer")


def test_write_back_puts_the_score_in_the_environment_read(langfuse):
    """A stand-in (Langfuse v4.16.0 score ``environment``)."""
    verdict = Verdict(trace_id=HELM_ID, evaluator="e", score=0.25, passed=False, status="FAILED", run_id="r")
    source_for(uri(langfuse, f"{WIDE}&environment=staging")).write_back([verdict])
    (score,) = read_scores(langfuse, HELM_ID)
    assert (score["environment"], score["value"], score["metadata"]["label"]) == ("staging", 0.25, "fail")


def test_write_back_errors_are_one_line(langfuse, monkeypatch):
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-other-project")
    verdict = Verdict(trace_id=HELM_ID, evaluator="e", score=1.0, passed=True, status="PASSED", run_id="r")
    with pytest.raises(SourceError, match="401 Unauthorized"):
        source_for(uri(langfuse)).write_back([verdict])
    assert langfuse.scores == {}


@pytest.mark.parametrize("langfuse_id", [HELM_ID, "0b2c43a1-5e4f-4c1e-9a0d-2f1e5c6b7a8d", "my trace 1", "abcd1234",
                                         "lf-looks-like-ours", "ABCDEF0123456789ABCDEF0123456789"])
def test_langfuse_trace_ids_map_back_from_converted_ids(langfuse_id):
    converted = otel_trace_id(langfuse_id)
    assert langfuse_trace_id(converted) == langfuse_id
    assert converted == langfuse_id or converted.startswith("lf-")


def test_the_standin_says_which_api_it_follows():
    assert "v4.16.0" in API_VERSION


def test_observations_made_by_a_langfuse_sdk_become_genai_spans():
    """Observations without OpenTelemetry attributes (a Langfuse SDK's AGENT/GENERATION/TOOL, in the v2 API's
    shape: input/output as raw strings) convert into one agent turn with its tool call."""
    from agentevals.trace_sources.langfuse import observations_to_otlp
    from agentevals.traces.convert import convert_trace
    from agentevals.traces.formats import TRACE_FORMATS

    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    asked = json.dumps([{"role": "user", "content": "Weather in Paris?"}])

    def observation(oid: str, kind: str, name: str, at: str, given: str, answered: str, **more) -> dict:
        return {"id": oid, "traceId": "sdk-trace-1", "parentObservationId": None if oid == "a1" else "a1",
                "type": kind, "name": name, "startTime": f"2026-11-26T10:00:0{at}Z", "level": "DEFAULT",
                "endTime": f"2026-11-26T10:00:0{at[0]}.900Z", "input": given, "output": answered,
                "metadata": {}, **more}

    document = observations_to_otlp([
        observation("a1", "AGENT", "weather_agent", "0.000", "Weather in Paris?", "Sunny."),
        observation("g1", "GENERATION", "chat", "1.000", asked, json.dumps({"role": "assistant", "tool_calls": [call]}),
                    providedModelName="gpt-4o", usageDetails={"input": 10, "output": 5}),
        observation("t1", "TOOL", "get_weather", "2.000", '{"city": "Paris"}', "sunny"),
        observation("g2", "GENERATION", "chat", "3.000", asked, json.dumps({"role": "assistant", "content": "Sunny."}),
                    providedModelName="gpt-4o"),
    ], "sdk-trace-1")
    (trace,) = TRACE_FORMATS.get("otlp-json").read(document, "langfuse")
    converted = convert_trace(trace)
    assert converted.trace_id == "sdk-trace-1" and converted.format == "genai"
    (turn,) = converted.invocations
    assert (turn.user_content, turn.final_response) == ("Weather in Paris?", "Sunny.")
    assert [(c.name, c.args) for c in turn.intermediate_steps.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert [r.output for r in turn.intermediate_steps.tool_responses] == ["sunny"]
