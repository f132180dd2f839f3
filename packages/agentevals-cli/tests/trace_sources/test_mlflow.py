"""``mlflow+http://`` against a REAL MLflow tracking server (mlflow==3.17.2 from the backends virtualenv,
SQLite store), fed the shipped field traces over OTLP by the real OpenTelemetry SDK, as a user's agent would.

The server runs from ``$AGENTEVALS_BACKENDS_VENV`` (else ``<repo>/.local/backends``; ``python
tools/setup_backends.py`` installs it); without it these tests skip (a failure under CI=true). It is never
imported here: it is a separate process, started and stopped by this module.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from agentevals.trace_sources import source_for
from agentevals.trace_sources.pull import Verdict
from agentevals.traces.readers.jaeger import read_jaeger

ROOT = Path(__file__).resolve().parents[4]
TRACES = [ROOT / "examples" / "traces" / "helm.json", ROOT / "examples" / "traces" / "k8s.json"]
EVAL_SET = ROOT / "examples" / "evalsets" / "eval_set_helm.json"
HELM_TRACE, K8S_TRACE = "3e289017fe03ffd7c4145316d2eb3d0d", "d497c9dd55717f2c5ecb79bda3028993"
METRIC = "tool_trajectory_avg_score"

pytestmark = pytest.mark.timeout(300)


def backends_bin() -> Path:
    """The rule of tools/setup_backends.py: ``$AGENTEVALS_BACKENDS_VENV`` or ``<repo>/.local/backends``."""
    venv = Path(os.environ.get("AGENTEVALS_BACKENDS_VENV") or ROOT / ".local" / "backends")
    return venv / ("Scripts" if os.name == "nt" else "bin")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def mlflow_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``mlflow server`` (SQLite, one worker, no job runner) on a free loopback port."""
    mlflow = backends_bin() / "mlflow"
    if not mlflow.exists():
        pytest.skip(f"no MLflow server at {mlflow}: run `python tools/setup_backends.py` "
                    "(or set AGENTEVALS_BACKENDS_VENV)")
    folder = tmp_path_factory.mktemp("mlflow")
    port = free_port()
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false", "MLFLOW_DISABLE_TELEMETRY": "true",
           "DO_NOT_TRACK": "true"}
    env.pop("MLFLOW_TRACKING_URI", None)
    log = (folder / "server.log").open("wb")
    server = subprocess.Popen(
        [str(mlflow), "server", "--backend-store-uri", f"sqlite:///{folder / 'mlflow.db'}",
         "--default-artifact-root", str(folder / "artifacts"), "--host", "127.0.0.1", "--port", str(port),
         "--workers", "1"],
        cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            if server.poll() is not None:
                pytest.fail(f"mlflow server exited {server.returncode}: "
                            f"{(folder / 'server.log').read_text(errors='replace')[-2000:]}")
            try:
                if requests.get(f"{url}/health", timeout=2).ok:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                pytest.fail("mlflow server not ready within 180 s")
            time.sleep(0.5)
        yield url
    finally:
        # the server's own process group (uvicorn is its child): started here, stopped here
        try:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)
        except ProcessLookupError:
            pass
        log.close()


