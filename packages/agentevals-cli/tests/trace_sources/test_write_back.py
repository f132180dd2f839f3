"""``agentevals run … --write-back`` end to end, through a real ``agentevals`` subprocess and a test-only
``PullSource`` plugin installed by entry point (``support.writeback_source``; its loopback backend is a
stand-in of no real product, serving the real shipped Jaeger traces and storing posted verdicts by
(trace id, evaluator)): one verdict per trace × evaluator with the run's own scores, labels, explanations and
run id; a second run upserts; a failing source is one line, the reports are kept, exit code 2; a source that
stores nothing (like Jaeger and Tempo) gets OpenTelemetry events parented to the evaluated spans instead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.live_server import EXAMPLES
from support.writeback_source import Backend, install_plugin

TRACES = [EXAMPLES / "traces/helm.json", EXAMPLES / "traces/k8s.json"]
EVAL_SET = str(EXAMPLES / "evalsets/eval_set_helm.json")
METRICS = ["-m", "tool_trajectory_avg_score", "-m", "tool_call_count_v1"]


@pytest.fixture
def backend() -> Iterator[Backend]:
    server = Backend.start(TRACES)
    yield server
    server.stop()


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return install_plugin(tmp_path / "site")


def agentevals(site: Path, tmp_path: Path, *args: str, env: dict[str, str] | None = None
               ) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTEVALS_", "OTEL_"))}
    clean.update(PYTHONPATH=os.pathsep.join([str(site), clean.get("PYTHONPATH", "")]).rstrip(os.pathsep),
                 XDG_CACHE_HOME=str(tmp_path / "cache"), XDG_DATA_HOME=str(tmp_path / "data"), **(env or {}))
    return subprocess.run([sys.executable, "-m", "agentevals", *args], capture_output=True, text=True,
                          timeout=180, cwd=tmp_path, env=clean)


def explanation(m: dict) -> str | None:
    failed = m["status"] == "FAILED" and m["score"] is not None
    informational = m["status"] == "INFORMATIONAL" and m.get("value") is not None
    return (m.get("reason") or m.get("reasoning") or m.get("error") or "; ".join(m.get("misses") or [])
            or (f"score {m['score']:g} < threshold {m['threshold']:g}" if failed else None)
            or (f"value: {json.dumps(m['value'], sort_keys=True)}" if informational else None))


def expected_verdicts(document: dict) -> dict[tuple[str, str, str], tuple]:
    """What the backend should hold for a run's JSON report: every trace of a case × every result."""
    label = {"PASSED": True, "FAILED": False}
    return {(document["run_id"], trace_id, m["name"]): (m["score"], label.get(m["status"]), m["status"],
                                                        c["case_id"], explanation(m))
            for c in document["cases"] for trace_id in c["trace_ids"] for m in c["metrics"]}


def held(backend: Backend, run_id: str | None = None) -> dict[tuple[str, str, str], tuple]:
    return {key: (v["score"], v["passed"], v["status"], v["case_id"], v["explanation"])
            for key, v in backend.verdicts.items() if run_id is None or key[0] == run_id}


REDELIVER = """\
import json, sys
from agentevals.results import RunResult
from agentevals.trace_sources.write_back import WriteBack

run = RunResult.model_validate_json(sys.stdin.read())   # a run's -o json report
again = WriteBack([sys.argv[1]])
again.run_id = run.run_id
for index, case in enumerate(run.cases):
    again.case_finished(index, case)
print(json.dumps(again.deliver().lines()))
"""


