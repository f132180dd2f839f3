"""Eval-set builder benchmark: ``agentevals evalset from-run`` over a stored run of many cases.

    hatch run bench:evalset                     # or: python tools/bench/evalset_bench.py [--cases 2000] [--repeat 3]

One ``agentevals run`` of ``--cases`` copies of the shipped helm trace (fresh trace and session ids, never
committed) fills a temporary run store; then the builder writes every case, a stratified sample of 100, and the
whole set is validated. Figures only, no assertions: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_all import EVAL_SET, generate, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000, help="Stored cases to build from (default 2000).")
    parser.add_argument("--repeat", type=int, default=3, help="Timed repetitions of each command (median).")
    args = parser.parse_args()
    agentevals = shutil.which("agentevals") or sys.exit("agentevals is not on PATH (hatch run bench:evalset)")
    work = Path(tempfile.mkdtemp(prefix="agentevals-evalset-bench-"))
    try:
        traces, size = generate(args.cases, work)
        store = str(work / "runs.sqlite")
        subprocess.run([agentevals, "run", str(traces), "-e", str(EVAL_SET), "--group-by", "trace", "-q",
                        "--store", store, "-o", "summary"], stdout=subprocess.DEVNULL, check=False)
        print(f"stored run: {args.cases} cases from {size / 1e6:.1f} MB of Jaeger JSON")
        out = work / "all.evalset.json"
        for label, cmd in (
            (f"from-run, all {args.cases} cases", [agentevals, "evalset", "from-run", "-o", str(out), "--store", store]),
            ("from-run --sample 100 --stratify-by tool_trajectory_avg_score",
             [agentevals, "evalset", "from-run", "--sample", "100", "--stratify-by", "tool_trajectory_avg_score",
              "-o", str(work / "sample.evalset.json"), "--store", store]),
            (f"validate the {args.cases}-case set", [agentevals, "evalset", "validate", str(out)]),
        ):
            median, best, peak = timed(cmd, args.repeat)
            print(f"{label}: median {median:.2f}s, best {best:.2f}s, peak RSS {peak} MiB")
        print(f"set written: {out.stat().st_size / 1e6:.1f} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
