"""The Jaeger source against a loopback STAND-IN for Jaeger's query service (Jaeger v2: API v3, OTLP JSON
in ``{"result": …}``; and the legacy API v1 with ``api=v1``), serving the real shipped Jaeger traces
(``examples/traces/helm.json``, ``k8s.json``) moved into the query window — never hand-written results."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone

import pytest
from agentevals.errors import ConfigError
from agentevals.trace_sources.base import ReadContext
from agentevals.trace_sources.jaeger import JaegerSource, split_otlp, v3_results
from agentevals.trace_sources.pull import SourceError
from agentevals.trace_sources.resolve import load_traces, source_for
from agentevals.traces.readers import ReadPosition
from standins._traces import TraceBank, load_templates
from standins.cli import HELM, K8S, outcome, report_of, run_cli
from standins.jaeger import JaegerStandIn

HELM_ID = "3e289017fe03ffd7c4145316d2eb3d0d"
K8S_ID = "d497c9dd55717f2c5ecb79bda3028993"


@pytest.fixture
def jaeger():
    """Stand-in (Jaeger v2, API v3 + v1) with the helm and k8s traces, 30 s apart, in the last minutes."""
    with JaegerStandIn.from_files([HELM, K8S]) as server:
        yield server


def ids(uri: str) -> list[str]:
    traces, errors = load_traces([uri])
    assert not errors, errors
    return [t.trace_id for t in traces]


# -- parity: the same traces give the same results from the file and from each API --------------------------

@pytest.mark.parametrize("api,stream", [("v3", False), ("v3", True), ("v1", False)])
def test_parity_with_the_file_through_the_cli(api, stream):
    """Stand-in, Jaeger API v3 (one answer, and streamed chunks) and v1: `agentevals run` on the URI gives
    the per-case results of `agentevals run examples/traces/helm.json`."""
    with JaegerStandIn.from_files([HELM, K8S], stream=stream) as server:
        uri = f"jaeger+{server.url}?service=helm_agent&since=2h" + ("&api=v1" if api == "v1" else "")
        from_file, from_jaeger = run_cli(str(HELM)), run_cli(uri)
    assert from_file.returncode == from_jaeger.returncode == 0, from_jaeger.stderr
    expected = outcome(report_of(from_file))
    assert expected and expected[0]["metrics"][0]["status"] == "PASSED"
    assert outcome(report_of(from_jaeger)) == expected


# -- filters -----------------------------------------------------------------------------------------------

def test_filters_map_to_the_v3_query(jaeger):
    """Stand-in, API v3: service/operation/attr./limit reach Jaeger's own parameter names; both bounds sent."""
    assert ids(f"jaeger+{jaeger.url}?service=k8s_agent&since=1h") == [K8S_ID]
    jaeger.requests.clear()
    uri = (f"jaeger+{jaeger.url}?service=helm_agent&operation=POST&attr.http.method=POST&since=1h&limit=1")
    assert ids(uri) == [HELM_ID]
    q = jaeger.requests[0].query
    assert q["query.service_name"] == ["helm_agent"] and q["query.operation_name"] == ["POST"]
    assert json.loads(q["query.attributes"][0]) == {"http.method": "POST"}
    assert q["query.search_depth"] == ["1"]
    assert q["query.start_time_min"][0].endswith("Z") and q["query.start_time_max"][0].endswith("Z")
    # an attribute no span has: nothing (Jaeger's 404 "No traces found" is an empty window)
    assert ids(f"jaeger+{jaeger.url}?service=helm_agent&attr.http.method=PATCH&since=1h") == []


def test_filters_map_to_the_v1_query(jaeger):
    """Stand-in, API v1: service, operation, tags (JSON), start/end in microseconds, limit."""
    assert ids(f"jaeger+{jaeger.url}?service=helm_agent&operation=POST&attr.http.method=POST&api=v1") == [HELM_ID]
    q = jaeger.requests[-1].query
    assert q["service"] == ["helm_agent"] and q["operation"] == ["POST"]
    assert json.loads(q["tags"][0]) == {"http.method": "POST"}
    assert int(q["end"][0]) - int(q["start"][0]) == 3600 * 10**6  # the default window: one hour, in µs


def test_trace_id_list_fetches_each(jaeger):
    """Stand-in, API v3 and v1: `trace_id=A,B` fetches /api/v3/traces/{id} (/api/traces/{id}) for each."""
    for api in ("v3", "v1"):
        jaeger.requests.clear()
        assert ids(f"jaeger+{jaeger.url}?trace_id={K8S_ID},{HELM_ID.upper()}&api={api}") == [K8S_ID, HELM_ID]
        prefix = "/api/v3/traces/" if api == "v3" else "/api/traces/"
        assert [r.path for r in jaeger.requests] == [prefix + K8S_ID, prefix + HELM_ID]
    traces, errors = load_traces([f"jaeger+{jaeger.url}?trace_id={HELM_ID},{'0' * 31}1"])
    assert [t.trace_id for t in traces] == [HELM_ID]  # the found one is kept …
    assert len(errors) == 1 and "trace not found: " + "0" * 31 + "1" in errors[0].error  # … the other named


