"""ADK metrics that need google-adk (LLM judges, Vertex AI): run through ADK's own evaluators.

Without the ``adk`` extra, or without judge credentials, they are NOT_EVALUATED with the reason.
google-adk is imported only here and only when such a metric actually runs.
"""

from __future__ import annotations

import inspect
import os
from typing import Any, ClassVar, Optional

from ...core.limits import EVALUATOR_TIMEOUT
from ...protocol import InvocationData
from ...results import MetricResult, Status
from ..base import EvalContext
from ._base import BuiltinMetric

__all__ = ["adk_available", "to_adk_invocation"]

INSTALL = 'pip install "agentevals-cli[adk]"'


def adk_available() -> Optional[str]:
    """None when google-adk's evaluation module imports, else the reason it does not."""
    try:
        import google.adk.evaluation  # noqa: F401
    except ImportError:
        return f"needs the adk extra (google-adk): {INSTALL}"
    return None


def _credentials_reason() -> Optional[str]:
    if os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"):
        return None
    if os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true") and os.environ.get("GOOGLE_CLOUD_PROJECT"):
        return None
    return ("no judge credentials: set GOOGLE_API_KEY (or GOOGLE_GENAI_USE_VERTEXAI=1 with "
            "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION)")


def to_adk_invocation(inv: InvocationData) -> Any:
    """Our wire invocation → ``google.adk.evaluation.eval_case.Invocation``."""
    from google.adk.evaluation.eval_case import IntermediateData, Invocation
    from google.genai import types

    def content(role: str, text: Optional[str]) -> Optional[Any]:
        return None if text is None else types.Content(role=role, parts=[types.Part(text=text)])

    steps = inv.intermediate_steps
    return Invocation(
        invocation_id=inv.invocation_id,
        user_content=content("user", inv.user_content),
        final_response=content("model", inv.final_response),
        intermediate_data=IntermediateData(
            tool_uses=[types.FunctionCall(name=c.name, args=c.args, id=c.id) for c in steps.tool_calls],
            tool_responses=[
                types.FunctionResponse(name=r.name, id=r.id,
                                       response=r.response if isinstance(r.response, dict) else {"result": r.output})
                for r in steps.tool_responses
            ],
        ),
    )


_STATUS = {1: Status.PASSED, 2: Status.FAILED, 3: Status.NOT_EVALUATED}


class AdkBackedMetric(BuiltinMetric):
    """A metric scored by google-adk's registry evaluator of the same name."""

    default_timeout: ClassVar[float] = EVALUATOR_TIMEOUT  # an LLM judge behind ADK

    default_threshold = 0.5
    needs_expected = False
    needs_judge: ClassVar[bool] = True

    async def evaluate(self, ctx: EvalContext) -> MetricResult:
        reason = adk_available() or (_credentials_reason() if self.needs_judge else None)
        if reason:
            return MetricResult.not_evaluated(self.config.name, reason, threshold=self.threshold)
        if self.needs_expected and ctx.expected_invocations is None:
            return MetricResult.not_evaluated(self.config.name, "needs an eval case", threshold=self.threshold)
        from google.adk.evaluation.eval_metrics import EvalMetric
        from google.adk.evaluation.metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY

        criterion: dict[str, Any] = {"threshold": self.threshold}
        judge = self.config.judge_model or self.options.judge_model
        if judge or self.config.num_samples:
            criterion["judge_model_options"] = {
                **({"judge_model": judge} if judge else {}),
                **({"num_samples": self.config.num_samples} if self.config.num_samples else {}),
            }
        if self.config.rubrics:
            criterion["rubrics"] = [
                {"rubric_id": r.get("id", f"rubric_{i}") if isinstance(r, dict) else f"rubric_{i}",
                 "rubric_content": {"text_property": r.get("text") if isinstance(r, dict) else str(r)}}
                for i, r in enumerate(self.config.rubrics)
            ]
        metric = EvalMetric(metric_name=self.config.name, threshold=self.threshold, criterion=criterion)
        evaluator = DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(metric)
        actual = [to_adk_invocation(i) for i in ctx.invocations]
        expected = [to_adk_invocation(i) for i in ctx.expected_invocations] if ctx.expected_invocations else None
        result = evaluator.evaluate_invocations(actual_invocations=actual, expected_invocations=expected)
        if inspect.isawaitable(result):
            result = await result
        status = _STATUS.get(int(getattr(result.overall_eval_status, "value", 3)), Status.NOT_EVALUATED)
        per = [r.score for r in result.per_invocation_results]
        if result.overall_score is None or status == Status.NOT_EVALUATED:
            return MetricResult.not_evaluated(self.config.name, "google-adk returned no score",
                                              threshold=self.threshold, per_invocation_scores=per)
        return MetricResult(name=self.config.name, status=status, score=float(result.overall_score),
                            threshold=self.threshold, per_invocation_scores=per, details={"scored_by": "google-adk"})


def _metric(metric_name: str, *, expected: bool = False, judge: bool = True, description: str = "") -> type:
    return type(metric_name, (AdkBackedMetric,), {"name": metric_name, "needs_expected": expected,
                                                  "needs_judge": judge, "description": description})


ResponseEvaluationScore = _metric("response_evaluation_score", description="Vertex AI coherence score (1–5).")
SafetyV1 = _metric("safety_v1", description="Vertex AI safety evaluation.")
FinalResponseMatchV2 = _metric("final_response_match_v2", expected=True,
                               description="LLM judge: is the final response equivalent to the expected one?")
HallucinationsV1 = _metric("hallucinations_v1", description="LLM judge: is the response grounded in the context?")
RubricFinalResponseQualityV1 = _metric("rubric_based_final_response_quality_v1",
                                       description="LLM judge: final response against rubrics.")
RubricToolUseQualityV1 = _metric("rubric_based_tool_use_quality_v1", description="LLM judge: tool use against rubrics.")
RubricMultiTurnTrajectoryQualityV1 = _metric("rubric_based_multi_turn_trajectory_quality_v1",
                                             description="LLM judge: multi-turn trajectory against rubrics.")
MultiTurnTaskSuccessV1 = _metric("multi_turn_task_success_v1", description="Vertex AI: multi-turn task success.")
MultiTurnTrajectoryQualityV1 = _metric("multi_turn_trajectory_quality_v1",
                                       description="Vertex AI: multi-turn trajectory quality.")
MultiTurnToolUseQualityV1 = _metric("multi_turn_tool_use_quality_v1", description="Vertex AI: multi-turn tool use.")
