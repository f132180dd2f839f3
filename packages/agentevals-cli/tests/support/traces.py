"""Generated trace files for tests of many cases: copies of a recorded trace under new trace ids."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["clone_traces"]


def clone_traces(source: Path, count: int, target: Path, *, start: int = 1) -> list[str]:
    """Write ``count`` copies of the (single-trace Jaeger) ``source`` into ``target`` as one file, with
    trace ids ``…0001``, ``…0002``, …; returns the ids."""
    trace = json.loads(source.read_text())["data"][0]
    old = trace["traceID"]
    text = json.dumps(trace)
    ids = [f"{i:032x}" for i in range(start, start + count)]
    target.write_text(json.dumps({"data": [json.loads(text.replace(old, new)) for new in ids]}))
    return ids
