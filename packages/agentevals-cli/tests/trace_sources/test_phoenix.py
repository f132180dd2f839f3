"""The Phoenix source against a REAL Arize Phoenix server (``phoenix serve`` from the backends virtualenv
that ``tools/setup_backends.py`` installs: ``$AGENTEVALS_BACKENDS_VENV`` or ``<repo>/.local/backends``).

The shipped field traces are sent to it with the real OpenTelemetry SDK (OTLP/HTTP protobuf), their span ids,
attributes and durations as recorded (start times moved to "now" so that ``since=1h`` finds them); then they
are read back through ``phoenix+http://`` URIs and scored, and the results must equal those of the files.
Written-back annotations are read through Phoenix's own REST API. No part of Phoenix is imported here: the
server is a separate process, stopped by its own Popen.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional

import pytest
from agentevals.trace_sources.pull import Verdict
from agentevals.trace_sources.resolve import load_traces, source_for
from agentevals.traces.formats import TRACE_FORMATS
from agentevals.traces.model import Span, Trace

ROOT = Path(__file__).resolve().parents[4]
HELM = ROOT / "examples" / "traces" / "helm.json"
K8S = ROOT / "examples" / "traces" / "k8s.json"
TEMPO = ROOT / "packages" / "agentevals-cli" / "tests" / "data" / "adk" / "tempo_export_with_batches.json"
EVAL_SET = ROOT / "examples" / "evalsets" / "eval_set_helm.json"
METRIC = "tool_trajectory_avg_score"
HELM_ID = "3e289017fe03ffd7c4145316d2eb3d0d"
K8S_ID = "d497c9dd55717f2c5ecb79bda3028993"
TEMPO_ID = "dd547580319ab0312cee07f1def50dad"
HELM_INVOCATION = "e-a2daf27e-1b11-43b9-ac66-527df687a5fd"
HELM_SESSION = "ctx-7ed9780f-3688-4fc0-b10b-2e4df2f83cf0"
TEMPO_INVOCATION = "e-fd4599ca-7ab2-47c2-9efe-0c61a5d579f3"
ADMIN_SECRET = "agentevals-test-admin-secret-0123456789"


def backends_bin() -> Path:
    """The rule of tools/setup_backends.py (``venv_dir``/``bin_dir``), without importing tools/."""
    venv = Path(os.environ.get("AGENTEVALS_BACKENDS_VENV") or ROOT / ".local" / "backends")
    return venv / ("Scripts" if os.name == "nt" else "bin")


@dataclass
class PhoenixServer:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def get(self, path: str, token: Optional[str] = None) -> Any:
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {token}"} if token else {})
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.load(answer)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_phoenix(folder: Path, port: Optional[int] = None, **env: str) -> PhoenixServer:
    """``phoenix serve`` on 127.0.0.1 (HTTP and gRPC ports from the OS; ``port``: that HTTP port, to start
    it again where it was), its SQLite in ``folder``; waits (at most 180 s) until ``/healthz`` answers."""
    exe = backends_bin() / "phoenix"
    if not exe.exists():
        pytest.skip(f"no Phoenix server: {exe} is missing (run `python tools/setup_backends.py`)")
    folder.mkdir(parents=True, exist_ok=True)
    port = port or _free_port()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))}
    server_env = {**clean, "PHOENIX_WORKING_DIR": str(folder), "PHOENIX_HOST": "127.0.0.1",
                  "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(_free_port()),
                  "PHOENIX_TELEMETRY_ENABLED": "false", **env}
    log = folder / "phoenix.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(exe), "serve"], cwd=folder, env=server_env, stdout=out, stderr=subprocess.STDOUT)
    server = PhoenixServer(f"http://127.0.0.1:{port}", proc, log)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"phoenix serve exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(server.url + "/healthz", timeout=2):
                return server
        except (OSError, urllib.error.URLError):
            time.sleep(0.5)
    stop_phoenix(server)
    pytest.fail(f"phoenix serve did not answer within 180 s: {log.read_text()[-2000:]}")


def stop_phoenix(server: PhoenixServer) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait(timeout=30)


def read_file_traces(path: Path) -> list[Trace]:
    document = json.loads(path.read_text())
    fmt = "jaeger-json" if "data" in document else "otlp-json"
    return list(TRACE_FORMATS.get(fmt).read(document, str(path)))


def shifted(trace: Trace, offset_ns: int) -> Trace:
    """The trace moved in time by a whole number of seconds (ids, attributes and durations unchanged)."""
    spans = [replace(s, start_ns=s.start_ns + offset_ns, end_ns=s.end_ns + offset_ns,
                     events=[replace(e, time_ns=e.time_ns + offset_ns) for e in s.events]) for s in trace.spans]
    return Trace(trace_id=trace.trace_id, spans=spans, source=trace.source)


def to_now(trace: Trace, ago: int = 60) -> Trace:
    """The trace moved to have started ``ago`` seconds before now."""
    first = min(s.start_ns for s in trace.spans)
    return shifted(trace, (time.time_ns() - first) // 1_000_000_000 * 1_000_000_000 - ago * 1_000_000_000)


def send(server: PhoenixServer, project: str, traces: list[Trace], token: Optional[str] = None) -> None:
    """Export ``traces`` to Phoenix's OTLP/HTTP receiver with the OpenTelemetry SDK's own exporter, then
    wait until Phoenix lists them (it inserts in the background)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    def value(v: Any) -> Any:  # OTel attributes are scalars or lists of them; anything else as JSON text
        if isinstance(v, (str, bool, int, float)):
            return v
        if isinstance(v, list) and all(isinstance(x, (str, bool, int, float)) for x in v):
            return v
        return json.dumps(v)

    def readable(s: Span) -> ReadableSpan:
        context = SpanContext(int(s.trace_id, 16), int(s.span_id, 16), is_remote=False, trace_flags=TraceFlags(1))
        parent = SpanContext(int(s.trace_id, 16), int(s.parent_span_id, 16), is_remote=False) if s.parent_span_id else None
        resource = Resource({**{k: value(v) for k, v in s.resource.items()}, "openinference.project.name": project})
        return ReadableSpan(
            name=s.name, context=context, parent=parent, resource=resource,
            attributes={k: value(v) for k, v in s.attributes.items()},
            events=[Event(e.name, {k: value(v) for k, v in e.attributes.items()}, e.time_ns) for e in s.events],
            kind=SpanKind[s.kind.upper()] if s.kind and s.kind.upper() in SpanKind.__members__ else SpanKind.INTERNAL,
            instrumentation_scope=InstrumentationScope(s.scope or "unknown"),
            status=Status(StatusCode[s.status_code]) if s.status_code else Status(StatusCode.UNSET),
            start_time=s.start_ns, end_time=s.end_ns)

    exporter = OTLPSpanExporter(endpoint=server.url + "/v1/traces", timeout=30,
                                headers={"Authorization": f"Bearer {token}"} if token else None)
    from opentelemetry.sdk.trace.export import SpanExportResult

    assert exporter.export([readable(s) for t in traces for s in t.spans]) is SpanExportResult.SUCCESS
    wanted = {t.trace_id: len(t.spans) for t in traces}
    deadline = time.monotonic() + 60
    while True:
        have = {}
        for trace_id in wanted:
            try:
                page = server.get(f"/v1/projects/{project}/spans/otlpv1?trace_id={trace_id}&limit=1000", token)
            except urllib.error.HTTPError:
                break  # the project is not there yet
            have[trace_id] = len(page["data"])
        if have == wanted:
            return
        assert time.monotonic() < deadline, f"Phoenix holds {have} spans, {wanted} were sent"
        time.sleep(0.3)


