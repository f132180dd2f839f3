"""The Tempo source against a loopback STAND-IN for Grafana Tempo's HTTP API (Tempo 2.x: ``/api/search``
with TraceQL, then ``/api/v2/traces/{id}``: OTLP JSON under ``{"trace": …}``), serving the real shipped
traces (the Tempo export ``tempo_export_with_batches.json``, and the helm/k8s Jaeger traces in the OTLP form
Tempo would have received) moved into the query window — never hand-written results."""

from __future__ import annotations

import time
from urllib.parse import quote

import pytest
from agentevals.trace_sources.resolve import load_traces
from standins._traces import TraceBank, load_templates
from standins.cli import HELM, K8S, TEMPO_EXPORT, outcome, report_of, run_cli
from standins.tempo import TempoStandIn

HELM_ID = "3e289017fe03ffd7c4145316d2eb3d0d"
K8S_ID = "d497c9dd55717f2c5ecb79bda3028993"
TEMPO_ID = "dd547580319ab0312cee07f1def50dad"
HELM_Q = '{ resource.service.name = "helm_agent" }'


def q(traceql: str) -> str:
    return quote(traceql, safe="")


@pytest.fixture
def tempo():
    """Stand-in (Tempo 2.x) with the helm and k8s traces."""
    with TempoStandIn.from_files([HELM, K8S]) as server:
        yield server


def ids(uri: str) -> list[str]:
    traces, errors = load_traces([uri])
    assert not errors, errors
    return [t.trace_id for t in traces]


def test_parity_with_the_files_through_the_cli():
    """Stand-in, Tempo 2.x API: `agentevals run` on `tempo+http://…?q={}` gives the per-case results of the
    files it was built from: the helm trace (Jaeger JSON, served as the OTLP Tempo would hold) and the real
    Tempo export."""
    with TempoStandIn.from_files([HELM, TEMPO_EXPORT]) as tempo:
        uri = f"tempo+{tempo.url}?q={q('{}')}&since=2h"
        from_files, from_tempo = run_cli(str(HELM), str(TEMPO_EXPORT)), run_cli(uri)
    assert from_files.returncode == from_tempo.returncode, from_tempo.stderr
    expected = sorted(outcome(report_of(from_files)), key=lambda c: c["case_id"])
    assert any(c["eval_id"] == "helm_list_releases" and c["metrics"][0]["status"] == "PASSED" for c in expected)
    assert len(expected) == 2
    assert sorted(outcome(report_of(from_tempo)), key=lambda c: c["case_id"]) == expected


def test_traceql_and_window_reach_tempo(tempo):
    """Stand-in, Tempo 2.x: q (TraceQL), limit, start/end in Unix seconds, spss; then each trace by id."""
    assert ids(f"tempo+{tempo.url}?q={q(HELM_Q)}&since=1h&spss=3") == [HELM_ID]
    search, fetch = tempo.requests
    assert search.path == "/api/search" and search.query["spss"] == ["3"] and search.query["limit"] == ["500"]
    assert int(search.query["end"][0]) - int(search.query["start"][0]) in (3600, 3601)
    assert fetch.path == f"/api/v2/traces/{HELM_ID}"
    both = '{ name = "POST /" && span.http.method = "POST" }'
    assert ids(f"tempo+{tempo.url}?q={q(both)}")
    assert ids(f"tempo+{tempo.url}?q={q(HELM_Q.replace('helm_agent', 'nobody'))}") == []


def test_window_bisects_a_full_page_and_reads_each_trace_once():
    """Stand-in, Tempo 2.x, 60 traces (made from the real ones with new ids) and limit=25 pages: Tempo has no
    cursor nor order, so the source splits the window until a search returns less than a page."""
    with TempoStandIn(TraceBank(load_templates([HELM, K8S]), 60, spacing=20.0)) as server:
        import agentevals.trace_sources.tempo as tempo_module

        page, tempo_module.PAGE = tempo_module.PAGE, 25
        try:
            got = ids(f"tempo+{server.url}?since=1h")
        finally:
            tempo_module.PAGE = page
        fetches = [r for r in server.requests if r.path.startswith("/api/v2/traces/")]
    assert len(got) == len(set(got)) == 60 and len(fetches) == 60


