"""serve's guard against other sites, other names and other people (``serve/_guard``, ``_csrf``, ``_trust``).

Against real ``agentevals serve`` processes: for each state-changing route of the API and of MCP over
HTTP, a foreign Origin, a foreign Host and a missing token are refused while a script (no Origin) and
the server's own pages work; every route of the OpenAPI schema and every UI page answers without a
secret that sits in a trace or in the environment; session ids with ``/`` open. In-process: the Host
policy, the CSRF mechanism of UI forms, and which evaluator types count as running code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse
from support.live_server import EXAMPLES, Server, start_server, stop_server
from support.serve_guard import EVIL, HELM, code_configs, csrf_token, evaluate_form, mcp_call, root

TOKEN = "guard-route-token-77c1"
SECRET = "hunter2-guard-SECRET-4f8a"
"""In the server's environment under a secret-looking name, and in the traces it receives."""
SHAPED = "sk-proj-" + "G" * 24
"""A token shape (no environment variable holds it), also in the traces."""
EVAL_SET = EXAMPLES / "evalsets" / "eval_set_helm.json"


def _agent(exporter, *, city: str, conversation: str | None = None) -> str:
    """A GenAI agent turn (official semconv) that closes its session; returns the session id."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("weather")
    text = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": f"It is sunny in {city}"}]}])
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather",
                  "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text",
                                                                                   "content": f"Weather in {city}?"}]}]),
                  "gen_ai.output.messages": text, "agentevals.session.complete": True}
    if conversation:
        attributes["gen_ai.conversation.id"] = conversation
    with tracer.start_as_current_span("invoke_agent weather", attributes=attributes) as span:
        with tracer.start_as_current_span("execute_tool get_weather", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "call-1", "gen_ai.tool.call.arguments": json.dumps({"city": city}),
                "gen_ai.tool.call.result": f"sunny, key {SHAPED}"}):
            pass
        trace_id = format(span.get_span_context().trace_id, "032x")
    provider.shutdown()
    return conversation or trace_id


def _send(server: Server, **kwargs: Any) -> str:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    headers = {"Authorization": f"Bearer {server.token}"} if server.token else None
    session_id = _agent(OTLPSpanExporter(endpoint=f"{server.otlp_http}/v1/traces", headers=headers), **kwargs)
    server.wait_for_session(lambda s: s["session_id"] == session_id)
    return session_id


@pytest.fixture(scope="module")
def guarded(tmp_path_factory) -> Server:
    """serve with a token, MCP over HTTP, a store of its own, a secret in its environment and two
    sessions whose traces hold the secret (one with '/' in its id)."""
    store = tmp_path_factory.mktemp("guarded") / "runs.sqlite"
    server = start_server("--store", str(store), "--mcp-port", "0", "--api-token", TOKEN, token=TOKEN,
                          env={"GUARD_TEST_API_TOKEN": SECRET})
    try:
        server.sessions = [_send(server, city=f"Paris {SECRET}"),
                           _send(server, city=f"Rome {SECRET}", conversation="team/a b/c%2F")]
    except BaseException:
        stop_server(server.process)
        raise
    yield server
    stop_server(server.process)


AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _post(base: str, route: str, headers: dict[str, str]) -> requests.Response:
    """A valid request to each state-changing route of the API (what a script would send)."""
    eval_set = ("eval_set_file", ("evalset.json", EVAL_SET.read_bytes(), "application/json"))
    trace = ("trace_files", ("helm.json", HELM.read_bytes(), "application/json"))
    files = {"/api/validate/eval-set": [eval_set], "/api/convert": [trace]}.get(route, [trace, eval_set])
    data = {} if route in ("/api/validate/eval-set", "/api/convert") else {
        "config": json.dumps({"metrics": ["tool_trajectory_avg_score"]})}
    return requests.post(f"{base}{route}", files=files, data=data, headers=headers, timeout=120)


API_ROUTES = ["/api/validate/eval-set", "/api/convert", "/api/evaluate", "/api/evaluate/stream"]
COMPAT_ROUTES = ["/api/evaluate/json", "/api/evaluate/json/stream", "/api/streaming/create-eval-set",
                 "/api/streaming/evaluate-sessions", "/api/streaming/prepare-evaluation",
                 "/api/streaming/get-trace", "/api/debug/bundle", "/api/debug/load", "/api/runs",
                 "/api/runs/{run_id}/cancel"]
"""agentevals 0.11's state-changing routes (serve/compat_011_http.py): answered for 0.11 clients, guarded alike."""
UI_FORM_ROUTES: list[str] = ["/runs/{run}/cases/{index}/evalset", "/runs/{run}/cases/{index}/label",
                             "/sessions/{session_id:path}/evalset", "/sessions/{session_id:path}/label", "/upload"]
