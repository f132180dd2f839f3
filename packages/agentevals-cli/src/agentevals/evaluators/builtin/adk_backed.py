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


def _use_judge_key(evaluator: Any, api_key: str, base_url: Optional[str]) -> Optional[str]:
    """Give an ADK evaluator's LLM judge ``api_key`` (and ``base_url``) instead of the environment's; the
    reason it cannot be done, or None.

    The seam is ADK's: ``LlmAsJudge`` (and ``HallucinationsV1Evaluator``) build their judge in ``__init__`` as
    ``self._judge_model = LLMRegistry.resolve(judge_model)(model=judge_model)`` from
    ``self._judge_model_options``; ``get_evaluator`` returns a new evaluator per call, so replacing that
    model touches nothing shared. ``openai/…``, ``anthropic/…`` and the other LiteLLM models get ``api_key``
    and ``api_base`` (passed to every ``litellm.acompletion``); Gemini models a ``google.genai`` client made
    with ``api_key`` and ``base_url``.
    """
    options = getattr(evaluator, "_judge_model_options", None)
    model_id = getattr(options, "judge_model", None)
    if options is None or not hasattr(evaluator, "_judge_model") or not model_id:
        return f"{type(evaluator).__name__} has no LLM judge to give a key to (this google-adk has no judge_model seam)"
    from google.adk.models.google_llm import Gemini
    from google.adk.models.registry import LLMRegistry

    try:
        cls = LLMRegistry.resolve(model_id)
    except ValueError as exc:
        return f"judge model '{model_id}': {exc}"
    try:
        from google.adk.models.lite_llm import LiteLlm
    except ImportError:  # LiteLLM is optional in google-adk
        LiteLlm = None
    if LiteLlm is not None and issubclass(cls, LiteLlm):
        evaluator._judge_model = cls(model=model_id, api_key=api_key, **({"api_base": base_url} if base_url else {}))
    elif issubclass(cls, Gemini):
        evaluator._judge_model = cls(model=model_id, client_kwargs={"api_key": api_key, "vertexai": False},
                                     **({"base_url": base_url} if base_url else {}))
    else:
        return f"judge model '{model_id}' ({cls.__name__}) takes no API key here: use an openai/… or gemini-… judge"
    return None


class AdkBackedMetric(BuiltinMetric):
    """A metric scored by google-adk's registry evaluator of the same name."""

    default_timeout: ClassVar[float] = EVALUATOR_TIMEOUT  # an LLM judge behind ADK

    default_threshold = 0.5
    needs_expected = False
    needs_judge: ClassVar[bool] = True
    llm_judge: ClassVar[bool] = False
    """Scored by an LLM judge that ADK builds from ``judge_model`` (``credential_ref`` can give it a key);
    the others are scored through Vertex AI with the environment's credentials."""

    async def evaluate(self, ctx: EvalContext) -> MetricResult:
        api_key = None
        ref, credentials = self.config.credential_ref, self.options.credentials
        if ref and credentials is not None and self.llm_judge:  # the run's credential_refs name the judge's key
            problem = credentials.problem(ref)
            if problem:
                return MetricResult.errored(
                    self.config.name, f"evaluator '{self.evaluator.display_name}': credential_ref '{ref}' {problem}",
                    threshold=self.threshold)
            api_key = credentials.value(ref)
        reason = adk_available() or (_credentials_reason() if self.needs_judge and api_key is None else None)
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
        details: dict[str, Any] = {"scored_by": "google-adk"}
        if api_key is not None:
            problem = _use_judge_key(evaluator, api_key, self.config.judge_base_url)
            if problem:
                return MetricResult.errored(self.config.name, f"evaluator '{self.evaluator.display_name}': "
                                            f"credential_ref '{ref}': {problem}", threshold=self.threshold)
            details["credential_ref"] = ref
            if self.config.judge_base_url:
                details["judge_base_url"] = self.config.judge_base_url
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
                            threshold=self.threshold, per_invocation_scores=per, details=details)


def _metric(metric_name: str, *, expected: bool = False, judge: bool = True, llm_judge: bool = False,
            description: str = "") -> type:
    return type(metric_name, (AdkBackedMetric,), {"name": metric_name, "needs_expected": expected,
                                                  "needs_judge": judge, "llm_judge": llm_judge,
                                                  "description": description})


ResponseEvaluationScore = _metric("response_evaluation_score", description="Vertex AI coherence score (1–5).")
SafetyV1 = _metric("safety_v1", description="Vertex AI safety evaluation.")
FinalResponseMatchV2 = _metric("final_response_match_v2", expected=True, llm_judge=True,
                               description="LLM judge: is the final response equivalent to the expected one?")
HallucinationsV1 = _metric("hallucinations_v1", llm_judge=True, description="LLM judge: is the response grounded in the context?")
RubricFinalResponseQualityV1 = _metric("rubric_based_final_response_quality_v1", llm_judge=True,
                                       description="LLM judge: final response against rubrics.")
RubricToolUseQualityV1 = _metric("rubric_based_tool_use_quality_v1", llm_judge=True, description="LLM judge: tool use against rubrics.")
RubricMultiTurnTrajectoryQualityV1 = _metric("rubric_based_multi_turn_trajectory_quality_v1", llm_judge=True,
                                             description="LLM judge: multi-turn trajectory against rubrics.")
MultiTurnTaskSuccessV1 = _metric("multi_turn_task_success_v1", description="Vertex AI: multi-turn task success.")
MultiTurnTrajectoryQualityV1 = _metric("multi_turn_trajectory_quality_v1",
                                       description="Vertex AI: multi-turn trajectory quality.")
MultiTurnToolUseQualityV1 = _metric("multi_turn_tool_use_quality_v1", description="Vertex AI: multi-turn tool use.")
