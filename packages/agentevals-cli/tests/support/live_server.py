"""Live-mode test helpers: a real ``agentevals serve`` subprocess on ephemeral loopback ports, and a
loopback OTLP receiver that records what it is sent."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

REPO = Path(__file__).resolve().parents[4]
EXAMPLES = REPO / "examples"
DATA = Path(__file__).resolve().parents[1] / "data"


@dataclass
class Server:
    """A running ``agentevals serve``: its process, addresses and output."""

    process: subprocess.Popen
    api: str
    otlp_http: str
    otlp_grpc: str
    mcp: str | None
    token: str | None = None

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return requests.get(f"{self.api}{path}", headers=headers, timeout=10, **kwargs)

    def wait_for_session(self, predicate: Callable[[dict], bool], timeout: float = 30.0) -> dict:
        """The first evaluated session matching ``predicate``; fails after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        seen: list = []
        while time.monotonic() < deadline:
            seen = self.get("/sessions", params={"limit": 200}).json()["data"]
            for s in seen:
                if s["status"] in ("evaluated", "error") and predicate(s):
                    return s
            time.sleep(0.1)
        raise AssertionError(f"no matching session within {timeout}s; sessions: {seen}")


def start_server(*args: str, env: dict[str, str] | None = None, token: str | None = None,
                 default_otlp_ports: bool = False) -> Server:
    """Start ``agentevals serve`` with ephemeral ports (OTLP on 4318/4317 with ``default_otlp_ports``);
    waits (30 s at most) for its announced addresses."""
    ports = [] if default_otlp_ports else ["--otlp-http-port", "0", "--otlp-grpc-port", "0"]
    command = [sys.executable, "-m", "agentevals", "serve", "-p", "0", *ports, *args]
    errors = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: a chatty server can never block on it
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True, cwd=REPO,
                               env={**os.environ, **(env or {})}, start_new_session=True)
    lines: list[str] = []
    deadline = time.monotonic() + 30
    addresses: dict[str, str] = {}
    printed: queue.Queue[str] = queue.Queue()  # read on a thread: the deadline holds even if nothing is printed
    reader = threading.Thread(target=lambda: [printed.put(line) for line in iter(process.stdout.readline, "")],
                              daemon=True)
    reader.start()
    process.reader = reader  # joined by stop_server once the process has exited
    process.errors = errors
    while time.monotonic() < deadline and process.poll() is None:
        try:
            line = printed.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            break
        lines.append(line)
        for key, label in (("api", "agentevals API:"), ("otlp_http", "OTLP HTTP:"), ("otlp_grpc", "OTLP gRPC:"),
                           ("mcp", "MCP:")):
            if line.strip().startswith(label):
                addresses[key] = line.split(label, 1)[1].strip()
        if line.strip() == "" and "otlp_grpc" in addresses:
            break
    if "otlp_grpc" not in addresses:
        errors.seek(0)
        lines.append(errors.read() if process.poll() is not None else "(no output within 30 s)")
        stop_server(process)
        raise AssertionError(f"serve did not start: {''.join(lines)}")
    return Server(process, addresses["api"], addresses["otlp_http"], addresses["otlp_grpc"], addresses.get("mcp"),
                  token)


def stop_server(process: subprocess.Popen) -> None:
    """SIGTERM its process group (only what this test started), then SIGKILL after 15 s."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)
    reader = getattr(process, "reader", None)
    if reader is not None:
        reader.join(5)  # it ends at the pipe's end of file, now that the process has exited
    for stream in (process.stdout, getattr(process, "errors", None)):
        if stream:
            stream.close()


def agentevals(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``agentevals ARGS`` in a subprocess from the repository root (text output captured)."""
    return subprocess.run([sys.executable, "-m", "agentevals", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def listed_runs(store: str) -> list[dict]:
    """``agentevals runs list --json --store STORE``, parsed."""
    result = agentevals("runs", "list", "--json", "--store", store)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)