"""The UI's state-changing routes (forms: ``web_golden``, ``web_upload``). A new one must be added here (and carry
the CSRF field)."""


def test_the_state_changing_routes_are_the_ones_tested(guarded):
    schema = requests.get(f"{root(guarded)}/openapi.json", headers=AUTH, timeout=10).json()
    changing = sorted(path for path, ops in schema["paths"].items() if set(ops) - {"get", "head", "options"})
    assert changing == sorted(API_ROUTES + COMPAT_ROUTES)


def test_every_ui_route_that_changes_state_is_known_and_every_post_form_carries_the_csrf_field():
    from agentevals.serve.http_api import ApiContext, api_app
    from agentevals.serve.sessions import SessionAssembler
    from agentevals.serve.store import MemorySessionStore

    app = api_app(ApiContext(assembler=SessionAssembler(), store=MemorySessionStore(10)))
    ui = sorted(r.path for r in app.routes if not r.path.startswith("/api")
                and set(getattr(r, "methods", None) or ()) - {"GET", "HEAD", "OPTIONS"})
    assert ui == UI_FORM_ROUTES
    templates = Path(__import__("agentevals.serve.web_ui", fromlist=["_HERE"])._HERE)
    for template in templates.glob("*.html"):
        for form in re.findall(r"<form[^>]*>.*?</form>", template.read_text(), re.S):
            if re.search(r"method=\"?post", form, re.I):
                assert "{{ csrf_field }}" in form, f"{template.name}: a POST form without {{{{ csrf_field }}}}"


@pytest.mark.parametrize("route", COMPAT_ROUTES)
def test_0_11_routes_refuse_other_sites_other_names_and_no_token(guarded, route):
    url = f"{root(guarded)}{route.replace('{run_id}', 'some-run')}"
    body = {"session_id": guarded.sessions[1], "traces": {"resourceSpans": []}}

    def post(headers: dict[str, str]) -> requests.Response:
        return requests.post(url, json=body, headers=headers, timeout=120)

    assert post({**AUTH, "Origin": EVIL}).status_code == 403
    assert post({**AUTH, "Referer": f"{EVIL}/x"}).status_code == 403
    assert post({**AUTH, "Host": "evil.example"}).status_code == 421
    assert post({}).status_code == 401
    # A script (no Origin, no Referer) with the token gets past the guard to the route's own answer.
    assert post(AUTH).status_code not in (401, 403, 421)


@pytest.mark.parametrize("route", API_ROUTES)
def test_api_routes_refuse_other_sites_other_names_and_no_token_but_serve_scripts(guarded, route):
    base = root(guarded)
    assert _post(base, route, {**AUTH, "Origin": EVIL}).status_code == 403
    assert _post(base, route, {**AUTH, "Referer": f"{EVIL}/x"}).status_code == 403
    assert _post(base, route, {**AUTH, "Host": "evil.example"}).status_code == 421
    assert _post(base, route, {}).status_code == 401
    script = _post(base, route, AUTH)  # no Origin, no Referer: a script, an SDK, a 0.11 client
    assert script.status_code == 200, script.text[:300]
    own = _post(base, route, {**AUTH, "Origin": base, "Referer": f"{base}/runs"})  # the server's own pages
    assert own.status_code == 200, own.text[:300]
    if route == "/api/evaluate/stream":
        assert "event: done" in script.text


