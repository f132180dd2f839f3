"""Regenerate docs/img/runs-compare.png: the web UI's /runs/compare page over two runs of the shipped samples
(the second with -t 0.9), as headless Chromium (Debian's chromium package) draws it.

    hatch run python tools/runs_ui_screenshot.py

The UI is the one ``agentevals serve`` mounts, built in this process over a temporary run store.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUN = [sys.executable, "-m", "agentevals", "run", "examples/traces/helm.json", "examples/traces/k8s.json",
       "examples/traces/helm_3.json", "-e", "examples/evalsets/eval_set_helm.json", "-m", "tool_trajectory_avg_score",
       "-m", "response_match_score", "-o", "summary"]


def main() -> None:
    import uvicorn
    from agentevals.serve.http_api import ApiContext, api_app
    from agentevals.serve.sessions import SessionAssembler
    from agentevals.serve.store import MemorySessionStore
    from agentevals.store import RunStore

    work = Path(tempfile.mkdtemp(prefix="agentevals-shot-"))
    try:
        store = str(work / "runs.sqlite")
        for extra in ([], ["-t", "0.9"]):
            subprocess.run([*RUN, "--store", store, *extra], cwd=REPO, capture_output=True, timeout=120)
            time.sleep(1.1)  # run ids sort by the second
        runs = RunStore.open(store)
        older, newer = [r.run_id for r in runs.list_runs(limit=2)][::-1]
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        ctx = ApiContext(assembler=SessionAssembler(), store=MemorySessionStore(), runs=runs)
        server = uvicorn.Server(uvicorn.Config(api_app(ctx), log_level="warning", lifespan="off"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/runs/compare?a={older}&b={newer}"
        sandbox = ["--no-sandbox"] if os.geteuid() == 0 else []
        subprocess.run([shutil.which("chromium") or "chromium", "--headless", *sandbox, "--disable-gpu",
                        "--hide-scrollbars", "--window-size=1100,560", f"--screenshot={work / 'shot.png'}", url],
                       capture_output=True, timeout=60, check=True)
        server.should_exit = True
        thread.join(10)
        runs.close()
        target = REPO / "docs/img/runs-compare.png"
        shutil.move(str(work / "shot.png"), target)
        print(target.relative_to(REPO), target.stat().st_size, "bytes")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