def test_start_end_window(jaeger):
    """Stand-in, API v3: start=/end= (RFC 3339) bound the search; the helm trace (newest) is left out."""
    helm_start = jaeger.bank.start_ns(0) // 10**9
    end = datetime.fromtimestamp(helm_start - 1, timezone.utc)
    start = end - timedelta(minutes=10)
    uri = f"jaeger+{jaeger.url}?service=k8s_agent&start={start:%Y-%m-%dT%H:%M:%SZ}&end={end:%Y-%m-%dT%H:%M:%SZ}"
    assert ids(uri) == [K8S_ID]
    q = jaeger.requests[-1].query
    assert q["query.start_time_max"] == [f"{end:%Y-%m-%dT%H:%M:%S}.000000Z"]
    assert ids(uri.replace("k8s_agent", "helm_agent")) == []


def test_pages_by_time_window_and_deduplicates():
    """Stand-in, API v3: 250 traces (made from the real ones with new ids), searches of 50 at most: a full
    answer makes the source search narrower time slices, newest first; every trace is read once."""
    bank = TraceBank(load_templates([HELM, K8S]), 250, spacing=5.0)
    with JaegerStandIn(bank) as server:
        traces = [t for t in ids(f"jaeger+{server.url}?service=helm_agent&since=1h")]
        searches = [r for r in server.requests if r.path == "/api/v3/traces"]
    assert len(traces) == len(set(traces)) == 125  # every other trace is a helm one
    assert len(searches) >= 3 and all(r.query["query.search_depth"] == ["50"] for r in searches)
    assert searches[1].query["query.start_time_min"] > searches[0].query["query.start_time_min"]  # halved
    assert searches[-1].query["query.start_time_max"] < searches[0].query["query.start_time_max"]  # older


def test_limit_stops_early():
    bank = TraceBank(load_templates([HELM]), 40, spacing=5.0)
    with JaegerStandIn(bank) as server:
        assert len(ids(f"jaeger+{server.url}?service=helm_agent&since=1h&limit=7")) == 7
        assert [r.query["query.search_depth"] for r in server.requests] == [["7"]]


# -- the answer's shape ------------------------------------------------------------------------------------

def test_v3_answer_is_split_per_trace():
    """Several traces in one answer (and several streamed ``{"result"}`` objects) → one document per id."""
    bank = TraceBank(load_templates([HELM, K8S]))
    one = {"result": {"resourceSpans": bank.otlp(0) + bank.otlp(1)}}
    streamed = b"".join(json.dumps({"result": {"resourceSpans": bank.otlp(i)}}).encode() + b"\n" for i in (0, 1))
    for body in (json.dumps(one).encode(), streamed, streamed.replace(b"\n", b"")):
        traces = {k: v for r in v3_results(body) for k, v in split_otlp(r).items()}
        assert list(traces) == [HELM_ID, K8S_ID]
        assert sum(len(s["spans"]) for b in traces[HELM_ID] for s in b["scopeSpans"]) == 96


# -- errors ------------------------------------------------------------------------------------------------

def test_v3_search_without_both_bounds_is_refused_by_the_stand_in(jaeger):
    """The stand-in is faithful: Jaeger's 400 when a time bound is missing (the source always sends both)."""
    from agentevals.trace_sources.pull import PullClient

    client = PullClient("jaeger", jaeger.url, retries=0)
    with pytest.raises(SourceError, match=r"400 Bad Request: query\.start_time_min and query\.start_time_max "
                                          r"are required"):
        client.get_json("/api/v3/traces", params={"query.service_name": "helm_agent",
                                                  "query.start_time_min": "2026-01-01T00:00:00Z"})


def test_unknown_service_is_one_line(jaeger):
    """Stand-in, API v3 and v1: nothing found for a service Jaeger does not know → one line naming it."""
    for api in ("v3", "v1"):
        uri = f"jaeger+{jaeger.url}?service=helm_agnet&api={api}"
        traces, errors = load_traces([uri])
        assert not traces and len(errors) == 1
        assert errors[0].error == (f"{uri}: unknown service 'helm_agnet' (Jaeger knows: helm_agent, k8s_agent)")


def test_500_then_success_is_retried(jaeger):
    """Stand-in, API v3: two 500s, then the answer: the trace is read (retries with backoff)."""
    jaeger.fail(500, times=2, body={"error": {"httpCode": 500, "message": "storage down"}})
    assert ids(f"jaeger+{jaeger.url}?service=helm_agent&retries=3") == [HELM_ID]
    assert len([r for r in jaeger.requests if r.path == "/api/v3/traces"]) == 3