@pytest.mark.parametrize("route", [r for r in UI_FORM_ROUTES if r != "/upload"])  # /upload: its own test below
def test_ui_form_routes_refuse_other_sites_other_names_no_token_and_no_csrf_field(guarded, route):
    base = root(guarded)
    run_id = guarded.get("/runs").json()["data"][0]["run_id"]
    session = quote(guarded.sessions[1], safe="/")  # an id with '/' in it
    page = route.rsplit("/", 1)[0].replace("{run}", run_id).replace("{index}", "0").replace("{session_id:path}", session)
    path = route.replace("{run}", run_id).replace("{index}", "0").replace("{session_id:path}", session)
    browser = requests.Session()
    shown = browser.get(f"{base}{page}", headers=AUTH, timeout=10)
    token = csrf_token(shown.text)
    form = {"csrf_token": token, "verdict": "pass", "labeler": "guard", "new_set": "g", "eval_id": "g"}

    def post(headers: dict[str, str], data: dict[str, str] = form) -> requests.Response:
        return browser.post(f"{base}{path}", data=data, headers=headers, timeout=30, allow_redirects=False)

    assert post({**AUTH, "Origin": EVIL}).status_code == 403
    assert post({**AUTH, "Referer": f"{EVIL}/x"}).status_code == 403
    assert post({**AUTH, "Host": "evil.example"}).status_code == 421
    assert post({}).status_code == 401
    missing = post(AUTH, {k: v for k, v in form.items() if k != "csrf_token"})
    assert missing.status_code == 403 and "CSRF token" in missing.json()["error"]
    assert post(AUTH, {**form, "csrf_token": "0" * 64}).status_code == 403
    assert requests.post(f"{base}{path}", data=form, headers=AUTH, timeout=30).status_code == 403  # no cookie
    # the server's own page, with its field: the route's own answer (a label is stored; no --eval-sets here)
    own = post({**AUTH, "Origin": base})
    assert own.status_code == (303 if route.endswith("/label") else 400), own.text[:300]
    if route.endswith("/label"):  # back to the page it came from, which shows the label
        assert own.headers["location"] == f"{page}?labelled=1#label"
        assert "(guard)" in browser.get(f"{base}{page}", headers=AUTH, timeout=10).text


def test_mcp_over_http_refuses_other_sites_other_names_and_no_token_but_serves_clients(guarded):
    assert mcp_call(guarded.mcp, "list_metrics", {}, headers={**AUTH, "Origin": EVIL})[0] == 403
    assert mcp_call(guarded.mcp, "list_metrics", {}, headers={**AUTH, "Host": "evil.example"})[0] == 421
    assert mcp_call(guarded.mcp, "list_metrics", {})[0] == 401
    assert mcp_call(guarded.mcp, "list_metrics", {}, headers={"Authorization": "Bearer wrong"})[0] == 401
    status, answer = mcp_call(guarded.mcp, "list_metrics", {}, headers=AUTH)
    assert status == 200 and answer["name"]  # the first metric: 0.11's list, one text item per metric


def test_the_official_mcp_client_works_with_the_token(guarded):
    import anyio
    from mcp import ClientSession
    from support.mcp_client import mcp_streams

    async def talk():
        with anyio.fail_after(60):
            async with mcp_streams(guarded.mcp, headers=AUTH) as streams, \
                    ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                return await session.call_tool("summarize_session", {"session_id": guarded.sessions[1]})

    result = anyio.run(talk)
    text = result.content[0].text
    assert "Rome" in text and SECRET not in text and SHAPED not in text


