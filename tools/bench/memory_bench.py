"""Engine memory benchmark: N converted traces (the shipped helm trace, converted once, then each copy a
fresh unpickled object with its own trace and session id) streamed through the engine with
``tool_trajectory_avg_score`` and the helm eval set, then the summary and ``-o json`` reports written; the
peak RSS of the process that ran it. Reading and conversion are left out (``hatch run bench:pull`` measures
them with a backend stand-in): this isolates what the engine, the run's results and the reports hold.

    hatch run bench:memory     # or: python tools/bench/memory_bench.py [--traces 10000,100000] [--no-spill]

``--no-spill`` raises the spill thresholds (AGENTEVALS_SPILL_CASES / AGENTEVALS_SPILL_TRACES) past the run's
size: the same run with everything held in memory, for comparison. Figures only, no assertions.
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_all import EVAL_SET, HELM


def child(count: int) -> None:
    """Run in a process of its own: the engine over ``count`` traces, then the reports."""
    from agentevals.api import prepare_run
    from agentevals.engine.run import run_evaluation, run_sync
    from agentevals.report import render_chunks
    from agentevals.trace_sources.base import TraceSource
    from agentevals.trace_sources.resolve import source_for
    from agentevals.traces.model import ConvertedTrace
    from agentevals.traces.readers import ReadPosition

    class Stamped(TraceSource):
        """``count`` copies of one converted trace, each its own object (unpickled), made lazily."""

        name = "stamped"

        def read(self, ctx, position) -> Iterator:
            template = next(t for t in source_for(str(HELM)).read(ctx, ReadPosition())
                            if isinstance(t, ConvertedTrace))
            blob = pickle.dumps(template)
            for i in range(count):
                trace = pickle.loads(blob)
                trace.trace_id = f"{i + 1:032x}"
                trace.session_id = f"session-{i}"
                position.fraction = (i + 1) / count
                yield trace

    evaluators, options, _ = prepare_run(metrics=["tool_trajectory_avg_score"])
    run = run_sync(run_evaluation(Stamped(str(HELM)), evaluators, eval_set=str(EVAL_SET), options=options))
    with tempfile.TemporaryFile("w") as out:
        for fmt in ("summary", "json"):
            out.writelines(render_chunks(run, fmt))
    print(len(run.cases), sum(run.counts().values()), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", default="10000,100000", help="comma-separated trace counts")
    parser.add_argument("--no-spill", action="store_true", help="hold everything in memory (the comparison)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    env = dict(os.environ)
    if args.no_spill:
        env.update(AGENTEVALS_SPILL_CASES=str(10**9), AGENTEVALS_SPILL_TRACES=str(10**9))
    for count in (int(n) for n in args.traces.split(",")):
        began = time.perf_counter()
        proc = subprocess.Popen([sys.executable, __file__, "--child", str(count)], env=env, stdout=subprocess.PIPE,
                                text=True)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak
        wall = time.perf_counter() - began
        assert proc.stdout is not None
        cases = proc.stdout.read().split()
        code = os.waitstatus_to_exitcode(status)
        print(f"engine {count:>7} traces  {'no spill' if args.no_spill else 'spill   '}  {wall:8.1f} s  "
              f"peak RSS {usage.ru_maxrss // 1024:5} MiB  cases {cases[0] if cases else '?'}  (exit {code})", flush=True)


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
