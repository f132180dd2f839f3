"""Evaluator types, registered by name (the YAML ``type:``). Built-ins are imported on first use."""

from __future__ import annotations

from .._registry import Registry
from .base import BaseEvaluator as BaseEvaluator
from .base import EvalContext as EvalContext
from .base import EvaluatorConfig as EvaluatorConfig

__all__ = ["EVALUATOR_TYPES", "BaseEvaluator", "EvalContext", "EvaluatorConfig"]

EVALUATOR_TYPES: Registry[type[BaseEvaluator]] = Registry(
    "evaluator type",
    "agentevals.evaluator_types",
    {
        "builtin": "agentevals.evaluators.builtin:BuiltinEvaluator",
    },
)
"""YAML ``type:`` → evaluator class. Third-party types come from the ``agentevals.evaluator_types`` entry points."""
