"""Backend sources from the command line and the run store, end to end: ``agentevals run`` in a subprocess
reads a test-only ``PullSource`` plugin (installed as a real distribution: a module and a ``*.dist-info``
with ``entry_points.txt`` in the group ``agentevals.trace_sources``, on ``PYTHONPATH``) from a loopback
HTTP server, with a real run store in a temporary folder (SQLite; Postgres too where a server can start).

The loopback server is a stand-in for a trace backend's query API, following no real backend's API: a
search by time window (``/search?service=&start=&end=`` in microseconds → ids and start times) and a fetch
by id (``/traces/{id}`` → the trace as Jaeger JSON). It serves the shipped field traces (tests/data/adk:
helm, helm_2, k8s), each moved to a start time the test chooses, never hand-written results.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qs, urlsplit

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "adk"
EVAL_SET = str(DATA / "eval_set_helm.json")
HELM, HELM_2, K8S = "3e289017fe03ffd7c4145316d2eb3d0d", "bc07807133692d12e4268dc007ef9a19", "d497c9dd55717f2c5ecb79bda3028993"
FILES = {HELM: "helm.json", HELM_2: "helm_2.json", K8S: "k8s.json"}

PLUGIN = '''\
from datetime import datetime, timezone
from typing import ClassVar

from agentevals.trace_sources.pull import PulledTrace, PullSource


class LoopSource(PullSource):
    """A test backend: search by window, then fetch each trace as Jaeger JSON."""

    name: ClassVar[str] = "loop"
    summary: ClassVar[str] = "the loopback test backend"
    uri_form: ClassVar[str] = "loop+http://HOST:PORT?service=NAME&since=2h"
    parameters: ClassVar[frozenset[str]] = frozenset({"service"})
    credentials: ClassVar[tuple[str, ...]] = ("LOOP_TOKEN",)
    writes_back: ClassVar[str] = "loop notes"

    def pull(self):
        start, end = self.window
        found = self.client.get_json("/search", params={
            "service": self.query.param("service"),
            "start": int(start.timestamp() * 1_000_000), "end": int(end.timestamp() * 1_000_000)})
        for hit in found["traces"]:
            yield PulledTrace(hit["id"], self.client.get_json(f"/traces/{hit['id']}"),
                              started=datetime.fromtimestamp(hit["start"] / 1_000_000, timezone.utc))
'''


def _micros(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):  # a client stopped mid-answer
            super().handle_error(request, client_address)


class Backend:
    """The loopback stand-in: ``add(trace_id, started)`` serves a shipped trace from that start time on."""

    def __init__(self) -> None:
        self.traces: dict[str, tuple[int, Any]] = {}
        self.searches: list[tuple[int, int]] = []
        """Every window searched, ``(start, end)`` in microseconds, in order."""
        self.hold: Optional[str] = None
        """A trace id whose fetch waits for ``release`` (a backend that stalls mid-read)."""
        self.release = threading.Event()
        self.fetching_held = threading.Event()
        backend = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def answer(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(url.query).items()}
                if query.get("service") == "down":
                    self.answer(500, {"error": "storage backend unavailable"})
                elif url.path == "/search":
                    start, end = int(query["start"]), int(query["end"])
                    backend.searches.append((start, end))
                    hits = sorted((began, tid) for tid, (began, _) in backend.traces.items() if start <= began < end)
                    self.answer(200, {"traces": [{"id": tid, "start": began} for began, tid in hits]})
                elif url.path.startswith("/traces/") and url.path[8:] in backend.traces:
                    tid = url.path[8:]
                    if tid == backend.hold:
                        backend.fetching_held.set()
                        backend.release.wait(60)
                    self.answer(200, backend.traces[tid][1])
                else:
                    self.answer(404, {"error": f"no such trace or path: {url.path}"})

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def add(self, trace_id: str, started: Optional[datetime] = None) -> None:
        """Serve the shipped trace ``trace_id``, moved to start at ``started`` (default: where it was recorded)."""
        document = json.loads((DATA / FILES[trace_id]).read_text())
        (trace,) = document["data"]
        first = min(span["startTime"] for span in trace["spans"])
        shift = 0 if started is None else _micros(started) - first
        moved = copy.deepcopy(document)
        for span in moved["data"][0]["spans"]:
            span["startTime"] += shift
        self.traces[trace_id] = (first + shift, moved)

    def uri(self, **params: str) -> str:
        query = "&".join(f"{k}={v}" for k, v in {"service": "shop", **params}.items())
        return f"loop+http://127.0.0.1:{self.port}?{query}"

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def backend() -> Iterator[Backend]:
    server = Backend()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """The test plugin, installed: ``loop = loop_source:LoopSource`` in ``agentevals.trace_sources``."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "loop_source.py").write_text(PLUGIN)
    info = site / "loop_source-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: loop-source\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[agentevals.trace_sources]\nloop = loop_source:LoopSource\n")
    return site


