"""``serve --pull`` and ``run --unscored``: a real ``agentevals serve`` process polling a loopback STAND-IN
for Jaeger's query service (Jaeger v2, API v3: OTLP JSON in ``{"result": …}``), whose traces are BUILT FROM
the real shipped ``examples/traces/helm.json`` (fresh ids, one conversation each, times moved to the last
minutes) and appear while serve runs; and a real Phoenix server (``test_phoenix_pull``).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Optional

import pytest
from agentevals.errors import ConfigError
from agentevals.serve.pull import check_pull_sources, next_delay
from standins._traces import SESSION_KEYS, TraceBank, load_templates
from standins.cli import HELM, K8S
from standins.jaeger import JaegerStandIn

pytest.importorskip("fastapi", reason="the serve extra is not installed")

from support.live_server import EXAMPLES, Server, agentevals, start_server, stop_server
from support.polling import wait_for

EVAL_SETS = EXAMPLES / "evalsets"
METRIC = "tool_trajectory_avg_score"


class GrowingBank(TraceBank):
    """A bank whose traces exist only once ``show`` made them visible (the backend "receives" them)."""

    def __init__(self, *args: Any, prefix: str = "ae", **kwargs: Any) -> None:
        self.prefix = prefix
        """Two hex digits that start every trace id (two banks, two sets of ids)."""
        super().__init__(*args, **kwargs)
        self.visible: set[int] = set()
        self._lock = threading.Lock()

    def trace_id(self, i: int) -> str:
        return f"{self.prefix}{i:030x}"

    def session(self, i: int) -> Optional[str]:
        return f"session-{i}" if self.prefix == "ae" else f"session-{self.prefix}-{i}"

    def show(self, *indices: int) -> list[str]:
        with self._lock:
            self.visible.update(indices)
        return [self.trace_id(i) for i in indices]

    def search(self, *args: Any, **kwargs: Any) -> Iterator[int]:
        with self._lock:
            visible = set(self.visible)
        return (i for i in super().search(*args, **kwargs) if i in visible)

    def index(self, trace_id: str) -> Optional[int]:
        try:
            i = int(trace_id[2:], 16) if trace_id.startswith(self.prefix) and len(trace_id) == 32 else None
        except ValueError:
            return None
        return i if i in self.visible else None


@pytest.fixture
def bank() -> GrowingBank:
    """30 copies of the helm trace, 2 s apart, the newest a minute ago; none visible yet."""
    return GrowingBank(load_templates([HELM]), 30, spacing=2.0, fresh_ids=True)


@pytest.fixture
def jaeger(bank: GrowingBank) -> Iterator[JaegerStandIn]:
    with JaegerStandIn(bank) as server:
        yield server


@pytest.fixture
def servers() -> Iterator[Callable[..., Server]]:
    started: list[Server] = []

    def factory(*args: str) -> Server:
        server = start_server(*args)
        started.append(server)
        return server

    yield factory
    for server in started:
        stop_server(server.process)


def source(jaeger: JaegerStandIn, query: str = "") -> str:
    return f"jaeger+{jaeger.url}?service=helm_agent&timeout=2&retries=0{query}"


def pull_args(store: Path, *uris: str, every: str = "1s") -> list[str]:
    return [*(a for u in uris for a in ("--pull", u)), "--every", every, "--store", str(store),
            "--eval-sets", str(EVAL_SETS), "-m", METRIC, "--session-idle", "0.2"]


def scored(server: Server) -> dict[str, dict[str, Any]]:
    """The evaluated sessions the server lists, by session id."""
    sessions = server.get("/sessions", params={"limit": 500}).json()["data"]
    return {s["session_id"]: s for s in sessions if s["status"] in ("evaluated", "error")}


def health_sources(server: Server) -> list[dict[str, Any]]:
    return server.get("/health").json()["data"]["sources"]


def stored_trace_cases(store: Path) -> dict[str, int]:
    """Trace id → how many stored cases (over every run) hold it."""
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT trace_id, COUNT(*) FROM case_traces GROUP BY trace_id").fetchall()
    return dict(rows)


# -- pieces ---------------------------------------------------------------------------------------------------

def test_backoff_doubles_and_is_capped():
    assert [next_delay(10, n, 60) for n in range(5)] == [10, 20, 40, 60, 60]


def test_a_pull_uri_that_is_not_a_backend_is_one_config_line():
    with pytest.raises(ConfigError, match=r"--pull .*helm.json: not a trace backend"):
        check_pull_sources([str(HELM)])
    with pytest.raises(ConfigError, match=r"--pull jaeger\+http://h:1\?service=a&nope=1: .*unknown parameter 'nope'"):
        check_pull_sources(["jaeger+http://h:1?service=a&nope=1"])
    done = agentevals("serve", "-p", "0", "--pull", str(HELM), "--no-store")
    assert done.returncode == 2 and "not a trace backend" in done.stderr and "Traceback" not in done.stderr


# -- serve --pull end to end ---------------------------------------------------------------------------------------

def test_new_traces_are_scored_once_each_as_they_arrive(jaeger, bank, servers, tmp_path):
    """Stand-in, Jaeger API v3. Traces that appear while serve polls are scored (one session per
    conversation), each once; the health endpoint shows the source ok with its watermark."""
    first = set(bank.show(*range(20, 30)))
    server = servers(*pull_args(tmp_path / "runs.sqlite", source(jaeger)))
    wait_for(lambda: len(scored(server)) >= 10, what="the first 10 sessions")
    later = set(bank.show(*range(10, 20)))
    sessions = wait_for(lambda: s if len(s := scored(server)) >= 20 else None, what="20 sessions")
    assert set(sessions) == {f"session-{i}" for i in range(10, 30)}  # each trace is its own conversation
    assert all(s["status"] == "evaluated" for s in sessions.values())
    # the source's count moves once its batch is recorded, a moment after the sessions are listed
    (status,) = wait_for(lambda: h if (h := health_sources(server))[0]["sessions_scored"] >= 20 else None,
                         what="the source's count of 20")
    assert status["state"] == "ok" and status["error"] is None and status["watermark"] > time.time() - 60
    assert status["uri"].startswith("jaeger+http://127.0.0.1:") and status["sessions_scored"] == 20
    time.sleep(2.5)  # two more polls over the same (overlapping) window: nothing is evaluated again
    assert len(scored(server)) == 20 and health_sources(server)[0]["sessions_scored"] == 20
    stop_server(server.process)
    assert stored_trace_cases(tmp_path / "runs.sqlite") == {t: 1 for t in first | later}


def test_a_failing_source_backs_off_recovers_and_never_stops_the_other(bank, servers, tmp_path):
    """Stand-ins, Jaeger API v3: one answers 500, then hangs past the request deadline, then recovers; the
    other is read all along. The failing one shows backing_off with its error, then ok, and its traces
    are scored once it is back."""
    good_bank = GrowingBank(load_templates([K8S]), 5, spacing=2.0, fresh_ids=True, prefix="bf")
    with JaegerStandIn(bank) as bad, JaegerStandIn(good_bank) as good:
        bad.fail(500, times=10_000, body={"error": {"httpCode": 500, "message": "storage unavailable"}})
        bank.show(*range(5))
        server = servers(*pull_args(tmp_path / "runs.sqlite", source(bad),
                                    f"jaeger+{good.url}?service=k8s_agent&timeout=2&retries=0"))
        wanted = set(good_bank.show(*range(5)))
        wait_for(lambda: len(scored(server)) >= 5, what="the good source's sessions")
        states = wait_for(lambda: h if (h := health_sources(server))[0]["failures"] >= 2 else None,
                          what="two failed polls")
        assert states[0]["state"] == "backing_off" and "500" in states[0]["error"]
        assert "storage unavailable" in states[0]["error"] and states[1]["state"] == "ok"
        assert set(scored(server)) == {f"session-bf-{i}" for i in range(5)}  # the good source's conversations
        with bad._lock:
            bad._faults.clear()
        bad.hang(5, times=1)  # one poll more fails on its deadline, then the source answers
        wait_for(lambda: health_sources(server)[0]["state"] == "ok", timeout=90, what="the source recovered")
        wait_for(lambda: len(scored(server)) >= 10, what="the recovered source's sessions")
        assert health_sources(server)[0]["failures"] == 0
        stop_server(server.process)
    counts = stored_trace_cases(tmp_path / "runs.sqlite")
    assert set(counts) == wanted | {bank.trace_id(i) for i in range(5)} and set(counts.values()) == {1}


def test_traces_older_than_the_overlap_are_confirmed_and_scored(servers, tmp_path):
    """Stand-in, Jaeger API v3. Traces already in the backend when serve starts, up to 40 minutes old (far
    behind the 5-minute overlap): the first poll reads each once, the confirming read must still reach
    them, so every one is scored, once."""
    old = GrowingBank(load_templates([HELM]), 20, spacing=120.0, fresh_ids=True, prefix="c0")
    wanted = set(old.show(*range(20)))
    with JaegerStandIn(old) as backend:
        server = servers(*pull_args(tmp_path / "runs.sqlite", source(backend, "&since=1h")))
        wait_for(lambda: len(scored(server)) >= 20, what="all 20 sessions")
        time.sleep(2.5)  # more polls: nothing is evaluated again
        assert set(scored(server)) == {f"session-c0-{i}" for i in range(20)}
        stop_server(server.process)
    assert stored_trace_cases(tmp_path / "runs.sqlite") == {t: 1 for t in wanted}


class IngestingBank(GrowingBank):
    """Two helm traces a backend ingests as Phoenix does, in batches that cut across traces: each search (one
    per poll) shows trace 1 with 20 more spans, and trace 0 without its spans holding the conversation id
    until trace 1 is whole; trace 0 meanwhile keeps the same partial span count from read to read."""

    def __init__(self) -> None:
        super().__init__(load_templates([HELM]), 2, spacing=2.0, fresh_ids=True, prefix="d0")
        self.reads = 0
        self.total = sum(len(scope["spans"]) for batch in self.template(0).otlp for scope in batch["scopeSpans"])

    def search(self, *args: Any, **kwargs: Any) -> Iterator[int]:
        with self._lock:
            self.reads += 1
        return super().search(*args, **kwargs)

    def otlp(self, i: int) -> list[dict[str, Any]]:
        batches = super().otlp(i)
        whole = min(self.total, 20 * self.reads)
        spans = [span for batch in batches for scope in batch["scopeSpans"] for span in scope["spans"]]
        if i == 1:
            keep = {id(span) for span in spans[:whole]}
        elif whole < self.total:
            keep = {id(span) for span in spans if not any(a["key"] in SESSION_KEYS for a in span.get("attributes") or ())}
        else:
            return batches
        for batch in batches:
            for scope in batch["scopeSpans"]:
                scope["spans"] = [span for span in scope["spans"] if id(span) in keep]
        return batches


def test_a_trace_is_scored_only_once_the_backend_has_stopped_ingesting(servers, tmp_path):
    """Stand-in, Jaeger API v3. A trace whose span count stays the same over two reads while the backend
    is still inserting other spans (Phoenix under load) is not complete yet: it is scored only once a read
    finds nothing growing, whole, in its own conversation."""
    bank = IngestingBank()
    wanted = set(bank.show(0, 1))
    with JaegerStandIn(bank) as backend:
        server = servers(*pull_args(tmp_path / "runs.sqlite", source(backend)))
        sessions = wait_for(lambda: s if len(s := scored(server)) >= 2 else None, what="two sessions")
        assert set(sessions) == {"session-d0-0", "session-d0-1"}
        assert {s["metrics"][METRIC] for s in sessions.values()} == {"PASSED"}
        stop_server(server.process)
    assert stored_trace_cases(tmp_path / "runs.sqlite") == {t: 1 for t in wanted}


@pytest.mark.parametrize("kill", [False, True], ids=["sigterm", "sigkill"])
def test_a_restart_neither_scores_twice_nor_skips(jaeger, bank, servers, tmp_path, kill):
    """Stand-in, Jaeger API v3. serve stops (or is killed) mid-stream; traces arrive while it is down,
    and one arrives late, behind the watermark (inside the overlap); the restarted serve reads on from
    the stored watermark: every trace is in exactly one stored case."""
    import os
    import signal

    store = tmp_path / "runs.sqlite"
    before = set(bank.show(*range(15, 30)))
    server = servers(*pull_args(store, source(jaeger)))
    wait_for(lambda: len(scored(server)) >= 15, what="the first sessions")
    time.sleep(1.5)  # the watermark of the last poll is stored
    if kill:
        os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait(10)
    stop_server(server.process)
    during = set(bank.show(*range(0, 10)))   # the newest: arrived while serve was down
    late = set(bank.show(*range(10, 15)))    # older than the first poll's traces: indexed late
    server = servers(*pull_args(store, source(jaeger)))
    wait_for(lambda: len(scored(server)) >= 15, what="the rest after the restart")
    time.sleep(2.5)
    assert set(scored(server)) == {f"session-{i}" for i in range(15)}
    stop_server(server.process)
    assert stored_trace_cases(store) == {t: 1 for t in before | during | late}


# -- run --unscored -----------------------------------------------------------------------------------------------

def test_run_unscored_reads_only_traces_without_a_result(tmp_path):
    """`run A` then `run A B --unscored`: only B is evaluated, and the run says how many were left out."""
    store = str(tmp_path / "runs.sqlite")
    first = agentevals("run", str(HELM), "-e", str(EVAL_SETS / "eval_set_helm.json"), "-m", METRIC, "--store", store)
    assert first.returncode == 0, first.stderr
    second = agentevals("run", str(HELM), str(K8S), "-m", METRIC, "--store", store, "--unscored", "-o", "json")
    report = json.loads(second.stdout)
    assert [c["trace_ids"] for c in report["cases"]] == [["d497c9dd55717f2c5ecb79bda3028993"]]
    assert "--unscored: 1 trace the run store already has a result for left out" in second.stderr
    third = agentevals("run", str(HELM), "-m", METRIC, "--no-store", "--unscored")
    assert third.returncode == 2 and "--unscored needs the run store" in third.stderr


def test_run_unscored_backfills_a_source_window(jaeger, bank, tmp_path):
    """Stand-in, Jaeger API v3: a backfill over the source's window after serve scored part of it."""
    store = str(tmp_path / "runs.sqlite")
    bank.show(*range(10))
    first = agentevals("run", source(jaeger, "&limit=4"), "-e", str(EVAL_SETS / "eval_set_helm.json"), "-m", METRIC,
                       "--store", store, "-o", "json")
    assert first.returncode in (0, 1), first.stderr
    done = {c["trace_ids"][0] for c in json.loads(first.stdout)["cases"]}
    assert len(done) == 4
    second = agentevals("run", source(jaeger), "--since", "7d", "--unscored", "-m", METRIC, "--store", store,
                        "-o", "json")
    rest = {c["trace_ids"][0] for c in json.loads(second.stdout)["cases"]}
    assert rest == {bank.trace_id(i) for i in range(10)} - done