def _walk_paths(guarded: Server) -> list[str]:
    """Every GET route of the OpenAPI schema, filled with real ids, plus every UI page."""
    schema = requests.get(f"{root(guarded)}/openapi.json", headers=AUTH, timeout=10).json()
    run_id = guarded.get("/runs").json()["data"][0]["run_id"]
    a, b = (quote(s, safe="") for s in guarded.sessions)
    prepared = requests.post(f"{root(guarded)}/api/streaming/prepare-evaluation", headers=AUTH, timeout=30,
                             json={"golden_session_id": guarded.sessions[1], "session_ids": [guarded.sessions[0]]})
    filename = prepared.json()["data"]["traceUrls"][0].rsplit("/", 1)[1]  # 0.11's download route
    values = {"session_id": b, "run": run_id, "name": "tool_trajectory_avg_score", "filename": filename}
    queries = {"/api/sessions/compare": f"?a={a}&b={b}", "/api/runs/compare": f"?a={run_id}&b={run_id}"}
    paths = []
    for path, ops in schema["paths"].items():
        if "get" in ops and path != "/stream/ui-updates":  # an endless event stream: read apart
            filled = re.sub(r"\{(\w+)(?::path)?\}", lambda m: values[m.group(1)], path)
            paths.append(filled + queries.get(path, ""))
    paths += ["/", f"/sessions/{quote(guarded.sessions[1], safe='/')}", f"/sessions/{b}", f"/compare?a={a}&b={b}",
              "/trend", "/runs", f"/runs/{run_id}", f"/runs/{run_id}/cases/0", f"/runs/{run_id}/cases/1",
              f"/runs/compare?a={run_id}&b={run_id}", "/runs/trend", "/openapi.json",
              "/live", "/live/failures?metric=tool_trajectory_avg_score&start=0&end=4102444800",
              "/review", f"/review?run={run_id}&show=all", f"/runs/{run_id}/cases/0?queue=0-20-a", "/upload"]
    return paths


def test_no_route_shows_a_secret_from_a_trace_or_the_environment(guarded):
    paths = _walk_paths(guarded)
    assert any("/api/sessions/" in p for p in paths) and len(paths) >= 20
    for path in paths:
        response = requests.get(f"{root(guarded)}{path}", headers=AUTH, timeout=30)
        assert response.status_code == 200, (path, response.status_code, response.text[:300])
        assert SECRET not in response.text and SHAPED not in response.text, path
    with requests.get(f"{root(guarded)}/stream/ui-updates", headers=AUTH, timeout=30, stream=True) as events:
        first = b""
        for chunk in events.iter_content(None):
            first += chunk
            if b"\n\n" in first:
                break
        assert events.status_code == 200 and first.startswith((b"event:", b"data:")) and SECRET.encode() not in first
    session = guarded.get(f"/sessions/{quote(guarded.sessions[0], safe='')}").json()["data"]
    assert "Paris ***" in json.dumps(session)  # the secret was there, and is masked
    trace = HELM.read_text().replace("helm", f"helm {SECRET}", 1)
    for route in API_ROUTES[1:]:  # the posting routes answer with trace text too
        files = [("trace_files", ("t.json", trace.encode(), "application/json"))]
        response = requests.post(f"{root(guarded)}{route}", files=files, headers=AUTH, timeout=120)
        assert response.status_code == 200 and SECRET not in response.text, route


def test_session_ids_with_a_slash_open_on_the_api_and_the_ui(guarded):
    session_id = guarded.sessions[1]
    for shown in (quote(session_id, safe=""), quote(session_id, safe="/")):
        assert guarded.get(f"/sessions/{shown}").json()["data"]["session_id"] == session_id
    page = requests.get(f"{root(guarded)}/", headers=AUTH, timeout=10).text
    link = re.search(r'href="(/sessions/team[^"]*)"', page).group(1)
    opened = requests.get(f"{root(guarded)}{link}", headers=AUTH, timeout=10)
    assert opened.status_code == 200 and "Rome" in opened.text


def test_with_the_opt_in_an_uploaded_code_judge_runs(serve, tmp_path):
    """The control of the hostile cases: the marker file does appear when running code is allowed."""
    server = serve("--no-store", "--allow-code-evaluators")
    marker = tmp_path / "marker"
    response = evaluate_form(root(server), code_configs(marker)["code_judge"])
    assert response.status_code == 200, response.text[:500]
    assert marker.read_text() == "ran"


