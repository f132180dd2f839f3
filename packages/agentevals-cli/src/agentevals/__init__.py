"""agentevals: score AI-agent runs recorded as OpenTelemetry traces.

The command line is ``agentevals``; the same pipeline is a library::

    import agentevals

    run = agentevals.evaluate(["traces/helm.json"], eval_set="evalsets/helm.json",
                              metrics=["tool_trajectory_avg_score"])
    print(run.exit_code())

Heavy parts are imported on first use, so ``import agentevals`` stays cheap.
"""

from __future__ import annotations

import sys as _sys

if _sys.argv and (_sys.argv[0] == "-m" or _sys.argv[0].replace("\\", "/").rsplit("/", 1)[-1] in ("agentevals",
                                                                                               "agentevals.exe")):
    # Started as the command: a Ctrl-C while it imports ends it with one word, not a traceback
    # (``cli.main`` hands SIGINT back to Python once it can handle it).
    from .core._startup import quiet_interrupts as _quiet_interrupts

    _quiet_interrupts()

import importlib as _importlib
import typing as _typing

from .__about__ import __version__ as __version__
from .core._aliases import install as _install_aliases
from .errors import AgentevalsError as AgentevalsError
from .errors import ConfigError as ConfigError
from .protocol import PROTOCOL_VERSION as PROTOCOL_VERSION

_install_aliases()  # the old paths of moved modules keep importing (core/_aliases.py)

if _typing.TYPE_CHECKING:
    from .api import evaluate as evaluate
    from .api import evaluate_async as evaluate_async
    from .engine.options import RunOptions as RunOptions
    from .evaluators.python import Environment as Environment
    from .evaluators.python import Evaluator as Evaluator
    from .evaluators.python import PythonEvaluator as PythonEvaluator
    from .evaluators.python import Task as Task
    from .evaluators.python import User as User
    from .live.session import AgentEvals as AgentEvals
    from .results import CaseResult as CaseResult
    from .results import MetricResult as MetricResult
    from .results import RunResult as RunResult
    from .results import Status as Status

_LAZY = {
    "AgentEvals": "live.session",
    "evaluate": "api",
    "evaluate_async": "api",
    "RunOptions": "engine.options",
    "Environment": "evaluators.python",
    "Evaluator": "evaluators.python",
    "PythonEvaluator": "evaluators.python",
    "Task": "evaluators.python",
    "User": "evaluators.python",
    "CaseResult": "results",
    "MetricResult": "results",
    "RunResult": "results",
    "Status": "results",
}

__all__ = [
    "PROTOCOL_VERSION",
    "AgentEvals",
    "AgentevalsError",
    "CaseResult",
    "ConfigError",
    "Environment",
    "Evaluator",
    "MetricResult",
    "PythonEvaluator",
    "RunOptions",
    "RunResult",
    "Status",
    "Task",
    "User",
    "__version__",
    "evaluate",
    "evaluate_async",
]


def __getattr__(name: str) -> _typing.Any:
    if name in _LAZY:
        value = getattr(_importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'agentevals' has no attribute {name!r}")
