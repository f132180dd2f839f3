"""Generated trace files for tests of many cases: copies of a recorded trace under new trace ids."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

__all__ = ["clone_traces", "settled"]


def clone_traces(source: Path, count: int, target: Path, *, start: int = 1) -> list[str]:
    """Write ``count`` copies of the (single-trace Jaeger) ``source`` into ``target`` as one file, with
    trace ids ``…0001``, ``…0002``, …; returns the ids."""
    trace = json.loads(source.read_text())["data"][0]
    old = trace["traceID"]
    text = json.dumps(trace)
    ids = [f"{i:032x}" for i in range(start, start + count)]
    target.write_text(json.dumps({"data": [json.loads(text.replace(old, new)) for new in ids]}))
    return ids


def settled(path: Path) -> None:
    """Wait until ``path`` last changed longer ago than the run store's racy window (``store._digests.RACY_NS``):
    from then on its stored digest answers for it."""
    from agentevals.store._digests import RACY_NS

    while True:
        st = os.stat(path)
        left = max(st.st_mtime_ns, st.st_ctime_ns) + RACY_NS - time.time_ns()
        if left < 0:
            return
        time.sleep(left / 1e9 + 0.05)
