"""Helpers for the custom evaluator tests (imported by conftest and the test modules)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from agentevals.evaluators.base import EvalContext

SEED_JS = """\
// evaluators/tool_check.js
const input = JSON.parse(require("fs").readFileSync("/dev/stdin", "utf8"));
let score = 1.0;
for (const inv of input.invocations) {
  if (inv.intermediate_steps.tool_calls.length === 0) {
    score -= 0.5;
  }
}
console.log(JSON.stringify({
  score: Math.max(0, score),
  per_invocation_scores: [],
}));
"""
"""The seed's JavaScript evaluator, verbatim."""


def tree_spawner(pidfile: Path) -> str:
    """Source of a Python evaluator that starts a sleeping grandchild, records both pids, and hangs."""
    return f"""\
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open({str(pidfile)!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
time.sleep(60)
"""


def wait_until_gone(pidfile: Path, seconds: float = 30.0) -> list[int]:
    """The pids recorded by ``tree_spawner`` that are still alive after ``seconds``."""
    import time

    pids = [int(p) for p in pidfile.read_text().split()]
    deadline = time.monotonic() + seconds
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def evaluate(evaluator: Any, context: EvalContext) -> Any:
    """One evaluation, then the evaluator's resources (persistent workers) released, as the runner does."""

    async def once() -> Any:
        try:
            return await evaluator.evaluate(context)
        finally:
            await evaluator.aclose()

    return asyncio.run(once())


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting to be reaped counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state != "Z"


class FileServer:
    """A loopback HTTP server serving ``files`` (URL path → bytes); 404 for anything else."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(self.path)
                body = server.files.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def add(self, path: str, content: str | bytes) -> None:
        self.files[path] = content.encode() if isinstance(content, str) else content

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def result_json(**fields: Any) -> str:
    return json.dumps(fields)