def test_429_retry_after_is_honoured(jaeger):
    """Stand-in, API v3: a 429 with Retry-After: 1 → the next attempt waits that second."""
    jaeger.fail(429, retry_after=1, body={"error": {"httpCode": 429, "message": "slow down"}})
    began = time.monotonic()
    assert ids(f"jaeger+{jaeger.url}?service=helm_agent") == [HELM_ID]
    assert time.monotonic() - began >= 0.9  # outcome: it did wait what the server asked


def test_v3_error_body_is_one_line(jaeger):
    """Stand-in, API v3: a 400 with Jaeger's ``{"error": {"httpCode", "message"}}`` → its message, one line."""
    jaeger.fail(400, body={"error": {"httpCode": 400, "message": "malformed parameter query.attributes: x"}})
    _, errors = load_traces([uri := f"jaeger+{jaeger.url}?service=helm_agent"])
    assert [e.error for e in errors] == [f"{uri}: 400 Bad Request: malformed parameter query.attributes: x"]


def test_v1_error_body_is_one_line(jaeger):
    """Stand-in, API v1: ``{"errors": [{"code", "msg"}]}`` → its msg."""
    jaeger.fail(500, body={"data": None, "errors": [{"code": 500, "msg": "index not found"}]})
    _, errors = load_traces([uri := f"jaeger+{jaeger.url}?service=helm_agent&api=v1&retries=0"])
    assert [e.error for e in errors] == [f"{uri}: 500 Internal Server Error: index not found"]


def test_401_names_the_source_through_the_cli(jaeger):
    """Stand-in with auth (a Jaeger behind a token proxy): 401 → one line naming the source, the hint, exit
    code of an unreadable input; with JAEGER_TOKEN set the same URI is read."""
    jaeger.auth = ("Authorization", "Bearer s3cret")
    uri = f"jaeger+{jaeger.url}?service=helm_agent"
    proc = run_cli(uri, env={"JAEGER_TOKEN": ""})
    lines = [line for line in proc.stderr.splitlines() if uri in line]
    assert len(lines) == 1 and "401 Unauthorized" in lines[0] and "JAEGER_TOKEN" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and "s3cret" not in proc.stderr
    ok = run_cli(uri, env={"JAEGER_TOKEN": "s3cret"})
    assert ok.returncode == 0 and outcome(report_of(ok))


def test_hang_ends_in_one_line_and_the_file_beside_keeps_its_results(jaeger):
    """Stand-in, API v3, hanging 5 s on a 1 s deadline with no retry: one line within its deadline; the file
    given beside is scored; the run fails."""
    jaeger.hang(5)
    uri = f"jaeger+{jaeger.url}?service=helm_agent&timeout=1&retries=0"
    began = time.monotonic()
    proc = run_cli(uri, str(HELM), timeout=60)
    assert time.monotonic() - began < 30
    lines = [line for line in proc.stderr.splitlines() if uri in line]
    assert len(lines) == 1 and "no answer" in lines[0], proc.stderr
    report = report_of(proc)
    assert [c["eval_id"] for c in report["cases"]] == ["helm_list_releases"]
    assert report["cases"][0]["metrics"][0]["status"] == "PASSED"
    assert proc.returncode == 2


def test_unreadable_source_exits_2(jaeger):
    """Stand-in, API v3, answering 503 with no retry: the file beside is scored and the run exits 2."""
    jaeger.fail(503, times=5)
    proc = run_cli(f"jaeger+{jaeger.url}?service=helm_agent&retries=0", str(HELM))
    assert outcome(report_of(proc)) and proc.returncode == 2


# -- the URI ------------------------------------------------------------------------------------------------

def test_uri_checks():
    with pytest.raises(ConfigError, match="say service=NAME"):
        source_for("jaeger+http://127.0.0.1:1?since=1h")
    with pytest.raises(ConfigError, match="api=v2"):
        source_for("jaeger+http://127.0.0.1:1?service=a&api=v2")
    with pytest.raises(ConfigError, match="credentials in the URI are refused"):
        source_for("jaeger+http://u:p@127.0.0.1:1?service=a")
    source = source_for("jaeger+https://jaeger.example?service=a")
    assert isinstance(source, JaegerSource) and source.query.base_url == "https://jaeger.example:16686"


def test_window_is_recorded(jaeger):
    ctx = ReadContext()
    source = source_for(f"jaeger+{jaeger.url}?service=helm_agent&since=2h")
    assert len([t for t in source.read(ctx, ReadPosition())]) == 1
    window = ctx.windows[source.label]
    assert window.traces == 1 and window.newest is not None
    assert window.end - window.start == timedelta(hours=2)
    assert abs(window.newest.timestamp() - jaeger.bank.start_ns(0) / 1e9) < 1


def test_unreachable_is_one_line():
    """No Jaeger at all (a port nobody listens on): one line naming the source, no retry with retries=0."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nobody listens there
    uri = f"jaeger+http://127.0.0.1:{port}?service=helm_agent&retries=0&timeout=2"
    traces, errors = load_traces([uri])
    assert not traces and len(errors) == 1
    assert errors[0].error.startswith(f"{uri}: ") and "\n" not in errors[0].error
