"""Helpers of the worker tests (Python and JS SDK evaluators): run N copies of a trace through a probe evaluator
that logs ``pid trace_id`` to ``pids.log``, then read which process evaluated which trace.

    result = run_copies(tmp_path, evaluators, options, n=12)
    assert len(set(pids(tmp_path).values())) <= 2
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from agentevals.engine import run_evaluation

from .generate import replicate

__all__ = ["alive", "pids", "run_copies"]


def run_copies(tmp_path: Path, evaluators: Any, options: Any, n: int = 10) -> Any:
    """``n`` copies of the sample trace (``tmp_path/traces.json``) through ``evaluators``: the run's result."""
    return asyncio.run(run_evaluation([replicate(tmp_path / "traces.json", n)], evaluators, options=options))


def pids(tmp_path: Path) -> dict[str, int]:
    """Trace id → pid of the process that evaluated it."""
    lines = (tmp_path / "pids.log").read_text().split("\n")
    return {trace: int(pid) for pid, trace in (line.split() for line in lines if line)}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
