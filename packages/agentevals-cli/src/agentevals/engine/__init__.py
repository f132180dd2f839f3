"""The engine: one stream of traces in, case results out (``run_evaluation``), through a declared
``RunPool`` (``LocalPool`` here, the Ray pool across a cluster).

The pipeline, one module per step::

    trace_sources.resolve   inputs → converted traces (agentevals.trace_sources)
    engine.read             … in a background thread, while evaluation runs
    engine.grouping         traces → cases (Grouper, LoneCase)
    engine.pool             (case × evaluator) work under one bound (RunPool, LocalPool, evaluate_cases)
    engine.evaluate         one pair: eval-case matching, deadline, ERROR rows
    engine.output           finished cases → consumers, in output order
    engine.executors        run-level executors (RUN_EXECUTORS: local, ray)
    engine.run              run_evaluation: the steps above, top to bottom

Example:
    ```python
    from agentevals.engine import RunOptions, run_evaluation, run_sync

    run = run_sync(run_evaluation(["traces/helm.json"], evaluators, options=RunOptions(concurrency=4)))
    ```

Names are imported on first use (PEP 562), so ``import agentevals.engine.options`` stays cheap and the
evaluators can read ``RunOptions`` without loading the engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..trace_sources import TraceInput, iter_traces, load_traces
    from .consumers import ResultReuse, RunConsumer, emit
    from .evaluate import DEFAULT_TIMEOUT
    from .executors import RUN_EXECUTORS, LocalExecutor, RunExecutor, check_executor, pool_for
    from .grouping import Case, Stored, group_traces
    from .options import RunOptions
    from .output import Output
    from .pool import GivenResults, LocalPool, PoolFactory, RunPool, TraceHandle, evaluate_cases
    from .run import run_evaluation, run_sync

__all__ = ["DEFAULT_TIMEOUT", "RUN_EXECUTORS", "Case", "GivenResults", "LocalExecutor", "LocalPool", "Output",
           "PoolFactory", "ResultReuse", "RunConsumer", "RunExecutor", "RunOptions", "RunPool", "Stored",
           "TraceHandle", "TraceInput", "check_executor", "emit", "evaluate_cases", "group_traces", "iter_traces",
           "load_traces", "pool_for", "run_evaluation", "run_sync"]

_PUBLIC = {
    "DEFAULT_TIMEOUT": "evaluate", "RUN_EXECUTORS": "executors", "Case": "grouping", "GivenResults": "pool",
    "LocalExecutor": "executors", "LocalPool": "pool", "Output": "output", "PoolFactory": "pool",
    "ResultReuse": "consumers", "RunConsumer": "consumers", "RunExecutor": "executors", "RunOptions": "options",
    "RunPool": "pool", "Stored": "grouping", "TraceHandle": "pool", "TraceInput": "..trace_sources",
    "check_executor": "executors", "emit": "consumers", "evaluate_cases": "pool", "group_traces": "grouping",
    "iter_traces": "..trace_sources", "load_traces": "..trace_sources", "pool_for": "executors",
    "run_evaluation": "run", "run_sync": "run",
}
_LEGACY = {  # private names of the former ``agentevals.runner`` (``agentevals.runner`` aliases this package)
    "_Grouper": ("grouping", "Grouper"), "_LoneCase": ("grouping", "LoneCase"), "_Planner": ("planning", "Planner"),
    "_Output": ("output", "Output"), "_Pool": ("pool", "LocalPool"), "_match": ("evaluate", "pair_with_eval_case"),
    "_case_header": ("evaluate", "case_header"), "_case_metrics": ("evaluate", "case_metrics"),
    "_repeat_group": ("evaluate", "repeat_group"), "_run_one": ("evaluate", "run_one"), "_Job": ("evaluate", "Job"),
    "_read": ("read", "read_in_background"), "_iter_positioned": ("..trace_sources", "resolve"),
    "_pool_for": ("executors", "pool_for"),
}


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        module, attr = _PUBLIC[name], name
    elif name in _LEGACY:
        module, attr = _LEGACY[name]
    else:
        raise AttributeError(f"module 'agentevals.engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module if module.startswith("..") else f".{module}", __name__), attr)
    globals()[name] = value
    return value