def agentevals(*args: str, env: Optional[dict[str, str]] = None) -> subprocess.CompletedProcess[str]:
    run_env = {k: v for k, v in os.environ.items() if k != "PHOENIX_API_KEY"}
    return subprocess.run([sys.executable, "-m", "agentevals", *args], capture_output=True, text=True,
                          timeout=300, env={**run_env, **(env or {})}, cwd=ROOT)


def score(*inputs: str, env: Optional[dict[str, str]] = None, store: Optional[Path] = None
          ) -> tuple[int, dict[str, Any], str]:
    """``agentevals run INPUTS --eval-set eval_set_helm.json -m tool_trajectory_avg_score -o json`` (a real
    process), recorded in ``store`` (its run id is then in the report) or nowhere."""
    where = ["--store", str(store), "--no-cache"] if store else ["--no-store"]
    done = agentevals("run", *inputs, "--eval-set", str(EVAL_SET), "-m", METRIC, "-o", "json", *where, env=env)
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}, done.stderr


def without_sources(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cases without where they were read from, nor how long each evaluator took."""
    return [{**{k: v for k, v in case.items() if k not in ("sources", "metrics")},
             "metrics": [{k: v for k, v in m.items() if k != "duration_ms"} for m in case["metrics"]]}
            for case in cases]


def assert_same(got: Any, want: Any, where: str = "") -> None:
    """Equal, but for latencies (milliseconds) 2 µs apart: Phoenix keeps times in microseconds, a Tempo
    export has nanoseconds."""
    if isinstance(want, dict) and isinstance(got, dict):
        assert sorted(got) == sorted(want), where
        for key in want:
            assert_same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list) and isinstance(got, list):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, f"{where}[{i}]")
    elif isinstance(want, float) and isinstance(got, float):
        assert got == pytest.approx(want, abs=0.002), where
    else:
        assert got == want, where


# -- the server, fed with the field traces ------------------------------------------------------------------

@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PhoenixServer]:
    server = start_phoenix(tmp_path_factory.mktemp("phoenix"))
    try:
        yield server
    finally:
        stop_phoenix(server)


@pytest.fixture(scope="module")
def field(phoenix: PhoenixServer) -> dict[str, Trace]:
    """helm (started 3 minutes ago) and the Tempo export (2 minutes ago) in project ``field``, k8s in ``other``."""
    traces = {t.trace_id: to_now(t, ago) for ago, path in ((180, HELM), (60, K8S), (120, TEMPO))
              for t in read_file_traces(path)}
    assert set(traces) == {HELM_ID, K8S_ID, TEMPO_ID}
    send(phoenix, "field", [traces[HELM_ID], traces[TEMPO_ID]])
    send(phoenix, "other", [traces[K8S_ID]])
    return traces


def uri(server: PhoenixServer, project: str, query: str = "since=1h") -> str:
    return f"phoenix+{server.url}?project={project}&{query}"


def test_a_phoenix_run_scores_like_the_file_run(phoenix: PhoenixServer, field: dict[str, Trace]) -> None:
    """`agentevals run 'phoenix+http://…?project=field&since=1h'` gives the case results of the helm and Tempo
    files (the same traces): Phoenix is read oldest trace first, helm's then the Tempo export's."""
    file_code, from_file, _ = score(str(HELM), str(TEMPO))
    code, from_phoenix, stderr = score(uri(phoenix, "field"))
    assert (code, from_phoenix["input_errors"]) == (file_code, []), stderr
    assert [m["status"] for c in from_file["cases"] for m in c["metrics"]] == ["PASSED", "PASSED"]
    assert_same(without_sources(from_phoenix["cases"]), without_sources(from_file["cases"]))
    assert {s for c in from_phoenix["cases"] for s in c["sources"]} == {uri(phoenix, "field")}


@pytest.mark.parametrize("trace_id", [HELM_ID, K8S_ID, TEMPO_ID])
def test_every_field_trace_converts_as_from_its_file(phoenix: PhoenixServer, field: dict[str, Trace],
                                                     trace_id: str) -> None:
    """Jaeger and Tempo field traces, through Phoenix: the same invocations, metrics, session and agent."""
    project = "other" if trace_id == K8S_ID else "field"
    expected, expected_errors = load_traces([field[trace_id]])
    pulled, errors = load_traces([uri(phoenix, project, f"trace_id={trace_id}")])
    assert (errors, expected_errors) == ([], [])
    assert [t.trace_id for t in pulled] == [t.trace_id for t in expected] == [trace_id]
    for got, want in zip(pulled, expected, strict=True):
        assert_same([i.model_dump() for i in got.invocations], [i.model_dump() for i in want.invocations])
        assert (got.format, got.session_id, got.eval_id, got.agent_name, got.warnings) == \
            (want.format, want.session_id, want.eval_id, want.agent_name, want.warnings)
        assert_same(got.performance_metrics, want.performance_metrics)
        assert abs(got.start_ns - want.start_ns) < 1000


def _ids(inputs: str) -> list[str]:
    traces, errors = load_traces([inputs])
    assert errors == []
    return [t.trace_id for t in traces]


def test_filters(phoenix: PhoenixServer, field: dict[str, Trace]) -> None:
    """Each parameter narrows the read as Phoenix's API does (helm: 96 spans, the Tempo export: 86)."""
    assert _ids(uri(phoenix, "field")) == [HELM_ID, TEMPO_ID]  # oldest first
    assert _ids(uri(phoenix, "other")) == [K8S_ID]
    assert _ids(uri(phoenix, "field", "since=1h&limit=1")) == [HELM_ID]
    assert _ids(uri(phoenix, "field", "since=150s")) == [TEMPO_ID]
    assert sorted(_ids(uri(phoenix, "field", "since=1h&attr.gen_ai.agent.name=helm_agent"))) == sorted([HELM_ID, TEMPO_ID])
    assert _ids(uri(phoenix, "field", f"since=1h&attr.gcp.vertex.agent.invocation_id={HELM_INVOCATION}")) == [HELM_ID]
    assert _ids(uri(phoenix, "field", "since=1h&attr.gen_ai.agent.name=nobody")) == []
    assert _ids(uri(phoenix, "field", f"since=1h&session_id={HELM_SESSION}")) == [HELM_ID]
    # a Phoenix trace filter expression, and attr.* next to it (checked on the spans by the source)
    assert _ids(uri(phoenix, "field", "since=1h&filter=num_spans > 90")) == [HELM_ID]
    assert _ids(uri(phoenix, "field", f"since=1h&filter=num_spans > 0&attr.gcp.vertex.agent.invocation_id={TEMPO_INVOCATION}")) == [TEMPO_ID]
    # the window: traces that started before it are not read, named traces are read whatever their time
    past = "start=2020-01-01T00:00:00Z&end=2020-01-02T00:00:00Z"
    assert _ids(uri(phoenix, "field", past)) == []
    assert _ids(uri(phoenix, "field", f"{past}&trace_id={HELM_ID}")) == [HELM_ID]


def test_small_pages_read_the_same_traces(phoenix: PhoenixServer, field: dict[str, Trace],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """One trace per page of ``/traces`` and 7 spans per page of ``spans/otlpv1``: Phoenix's cursors are
    followed to the end, and each trace still arrives whole."""
    from agentevals.trace_sources import phoenix as source

    whole, errors = load_traces([uri(phoenix, "field")])
    assert errors == [] and [len(t.trace.spans) for t in whole if t.trace] == [96, 86]
    monkeypatch.setattr(source, "TRACE_PAGE", 1)
    monkeypatch.setattr(source, "SPAN_PAGE", 7)
    paged, errors = load_traces([uri(phoenix, "field")])
    assert errors == []
    assert [(t.trace_id, len(t.trace.spans) if t.trace else 0) for t in paged] == [(HELM_ID, 96), (TEMPO_ID, 86)]
    assert [[i.model_dump() for i in t.invocations] for t in paged] == [[i.model_dump() for i in t.invocations] for t in whole]
    assert sorted(_ids(uri(phoenix, "field", "since=1h&attr.gen_ai.agent.name=helm_agent"))) == sorted([HELM_ID, TEMPO_ID])


def test_a_bad_filter_is_one_line(phoenix: PhoenixServer, field: dict[str, Trace]) -> None:
    traces, errors = load_traces([uri(phoenix, "field", "filter=num_spans >")])
    assert traces == [] and len(errors) == 1
    assert errors[0].error.startswith(f"phoenix+{phoenix.url}") and "400" in errors[0].error
    assert "\n" not in errors[0].error


def test_an_unknown_project_is_one_line_and_exit_2_keeping_the_other_inputs(phoenix: PhoenixServer,
                                                                           field: dict[str, Trace]) -> None:
    code, report, stderr = score(str(HELM), uri(phoenix, "nope"))
    assert code == 2, stderr
    lines = [line for line in stderr.splitlines() if "nope" in line]
    assert len(lines) == 1 and "no project 'nope'" in lines[0] and "field" in lines[0], stderr
    assert "Traceback" not in stderr
    assert [c["trace_ids"] for c in report["cases"]] == [[HELM_ID]]


def test_write_back_adds_trace_annotations_once(phoenix: PhoenixServer, field: dict[str, Trace],
                                                tmp_path: Path) -> None:
    """Verdicts from a real run → trace annotations, read back through Phoenix's REST API; writing the same
    run again updates them (no duplicates); another run adds its own."""
    source_uri = uri(phoenix, "field", f"trace_id={HELM_ID}")
    code, report, stderr = score(source_uri, store=tmp_path / "runs.sqlite")
    assert code == 0 and report["run_id"], stderr
    verdicts = [Verdict(trace_id=trace_id, evaluator=m["name"], score=m["score"], passed=m["status"] == "PASSED",
                        status=m["status"], run_id=report["run_id"], evaluator_version="builtin",
                        explanation=f"{m['name']}: {m['status']}", case_id=case["eval_id"])
                for case in report["cases"] for m in case["metrics"] for trace_id in case["trace_ids"]]
    assert [(v.trace_id, v.evaluator, v.label) for v in verdicts] == [(HELM_ID, METRIC, "pass")]

    def annotations() -> list[dict[str, Any]]:
        return phoenix.get(f"/v1/projects/field/trace_annotations?trace_ids={HELM_ID}")["data"]

    assert source_for(source_uri).write_back(verdicts) == 1
    (first,) = annotations()
    assert (first["trace_id"], first["name"], first["annotator_kind"], first["source"]) == (HELM_ID, METRIC, "CODE", "API")
    assert first["result"] == {"label": "pass", "score": 1.0, "explanation": f"{METRIC}: PASSED"}
    assert first["metadata"] == {"agentevals_run_id": report["run_id"], "evaluator_version": "builtin",
                                 "case_id": "helm_list_releases", "status": "PASSED"}
    assert first["identifier"] == f"agentevals:{report['run_id']}"

    changed = [replace(v, score=0.25, passed=False, status="FAILED", judge=True) for v in verdicts]
    assert source_for(source_uri).write_back(changed) == 1
    (second,) = annotations()
    assert second["id"] == first["id"]
    assert (second["result"]["label"], second["result"]["score"], second["annotator_kind"]) == ("fail", 0.25, "LLM")

    assert source_for(source_uri).write_back([replace(v, run_id="another-run") for v in verdicts]) == 1
    assert sorted(a["identifier"] for a in annotations()) == sorted(["agentevals:another-run",
                                                                     f"agentevals:{report['run_id']}"])
    # and Phoenix's trace filter sees them: the traces whose annotation failed
    failed = f'any(a.name == "{METRIC}" and a.label == "fail" for a in trace_annotations)'
    assert _ids(uri(phoenix, "field", f"since=1h&filter={failed}")) == [HELM_ID]


def test_run_write_back_annotates_what_phoenix_holds(phoenix: PhoenixServer, field: dict[str, Trace],
                                                     tmp_path: Path) -> None:
    """The issue's own command: `agentevals run 'phoenix+…' --eval-set … -m tool_trajectory_avg_score
    --write-back` scores what Phoenix holds like the files, and the annotations are in Phoenix's API; a
    second write-back of the same results (`--rerun-failed` re-reads nothing new: the same run again) does
    not duplicate them."""
    source_uri = uri(phoenix, "field", f"trace_id={HELM_ID},{TEMPO_ID}")
    store = tmp_path / "runs.sqlite"
    done = agentevals("run", source_uri, "--eval-set", str(EVAL_SET), "-m", METRIC, "-o", "json",
                      "--store", str(store), "--no-cache", "--write-back")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    _, from_file, _ = score(str(HELM), str(TEMPO))
    assert_same(without_sources(report["cases"]), without_sources(from_file["cases"]))
    assert any("wrote 2 results back" in note for note in report["notes"]), report["notes"]
    found = phoenix.get(f"/v1/projects/field/trace_annotations?trace_ids={HELM_ID}&trace_ids={TEMPO_ID}")["data"]
    mine = [a for a in found if a["identifier"] == f"agentevals:{report['run_id']}"]
    assert sorted((a["trace_id"], a["name"], a["result"]["label"]) for a in mine) == sorted(
        [(HELM_ID, METRIC, "pass"), (TEMPO_ID, METRIC, "pass")])
    assert all(a["metadata"]["agentevals_run_id"] == report["run_id"] for a in mine)


def test_write_back_to_a_trace_phoenix_does_not_hold_is_one_line(phoenix: PhoenixServer,
                                                                 field: dict[str, Trace]) -> None:
    from agentevals.trace_sources.pull import SourceError

    verdict = Verdict(trace_id="0" * 32, evaluator=METRIC, score=1.0, passed=True, status="PASSED", run_id="r")
    with pytest.raises(SourceError, match=r"^phoenix\+http://127\.0\.0\.1:\d+\?project=field.*: 404 .*Traces with IDs 0{32} do not exist"):
        source_for(uri(phoenix, "field")).write_back([verdict])


# -- a server with authentication ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def phoenix_with_auth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PhoenixServer]:
    """Phoenix with PHOENIX_ENABLE_AUTH; PHOENIX_ADMIN_SECRET is a bearer token it accepts like an API key."""
    server = start_phoenix(tmp_path_factory.mktemp("phoenix-auth"), PHOENIX_ENABLE_AUTH="true",
                           PHOENIX_SECRET="agentevals-test-jwt-secret-0123456789abc", PHOENIX_ADMIN_SECRET=ADMIN_SECRET)
    try:
        yield server
    finally:
        stop_phoenix(server)


def test_auth_reads_phoenix_api_key(phoenix_with_auth: PhoenixServer) -> None:
    send(phoenix_with_auth, "secured", [to_now(read_file_traces(HELM)[0])], token=ADMIN_SECRET)
    source_uri = uri(phoenix_with_auth, "secured")

    code, report, stderr = score(source_uri)
    assert code == 2 and report["cases"] == []
    lines = [line for line in stderr.splitlines() if "phoenix+" in line]
    assert len(lines) == 1 and "401" in lines[0] and "set PHOENIX_API_KEY" in lines[0], stderr
    assert ADMIN_SECRET not in stderr

    code, report, stderr = score(source_uri, env={"PHOENIX_API_KEY": "not-the-key-0123456789abcdefghijkl"})
    assert code == 2 and "set PHOENIX_API_KEY" in stderr

    code, report, stderr = score(source_uri, env={"PHOENIX_API_KEY": ADMIN_SECRET})
    assert code == 0, stderr
    assert [c["trace_ids"] for c in report["cases"]] == [[HELM_ID]]
    assert ADMIN_SECRET not in json.dumps(report) + stderr


def test_an_unreachable_phoenix_is_one_line() -> None:
    """Nothing listens on the port: one line naming the source, after the URI's own retries."""
    port = _free_port()
    source_uri = f"phoenix+http://127.0.0.1:{port}?project=default&retries=1&timeout=5"
    traces, errors = load_traces([source_uri])
    assert traces == [] and len(errors) == 1
    assert errors[0].error.startswith(source_uri + ": ") and "\n" not in errors[0].error
    assert "(after 2 attempts)" in errors[0].error
