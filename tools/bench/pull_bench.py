"""Pull-source benchmark: N traces streamed from a Jaeger (API v3) or Tempo stand-in through
``agentevals run 'jaeger+http://…'`` with one metric and ``--no-store``: wall time, traces/s and the run
process's peak RSS. Bounded memory is the point: compare ``--traces 10000`` with ``--traces 100000``.

    hatch run bench:pull    # or: python tools/bench/pull_bench.py [--traces 10000,100000] [--backends jaeger,tempo]

The stand-in (packages/agentevals-cli/tests/standins) runs in its own process, so its memory is not
counted; it makes each trace lazily from the shipped helm trace with a new id and start time (nothing is
held in memory there either). Figures only, no assertions: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_all import EVAL_SET, HELM, ROOT, precompile

STANDINS = ROOT / "packages" / "agentevals-cli" / "tests" / "standins"
SPACING = 0.5
"""Seconds between trace starts: 100,000 traces span 14 hours (the URI reads the last day); about 8 traces
are in flight at any instant (a helm trace lasts 4 s), which is what a Jaeger time slice has to hold."""


def start_stand_in(backend: str, traces: int) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, str(STANDINS / f"{backend}.py"), "--traces", str(traces),
                             "--spacing", str(SPACING), str(HELM)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def uri(backend: str, port: int) -> str:
    if backend == "jaeger":
        return f"jaeger+http://127.0.0.1:{port}?service=helm_agent&since=1d"
    traceql = quote('{ resource.service.name = "helm_agent" }', safe="")
    return f"tempo+http://127.0.0.1:{port}?q={traceql}&since=1d"


def run(source: str, output: str) -> tuple[float, int, int]:
    """Wall time (s), peak RSS (MiB) and exit code of one ``agentevals run``."""
    cmd = [sys.executable, "-m", "agentevals", "run", source, "-m", "tool_trajectory_avg_score",
           "--eval-set", str(EVAL_SET), "--no-store", "-o", output, "--no-color"]
    with tempfile.TemporaryFile() as err:
        began = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak
        wall = time.perf_counter() - began
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            err.seek(0)
            raise SystemExit(f"{source} failed ({code}): {err.read()[-800:].decode()}")
    return wall, usage.ru_maxrss // 1024, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", default="10000,100000", help="comma-separated trace counts")
    parser.add_argument("--backends", default="jaeger,tempo")
    parser.add_argument("--output", default="summary", help="the report format (summary, table, json)")
    args = parser.parse_args()
    precompile()
    for backend in args.backends.split(","):
        for count in (int(n) for n in args.traces.split(",")):
            stand_in, port = start_stand_in(backend, count)
            try:
                wall, peak, code = run(uri(backend, port), args.output)
            finally:
                stand_in.terminate()
                stand_in.wait(10)
            print(f"pull {backend:6} {count:>7} traces  -o {args.output:7}  {wall:8.1f} s  {count / wall:7.0f} "
                  f"traces/s  peak RSS {peak:5} MiB  (exit {code})", flush=True)


if __name__ == "__main__":
    main()