def _env(site: Path, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTEVALS_", "LOOP_"))}
    env.update(PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
               XDG_CACHE_HOME=str(tmp_path / "cache"), XDG_DATA_HOME=str(tmp_path / "data"), NO_COLOR="1")
    return env


def agentevals(site: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentevals", *args], capture_output=True, text=True,
                          timeout=180, cwd=tmp_path, env=_env(site, tmp_path))


def scored(result: subprocess.CompletedProcess[str]) -> dict[str, tuple[str, ...]]:
    """Trace id → the statuses of its case's rows, from a ``-o json`` report on stdout."""
    report = json.loads(result.stdout)
    return {tid: tuple(m["status"] for m in case["metrics"]) for case in report["cases"] for tid in case["trace_ids"]}


def run_id(result: subprocess.CompletedProcess[str]) -> str:
    return json.loads(result.stdout)["run_id"]


def test_since_last_reads_only_traces_newer_than_the_previous_runs_window(site, tmp_path, backend):
    store = str(tmp_path / "runs.sqlite")
    now = datetime.now(timezone.utc)
    backend.add(HELM, now - timedelta(minutes=30))
    backend.add(K8S, now - timedelta(minutes=20))
    args = ("-e", EVAL_SET, "-o", "json", "--store", store, "--since", "last")

    first = agentevals(site, tmp_path, "run", backend.uri(), *args)
    assert first.returncode == 1, first.stderr  # k8s fails the helm eval case
    assert scored(first) == {HELM: ("PASSED",), K8S: ("FAILED",)}
    assert "--since last: no completed run of loop+http://127.0.0.1" in first.stderr
    (first_window,) = backend.searches
    assert first_window[1] - first_window[0] == 3600 * 1_000_000  # no watermark: the default last hour

    backend.add(HELM_2, datetime.now(timezone.utc))  # a trace that arrived after the first run
    second = agentevals(site, tmp_path, "run", backend.uri(), *args)
    assert set(scored(second)) == {HELM_2}, second.stderr  # only the new trace
    assert backend.searches[1][0] == first_window[1]  # from where the first run stopped
    assert f"where run {run_id(first)} stopped" in second.stderr

    shown = agentevals(site, tmp_path, "runs", "show", run_id(second), "--store", store)
    assert shown.returncode == 0, shown.stderr
    start = datetime.fromtimestamp(backend.searches[1][0] / 1e6, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    end = datetime.fromtimestamp(backend.searches[1][1] / 1e6, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert f"source {backend.uri()} · window {start} → {end} · 1 trace\n" in shown.stdout


@pytest.fixture
def postgres_store() -> Iterator[str]:
    """A migrated database on a throwaway PostgreSQL server (skipped, with the reason, where none can start)."""
    from agentevals.store import connect
    from support.postgres import start_postgres

    server = start_postgres()
    if isinstance(server, str):
        pytest.skip(server)
    try:
        url = server.create_database("since_last")
        connect(url, migrate=True).close()
        yield url
    finally:
        server.stop()


def test_since_last_on_a_postgres_store(site, tmp_path, backend, postgres_store):
    backend.add(HELM, datetime.now(timezone.utc) - timedelta(minutes=30))
    args = ("-e", EVAL_SET, "-o", "json", "--store", postgres_store, "--since", "last")
    first = agentevals(site, tmp_path, "run", backend.uri(), *args)
    assert set(scored(first)) == {HELM}, first.stderr
    backend.add(K8S, datetime.now(timezone.utc))
    second = agentevals(site, tmp_path, "run", backend.uri(), *args)
    assert set(scored(second)) == {K8S}, second.stderr
    assert backend.searches[1][0] == backend.searches[0][1]


def test_a_failed_read_is_no_watermark_its_window_is_read_again(site, tmp_path, backend):
    store = str(tmp_path / "runs.sqlite")
    backend.add(HELM, datetime.now(timezone.utc) - timedelta(minutes=10))
    args = ("-e", EVAL_SET, "-o", "json", "--store", store, "--since", "last")
    ok = agentevals(site, tmp_path, "run", backend.uri(), *args)
    assert scored(ok) == {HELM: ("PASSED",)}, ok.stderr
    failed = agentevals(site, tmp_path, "run", backend.uri(service="down", retries="0"), *args)
    assert failed.returncode == 2
    again = agentevals(site, tmp_path, "run", backend.uri(service="down", retries="0"), *args)
    assert "no completed run of" in again.stderr  # the failed run's window is not a watermark


def test_rerun_failed_reads_the_stored_window_again_and_reuses_the_rest(site, tmp_path, backend):
    store = str(tmp_path / "runs.sqlite")
    now = datetime.now(timezone.utc)
    backend.add(HELM, now - timedelta(minutes=30))
    backend.add(K8S, now - timedelta(minutes=20))
    first = agentevals(site, tmp_path, "run", backend.uri(since="2h"), "-e", EVAL_SET, "-o", "json", "--store", store)
    assert scored(first) == {HELM: ("PASSED",), K8S: ("FAILED",)}, first.stderr

    backend.add(HELM_2, datetime.now(timezone.utc))  # not in the first run's window: not read again
    again = agentevals(site, tmp_path, "run", backend.uri(since="2h"), "-e", EVAL_SET, "-o", "json", "--store", store,
                       f"--rerun-failed={run_id(first)}", "--no-cache")
    assert scored(again) == {HELM: ("PASSED",), K8S: ("FAILED",)}, again.stderr
    assert backend.searches[1] == backend.searches[0]
    assert "1 result reused from the run store" in again.stderr  # helm's PASSED; k8s's FAILED ran again


def test_resume_of_an_interrupted_sourced_run_reads_the_same_window(site, tmp_path, backend):
    store = tmp_path / "runs.sqlite"
    now = datetime.now(timezone.utc)
    backend.add(HELM, now - timedelta(minutes=30))
    backend.add(K8S, now - timedelta(minutes=20))
    backend.hold = K8S  # the backend stalls on the second trace: the run is stopped there
    # Each trace its own case at once (a trace with a session id would wait for the end of the read), and no
    # one-case eval set (it holds the first trace back: it pairs with a run's only trace).
    (tmp_path / "eval_config.yaml").write_text("evaluators:\n  - type: contains\n    value: helm\n")
    args = [sys.executable, "-m", "agentevals", "run", backend.uri(), "-c", "eval_config.yaml", "--group-by", "trace",
            "-o", "json", "--store", str(store)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env=_env(site, tmp_path))
    try:
        assert backend.fetching_held.wait(60)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and _stored_cases(store) < 1:
            time.sleep(0.1)
        assert _stored_cases(store) == 1  # helm's case, before the backend stalled
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM, err
    interrupted = json.loads(out)["run_id"]
    backend.hold = None
    backend.release.set()
    backend.add(HELM_2, datetime.now(timezone.utc))  # after the interrupted run's window: not read
    resumed = agentevals(site, tmp_path, *args[3:], f"--resume={interrupted}")
    assert run_id(resumed) == interrupted
    assert set(scored(resumed)) == {HELM, K8S}, resumed.stderr
    assert backend.searches[1] == backend.searches[0]
    assert "1 result reused from the run store" in resumed.stderr


def _stored_cases(store: Path) -> int:
    if not store.exists():
        return 0
    with sqlite3.connect(store) as conn:
        try:
            return conn.execute("SELECT COUNT(*) FROM cases").fetchone()[0]
        except sqlite3.Error:
            return 0


def test_a_trace_scored_from_a_file_is_a_cache_hit_from_a_source(site, tmp_path, backend):
    """The cache key is the converted trace's content: the same trace read from a file, then from a backend,
    runs once."""
    store = str(tmp_path / "runs.sqlite")
    backend.add(HELM)  # as recorded (2026-02-16)
    from_file = agentevals(site, tmp_path, "run", str(DATA / "helm.json"), "-e", EVAL_SET, "-o", "json", "--store", store)
    assert scored(from_file) == {HELM: ("PASSED",)}, from_file.stderr
    uri = backend.uri(start="2026-02-16T00:00:00Z", end="2026-02-17T00:00:00Z")
    from_source = agentevals(site, tmp_path, "run", uri, "-e", EVAL_SET, "-o", "json", "--store", store)
    assert scored(from_source) == {HELM: ("PASSED",)}, from_source.stderr
    assert "1 result reused from the run store" in from_source.stderr
    assert json.loads(from_source.stdout)["cases"][0]["metrics"] == json.loads(from_file.stdout)["cases"][0]["metrics"]


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_a_failing_source_beside_a_file_exits_2_and_keeps_the_files_results(site, tmp_path, backend, fmt):
    junit = tmp_path / "report.xml"
    bad = backend.uri(service="down", retries="0")
    result = agentevals(site, tmp_path, "run", bad, str(DATA / "helm.json"), "-e", EVAL_SET, "--no-store",
                        "-o", fmt, "-o", f"junit={junit}")
    assert result.returncode == 2, result.stderr
    # As for an unreadable file: one line, on stderr beside a JSON report, in the table's own report otherwise.
    shown = result.stderr if fmt == "json" else result.stdout + result.stderr  # (the JSON report has it too)
    lines = [line for line in shown.splitlines() if "down" in line]
    said = f"{bad}: 500 Internal Server Error: storage backend unavailable"
    assert lines == [f"agentevals: {said}" if fmt == "json" else f"input error: {said}"], result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    if fmt == "json":
        assert scored(result) == {HELM: ("PASSED",)}
    else:
        assert "PASSED" in result.stdout
    assert HELM in junit.read_text() or "helm" in junit.read_text().lower()


def test_credentials_in_a_source_uri_are_refused_and_never_shown_or_stored(site, tmp_path, backend):
    store = tmp_path / "runs.sqlite"
    uri = f"loop+http://alice:s3cr3t-pw@127.0.0.1:{backend.port}?service=shop"
    result = agentevals(site, tmp_path, "run", uri, str(DATA / "helm.json"), "-e", EVAL_SET, "-o", "json",
                        "--store", str(store))
    assert result.returncode == 2, result.stderr
    assert "credentials in the URI are refused" in result.stderr and "set LOOP_TOKEN instead" in result.stderr
    assert scored(result) == {HELM: ("PASSED",)}
    assert "s3cr3t-pw" not in result.stdout + result.stderr
    assert b"s3cr3t-pw" not in b"".join(p.read_bytes() for p in tmp_path.glob("runs.sqlite*"))
    assert backend.searches == []


def test_an_unknown_parameter_is_one_line_naming_it_and_exit_2(site, tmp_path, backend):
    result = agentevals(site, tmp_path, "run", backend.uri(colour="red"), str(DATA / "helm.json"), "-e", EVAL_SET,
                        "-o", "json", "--no-store")
    assert result.returncode == 2
    (line,) = [line for line in result.stderr.splitlines() if "colour" in line]
    assert "unknown parameter 'colour' for loop" in line
    assert scored(result) == {HELM: ("PASSED",)}


@pytest.mark.parametrize("since", ["yesterday", "24", "2026-13-01"])
def test_a_bad_since_is_a_usage_error(site, tmp_path, backend, since):
    result = agentevals(site, tmp_path, "run", backend.uri(), "--since", since, "--no-store")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"Error: --since {since}: not a duration (30m, 24h, 7d), an RFC 3339 time (2026-11-26T00:00:00Z) or 'last'"]
    assert backend.searches == []


def test_since_sets_the_window_of_a_uri_that_names_none(site, tmp_path, backend):
    backend.add(HELM, datetime.now(timezone.utc) - timedelta(hours=5))
    agentevals(site, tmp_path, "run", backend.uri(), "--since", "6h", "--no-store", "-o", "json")
    agentevals(site, tmp_path, "run", backend.uri(since="1h"), "--since", "6h", "--no-store", "-o", "json")
    (start6, end6), (start1, end1) = backend.searches
    assert (end6 - start6, end1 - start1) == (6 * 3600 * 1_000_000, 3600 * 1_000_000)  # the URI's own window wins


def test_sources_list_names_the_plugin_and_the_built_ins(site, tmp_path):
    table = agentevals(site, tmp_path, "sources", "list")
    assert table.returncode == 0, table.stderr
    rows = {line.split()[0]: line for line in table.stdout.splitlines()[1:]}
    assert {"files", "http", "memory", "loop"} <= set(rows)
    assert "loop+http://HOST:PORT?service=NAME&since=2h" in rows["loop"] and "LOOP_TOKEN" in rows["loop"]
    listed = {row["name"]: row for row in json.loads(agentevals(site, tmp_path, "sources", "list", "-o", "json").stdout)}
    assert listed["loop"]["plugin"] and not listed["files"]["plugin"]
    assert listed["loop"]["credentials"] == ["LOOP_TOKEN"] and listed["loop"]["writes_back"] == "loop notes"
    assert "service" in listed["loop"]["parameters"] and "since" in listed["loop"]["parameters"]


def test_the_python_api_takes_since_and_reports_the_windows(site, tmp_path, backend):
    backend.add(HELM, datetime.now(timezone.utc) - timedelta(hours=3))
    code = (f"import agentevals, json\n"
            f"from agentevals.trace_sources import ReadContext\n"
            f"ctx = ReadContext()\n"
            f"run = agentevals.evaluate([{backend.uri()!r}], eval_set={EVAL_SET!r}, since='4h', read_context=ctx)\n"
            f"(w,) = ctx.windows.values()\n"
            f"print(json.dumps([[c.trace_ids for c in run.cases], w.traces, (w.end - w.start).total_seconds()]))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                            env=_env(site, tmp_path))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [[[HELM]], 1, 4 * 3600]


def test_progress_says_which_source_it_is_reading_while_the_read_goes_on(backend, capsys):
    """A source's reads have no known size: the progress line names the source and its traces so far."""
    import asyncio

    from agentevals.api import prepare_run
    from agentevals.cli._progress import PlainProgress
    from agentevals.cli._sourced import SourcedInputs
    from agentevals.engine.run import run_evaluation
    from agentevals.trace_sources import ReadContext

    namespace: dict[str, Any] = {}
    exec(PLUGIN, namespace)  # the plugin's class, in this process (given as a TraceSource object)
    now = datetime.now(timezone.utc)
    backend.add(HELM, now - timedelta(minutes=10))
    backend.add(K8S, now - timedelta(minutes=5))
    backend.hold = K8S  # held until the progress line has said what is read
    sourced = SourcedInputs(ReadContext())

    def reading() -> str:
        said = sourced.reading()
        if said.endswith(": 1 trace"):
            backend.release.set()
        return said

    evaluators, options, _ = prepare_run(metrics=["tool_trajectory_avg_score"], concurrency=1, group_by="trace")
    options.read_context = sourced.context
    progress = PlainProgress(every=0, reading=reading)
    run = asyncio.run(run_evaluation([namespace["LoopSource"](backend.uri())], evaluators, options=options,
                                     consumers=[progress]))
    assert sorted(t for c in run.cases for t in c.trace_ids) == sorted([HELM, K8S])
    lines = capsys.readouterr().err.splitlines()
    assert any(line.endswith(f"; reading {backend.uri()}: 1 trace") for line in lines), lines