def send_with_otel_sdk(url: str, experiment_id: str, path: Path) -> None:
    """The trace file's spans → MLflow's OTLP endpoint through the OpenTelemetry SDK's own exporter: ids,
    attributes, events, status kept; times shifted together so the trace began a minute ago."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExportResult
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    kinds = {"client": SpanKind.CLIENT, "server": SpanKind.SERVER, "producer": SpanKind.PRODUCER,
             "consumer": SpanKind.CONSUMER}
    spans = []
    for trace in read_jaeger(json.loads(path.read_text()), str(path)):
        shift = time.time_ns() - 60 * 10**9 - min(s.start_ns for s in trace.spans)
        for s in trace.spans:
            context = SpanContext(int(s.trace_id, 16), int(s.span_id, 16), False, TraceFlags(1))
            parent = (SpanContext(int(s.trace_id, 16), int(s.parent_span_id, 16), False, TraceFlags(1))
                      if s.parent_span_id else None)
            spans.append(ReadableSpan(
                name=s.name, context=context, parent=parent, resource=Resource(s.resource),
                attributes=s.attributes, kind=kinds.get(str(s.kind).lower(), SpanKind.INTERNAL),
                events=[Event(e.name, e.attributes, e.time_ns + shift) for e in s.events],
                instrumentation_scope=InstrumentationScope(s.scope or ""),
                status=Status(StatusCode[s.status_code]) if s.status_code else Status(StatusCode.UNSET),
                start_time=s.start_ns + shift, end_time=s.end_ns + shift))
    # the server's first OTLP request loads its OTel stack: a generous deadline
    exporter = OTLPSpanExporter(endpoint=f"{url}/v1/traces", headers={"x-mlflow-experiment-id": experiment_id},
                                timeout=120)
    assert exporter.export(spans) == SpanExportResult.SUCCESS


@pytest.fixture(scope="module")
def experiment(mlflow_url: str) -> str:
    """An experiment holding the shipped helm and k8s traces (sent by the OpenTelemetry SDK)."""
    answer = requests.post(f"{mlflow_url}/api/2.0/mlflow/experiments/create", json={"name": "field-traces"},
                           timeout=60)
    answer.raise_for_status()
    experiment_id = str(answer.json()["experiment_id"])
    for path in TRACES:
        send_with_otel_sdk(mlflow_url, experiment_id, path)
    # spans are stored when the request returns; wait (with a deadline) until search sees both traces
    deadline = time.monotonic() + 60
    while len(trace_infos(mlflow_url, experiment_id)) < len(TRACES):
        assert time.monotonic() < deadline, "MLflow never listed the sent traces"
        time.sleep(0.5)
    return experiment_id


def trace_infos(url: str, experiment_id: str) -> list[dict[str, Any]]:
    body = {"locations": [{"type": "MLFLOW_EXPERIMENT", "mlflow_experiment": {"experiment_id": experiment_id}}],
            "max_results": 100}
    answer = requests.post(f"{url}/api/3.0/mlflow/traces/search", json=body, timeout=60)
    answer.raise_for_status()
    return list(answer.json().get("traces") or [])


def agentevals(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentevals", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=240, env={**os.environ, "NO_COLOR": "1"})


def run_json(inputs: list[str], cwd: Path) -> tuple[int, dict[str, Any]]:
    """A recorded run (its own store in ``cwd``), so the report has the run id a write-back carries."""
    done = agentevals("run", *inputs, "--eval-set", str(EVAL_SET), "-m", METRIC, "-o", "json",
                      "--store", str(cwd / "runs.sqlite"), cwd=cwd)
    assert done.stdout.strip(), done.stderr
    return done.returncode, json.loads(done.stdout)


def cases_without_sources(report: dict[str, Any]) -> list[dict[str, Any]]:
    cases = json.loads(json.dumps(report["cases"]))
    for case in cases:
        case.pop("sources", None)
        for metric in case.get("metrics") or ():
            metric.pop("duration_ms", None)
    return sorted(cases, key=lambda c: c["case_id"])


@pytest.fixture(scope="module")
def pulled(mlflow_url: str, experiment: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    """``agentevals run 'mlflow+http://…?experiment=ID&since=1h'`` in a subprocess: exit code and JSON report."""
    uri = f"mlflow+{mlflow_url}?experiment={experiment}&since=1h"
    return run_json([uri], tmp_path_factory.mktemp("pulled"))


def test_run_from_mlflow_equals_the_file_run(pulled: tuple[int, dict[str, Any]], tmp_path: Path) -> None:
    code, report = pulled
    file_code, file_report = run_json([str(p) for p in TRACES], tmp_path)
    assert report["input_errors"] == []
    assert sorted(c["case_id"] for c in report["cases"]) == sorted([HELM_TRACE, K8S_TRACE])
    assert report["run_id"] and report["run_id"] != file_report["run_id"]
    assert cases_without_sources(report) == cases_without_sources(file_report)
    assert code == file_code
    by_case = {c["case_id"]: c for c in report["cases"]}
    assert by_case[HELM_TRACE]["eval_id"] == "helm_list_releases"
    assert by_case[HELM_TRACE]["metrics"][0]["status"] == "PASSED"
    assert by_case[HELM_TRACE]["sources"][0].startswith("mlflow+http://127.0.0.1:")


def test_filter_in_mlflow_syntax_selects_traces(mlflow_url: str, experiment: str) -> None:
    source = source_for(f"mlflow+{mlflow_url}?experiment={experiment}"
                        "&filter=trace.status = 'OK' AND tag.`service.name` = 'helm_agent'")
    assert [p.trace_id for p in source.pull()] == [f"tr-{HELM_TRACE}"]
    source = source_for(f"mlflow+{mlflow_url}?experiment={experiment}&filter=trace.status = 'ERROR'")
    assert list(source.pull()) == []


def test_page_tokens_and_limit(mlflow_url: str, experiment: str) -> None:
    source = source_for(f"mlflow+{mlflow_url}?experiment={experiment}&since=1h")
    source.page_size = 1  # one trace a search page: the second comes through next_page_token
    pulled = list(source.pull())
    assert sorted(p.trace_id for p in pulled) == sorted([f"tr-{HELM_TRACE}", f"tr-{K8S_TRACE}"])
    assert all(p.started is not None and p.format == "otlp-json" for p in pulled)
    assert [p.started for p in pulled] == sorted(p.started for p in pulled)  # oldest first
    assert len(list(source_for(f"mlflow+{mlflow_url}?experiment={experiment}&limit=1").pull())) == 1


def test_experiment_by_name(mlflow_url: str, experiment: str) -> None:
    source = source_for(f"mlflow+{mlflow_url}?experiment=field-traces")
    assert source.experiment_ids() == [experiment]
    assert len(list(source.pull())) == 2


def test_window_excludes_older_traces(mlflow_url: str, experiment: str) -> None:
    source = source_for(f"mlflow+{mlflow_url}?experiment={experiment}&start=2020-01-01T00:00:00Z"
                        "&end=2020-01-02T00:00:00Z")
    assert list(source.pull()) == []


def test_unknown_experiment_is_one_line(mlflow_url: str, tmp_path: Path) -> None:
    uri = f"mlflow+{mlflow_url}?experiment=424242&since=1h"
    done = agentevals("run", uri, "--eval-set", str(EVAL_SET), "-m", METRIC, "--no-store", cwd=tmp_path)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if "unknown experiment" in line]
    assert len(lines) == 1, done.stdout + done.stderr
    assert uri in lines[0] and "'424242'" in lines[0]
    assert "Traceback" not in done.stderr
    assert done.returncode == 2


def test_bad_filter_is_one_line_naming_the_source(mlflow_url: str, experiment: str, tmp_path: Path) -> None:
    uri = f"mlflow+{mlflow_url}?experiment={experiment}&filter=trace.bogus = 1"
    done = agentevals("run", uri, str(TRACES[0]), "--eval-set", str(EVAL_SET), "-m", METRIC, "-o", "json",
                      "--no-store", cwd=tmp_path)
    report = json.loads(done.stdout)
    assert [e["source"] for e in report["input_errors"]] == [uri]
    assert "400" in report["input_errors"][0]["error"] and "bogus" in report["input_errors"][0]["error"]
    assert [c["case_id"] for c in report["cases"]] == [HELM_TRACE]  # the other input's results are kept


def verdicts_of(report: dict[str, Any], **changes: Any) -> list[Verdict]:
    out = []
    for case in report["cases"]:
        for metric in case["metrics"]:
            status = metric["status"]
            out.append(Verdict(
                trace_id=case["trace_ids"][0], evaluator=metric["name"], score=metric["score"],
                passed=True if status == "PASSED" else False if status == "FAILED" else None, status=status,
                run_id=report["run_id"], evaluator_version="builtin", case_id=case["case_id"],
                explanation=changes.get("explanation", metric.get("reason")), judge=changes.get("judge", False)))
    return out


def assessments(url: str, trace_id: str) -> list[dict[str, Any]]:
    answer = requests.get(f"{url}/api/3.0/mlflow/traces/tr-{trace_id}", timeout=60)
    answer.raise_for_status()
    return [a for a in answer.json()["trace"]["trace_info"].get("assessments") or ()
            if a["assessment_name"] == METRIC]


def test_write_back_assessments_idempotent(mlflow_url: str, experiment: str,
                                           pulled: tuple[int, dict[str, Any]]) -> None:
    _, report = pulled
    uri = f"mlflow+{mlflow_url}?experiment={experiment}"
    verdicts = verdicts_of(report)
    assert source_for(uri).write_back(verdicts) == 2

    helm, = assessments(mlflow_url, HELM_TRACE)
    assert helm["feedback"]["value"] == 1.0
    assert helm["source"] == {"source_type": "CODE", "source_id": f"agentevals/{METRIC}@builtin"}
    assert helm["metadata"] == {"agentevals_run_id": report["run_id"], "case_id": HELM_TRACE, "label": "pass"}
    k8s, = assessments(mlflow_url, K8S_TRACE)
    assert k8s["feedback"]["value"] == 0.0 and k8s["metadata"]["label"] == "fail"

    # the same run written again (a fresh source, as --write-back makes): updated in place, not duplicated
    assert source_for(uri).write_back(verdicts_of(report, explanation="second write")) == 2
    again, = assessments(mlflow_url, HELM_TRACE)
    assert again["assessment_id"] == helm["assessment_id"] and again["rationale"] == "second write"
    assert len(assessments(mlflow_url, K8S_TRACE)) == 1

    # an LLM judge's verdict of the same run: MLflow's source is immutable, so the assessment is replaced
    assert source_for(uri).write_back(verdicts_of(report, judge=True)) == 2
    judged, = assessments(mlflow_url, HELM_TRACE)
    assert judged["source"]["source_type"] == "LLM_JUDGE"

    # another run keeps its own assessment beside this one
    other = [dataclasses.replace(v, run_id="another-run") for v in verdicts]
    assert source_for(uri).write_back(other) == 2
    assert sorted(a["metadata"]["agentevals_run_id"] for a in assessments(mlflow_url, HELM_TRACE)) == sorted(
        [report["run_id"], "another-run"])


def test_run_write_back_stores_assessments(mlflow_url: str, experiment: str, tmp_path: Path) -> None:
    """The issue's own command: `agentevals run 'mlflow+…' --eval-set … -m tool_trajectory_avg_score
    --write-back` scores what MLflow holds like the files and leaves one assessment per trace in MLflow's
    API, carrying the run id; the same run id is never written twice by one run."""
    uri = f"mlflow+{mlflow_url}?experiment={experiment}&since=1h"
    done = agentevals("run", uri, "--eval-set", str(EVAL_SET), "-m", METRIC, "-o", "json",
                      "--store", str(tmp_path / "runs.sqlite"), "--no-cache", "--write-back", cwd=tmp_path)
    report = json.loads(done.stdout)
    _, file_report = run_json([str(p) for p in TRACES], tmp_path)
    assert cases_without_sources(report) == cases_without_sources(file_report)
    assert any("wrote 2 results back" in note for note in report["notes"]), (report["notes"], done.stderr)
    for trace, label in ((HELM_TRACE, "pass"), (K8S_TRACE, "fail")):
        mine = [a for a in assessments(mlflow_url, trace) if a["metadata"]["agentevals_run_id"] == report["run_id"]]
        assert [(a["metadata"]["label"], a["source"]["source_type"]) for a in mine] == [(label, "CODE")]


def test_write_back_to_a_missing_trace_is_one_line(mlflow_url: str, experiment: str) -> None:
    verdict = Verdict(trace_id="0" * 32, evaluator=METRIC, score=1.0, passed=True, status="PASSED", run_id="r")
    with pytest.raises(Exception, match=r"1 trace\(s\) not found for write-back \(tr-0{32}\); wrote 0") as caught:
        source_for(f"mlflow+{mlflow_url}?experiment={experiment}").write_back([verdict])
    assert "\n" not in str(caught.value)


class _AuthStandIn:
    """A loopback stand-in for MLflow 3.17.2's ``basic-auth`` app, used only because that app needs the
    ``mlflow[auth]`` extra the backends virtualenv does not install: no credentials → its 401 (same body and
    ``WWW-Authenticate`` as ``mlflow.server.auth.make_basic_auth_response``); a user without permission →
    its 403 ``Permission denied``; accepted credentials → an empty experiment (the REST API's shapes)."""

    def __init__(self, accepted: set[str]) -> None:
        import base64
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from threading import Thread

        seen: list[str] = []
        self.seen = seen

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def answer(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                auth = self.headers.get("Authorization") or ""
                seen.append(auth)
                user = base64.b64decode(auth[6:]).decode().split(":")[0] if auth.startswith("Basic ") else ""
                if auth not in accepted and user != "reader":  # unknown (or no) credentials
                    status, body, kind = 401, (b"You are not authenticated. Please see https://www.mlflow.org/docs/"
                                               b"latest/auth/index.html#authenticating-to-mlflow on how to "
                                               b"authenticate."), "text/plain"
                elif auth not in accepted:  # a known user ("reader") without permission on the experiment
                    status, body, kind = 403, b"Permission denied", "text/plain"
                elif self.path.startswith("/api/2.0/mlflow/experiments/get"):
                    status, kind = 200, "application/json"
                    body = json.dumps({"experiment": {"experiment_id": "1", "name": "agents"}}).encode()
                else:
                    status, body, kind = 200, b"{}", "application/json"
                self.send_response(status)
                if status == 401:
                    self.send_header("WWW-Authenticate", 'Basic realm="mlflow"')
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def auth_standin() -> Iterator[_AuthStandIn]:
    import base64

    standin = _AuthStandIn({"Basic " + base64.b64encode(b"alice:s3cret").decode(), "Bearer tok-123"})
    yield standin
    standin.close()


def test_auth_from_mlflow_variables(auth_standin: _AuthStandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stand-in (MLflow 3.17.2 basic-auth responses): the variables MLflow's client reads, one-line 401/403."""
    from agentevals.trace_sources.pull import SourceError

    for name in ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    uri = f"mlflow+{auth_standin.url}?experiment=1&retries=0"
    with pytest.raises(SourceError) as caught:
        list(source_for(uri).pull())
    message = str(caught.value)
    assert message.startswith(f"{uri}: 401") and "\n" not in message
    assert "set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD, or MLFLOW_TRACKING_TOKEN" in message

    monkeypatch.setenv("MLFLOW_TRACKING_USERNAME", "reader")
    monkeypatch.setenv("MLFLOW_TRACKING_PASSWORD", "pw-of-reader")
    with pytest.raises(SourceError, match="403 Forbidden: Permission denied") as caught:
        list(source_for(uri).pull())
    assert "pw-of-reader" not in str(caught.value)

    monkeypatch.setenv("MLFLOW_TRACKING_USERNAME", "alice")
    monkeypatch.setenv("MLFLOW_TRACKING_PASSWORD", "s3cret")
    assert list(source_for(uri).pull()) == []
    monkeypatch.delenv("MLFLOW_TRACKING_USERNAME")
    monkeypatch.delenv("MLFLOW_TRACKING_PASSWORD")
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "tok-123")
    assert list(source_for(uri).pull()) == []
    assert auth_standin.seen[-1] == "Bearer tok-123"


def test_credentials_in_the_uri_are_refused() -> None:
    from agentevals.errors import ConfigError

    with pytest.raises(ConfigError, match=r"credentials in the URI are refused.*MLFLOW_TRACKING_USERNAME") as caught:
        source_for("mlflow+http://alice:s3cret@127.0.0.1:5000?experiment=1")
    assert "s3cret" not in str(caught.value)
    assert "set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD, or MLFLOW_TRACKING_TOKEN" in str(caught.value)


def test_experiment_is_required() -> None:
    from agentevals.errors import ConfigError

    with pytest.raises(ConfigError, match="experiment= is required"):
        source_for("mlflow+http://127.0.0.1:5000?since=1h")


@pytest.mark.parametrize("batch_get", [True, False], ids=["batchGet", "trace-data-artifact"])
def test_spans_come_back_as_the_file_has_them(mlflow_url: str, experiment: str, batch_get: bool) -> None:
    """What the converters see from MLflow is what they see in the file: ids, names, parents, scope, events,
    status and every attribute value (MLflow's own ``mlflow.*`` additions aside); times moved together by the
    one shift the sender applied. A JSON-string attribute (``gcp.vertex.agent.llm_request``) comes back as
    the same JSON from ``batchGet`` (MLflow stores it as JSON, so its whitespace is MLflow's) and as the exact
    text from the trace data artifact (the path for spans logged as artifacts and for older servers)."""
    from agentevals.traces.formats import TRACE_FORMATS

    source = source_for(f"mlflow+{mlflow_url}?experiment={experiment}")
    source.batch_get = batch_get
    pulled = {p.trace_id: p for p in source.pull()}
    for path in TRACES:
        want, = read_jaeger(json.loads(path.read_text()), str(path))
        got, = TRACE_FORMATS.get("otlp-json").read(pulled[f"tr-{want.trace_id}"].document, "mlflow")
        assert got.trace_id == want.trace_id
        wanted = {s.span_id: s for s in want.spans}
        assert sorted(wanted) == sorted(s.span_id for s in got.spans)
        shifts = set()
        json_strings = 0
        for span in got.spans:
            original = wanted[span.span_id]
            assert (span.name, span.parent_span_id, span.scope) == (original.name, original.parent_span_id,
                                                                    original.scope)
            assert (span.status_code or "UNSET") == (original.status_code or "UNSET")
            attributes = {k: v for k, v in span.attributes.items() if not k.startswith("mlflow.")}
            assert all(isinstance(v, str) for k, v in attributes.items() if isinstance(original.attributes[k], str)
                       and original.attributes[k].startswith("{"))  # a string still, never a map
            assert {k: _json_of(v) for k, v in attributes.items()} == {
                k: _json_of(v) for k, v in original.attributes.items()}
            if not batch_get:
                assert {k: v for k, v in attributes.items() if isinstance(v, str)} == {
                    k: v for k, v in original.attributes.items() if k in attributes and isinstance(attributes[k], str)}
            json_strings += sum(1 for v in attributes.values() if isinstance(v, str) and v.startswith("{"))
            assert [(e.name, e.attributes) for e in span.events] == [(e.name, e.attributes) for e in original.events]
            assert span.end_ns - span.start_ns == original.end_ns - original.start_ns
            shifts.add(span.start_ns - original.start_ns)
        assert len(shifts) == 1 and json_strings > 0
        assert got.spans[0].resource.get("service.name") == want.spans[0].resource.get("service.name")


def _json_of(value: Any) -> Any:
    """A JSON text (an object, or an array as Jaeger JSON writes an OpenTelemetry array) → its value."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value