def test_limit(tempo):
    assert len(ids(f"tempo+{tempo.url}?since=1h&limit=2")) == 2
    assert tempo.requests[0].query["limit"] == ["2"]


def test_tenant_sets_x_scope_orgid():
    """Stand-in in multi-tenant mode: without `tenant=` a 401 naming the source; with it, the traces."""
    with TempoStandIn.from_files([HELM], tenant="team-a") as server:
        traces, errors = load_traces([uri := f"tempo+{server.url}?since=1h"])
        assert not traces and [e.error for e in errors] == [f"{uri}: 401 Unauthorized: no org id (set tenant= "
                                                            "(X-Scope-OrgID) or TEMPO_TOKEN)"]
        assert ids(f"tempo+{server.url}?since=1h&tenant=team-a") == [HELM_ID]
        assert server.requests[-1].headers["X-Scope-OrgID"] == "team-a"
        assert ids(f"tempo+{server.url}?since=1h&tenant=team-b") == []


def test_bad_traceql_is_one_line_through_the_cli(tempo):
    """Stand-in, Tempo 2.x: a bad TraceQL is Tempo's 400 with a text body → one line naming the source and
    quoting Tempo's message; no traceback."""
    uri = f"tempo+{tempo.url}?q={q('{ resource.service.name = helm_agent }')}&since=1h"
    proc = run_cli(uri)
    lines = [line for line in proc.stderr.splitlines() if uri in line]
    assert len(lines) == 1 and "400 Bad Request: invalid TraceQL query: parse error at line 1" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and proc.returncode != 0


def test_500_then_success_and_429_retry_after(tempo):
    """Stand-in, Tempo 2.x: a 500 on the search and a 429 (Retry-After: 1) on the fetch are retried."""
    tempo.fail(500, body="internal error\n", path="/api/search")
    tempo.fail(429, retry_after=1, body="rate limited\n", path="/api/v2/traces/")
    began = time.monotonic()
    assert ids(f"tempo+{tempo.url}?q={q(HELM_Q)}") == [HELM_ID]
    assert time.monotonic() - began >= 0.9
    assert [r.path for r in tempo.requests] == ["/api/search", "/api/search", f"/api/v2/traces/{HELM_ID}",
                                                f"/api/v2/traces/{HELM_ID}"]


def test_hang_ends_in_one_line_and_the_file_beside_keeps_its_results(tempo):
    """Stand-in, Tempo 2.x, hanging past a 1 s deadline, no retry: one line; the file beside is scored."""
    tempo.hang(5)
    uri = f"tempo+{tempo.url}?timeout=1&retries=0"
    proc = run_cli(uri, str(HELM), timeout=60)
    lines = [line for line in proc.stderr.splitlines() if uri in line]
    assert len(lines) == 1 and "no answer within 1s" in lines[0], proc.stderr
    assert [c["eval_id"] for c in report_of(proc)["cases"]] == ["helm_list_releases"]
    assert proc.returncode != 0


def test_token_from_the_environment(tempo, monkeypatch):
    """Stand-in behind a bearer-token gateway: 401 without TEMPO_TOKEN (one line, the hint), read with it;
    the token never appears in the error."""
    tempo.auth = ("Authorization", "Bearer t0ken")
    monkeypatch.delenv("TEMPO_TOKEN", raising=False)
    _, errors = load_traces([uri := f"tempo+{tempo.url}?since=1h&retries=0"])
    assert [e.error for e in errors] == [f"{uri}: 401 Unauthorized: Unauthorized (set tenant= (X-Scope-OrgID) "
                                         "or TEMPO_TOKEN)"]
    monkeypatch.setenv("TEMPO_TOKEN", "t0ken")
    assert sorted(ids(uri)) == sorted([HELM_ID, K8S_ID])
