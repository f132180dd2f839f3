"""``serve --pull`` benchmark: sessions scored per second when ``agentevals serve`` pulls N traces from a
Jaeger (API v3) stand-in, with one metric and a run store in a temporary folder.

    hatch run bench:serve-pull    # or: python tools/bench/serve_pull_bench.py [--traces 1000,5000] [--every 1s]

The stand-in (packages/agentevals-cli/tests/standins) runs in its own process and makes each trace lazily
from the shipped helm trace with a new id, conversation and start time. The clock starts when serve says
it is ready and stops when ``/api/health`` reports every trace's session scored; the figure includes the
confirming second read of each new trace (``serve.pull``'s settle). Figures only, no assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_all import EVAL_SET, HELM, ROOT, precompile

STANDINS = ROOT / "packages" / "agentevals-cli" / "tests" / "standins"
SPACING = 0.5


def start_stand_in(traces: int) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, str(STANDINS / "jaeger.py"), "--traces", str(traces),
                             "--spacing", str(SPACING), str(HELM)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def start_serve(source: str, every: str, store: Path) -> tuple[subprocess.Popen[str], str]:
    eval_sets = Path(tempfile.mkdtemp(prefix="serve-pull-bench-sets-"))
    (eval_sets / EVAL_SET.name).write_bytes(EVAL_SET.read_bytes())
    cmd = [sys.executable, "-m", "agentevals", "serve", "-p", "0", "--otlp-http-port", "0", "--otlp-grpc-port", "0",
           "--headless", "--pull", source, "--every", every, "--store", str(store), "--eval-sets", str(eval_sets),
           "-m", "tool_trajectory_avg_score"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.strip().startswith("agentevals API:"):
            return proc, line.split("agentevals API:", 1)[1].strip()
    stop(proc)
    raise SystemExit("serve did not start")


def scored(api: str) -> int:
    with urllib.request.urlopen(f"{api}/health", timeout=10) as answer:
        sources = json.load(answer)["data"]["sources"]
    return sum(s["sessions_scored"] for s in sources)


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def bench(traces: int, every: str, timeout: float) -> tuple[float, int]:
    """Seconds until ``traces`` sessions were scored, and how many were (fewer when ``timeout`` ran out)."""
    stand_in, port = start_stand_in(traces)
    try:
        with tempfile.TemporaryDirectory(prefix="serve-pull-bench-") as folder:
            source = f"jaeger+http://127.0.0.1:{port}?service=helm_agent&since=1d"
            serve, api = start_serve(source, every, Path(folder) / "runs.sqlite")
            try:
                began = time.perf_counter()
                done = 0
                while time.perf_counter() - began < timeout:
                    done = scored(api)
                    if done >= traces:
                        break
                    time.sleep(0.2)
                return time.perf_counter() - began, done
            finally:
                stop(serve)
    finally:
        stand_in.terminate()
        stand_in.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", default="1000", help="comma-separated trace counts (default 1000)")
    parser.add_argument("--every", default="1s", help="serve --every (default 1s)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds allowed per count")
    args = parser.parse_args()
    precompile()
    print(f"{'traces':>8} {'seconds':>9} {'sessions/s':>11}  (serve --pull from a Jaeger v3 stand-in, every {args.every})")
    for count in (int(c) for c in args.traces.split(",")):
        seconds, done = bench(count, args.every, args.timeout)
        note = "" if done >= count else f"  (only {done} scored within {args.timeout:.0f}s)"
        print(f"{count:>8} {seconds:>9.1f} {done / seconds:>11.1f}{note}", flush=True)


if __name__ == "__main__":
    main()