def test_write_back_sends_each_trace_its_verdicts_and_writing_a_run_again_updates_them(backend, site, tmp_path):
    first = agentevals(site, tmp_path, "run", backend.uri(), "-e", EVAL_SET, *METRICS, "-o", "json", "--write-back")
    assert first.returncode in (0, 1), first.stderr
    document = json.loads(first.stdout)
    assert len(document["cases"]) == 2 and document["run_id"]
    assert held(backend) == expected_verdicts(document)
    assert len(backend.verdicts) == 2 * 2  # two traces x two evaluators
    assert {v["explanation"] for v in backend.verdicts.values() if v["status"] == "FAILED"} == {
        "score 0 < threshold 0.5"}  # k8s.json called no tool: its trajectory fails
    assert {v["explanation"] for v in backend.verdicts.values() if v["evaluator"] == "tool_call_count_v1"} == {
        "value: 1.0", "value: 0.0"}  # an informational metric's value (a count)
    assert {v["evaluator_version"] for v in backend.verdicts.values()} == {
        document['agentevals_version']}
    assert not any(v["judge"] for v in backend.verdicts.values())
    assert f"wrote 4 results back to {backend.uri()}" in first.stderr
    assert backend.posts == 1  # one write_back call per source

    # The same run written back again: the same keys, so the backend updates (the run id is in the key,
    # as Phoenix's annotation identifier and Langfuse's score id have it).
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTEVALS_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    again = subprocess.run([sys.executable, "-c", REDELIVER, backend.uri()], input=first.stdout, capture_output=True,
                           text=True, timeout=120, cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == [f"wrote 4 results back to {backend.uri()}"]
    assert backend.posts == 2 and len(backend.verdicts) == 4  # updated, never duplicated
    assert held(backend) == expected_verdicts(document)

    # A re-run is a new run: its results stand beside the first run's, which stay as they were.
    second = agentevals(site, tmp_path, "run", backend.uri(), "-e", EVAL_SET, *METRICS, "-o", "json", "--write-back")
    assert second.returncode == first.returncode, second.stderr
    rerun = json.loads(second.stdout)
    assert rerun["run_id"] != document["run_id"]
    assert len(backend.verdicts) == 8
    assert held(backend, rerun["run_id"]) == expected_verdicts(rerun)
    assert held(backend, document["run_id"]) == expected_verdicts(document)


def test_without_write_back_nothing_is_sent_and_files_are_skipped(backend, site, tmp_path):
    plain = agentevals(site, tmp_path, "run", backend.uri(), "-e", EVAL_SET, *METRICS, "-o", "json")
    assert plain.returncode in (0, 1), plain.stderr
    assert backend.verdicts == {} and backend.posts == 0
    files = agentevals(site, tmp_path, "run", str(TRACES[0]), "-e", EVAL_SET, *METRICS, "-o", "json", "--write-back")
    assert files.returncode in (0, 1), files.stderr
    assert "write-back" not in files.stderr and "written back" not in files.stderr
    assert backend.posts == 0


def test_a_failing_write_back_is_one_line_keeps_the_reports_and_exits_2(backend, site, tmp_path):
    backend.refuse_writes = True
    report = tmp_path / "report.json"
    result = agentevals(site, tmp_path, "run", backend.uri(), "-e", EVAL_SET, *METRICS, "-o", f"json={report}",
                        "-o", "table", "--write-back")
    assert result.returncode == 2, result.stderr
    (line,) = [ln for ln in result.stderr.splitlines() if "write-back" in ln]
    assert line == (f"agentevals: write-back failed: {backend.uri()}: 403 Forbidden: "
                    "this API key may not write verdicts")
    assert "Traceback" not in result.stderr
    kept = json.loads(report.read_text())
    assert len(kept["cases"]) == 2 and all(c["metrics"] for c in kept["cases"])
    assert any("write-back failed" in note for note in kept["notes"])
    assert backend.verdicts == {}
    (stored,) = json.loads(agentevals(site, tmp_path, "runs", "list", "--json").stdout)
    assert (stored["exit_code"], stored["options"]["write_back"]) == (2, True)  # the store says what happened
    shown = json.loads(agentevals(site, tmp_path, "runs", "show", stored["run_id"], "-o", "json").stdout)
    assert line.removeprefix("agentevals: ") in shown["notes"]


def test_a_write_back_that_hangs_ends_in_one_line_within_the_source_deadline(backend, site, tmp_path):
    backend.hang_writes.set()
    uri = backend.uri() + "&timeout=2&retries=0"
    result = agentevals(site, tmp_path, "run", uri, "-e", EVAL_SET, *METRICS, "-o", "json", "--write-back")
    assert result.returncode == 2, result.stderr
    assert len(json.loads(result.stdout)["cases"]) == 2  # every result kept
    (line,) = [ln for ln in result.stderr.splitlines() if "write-back" in ln]
    assert line == f"agentevals: write-back failed: {uri}: no answer within 2s"
    assert "Traceback" not in result.stderr


def test_write_back_in_the_config_does_what_the_flag_does(backend, site, tmp_path):
    config = tmp_path / "eval_config.yaml"
    config.write_text(f"eval_set: {EVAL_SET}\nwrite_back: true\nevaluators:\n"
                      "  - name: tool_trajectory_avg_score\n    type: builtin\n")
    result = agentevals(site, tmp_path, "run", backend.uri(), "-c", str(config), "-o", "json")
    assert result.returncode in (0, 1), result.stderr
    document = json.loads(result.stdout)
    assert held(backend) == expected_verdicts(document)
    assert {evaluator for _, _, evaluator in backend.verdicts} == {"tool_trajectory_avg_score"}


def test_the_python_api_writes_back_too(backend, site, tmp_path):
    script = ("import agentevals, json, sys\n"
              f"run = agentevals.evaluate([sys.argv[1]], eval_set={EVAL_SET!r}, "
              "metrics=['tool_trajectory_avg_score'], write_back=True)\n"
              "print(json.dumps({'notes': run.notes, 'cases': [c.model_dump(mode='json') for c in run.cases]}))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTEVALS_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    result = subprocess.run([sys.executable, "-c", script, backend.uri()], capture_output=True, text=True,
                            timeout=180, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert f"wrote 2 results back to {backend.uri()}" in answer["notes"]
    run_ids = {v["run_id"] for v in backend.verdicts.values()}
    assert len(run_ids) == 1 and run_ids.pop()  # one id for the whole run, even outside the run store
    assert {(t, m["name"]): m["score"] for c in answer["cases"] for t in c["trace_ids"] for m in c["metrics"]} == {
        (trace_id, evaluator): v["score"] for (_, trace_id, evaluator), v in backend.verdicts.items()}


def test_a_source_that_stores_nothing_gets_otel_events_parented_to_the_evaluated_spans(backend, site, tmp_path):
    pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed")
    from agentevals.engine import load_traces
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from support.otlp_recorder import OtlpRecorder

    with OtlpRecorder() as recorder:
        result = agentevals(site, tmp_path, "run", backend.uri("acmeotel"), "-e", EVAL_SET, *METRICS, "-o", "json",
                            "--write-back", env={"OTEL_EXPORTER_OTLP_ENDPOINT": recorder.url})
    assert result.returncode in (0, 1), result.stderr
    assert backend.posts == 0  # nothing written to the backend itself
    document = json.loads(result.stdout)
    converted, _ = load_traces(TRACES, keep_spans=False)
    last_span = {t.trace_id: t.invocations[-1].span_id for t in converted if t.invocations}
    response_id = {t.trace_id: t.response_ids[last_span[t.trace_id]] for t in converted}
    assert all(response_id.values())  # the shipped traces name their model responses (chatcmpl-…)
    events = []
    for body in recorder.bodies("/v1/logs"):
        message = ExportLogsServiceRequest()
        message.ParseFromString(body)
        for record in (r for rl in message.resource_logs for sl in rl.scope_logs for r in sl.log_records):
            attributes = {kv.key: kv.value.string_value for kv in record.attributes}
            events.append((record.trace_id.hex(), record.span_id.hex(), attributes["gen_ai.evaluation.name"],
                           attributes["gen_ai.response.id"]))
    assert sorted(events) == sorted((c["trace_ids"][-1], last_span[c["trace_ids"][-1]], m["name"],
                                     response_id[c["trace_ids"][-1]])
                                    for c in document["cases"] for m in c["metrics"])
    assert f"sent 4 results for {backend.uri('acmeotel')} as OpenTelemetry events (--emit-otel)" in result.stderr


def test_a_conversation_across_two_sources_gives_each_trace_the_case_verdicts_at_its_own_source():
    from agentevals import __version__
    from agentevals.results import CaseResult, MetricResult, Status
    from agentevals.trace_sources.write_back import verdicts_for

    case = CaseResult(case_id="conv-1", trace_ids=["t1", "t2"], sources=["a+http://h?x=1", "b+http://h?x=2"],
                      trace_sources=["b+http://h?x=2", "a+http://h?x=1"], metrics=[
                          MetricResult(name="judge", type="llm_judge", status=Status.PASSED, score=0.9, reasoning="ok"),
                          MetricResult.errored("traj", "no eval set"),
                          MetricResult(name="help", type="builtin", status=Status.NOT_EVALUATED, reason="no key")])
    grouped = verdicts_for(case, "run-1", judges={"help"}, versions={"judge": "2"})
    ours = __version__  # builtin metrics ship with agentevals
    assert {uri: [(v.trace_id, v.evaluator, v.passed, v.label, v.judge, v.evaluator_version, v.explanation)
                  for v in rows] for uri, rows in grouped.items()} == {
        "b+http://h?x=2": [("t1", "judge", True, "pass", True, "2", "ok"),
                           ("t1", "traj", None, "error", False, ours, "no eval set"),
                           ("t1", "help", None, "not_evaluated", True, ours, "no key")],
        "a+http://h?x=1": [("t2", "judge", True, "pass", True, "2", "ok"),
                           ("t2", "traj", None, "error", False, ours, "no eval set"),
                           ("t2", "help", None, "not_evaluated", True, ours, "no key")]}
    assert {v.run_id for rows in grouped.values() for v in rows} == {"run-1"}


def test_with_opentelemetry_turned_off_a_source_that_stores_nothing_gets_nothing_and_says_so(backend, site,
                                                                                             tmp_path):
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
    from support.otlp_recorder import OtlpRecorder

    with OtlpRecorder() as recorder:
        result = agentevals(site, tmp_path, "run", backend.uri("acmeotel"), "-e", EVAL_SET, *METRICS, "-o", "json",
                            "--write-back", env={"OTEL_EXPORTER_OTLP_ENDPOINT": recorder.url,
                                                 "OTEL_SDK_DISABLED": "true"})
    assert result.returncode in (0, 1), result.stderr
    assert recorder.requests == [] and backend.posts == 0
    assert (f"agentevals: nothing sent for {backend.uri('acmeotel')}: OpenTelemetry is turned off "
            "(OTEL_SDK_DISABLED=true or OTEL_LOGS_EXPORTER=none)") in result.stderr.splitlines()


def test_jaeger_write_back_is_otel_events_parented_to_the_spans_it_read(site, tmp_path):
    """Against the Jaeger stand-in of ``tests/standins`` (Jaeger's query API v3, built from the shipped helm
    trace; it arrives with the Jaeger lane): Jaeger stores no results, so ``--write-back`` sends each one as
    a ``gen_ai.evaluation.result`` event parented to the span it judges."""
    pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed")
    standin = pytest.importorskip("standins.jaeger", reason="the Jaeger stand-in (tests/standins) is not here")
    from agentevals.trace_sources import load_traces
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from support.otlp_recorder import OtlpRecorder

    with standin.JaegerStandIn.from_files([TRACES[0]]) as jaeger, OtlpRecorder() as recorder:
        uri = f"jaeger+{jaeger.url}?service=helm_agent&since=2h"
        result = agentevals(site, tmp_path, "run", uri, "-e", EVAL_SET, *METRICS, "-o", "json", "--write-back",
                            env={"OTEL_EXPORTER_OTLP_ENDPOINT": recorder.url})
        (trace,), errors = load_traces([uri], keep_spans=False)
    assert result.returncode in (0, 1), result.stderr
    assert not errors
    (case,) = json.loads(result.stdout)["cases"]
    records = []
    for body in recorder.bodies("/v1/logs"):
        message = ExportLogsServiceRequest()
        message.ParseFromString(body)
        records += [(r.trace_id.hex(), r.span_id.hex(), {kv.key: kv.value.string_value for kv in r.attributes}
                     ["gen_ai.evaluation.name"]) for rl in message.resource_logs for sl in rl.scope_logs
                    for r in sl.log_records]
    assert sorted(records) == sorted((trace.trace_id, trace.invocations[-1].span_id, m["name"])
                                     for m in case["metrics"])
    assert f"sent 2 results for {uri} as OpenTelemetry events (--emit-otel)" in result.stderr
