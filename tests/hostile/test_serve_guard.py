"""Hostile cases against a real ``agentevals serve`` on loopback: someone else trying to run commands on
the user's machine, read it through DNS rebinding, or find its secrets (issue: "the live side is safe").

Each case names the attack; a command that must not run would create a marker file, which must never
appear. The control (``--allow-code-evaluators``, no Origin) proves the marker does appear when the
command is allowed to run, so these checks can fail.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "packages" / "agentevals-cli" / "tests"))

pytest.importorskip("fastapi", reason="the serve extra is not installed")
pytest.importorskip("mcp", reason="the serve extra is not installed")

from support.live_server import Server, start_server, stop_server
from support.serve_guard import CODE_KINDS, EVIL, HELM, code_configs, evaluate_form, mcp_call, root

TOKEN = "guard-test-token-5a1b9c"
OTLP = HELM.parent / "openai_v2.otlp.json"


@pytest.fixture(scope="module")
def open_server(tmp_path_factory) -> Server:
    """A default serve (loopback, no token), recording into a store of its own."""
    store = tmp_path_factory.mktemp("open") / "runs.sqlite"
    server = start_server("--store", str(store), "--mcp-port", "0")
    yield server
    stop_server(server.process)


@pytest.fixture(scope="module")
def token_server(tmp_path_factory) -> Server:
    """serve with --api-token on the command line (as a user would type it) and MCP over HTTP."""
    store = tmp_path_factory.mktemp("token") / "runs.sqlite"
    server = start_server("--store", str(store), "--mcp-port", "0", "--api-token", TOKEN, token=TOKEN)
    server.store = store
    yield server
    stop_server(server.process)


def _one_line_refusal(response: requests.Response, status: int) -> str:
    assert response.status_code == status, response.text[:500]
    error = response.json()["error"]
    assert "\n" not in error and "Traceback" not in error
    return error


@pytest.mark.parametrize("origin", [{"Origin": EVIL}, {"Origin": "null"}, {"Referer": f"{EVIL}/page.html"},
                                    {"Origin": "http://127.0.0.1:1"}, {"Origin": "http://localhost.evil.example"}],
                         ids=["foreign-origin", "null-origin", "foreign-referer", "other-local-port", "lookalike"])
@pytest.mark.parametrize("route", ["/api/evaluate", "/api/evaluate/stream"])
def test_cross_site_form_with_a_code_judge_config_runs_nothing(open_server, tmp_path, origin, route):
    marker = tmp_path / "marker"
    response = evaluate_form(root(open_server), code_configs(marker)["code_judge"], route=route, headers=origin)
    assert "cross-site request refused" in _one_line_refusal(response, 403)
    assert not marker.exists()


@pytest.mark.parametrize("as_json_field", [False, True], ids=["config_file", "config-field"])
@pytest.mark.parametrize("kind", CODE_KINDS)
def test_uploaded_config_that_runs_code_is_refused_without_the_opt_in(open_server, tmp_path, kind, as_json_field):
    marker = tmp_path / "marker"
    response = evaluate_form(root(open_server), code_configs(marker)[kind], as_json_field=as_json_field)
    error = _one_line_refusal(response, 403)
    assert "--allow-code-evaluators" in error and str(tmp_path) not in error
    assert not marker.exists()


@pytest.mark.parametrize("route", ["/api/evaluate/json", "/api/evaluate/json/stream"])  # 0.11's JSON routes
def test_a_code_config_in_a_0_11_json_evaluation_is_refused_without_the_opt_in(open_server, tmp_path, route):
    marker = tmp_path / "marker"
    body = {"traces": json.loads(OTLP.read_text()), "config": code_configs(marker)["code_judge"]}
    response = requests.post(f"{root(open_server)}{route}", json=body, timeout=60)
    assert "--allow-code-evaluators" in _one_line_refusal(response, 403)
    assert not marker.exists()


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8001", "localhost.evil.example",
                                  "127.0.0.1.nip.io", "[::2]", ""],
                         ids=["name", "name-port", "lookalike", "rebinding-service", "other-v6", "empty"])
@pytest.mark.parametrize("path", ["/api/runs", "/api/config", "/api/sessions", "/", "/runs", "/openapi.json"])
def test_dns_rebinding_reads_nothing(open_server, host, path):
    response = requests.get(f"{root(open_server)}{path}", headers={"Host": host}, timeout=10)
    assert "not a name of this server" in _one_line_refusal(response, 421)


def test_mcp_without_the_token_cannot_run_a_command(token_server, tmp_path):
    marker = tmp_path / "marker"
    config = tmp_path / "eval_config.yaml"
    config.write_text(json.dumps(code_configs(marker)["code_judge"]))  # JSON is YAML
    status, body = mcp_call(token_server.mcp, "evaluate_traces", {"trace_files": [str(config)],
                                                                  "config_file": str(config)})
    assert status == 401 and "API token" in body
    assert not marker.exists()


@pytest.mark.parametrize("argument", ["config_file", "eval_config_file"])  # eval_config_file: 0.11's name
def test_mcp_with_the_token_still_cannot_run_a_command_without_the_opt_in(token_server, tmp_path, argument):
    marker = tmp_path / "marker"
    config = tmp_path / "eval_config.yaml"
    config.write_text(json.dumps(code_configs(marker)["code_judge"]))  # JSON is YAML
    status, body = mcp_call(token_server.mcp, "evaluate_traces",
                            {"trace_files": [str(HELM)], argument: str(config)},
                            headers={"Authorization": f"Bearer {TOKEN}"})
    assert status == 200 and "--allow-code-evaluators" in body["error"] and "\n" not in body["error"]
    assert not marker.exists()


@pytest.mark.parametrize("headers,status", [({"Host": "evil.example"}, 421), ({"Origin": EVIL}, 403)],
                         ids=["foreign-host", "foreign-origin"])
def test_mcp_refuses_foreign_pages_even_with_the_token(token_server, headers, status):
    got, _ = mcp_call(token_server.mcp, "list_metrics", {}, headers={"Authorization": f"Bearer {TOKEN}", **headers})
    assert got == status


@pytest.mark.parametrize("rebound", [False, True], ids=["cross-site", "dns-rebinding"])
def test_a_page_cannot_post_spans_to_the_otlp_receiver(open_server, rebound):
    port = open_server.otlp_http.rsplit(":", 1)[1]
    headers = {"Origin": f"http://rebound.example:{port}", "Host": f"rebound.example:{port}"} if rebound else {
        "Origin": EVIL}
    response = requests.post(f"{open_server.otlp_http}/v1/traces", data=b"\x0a\x00", timeout=10,
                             headers={**headers, "Content-Type": "text/plain"})
    assert "cross-site request refused" in _one_line_refusal(response, 403)


@pytest.mark.parametrize("path", ["//evil.example/", "//evil.example/runs", "/\\evil.example/", "/%2fevil.example/"])
def test_no_open_redirect(token_server, path):
    response = requests.get(f"{root(token_server)}{path}", params={"token": TOKEN}, allow_redirects=False, timeout=10)
    assert response.status_code == 303
    location = response.headers["location"]
    assert location.startswith("/") and not location.startswith(("//", "/\\")), location


def test_the_api_token_is_never_recorded_nor_shown(token_server):
    runs = token_server.get("/runs").json()["data"]
    assert runs and all(TOKEN not in r["command"] for r in runs)
    assert "--api-token" in runs[0]["command"]  # the flag is shown, its value is not
    page = requests.get(f"{root(token_server)}/runs", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    assert page.status_code == 200 and TOKEN not in page.text
    with sqlite3.connect(token_server.store) as db:
        dump = "\n".join(db.iterdump())
    assert TOKEN not in dump


@pytest.mark.parametrize("body,content_type", [(b"a=b", "application/x-www-form-urlencoded"),
                                               (b"csrf_token=forged", "application/x-www-form-urlencoded")],
                         ids=["no-token", "forged-token"])
def test_a_ui_form_post_without_a_valid_csrf_token_is_refused(open_server, body, content_type):
    response = requests.post(f"{root(open_server)}/runs", data=body, headers={"Content-Type": content_type}, timeout=10)
    assert "CSRF token" in _one_line_refusal(response, 403)
