"""Helpers for the serve guard tests: configs that would run a command (leaving a marker file), a raw
MCP-over-HTTP client with chosen headers, and multipart posts as a browser form would send them."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import requests
import yaml

from .live_server import EXAMPLES

HELM = EXAMPLES / "traces" / "helm.json"
EVIL = "http://evil.example"


def writer(marker: Path) -> list[str]:
    """argv that creates ``marker`` (and prints a passing result): proof that a command ran."""
    code = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran'); print('{{\"score\": 1}}')"
    return [sys.executable, "-c", code]


CODE_KINDS = ("code_judge", "code-grader", "script", "code", "python", "remote", "llm_judge prompt command",
              "composite code_judge aggregator", "composite code_judge member", "base_url (keys sent elsewhere)")


def code_configs(marker: Path) -> dict[str, dict[str, Any]]:
    """One config per ``CODE_KINDS``: each way an uploaded config could run something on the server
    (each would create ``marker``; the ``python`` and ``code`` files are written beside it)."""
    module = marker.parent / "evil_module.py"
    module.write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
                      "class Evil:\n    def filter_traces(self, t): return t\n    def __call__(self, t): return {}\n")
    program = marker.parent / "evil_program.py"
    program.write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n")
    return {
        "code_judge": {"evaluators": [{"name": "judge", "type": "code_judge", "command": writer(marker)}]},
        "code-grader": {"evaluators": [{"name": "judge", "type": "code-grader", "command": writer(marker)}]},
        "script": {"evaluators": [{"name": "judge", "type": "script", "script": writer(marker)}]},
        "code": {"evaluators": [{"name": "prog", "type": "code", "path": str(program)}]},
        "python": {"evaluators": [{"name": "py", "type": "python", "path": f"{module}:Evil"}]},
        "remote": {"evaluators": [{"name": "r", "type": "remote", "source": "github", "ref": "evaluators/x/x.py"}]},
        "llm_judge prompt command": {"evaluators": [{"name": "j", "type": "llm_judge",
                                                     "prompt": {"command": writer(marker)}}]},
        "composite code_judge aggregator": {"evaluators": [{
            "name": "c", "type": "composite", "evaluators": [{"name": "m", "type": "contains", "value": "x"}],
            "aggregator": {"type": "code_judge", "command": writer(marker)}}]},
        "composite code_judge member": {"evaluators": [{
            "name": "c", "type": "composite", "aggregator": {"type": "weighted_average"},
            "evaluators": [{"name": "m", "type": "code_judge", "command": writer(marker)}]}]},
        "base_url (keys sent elsewhere)": {"evaluators": [{"name": "j", "type": "llm_judge",
                                                           "base_url": EVIL, "api_key_env": "HOME"}]},
    }


def root(server: Any) -> str:
    """``http://127.0.0.1:PORT`` of a ``Server`` (its ``api`` ends in ``/api``)."""
    return server.api.removesuffix("/api")


_CSRF_FIELD = re.compile(r'name="csrf_token" value="([0-9a-f]+)"')
_MISSING = object()


def csrf_token(html: str, default: Any = _MISSING) -> str:
    """The CSRF token of the first form on a page (its hidden ``csrf_token`` field); ``default`` when the page has
    none, else an AssertionError::

        token = csrf_token(session.get(f"{root(server)}/upload", timeout=30).text)
        session.post(f"{root(server)}/upload", data={"csrf_token": token, ...})
    """
    found = _CSRF_FIELD.search(html)
    if found:
        return found.group(1)
    if default is _MISSING:
        raise AssertionError(f"no csrf_token field in the page: {html[:500]!r}")
    return default


def evaluate_form(base: str, config: dict[str, Any], *, route: str = "/api/evaluate", as_json_field: bool = False,
                  headers: dict[str, str] | None = None) -> requests.Response:
    """POST to ``base`` + ``route`` a multipart form (what a cross-site ``<form enctype=multipart/form-data>`` sends) with the
    helm trace and ``config`` as an eval_config.yaml upload (or as the JSON ``config`` field)."""
    files: list[tuple[str, Any]] = [("trace_files", ("helm.json", HELM.read_bytes(), "application/json"))]
    data = {}
    if as_json_field:
        data["config"] = json.dumps(config)
    else:
        files.append(("config_file", ("eval_config.yaml", yaml.safe_dump(config).encode(), "application/x-yaml")))
    return requests.post(f"{base}{route}", files=files, data=data, headers=headers or {}, timeout=60)


def mcp_call(url: str, tool: str, arguments: dict[str, Any], *, headers: dict[str, str] | None = None,
             ) -> tuple[int, Any]:
    """One MCP tool call over Streamable HTTP with chosen headers: (HTTP status of the first refused
    step, or 200) and the tool's JSON answer (None when refused)."""
    base = {"content-type": "application/json", "accept": "application/json, text/event-stream", **(headers or {})}

    def post(body: dict[str, Any], extra: dict[str, str]) -> requests.Response:
        return requests.post(url, data=json.dumps(body), headers={**base, **extra}, timeout=60)

    init = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "guard-test", "version": "1"}}}, {})
    if init.status_code != 200:
        return init.status_code, init.text
    session = {"mcp-session-id": init.headers["mcp-session-id"]} if "mcp-session-id" in init.headers else {}
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    answer = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}},
                  session)
    if answer.status_code != 200:
        return answer.status_code, answer.text
    message = _jsonrpc(answer)
    content = message["result"]["content"][0]["text"]
    return 200, json.loads(content)


def _jsonrpc(response: requests.Response) -> dict[str, Any]:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and '"id"' in line:
                return json.loads(line[5:])
        raise AssertionError(f"no JSON-RPC answer in {response.text[:500]!r}")
    return response.json()