# -- a real Phoenix -------------------------------------------------------------------------------------------------

def _fresh(trace: Any, n: int) -> Any:
    """A copy of a shipped trace with new trace and span ids and its own conversation (the content, the
    attributes and the durations as recorded)."""
    import hashlib
    from dataclasses import replace

    from standins._traces import SESSION_KEYS

    def new_id(old: str, size: int) -> str:
        return hashlib.sha256(f"{n}:{old}".encode()).hexdigest()[:size]

    trace_id = new_id(trace.trace_id, 32)
    spans = [replace(s, trace_id=trace_id, span_id=new_id(s.span_id, 16),
                     parent_span_id=new_id(s.parent_span_id, 16) if s.parent_span_id else s.parent_span_id,
                     attributes={k: (f"phoenix-session-{n}" if k in SESSION_KEYS else v)
                                 for k, v in s.attributes.items()}) for s in trace.spans]
    return replace(trace, trace_id=trace_id, spans=spans)


def test_phoenix_pull(servers, tmp_path):
    """A REAL Phoenix server (the backends virtualenv) fed with copies of the shipped helm trace while
    `serve --pull 'phoenix+http://…?project=live' --every 2s` runs: each is scored once, as it arrives;
    after a restart only the traces that came meanwhile are scored."""
    from trace_sources.test_phoenix import read_file_traces, send, start_phoenix, stop_phoenix, to_now

    (helm,) = read_file_traces(HELM)
    phoenix = start_phoenix(tmp_path / "phoenix")
    try:
        store = tmp_path / "runs.sqlite"
        uri = f"phoenix+{phoenix.url}?project=live&timeout=10&retries=1"
        copies = [_fresh(to_now(helm, 90), n) for n in range(8)]
        send(phoenix, "live", copies[:2])
        server = servers(*pull_args(store, uri, every="2s"))
        wait_for(lambda: len(scored(server)) >= 2, timeout=90, what="the first two sessions")
        send(phoenix, "live", copies[2:5])
        sessions = wait_for(lambda: s if len(s := scored(server)) >= 5 else None, timeout=90, what="five sessions")
        assert set(sessions) == {f"phoenix-session-{n}" for n in range(5)}
        assert {s["status"] for s in sessions.values()} == {"evaluated"}
        (status,) = wait_for(lambda: h if (h := health_sources(server))[0]["sessions_scored"] >= 5 else None,
                             what="the source's count of 5")
        assert status["state"] == "ok" and status["sessions_scored"] == 5
        stop_server(server.process)
        send(phoenix, "live", copies[5:])
        server = servers(*pull_args(store, uri, every="2s"))
        wait_for(lambda: len(scored(server)) >= 3, timeout=90, what="the sessions sent during the restart")
        time.sleep(4)  # two more polls over the overlapping window
        assert set(scored(server)) == {f"phoenix-session-{n}" for n in range(5, 8)}
        stop_server(server.process)
        assert stored_trace_cases(store) == {c.trace_id: 1 for c in copies}
    finally:
        stop_phoenix(phoenix)
