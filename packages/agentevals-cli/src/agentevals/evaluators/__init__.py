"""Evaluator types, registered by name (the YAML ``type:``). Built-ins are imported on first use."""

from __future__ import annotations

from ..core._registry import Registry
from .agentv._kinds import registry_entries as _assertion_kinds
from .base import BaseEvaluator as BaseEvaluator
from .base import EvalContext as EvalContext
from .base import EvaluatorConfig as EvaluatorConfig

__all__ = ["EVALUATOR_TYPES", "BaseEvaluator", "EvalContext", "EvaluatorConfig"]

EVALUATOR_TYPES: Registry[type[BaseEvaluator]] = Registry(
    "evaluator type",
    "agentevals.evaluator_types",
    {  # one line per class; other spellings are the classes' ``aliases`` (``code-judge``, ``llm-grader``, …).
        # An alias is found by importing built-ins in this order until one declares it: the types whose
        # aliases are AgentV 5 spellings (``skill-used``, ``assert-set``, ``llm-rubric``, ``script``) come first.
        "skill_trigger": "agentevals.evaluators.agentv.skill_trigger:SkillTriggerEvaluator",
        "composite": "agentevals.evaluators.agentv.composite:CompositeEvaluator",
        "rubric": "agentevals.evaluators.agentv.rubric:RubricEvaluator",
        "llm_judge": "agentevals.evaluators.agentv.llm_judge:LlmJudgeEvaluator",
        "code_judge": "agentevals.evaluators.agentv.code_judge:CodeJudgeEvaluator",
        "javascript": "agentevals.evaluators.agentv.javascript:JavascriptAssertionEvaluator",
        "builtin": "agentevals.evaluators.builtin:BuiltinEvaluator",
        "python": "agentevals.evaluators.python:PythonEvaluator",
        "code": "agentevals.evaluators.code:CodeEvaluator",
        "remote": "agentevals.evaluators.remote:RemoteEvaluator",
        "openai_eval": "agentevals.evaluators.openai_eval:OpenAIEvalEvaluator",
        "tool_trajectory": "agentevals.evaluators.agentv.tool_trajectory:ToolTrajectoryEvaluator",
        "field_accuracy": "agentevals.evaluators.agentv.field_accuracy:FieldAccuracyEvaluator",
        "execution_metrics": "agentevals.evaluators.agentv.execution_metrics:ExecutionMetricsEvaluator",
        **_assertion_kinds(),  # one line per row of agentv/_kinds.py (contains, is_json, …); other spellings are aliases
    },
    base=BaseEvaluator,
)
"""YAML ``type:`` → evaluator class. Third-party types come from the ``agentevals.evaluator_types`` entry points."""
