"""The builtin metric registry (``METRICS``) and the ADK metrics left out (``UNSUPPORTED``).

Its own module so that ``_base`` (which looks metrics up) and the package (which re-exports both) import
it without importing each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core._registry import Registry

if TYPE_CHECKING:
    from ._base import BuiltinMetric

__all__ = ["METRICS", "UNSUPPORTED"]

METRICS: Registry[type[BuiltinMetric]] = Registry(
    "builtin metric",
    "agentevals.builtin_metrics",
    {
        "tool_trajectory_avg_score": "agentevals.evaluators.builtin.trajectory:ToolTrajectoryMetric",
        "response_match_score": "agentevals.evaluators.builtin.response_match:ResponseMatchMetric",
        "tool_call_count_v1": "agentevals.evaluators.builtin.informational:ToolCallCountMetric",
        "token_usage_v1": "agentevals.evaluators.builtin.informational:TokenUsageMetric",
        "inference_call_count_v1": "agentevals.evaluators.builtin.informational:InferenceCallCountMetric",
        "invocation_duration_v1": "agentevals.evaluators.builtin.informational:InvocationDurationMetric",
        **{
            name: f"agentevals.evaluators.builtin.adk_backed:{cls}"
            for name, cls in {
                "response_evaluation_score": "ResponseEvaluationScore",
                "safety_v1": "SafetyV1",
                "final_response_match_v2": "FinalResponseMatchV2",
                "hallucinations_v1": "HallucinationsV1",
                "rubric_based_final_response_quality_v1": "RubricFinalResponseQualityV1",
                "rubric_based_tool_use_quality_v1": "RubricToolUseQualityV1",
                "rubric_based_multi_turn_trajectory_quality_v1": "RubricMultiTurnTrajectoryQualityV1",
                "multi_turn_task_success_v1": "MultiTurnTaskSuccessV1",
                "multi_turn_trajectory_quality_v1": "MultiTurnTrajectoryQualityV1",
                "multi_turn_tool_use_quality_v1": "MultiTurnToolUseQualityV1",
            }.items()
        },
    },
)
"""Metric name → metric class. Third-party metrics come from the ``agentevals.builtin_metrics`` entry points."""

UNSUPPORTED = {
    "per_turn_user_simulator_quality_v1": "it scores a simulated user, and agentevals evaluates recorded traces",
}
