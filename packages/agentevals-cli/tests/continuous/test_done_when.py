"""Issue #25's "done when", as a user runs it: a REAL Phoenix server (the backends virtualenv) and a real
``agentevals serve --pull 'phoenix+http://…' --every 2s -c eval_config.yaml --sample 0.5 --alert … --alert-webhook …``.

Sessions are copies of the shipped field traces (``examples/traces/helm.json`` passes the helm eval set's
trajectory, ``k8s.json`` answers the same question without the tool and fails it), each with its own
conversation id, chosen so that the documented sampling rule puts some in and some out. The test checks,
in order: failing sessions fire one alert (webhook body), passing ones clear it (one more body); only the
documented subset is scored; Phoenix going down and coming back (same port, same data) loses nothing; a
restart of serve scores what arrived meanwhile and nothing twice; every trace is in exactly one stored case.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from dataclasses import replace
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the serve extra is not installed")
pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from standins._traces import SESSION_KEYS
from support.live_server import EXAMPLES, Server, start_server, stop_server
from support.polling import wait_for

RATE = 0.5
RULE = "tool_trajectory_avg_score pass_rate < 0.5 over 1h min 4"


def documented_point(key: str) -> float:
    """docs/continuous.md's sampling rule, written out here (not imported): the test checks the engine."""
    return int.from_bytes(hashlib.sha256(b"agentevals-sample-v1:" + key.encode()).digest()[:8], "big") / 2**64


def names(prefix: str, count: int, inside: bool) -> list[str]:
    """The first ``count`` conversation ids ``prefix-N`` the rule puts in (``inside``) or out of the sample."""
    found = []
    n = 0
    while len(found) < count:
        key = f"{prefix}-{n}"
        if (documented_point(key) < RATE) == inside:
            found.append(key)
        n += 1
    return found


def copy_as(trace: Any, conversation: str) -> Any:
    """A copy of a shipped trace with new ids and its own conversation (content and durations as recorded)."""
    def new_id(old: str, size: int) -> str:
        return hashlib.sha256(f"{conversation}:{old}".encode()).hexdigest()[:size]

    trace_id = new_id(trace.trace_id, 32)
    spans = [replace(s, trace_id=trace_id, span_id=new_id(s.span_id, 16),
                     parent_span_id=new_id(s.parent_span_id, 16) if s.parent_span_id else s.parent_span_id,
                     attributes={k: (conversation if k in SESSION_KEYS else v) for k, v in s.attributes.items()})
             for s in trace.spans]
    return replace(trace, trace_id=trace_id, spans=spans)


def listed(server: Server) -> list[dict[str, Any]]:
    return server.get("/sessions", params={"limit": 500}).json()["data"]


def scored(server: Server) -> set[str]:
    """Sessions some evaluator ran on (a sampled-out session is listed too, with ``skipped``)."""
    return {s["session_id"] for s in listed(server) if s["status"] == "evaluated" and not s["skipped"]}


def health(server: Server) -> dict[str, Any]:
    return server.get("/health").json()["data"]


@pytest.mark.timeout(900)
def test_serve_pull_samples_alerts_survives_an_outage_and_a_restart(hook, tmp_path):
    from trace_sources.test_phoenix import read_file_traces, send, start_phoenix, stop_phoenix, to_now

    (helm,) = read_file_traces(EXAMPLES / "traces" / "helm.json")
    (k8s,) = read_file_traces(EXAMPLES / "traces" / "k8s.json")
    good, bad = helm, k8s
    config = tmp_path / "eval_config.yaml"
    config.write_text("evaluators:\n  - name: tool_trajectory_avg_score\n    type: builtin\n")
    store = tmp_path / "runs.sqlite"
    phoenix = start_phoenix(tmp_path / "phoenix")
    port = int(phoenix.url.rsplit(":", 1)[1])
    uri = f"phoenix+{phoenix.url}?project=prod&timeout=5&retries=0"
    args = ("--pull", uri, "--every", "2s", "-c", str(config), "--eval-sets", str(EXAMPLES / "evalsets"),
            "--sample", str(RATE), "--alert", RULE, "--alert-webhook", hook.url, "--store", str(store),
            "--session-idle", "0.2", "--headless")
    bad_in, bad_out = names("bad", 4, True), names("bad", 2, False)
    good_in, good_out = names("good", 7, True), names("good", 2, False)
    sent: list[Any] = []

    def publish(trace: Any, conversations: list[str]) -> None:
        """Agents finishing now: copies started 30 s ago (Phoenix filters by start time)."""
        copies = [copy_as(to_now(trace, 30), c) for c in conversations]
        send(phoenix, "prod", copies)
        sent.extend(copies)

    server = None
    try:
        server = start_server(*args)
        # failing sessions: one alert; the sampled-out ones are counted, not scored
        publish(bad, bad_in + bad_out)
        (fired,) = wait_for(lambda: list(hook.bodies), timeout=120, what="the alert")
        assert fired["state"] == "firing" and fired["rule"]["text"] == RULE
        assert fired["figures"]["sessions"] == 4 and fired["figures"]["passed"] == 0
        assert sorted(s["id"] for s in fired["sessions"]) == sorted(bad_in)
        # passing sessions: the pass rate recovers (4 of 8), one "cleared"
        publish(good, good_in[:4] + good_out[:1])
        wait_for(lambda: len(hook.bodies) == 2, timeout=120, what="the alert to clear")
        assert hook.bodies[1]["state"] == "cleared" and hook.bodies[1]["figures"]["pass_rate"] == 0.5
        wait_for(lambda: scored(server) == {*bad_in, *good_in[:4]}, timeout=120,
                 what="exactly the sampled sessions scored")
        skipped = {s["session_id"]: s["skipped"] for s in listed(server) if s["skipped"]}
        assert skipped == dict.fromkeys([*bad_out, *good_out[:1]], "sampled_out")
        counters = wait_for(lambda: c if (c := health(server)["sessions"])["sampled_out"] == 3 else None,
                            timeout=120, what="three sessions counted as sampled out")
        assert counters["scored"] == 8 and counters["filtered_out"] == 0

        # Phoenix goes down: the source backs off, serve stays up; it comes back on the same port and data
        stop_phoenix(phoenix)
        wait_for(lambda: health(server)["sources"][0]["state"] in ("backing_off", "down"), timeout=120,
                 what="the source backing off")
        assert server.get("/health").status_code == 200
        phoenix = start_phoenix(tmp_path / "phoenix", port=port)
        publish(good, good_in[4:5])
        wait_for(lambda: good_in[4] in scored(server), timeout=120, what="a session sent after the outage")
        assert health(server)["sources"][0]["state"] == "ok"
        stop_server(server.process)

        # traces that arrive while serve is down are scored after its restart, and nothing is scored twice
        publish(good, good_in[5:] + good_out[1:])
        server = start_server(*args)
        wait_for(lambda: scored(server) == set(good_in[5:]), timeout=120, what="the sessions sent during the restart")
        time.sleep(5)  # two more polls over the overlapping window
        assert scored(server) == set(good_in[5:])
        assert len(hook.bodies) == 2  # one fire, one clear: 2 passing sessions break no rule
    finally:
        if server is not None:
            stop_server(server.process)
        stop_phoenix(phoenix)
    with sqlite3.connect(store) as db:
        held = dict(db.execute("SELECT trace_id, COUNT(*) FROM case_traces GROUP BY trace_id").fetchall())
    assert held == {t.trace_id: 1 for t in sent}  # every trace in exactly one stored case, over both runs