def test_the_command_line_config_stays_trusted(serve, tmp_path):
    marker = tmp_path / "marker"
    config = tmp_path / "eval_config.yaml"
    config.write_text(json.dumps(code_configs(marker)["code_judge"]))
    server = serve("--no-store", "-c", str(config))
    _send(server, city="Paris")
    assert marker.read_text() == "ran"


def test_allowed_host_and_the_bind_address_are_names_of_the_server(serve):
    server = serve("--no-store", "--allowed-host", "evals.internal", "--allowed-host", "Other.Example:9")
    for host in ("evals.internal", "evals.internal:8001", "other.example", "localhost", "[::1]:1", "127.0.0.1"):
        assert requests.get(f"{root(server)}/api/health", headers={"Host": host}, timeout=10).status_code == 200, host
    assert requests.get(f"{root(server)}/api/health", headers={"Host": "evals.internal.evil"},
                        timeout=10).status_code == 421
    response = _post(root(server), "/api/convert", {"Origin": "https://evals.internal"})
    assert response.status_code == 200


# -- in-process: the policy, the CSRF mechanism, the classification of evaluator types ---------------


@pytest.mark.parametrize("bind,host,allowed", [
    ("127.0.0.1", "localhost:8001", True), ("127.0.0.1", "LOCALHOST", True), ("127.0.0.1", "[::1]:8001", True),
    ("127.0.0.1", "127.0.0.1", True), ("127.0.0.1", "localhost.", True), ("127.0.0.1", "10.0.0.5:8001", False),
    ("127.0.0.1", "evil.example", False), ("127.0.0.1", None, False), ("127.0.0.1", "local host", False),
    ("127.0.0.1", "user@localhost", False), ("127.0.0.1", "localhost/x", False),
    ("10.0.0.5", "10.0.0.5:8001", True), ("0.0.0.0", "10.0.0.5:8001", False), ("::", "[::]", False),
    ("fd00::5", "[fd00::5]:8001", True), ("evals.lan", "evals.lan", True),
])
def test_host_policy(bind, host, allowed):
    from agentevals.serve._guard import HostPolicy

    assert HostPolicy(bind=bind).allows_host(host) is allowed


@pytest.mark.parametrize("origin,host,allowed", [
    ("http://127.0.0.1:8001", "127.0.0.1:8001", True), ("http://localhost:8001/runs?x", "localhost:8001", True),
    ("http://127.0.0.1:8002", "127.0.0.1:8001", False), ("http://localhost:8001", "127.0.0.1:8001", False),
    ("https://127.0.0.1", "127.0.0.1:443", True), ("null", "127.0.0.1:8001", False),
    ("file:///tmp/x.html", "127.0.0.1:8001", False), ("http://evil.example", "127.0.0.1:8001", False),
    ("https://evals.internal:4443", "127.0.0.1:8001", True), ("http://[::1]:8001", "[::1]:8001", True),
    ("http://rebound.example:4318", "rebound.example:4318", False),
])
def test_origin_policy(origin, host, allowed):
    from agentevals.serve._guard import HostPolicy

    assert HostPolicy(extra=["evals.internal"]).allows_origin(origin, host) is allowed


def test_a_malformed_allowed_host_is_a_usage_error():
    from agentevals.errors import ConfigError
    from agentevals.serve.server import ServeOptions

    with pytest.raises(ConfigError, match="--allowed-host"):
        ServeOptions(allowed_hosts=["http://x/y z"]).check()


