"""Builtin metrics (``type: builtin``): ADK's metric names, computed natively where we can.

``tool_trajectory_avg_score`` and ``response_match_score`` are native (identical scores to
google-adk, no ADK import); the informational ADK metrics are native too; the LLM-judged ADK metrics
run through google-adk when the ``adk`` extra is installed and are NOT_EVALUATED otherwise.
"""

from __future__ import annotations

from ._base import BuiltinConfig as BuiltinConfig
from ._base import BuiltinEvaluator as BuiltinEvaluator
from ._base import BuiltinMetric as BuiltinMetric
from ._metrics import METRICS as METRICS
from ._metrics import UNSUPPORTED as UNSUPPORTED

__all__ = ["METRICS", "UNSUPPORTED", "BuiltinConfig", "BuiltinEvaluator", "BuiltinMetric"]

METRICS.base = BuiltinMetric  # set here: _metrics cannot import _base (which looks metrics up)
