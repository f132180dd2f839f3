"""Throughput of ``--executor ray`` against the local executor on this machine, and Ray's per-batch cost.

    hatch run bench:ray                 # or: python tools/bench/ray_bench.py [--traces 1000] [--cpus N]

Needs the ``ray`` extra. Starts a local Ray instance (loopback, no dashboard; through agentevals' own
``connect`` unless ``--cpus`` differs from this machine's, so that runs keep their actors as they would in
a process of agentevals) and shuts it down. Inputs
are generated from the shipped helm trace (never committed); the evaluators are a builtin metric
(``tool_trajectory_avg_score``) and the SDK example evaluator (``examples/evaluators/response_quality.py``,
one process per case). Prints figures only, and whether the two executors gave the same JSON (timings
aside). The machine is shared: read the figures as orders of magnitude.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run_all import EVAL_SET, EXAMPLES, generate

_TIMES = {"duration_ms", "started_at", "finished_at"}
"""When things ran: they differ between any two runs (the engine tests compare runs without them too)."""


def comparable(run: object) -> object:
    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in _TIMES}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(run.model_dump(mode="json"))  # type: ignore[attr-defined]


def timed_run(traces: Path, config: Path, executor: str) -> tuple[float, object]:
    import agentevals

    start = time.perf_counter()
    run = agentevals.evaluate([str(traces)], eval_set=EVAL_SET, config=config, executor=executor)
    return time.perf_counter() - start, run


def batch_overhead(ray: object, calls: int) -> tuple[float, float]:
    """Median round trip (ms) of an empty batch to an evaluation actor, one at a time and pipelined."""
    from agentevals.engine.options import RunOptions
    from agentevals.engine.ray_pool import EvalWorker

    actor = ray.remote(EvalWorker).options(num_cpus=1).remote(([], RunOptions(concurrency=1), None, {}, None))  # type: ignore[attr-defined]
    ray.get(actor.run_batch.remote([]))  # type: ignore[attr-defined]
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        ray.get(actor.run_batch.remote([]))  # type: ignore[attr-defined]
        samples.append(time.perf_counter() - start)
    start = time.perf_counter()
    ray.get([actor.run_batch.remote([]) for _ in range(calls)])  # type: ignore[attr-defined]
    pipelined = (time.perf_counter() - start) / calls
    ray.kill(actor)  # type: ignore[attr-defined]
    return statistics.median(samples) * 1000, pipelined * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=1000)
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 1, help="CPUs of the local Ray instance")
    args = parser.parse_args()
    try:
        import ray
    except ImportError:
        raise SystemExit('ray_bench needs the ray extra: pip install "agentevals-cli[ray]"') from None
    from agentevals.engine.ray_pool import batch_cases

    print(f"agentevals --executor ray vs local (python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"ray {ray.__version__}, {args.traces} traces, batches of {batch_cases(args.traces, args.cpus)} cases)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        traces, size = generate(args.traces, folder)
        (folder / "evaluators").mkdir()
        shutil.copy(EXAMPLES / "evaluators" / "response_quality.py", folder / "evaluators")
        builtin = folder / "builtin.yaml"
        builtin.write_text("evaluators:\n  - name: tool_trajectory_avg_score\n    type: builtin\n")
        both = folder / "eval_config.yaml"
        both.write_text(builtin.read_text() + "  - name: response_quality\n    type: code\n"
                        "    path: evaluators/response_quality.py\n")

        start = time.perf_counter()
        if args.cpus == os.cpu_count():  # started by agentevals, as a run would: its actors are kept between runs
            from agentevals.execution.ray_executor import connect

            connect()
        else:
            ray.init(num_cpus=args.cpus, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
                     configure_logging=False)
        print(f"  ray start (local instance, {args.cpus} CPUs)            {time.perf_counter() - start:7.1f} s")
        try:
            rtt, pipelined = batch_overhead(ray, 200)
            print(f"  per-batch overhead (empty batch round trip)      {rtt:7.2f} ms   pipelined {pipelined:5.2f} ms")
            one, _ = generate(1, folder)
            fixed, _ = timed_run(one, both, "ray")
            print(f"  fixed cost of a ray run (1 trace: actors up, read, close) {fixed:7.2f} s")
            for label, config in (("builtin metric only        ", builtin), ("builtin + SDK evaluator    ", both)):
                local_s, local = timed_run(traces, config, "local")
                ray_s, remote = timed_run(traces, config, "ray")
                same = "same JSON" if comparable(local) == comparable(remote) else "RESULTS DIFFER"
                steady = args.traces / max(ray_s - fixed, 1e-9)
                print(f"  {label} local {local_s:7.2f} s ({args.traces / local_s:6.0f} traces/s)   "
                      f"ray {ray_s:7.2f} s ({args.traces / ray_s:6.0f} traces/s, {steady:4.0f}/s past the fixed cost)"
                      f"   {same}")
        finally:
            from agentevals.execution.ray_executor import disconnect

            if not disconnect():
                ray.shutdown()
    print(f"  input: {size / 1e6:.1f} MB Jaeger JSON; ray times include creating the run's actors and reading "
          "the input on the cluster")


if __name__ == "__main__":
    main()
