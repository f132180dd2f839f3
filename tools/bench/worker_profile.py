"""Per-trace CPU of the parallel reader's workers, in one process: parse, build spans, convert, pack.

    hatch run bench:worker                            # 1,000 generated traces: steps, then a cProfile top list
    hatch run bench:worker --traces 300 --top 0       # the figures only
    hatch run bench:worker --file big.json --top 40   # a Jaeger file of your own

Runs what a reader process runs over the slices of a generated Jaeger file (``_parallel._convert_batch``,
each trace packed as ``run`` packs it when no evaluator reads the spans), with the cyclic collector paused
as a worker pauses it, then the run's side of the hand-off (unpickling each batch, unpacking each trace).
Steps are cumulative (each one also frees what it built, as a worker does): ``+build`` is parsing and
building the spans, and so on. Figures only, CPU seconds of this process, best of ``--repeat`` passes.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pickle
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run_all import generate  # the bench's own helper, beside this file


def per_trace(items: list[Any], step: Callable[[Any], Any]) -> float:
    """CPU seconds per item of ``step`` over ``items``, the collector paused (a worker pauses it per batch)."""
    gc.disable()
    try:
        start = time.process_time()
        for item in items:
            step(item)
        return (time.process_time() - start) / max(1, len(items))
    finally:
        gc.enable()
        gc.collect()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=1000)
    parser.add_argument("--file", type=Path, default=None, help="a Jaeger file to read instead of a generated one")
    parser.add_argument("--top", type=int, default=25, help="functions listed by own time (0: no profile)")
    parser.add_argument("--repeat", type=int, default=3, help="passes timed (the best is kept)")
    args = parser.parse_args()

    import orjson
    from agentevals.traces import _collect
    from agentevals.traces.readers import _parallel
    from agentevals.traces.readers.jaeger import read_jaeger_trace

    with tempfile.TemporaryDirectory() as tmp:
        path = args.file or generate(args.traces, Path(tmp))[0]
        slices = _parallel.trace_slices(path)
        n = len(slices)
        fd = os.open(path, os.O_RDONLY)
        try:
            raws = [os.pread(fd, s.end - s.start, s.start).rstrip().rstrip(b",") for s in slices]
        finally:
            os.close(fd)
        convert = partial(_collect.pack_for_worker, False)
        tasks = [(str(path), str(path), i, [(s.start, s.end, False) for s in slices[i:i + _parallel._BATCH]], convert)
                 for i in range(0, n, _parallel._BATCH)]
        blobs = [pickle.dumps(_parallel._convert_batch(task), protocol=pickle.HIGHEST_PROTOCOL) for task in tasks]

        def build(raw: bytes) -> Any:
            return read_jaeger_trace(orjson.loads(raw), str(path), 0)

        steps: dict[str, tuple[list[Any], Callable[[Any], Any]]] = {
            "parse (orjson)": (raws, orjson.loads),
            "+build spans": (raws, build),
            "+convert": (raws, lambda raw: _collect.convert_for_worker(False, build(raw))),
            "+pack": (raws, lambda raw: pickle.dumps(_collect.pack_for_worker(False, build(raw)),
                                                     protocol=pickle.HIGHEST_PROTOCOL)),
            "worker batches (all)": (tasks, lambda task: pickle.dumps(_parallel._convert_batch(task),
                                                                      protocol=pickle.HIGHEST_PROTOCOL)),
            "run: unpickle + unpack": (blobs, lambda blob: [_collect.unpacked(i) for i in pickle.loads(blob)[1]]),
        }
        best: dict[str, float] = {}
        for _ in range(args.repeat):
            for name, (items, step) in steps.items():
                figure = per_trace(items, step) * len(items) / n
                best[name] = min(best.get(name, figure), figure)
        print(f"{n} traces from {path.name} ({path.stat().st_size / n / 1024:.0f} KiB each), "
              f"best of {args.repeat}, CPU per trace:")
        previous = 0.0
        for name, figure in best.items():
            step_note = f"  (this step {(figure - previous) * 1000:6.3f} ms)" if name.startswith("+") else ""
            print(f"  {name:24s} {figure * 1000:7.3f} ms{step_note}")
            previous = figure if name.startswith(("+", "parse")) else previous
        print(f"  {'hand-off per trace':24s} {sum(map(len, blobs)) / n:7.0f} bytes")
        if args.top:
            profile = cProfile.Profile()
            profile.enable()
            for task in tasks:
                pickle.dumps(_parallel._convert_batch(task), protocol=pickle.HIGHEST_PROTOCOL)
            profile.disable()
            pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
