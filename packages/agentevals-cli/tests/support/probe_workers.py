"""Helpers of the worker tests (Python and JS SDK evaluators): run N copies of a trace through a probe evaluator
that logs ``pid trace_id`` to ``pids.log``, then read which process evaluated which trace.

    evaluators, options = probe_evaluators(tmp_path, "probe.py")  # probe.py written there first
    result = run_copies(tmp_path, evaluators, options, n=12)
    assert len(set(pids(tmp_path).values())) <= 2
    assert rows(result)[TARGET].status.value == "ERROR"
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from agentevals.api import prepare_run
from agentevals.engine import run_evaluation

from .generate import replicate

__all__ = ["alive", "pids", "probe_evaluators", "rows", "run_copies"]


def probe_evaluators(tmp_path: Path, filename: str, timeout: float = 60) -> tuple[list, Any]:
    """The evaluators and options of a run through ``tmp_path/filename`` (written by the caller) as one ``code``
    evaluator named ``probe`` with ``timeout``, a case per trace, two at a time."""
    cfg = tmp_path / "eval_config.yaml"
    cfg.write_text(f"evaluators:\n  - {{name: probe, type: code, path: {filename}, timeout: {timeout}}}\n")
    evaluators, options, _ = prepare_run(config=cfg, group_by="trace", concurrency=2)
    return evaluators, options


def run_copies(tmp_path: Path, evaluators: Any, options: Any, n: int = 10) -> Any:
    """``n`` copies of the sample trace (``tmp_path/traces.json``) through ``evaluators``: the run's result."""
    return asyncio.run(run_evaluation([replicate(tmp_path / "traces.json", n)], evaluators, options=options))


def rows(result: Any) -> dict[str, Any]:
    """Case id → its (only) metric result."""
    return {c.case_id: c.metrics[0] for c in result.cases}


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
