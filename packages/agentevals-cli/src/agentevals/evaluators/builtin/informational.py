"""Informational ADK metrics: they report a value per turn and never pass or fail.

Computed natively from the converted trace (performance metrics), so they work without google-adk.
The reported value is the mean over the turns that have one.
"""

from __future__ import annotations

from typing import Any, Optional

from ...protocol import InvocationData
from ...results import MetricResult, Status
from ..base import EvalContext
from ._base import BuiltinMetric

__all__ = ["InferenceCallCountMetric", "InvocationDurationMetric", "TokenUsageMetric", "ToolCallCountMetric"]


def _metric(inv: InvocationData, *path: str) -> Optional[Any]:
    node: Any = inv.performance_metrics
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


class _Informational(BuiltinMetric):
    informational = True
    needs_expected = False
    default_threshold = None
    unit = ""

    def value(self, inv: InvocationData) -> Optional[float]:
        raise NotImplementedError

    async def evaluate(self, ctx: EvalContext) -> MetricResult:
        values = [self.value(inv) for inv in ctx.invocations]
        known = [v for v in values if v is not None]
        if not known:
            return MetricResult.not_evaluated(self.config.name, "the trace records no such measurement")
        mean = sum(known) / len(known)
        return MetricResult(name=self.config.name, type="builtin", status=Status.INFORMATIONAL,
                            value=round(mean, 3), details={"per_invocation": values, "unit": self.unit})


class ToolCallCountMetric(_Informational):
    name = "tool_call_count_v1"
    description = "Tool calls per turn (informational)."
    unit = "calls"

    def value(self, inv: InvocationData) -> Optional[float]:
        return float(len(inv.intermediate_steps.tool_calls))


class TokenUsageMetric(_Informational):
    name = "token_usage_v1"
    description = "Total tokens per turn (informational)."
    unit = "tokens"

    def value(self, inv: InvocationData) -> Optional[float]:
        total = _metric(inv, "tokens", "total")
        return float(total) if total is not None else None


class InferenceCallCountMetric(_Informational):
    name = "inference_call_count_v1"
    description = "Model calls per turn (informational)."
    unit = "calls"

    def value(self, inv: InvocationData) -> Optional[float]:
        count = _metric(inv, "counts", "llm_calls")
        return float(count) if count is not None else None


class InvocationDurationMetric(_Informational):
    name = "invocation_duration_v1"
    description = "Turn duration in milliseconds (informational)."
    unit = "ms"

    def value(self, inv: InvocationData) -> Optional[float]:
        duration = _metric(inv, "latency", "overall", "max")
        return float(duration) if duration is not None else None