def _csrf_app(tokens):
    """The smallest real use of the mechanism: a page with a POST form, and the route it posts to."""
    from agentevals.serve._csrf import CSRF_COOKIE, CsrfCheck

    app = FastAPI()
    app.add_middleware(CsrfCheck, tokens=tokens)

    @app.get("/form")
    async def form(request: Request) -> HTMLResponse:
        nonce, fresh = tokens.nonce(request.cookies.get(CSRF_COOKIE))
        response = HTMLResponse(f'<form method="post" action="/label">{tokens.field(nonce)}</form>')
        if fresh:
            tokens.set_cookie(response, nonce)
        return response

    @app.post("/label")
    async def label(request: Request) -> PlainTextResponse:
        form = await request.form()
        return PlainTextResponse(f"labelled {form.get('verdict')}")

    return app


def test_csrf_tokens_guard_a_ui_form():
    from agentevals.serve._csrf import CSRF_COOKIE, CsrfTokens
    from fastapi.testclient import TestClient

    tokens = CsrfTokens()
    browser = TestClient(_csrf_app(tokens))
    page = browser.get("/form")
    token = csrf_token(page.text)
    assert "httponly" in page.headers["set-cookie"].lower() and "samesite=strict" in page.headers["set-cookie"].lower()
    assert browser.get("/form").headers.get("set-cookie") is None  # the cookie is kept, not renewed

    ok = browser.post("/label", data={"csrf_token": token, "verdict": "pass"})
    assert ok.status_code == 200 and ok.text == "labelled pass"
    multipart = browser.post("/label", data={"csrf_token": token, "verdict": "fail"}, files={"f": ("a", b"x")})
    assert multipart.text == "labelled fail"
    assert browser.post("/label", data={"verdict": "x"}, headers={"X-CSRF-Token": token}).status_code == 200

    refused = [browser.post("/label", data={"verdict": "x"}),
               browser.post("/label", data={"csrf_token": "0" * 64, "verdict": "x"}),
               browser.post("/label", content=b"--broken", headers={"content-type": "multipart/form-data; boundary=b"})]
    stranger = TestClient(_csrf_app(tokens))  # another browser: its cookie is not the one the token signs
    stranger.get("/form")
    refused.append(stranger.post("/label", data={"csrf_token": token, "verdict": "x"}))
    restarted = TestClient(_csrf_app(CsrfTokens()))  # a new serve process: old tokens are void
    restarted.cookies.set(CSRF_COOKIE, browser.cookies[CSRF_COOKIE])
    refused.append(restarted.post("/label", data={"csrf_token": token, "verdict": "x"}))
    for response in refused:
        assert response.status_code == 403 and "CSRF token" in response.json()["error"]


def test_the_upload_form_refuses_other_sites_other_names_no_token_and_no_csrf_field(guarded):
    """``/upload`` (``serve/web_upload``): the page's own form, sent with its token and CSRF field, runs (303 to
    the run); each missing or foreign part is refused before anything is evaluated."""
    browser = requests.Session()
    page = browser.get(f"{root(guarded)}/upload", headers=AUTH, timeout=30)
    token = csrf_token(page.text)
    trace = ("trace_files", ("helm.json", HELM.read_bytes(), "application/json"))

    def post(headers: dict[str, str], fields: dict[str, str]) -> requests.Response:
        return browser.post(f"{root(guarded)}/upload", files=[trace], data=fields, headers=headers,
                            allow_redirects=False, timeout=120)

    same = {**AUTH, "Origin": root(guarded)}
    assert post({**AUTH, "Origin": EVIL}, {"csrf_token": token}).status_code == 403
    assert post({**AUTH, "Referer": f"{EVIL}/upload"}, {"csrf_token": token}).status_code == 403
    assert post({**same, "Host": "evil.example"}, {"csrf_token": token}).status_code == 421
    assert post({"Origin": root(guarded)}, {"csrf_token": token}).status_code == 401
    for fields in ({}, {"csrf_token": "0" * 64}, {"csrf_token": ""}):
        refused = post(same, fields)
        assert refused.status_code == 403 and "CSRF" in refused.text
    stranger = requests.post(f"{root(guarded)}/upload", files=[trace], data={"csrf_token": token}, headers=same,
                             allow_redirects=False, timeout=120)  # the token without this browser's cookie
    assert stranger.status_code == 403
    accepted = post(same, {"csrf_token": token})
    assert accepted.status_code == 303 and accepted.headers["location"].startswith("/runs/")


