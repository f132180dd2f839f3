"""Resource limits on hostile input: how much agentevals reads, keeps and waits for, each configurable.

Every limit has a default that no real input reaches and an environment variable to change it:

    variable                          default        what it bounds
    AGENTEVALS_MAX_INPUT_BYTES        4 GiB          one input file (trace, eval set, config, EVAL.yaml)
    AGENTEVALS_MAX_JSON_DEPTH         512            nesting of a JSON document (arrays and objects)
    AGENTEVALS_INPUT_TIMEOUT          60             seconds to read a non-regular input (FIFO, ``<(…)``)
    AGENTEVALS_MAX_OUTPUT_BYTES       16 MiB         what is kept of an evaluator's stdout (and of its stderr)
    AGENTEVALS_MAX_YAML_NODES         100000         nodes of a YAML document once its aliases are expanded
    AGENTEVALS_MAX_SPANS              1000000        spans kept per trace (more are dropped with a warning)
    AGENTEVALS_SETUP_TIMEOUT          600            seconds to build an evaluator's environment (venv,
                                                     npm install), apart from its ``timeout``

Example:
    ```python
    from agentevals.core.limits import current_limits

    limits = current_limits()
    if size > limits.max_input_bytes:
        raise InputFileError(f"{path}: {size} bytes, more than the {limits.max_input_bytes} allowed ...")
    ```
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

__all__ = ["EVALUATOR_TIMEOUT", "JUDGE_REQUEST_TIMEOUT", "SCRIPT_TIMEOUT", "Limits", "current_limit", "current_limits", "variable"]

# Default deadlines, one place for all of them (each module imports its own; none keeps a copy).
EVALUATOR_TIMEOUT = 300.0
"""Seconds an evaluator entry gets when it sets no ``timeout`` and its type declares no shorter
``default_timeout`` (LLM judges need minutes; cheap checks declare seconds)."""
SCRIPT_TIMEOUT = 30.0
"""Seconds an AgentV script (code judge, aggregator, prompt script) or ``agentevals evaluator run`` gets
when none is set."""
JUDGE_REQUEST_TIMEOUT = 60.0
"""Seconds one LLM judge request of the AgentV family gets when the entry sets no ``timeout``."""

# orjson refuses documents nested deeper than 1024; a larger limit could not be honoured.
_JSON_DEPTH_CEILING = 1000


@dataclass(frozen=True)
class Limits:
    """The limits in force (see the module docstring for the variables that set them)."""

    max_input_bytes: int = 4 * 2**30
    max_json_depth: int = 512
    input_timeout: float = 60.0
    max_output_bytes: int = 16 * 2**20
    max_yaml_nodes: int = 100_000
    max_spans: int = 1_000_000
    setup_timeout: float = 600.0


_VARIABLES = {
    "max_input_bytes": "AGENTEVALS_MAX_INPUT_BYTES",
    "max_json_depth": "AGENTEVALS_MAX_JSON_DEPTH",
    "input_timeout": "AGENTEVALS_INPUT_TIMEOUT",
    "max_output_bytes": "AGENTEVALS_MAX_OUTPUT_BYTES",
    "max_yaml_nodes": "AGENTEVALS_MAX_YAML_NODES",
    "max_spans": "AGENTEVALS_MAX_SPANS",
    "setup_timeout": "AGENTEVALS_SETUP_TIMEOUT",
}


def _read(name: str, default: float) -> float:
    raw = os.environ.get(_VARIABLES[name], "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        return default  # a garbled setting must not turn a limit off
    return value if math.isfinite(value) and value > 0 else default


def current_limits() -> Limits:
    """The limits from the environment (read on every call: tests and long-lived servers may change them)."""
    values: dict[str, Any] = {name: current_limit(name) for name in _VARIABLES}
    return Limits(**values)


def current_limit(name: str) -> float:
    """One limit from the environment, as ``current_limits()`` gives it (a hot path reads only the one it needs)::

        int(current_limit("max_spans"))
    """
    default = getattr(_DEFAULTS, name)
    value = _read(name, default)
    if name == "max_json_depth":
        value = min(value, _JSON_DEPTH_CEILING)
    return int(value) if isinstance(default, int) else value


_DEFAULTS = Limits()


def variable(name: str) -> str:
    """The environment variable that sets the limit ``name`` (for messages that say how to raise it)."""
    return _VARIABLES[name]
