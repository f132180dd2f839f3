"""Evaluator types, registered by name (the YAML ``type:``). Built-ins are imported on first use."""

from __future__ import annotations

from ..core._registry import Registry
from .base import BaseEvaluator as BaseEvaluator
from .base import EvalContext as EvalContext
from .base import EvaluatorConfig as EvaluatorConfig

__all__ = ["EVALUATOR_TYPES", "BaseEvaluator", "EvalContext", "EvaluatorConfig"]

EVALUATOR_TYPES: Registry[type[BaseEvaluator]] = Registry(
    "evaluator type",
    "agentevals.evaluator_types",
    {
        "builtin": "agentevals.evaluators.builtin:BuiltinEvaluator",
        "python": "agentevals.evaluators.python:PythonEvaluator",
        "code": "agentevals.evaluators.code:CodeEvaluator",
        "remote": "agentevals.evaluators.remote:RemoteEvaluator",
        "openai_eval": "agentevals.evaluators.openai_eval:OpenAIEvalEvaluator",
        "code_judge": "agentevals.evaluators.agentv.code_judge:CodeJudgeEvaluator",
        "code-judge": "agentevals.evaluators.agentv.code_judge:CodeJudgeEvaluator",
        "code_grader": "agentevals.evaluators.agentv.code_judge:CodeJudgeEvaluator",  # AgentV 4 names
        "code-grader": "agentevals.evaluators.agentv.code_judge:CodeJudgeEvaluator",
        "script": "agentevals.evaluators.agentv.code_judge:CodeJudgeEvaluator",  # AgentV 5 names
        "llm_judge": "agentevals.evaluators.agentv.llm_judge:LlmJudgeEvaluator",
        "llm-judge": "agentevals.evaluators.agentv.llm_judge:LlmJudgeEvaluator",
        "llm_grader": "agentevals.evaluators.agentv.llm_judge:LlmJudgeEvaluator",
        "llm-grader": "agentevals.evaluators.agentv.llm_judge:LlmJudgeEvaluator",
        "llm-rubric": "agentevals.evaluators.agentv.llm_judge:LlmJudgeEvaluator",
        "agent-rubric": "agentevals.evaluators.agentv.llm_judge:LlmJudgeEvaluator",
        "rubric": "agentevals.evaluators.agentv.rubric:RubricEvaluator",
        "rubrics": "agentevals.evaluators.agentv.rubric:RubricEvaluator",
        "composite": "agentevals.evaluators.agentv.composite:CompositeEvaluator",
        "assert-set": "agentevals.evaluators.agentv.composite:CompositeEvaluator",
        "tool_trajectory": "agentevals.evaluators.agentv.tool_trajectory:ToolTrajectoryEvaluator",
        "tool-trajectory": "agentevals.evaluators.agentv.tool_trajectory:ToolTrajectoryEvaluator",
        "field_accuracy": "agentevals.evaluators.agentv.field_accuracy:FieldAccuracyEvaluator",
        "field-accuracy": "agentevals.evaluators.agentv.field_accuracy:FieldAccuracyEvaluator",
        "execution_metrics": "agentevals.evaluators.agentv.execution_metrics:ExecutionMetricsEvaluator",
        "execution-metrics": "agentevals.evaluators.agentv.execution_metrics:ExecutionMetricsEvaluator",
        "skill_trigger": "agentevals.evaluators.agentv.skill_trigger:SkillTriggerEvaluator",
        "skill-trigger": "agentevals.evaluators.agentv.skill_trigger:SkillTriggerEvaluator",
        "skill-used": "agentevals.evaluators.agentv.skill_trigger:SkillTriggerEvaluator",
        "not-skill-used": "agentevals.evaluators.agentv.skill_trigger:SkillTriggerEvaluator",
        "contains": "agentevals.evaluators.agentv.assertions:ContainsEvaluator",
        "contains_any": "agentevals.evaluators.agentv.assertions:ContainsAnyEvaluator",
        "contains-any": "agentevals.evaluators.agentv.assertions:ContainsAnyEvaluator",
        "contains_all": "agentevals.evaluators.agentv.assertions:ContainsAllEvaluator",
        "contains-all": "agentevals.evaluators.agentv.assertions:ContainsAllEvaluator",
        "icontains": "agentevals.evaluators.agentv.assertions:IcontainsEvaluator",
        "icontains_any": "agentevals.evaluators.agentv.assertions:IcontainsAnyEvaluator",
        "icontains-any": "agentevals.evaluators.agentv.assertions:IcontainsAnyEvaluator",
        "icontains_all": "agentevals.evaluators.agentv.assertions:IcontainsAllEvaluator",
        "icontains-all": "agentevals.evaluators.agentv.assertions:IcontainsAllEvaluator",
        "starts_with": "agentevals.evaluators.agentv.assertions:StartsWithEvaluator",
        "starts-with": "agentevals.evaluators.agentv.assertions:StartsWithEvaluator",
        "ends_with": "agentevals.evaluators.agentv.assertions:EndsWithEvaluator",
        "ends-with": "agentevals.evaluators.agentv.assertions:EndsWithEvaluator",
        "regex": "agentevals.evaluators.agentv.assertions:RegexEvaluator",
        "is_json": "agentevals.evaluators.agentv.assertions:IsJsonEvaluator",
        "is-json": "agentevals.evaluators.agentv.assertions:IsJsonEvaluator",
        "equals": "agentevals.evaluators.agentv.assertions:EqualsEvaluator",
    },
)
"""YAML ``type:`` → evaluator class. Third-party types come from the ``agentevals.evaluator_types`` entry points."""