def test_ui_pages_set_the_csrf_cookie(guarded):
    page = requests.get(f"{root(guarded)}/runs", headers=AUTH, timeout=10)
    assert "agentevals_csrf=" in page.headers.get("set-cookie", "")


EXPECTED_CODE_TYPES = {"code", "remote", "python", "code_judge", "code-judge", "code_grader", "code-grader", "script",
                       "javascript"}  # AgentV 5: runs JavaScript with node
"""Evaluator types whose every entry runs a program or a command; the rest run code only in some
entries (llm_judge's prompt command, composite members) or never. A new type must be classified here."""


def test_every_evaluator_type_says_whether_it_runs_code(tmp_path):
    from agentevals.evaluators import EVALUATOR_TYPES
    from agentevals.serve._trust import code_in_entries

    for name in EVALUATOR_TYPES.names():
        refused = code_in_entries([{"name": "x", "type": name}])
        assert (refused is not None) == (name in EXPECTED_CODE_TYPES), (name, refused)
    configs = code_configs(tmp_path / "marker")
    for kind, config in configs.items():
        assert code_in_entries(config["evaluators"]) is not None, kind
    safe = [{"name": "c", "type": "contains", "value": "x"},
            {"name": "j", "type": "llm_judge", "prompt": "Is {{answer}} right?"},
            {"name": "o", "type": "openai_eval", "grader": {"type": "string_check", "operation": "eq",
                                                            "input": "{{sample.output_text}}", "reference": "x"}},
            {"name": "b", "type": "builtin", "metric": "tool_trajectory_avg_score"}]
    assert code_in_entries(safe) is None


def test_an_alias_bomb_config_is_walked_once(tmp_path):
    from agentevals.serve._trust import code_in_config

    lines = ["a0: &a0 [{type: contains, value: x}]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 40)]
    (tmp_path / "c.yaml").write_text("\n".join(lines) + "\nevaluators: [{name: x, type: composite, evaluators: *a39}]\n")
    assert code_in_config(tmp_path / "c.yaml") is None



def test_csrf_check_refuses_a_form_post_declared_over_its_limit_without_reading_it():
    """``CsrfCheck`` answers 413 on a ``Content-Length`` over its limit before reading a byte; a valid form
    under the limit, sent in many small chunks, still reaches the route byte for byte."""
    import asyncio

    from agentevals.serve._csrf import CSRF_COOKIE, CsrfCheck, CsrfTokens

    tokens = CsrfTokens()
    nonce, _ = tokens.nonce(None)
    reached: list[bytes] = []

    async def route(scope, receive, send) -> None:
        message, body = {"more_body": True}, b""
        while message.get("more_body"):
            message = await receive()
            body += message.get("body", b"")
        reached.append(body)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    def post(pieces: list[bytes], declared: int) -> tuple[int, int]:
        """(status, number of body reads) of one form post through a CsrfCheck with a 1000-byte limit."""
        scope = {"type": "http", "method": "POST", "path": "/label", "query_string": b"",
                 "headers": [(b"content-length", str(declared).encode()),
                             (b"content-type", b"application/x-www-form-urlencoded"),
                             (b"cookie", f"{CSRF_COOKIE}={nonce}".encode())]}
        reads, sent = 0, []

        async def receive():
            nonlocal reads
            reads += 1
            return {"type": "http.request", "body": pieces.pop(0), "more_body": bool(pieces)}

        async def send(message) -> None:
            sent.append(message)

        asyncio.run(CsrfCheck(route, tokens=tokens, limit=1000)(scope, receive, send))
        return sent[0]["status"], reads

    assert post([b"x" * 100], declared=5000) == (413, 0)
    form = f"csrf_token={tokens.token(nonce)}&verdict=pass".encode()
    status, reads = post([form[i:i + 2] for i in range(0, len(form), 2)], declared=len(form))
    assert status == 200 and reads > 30 and reached == [form]
