"""``type: builtin``: one config entry per metric name, dispatched to a ``BuiltinMetric`` class."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal, Optional

from pydantic import Field, field_validator

from ...engine.options import RunOptions
from ...errors import ConfigError
from ...results import MetricResult
from ..base import BaseEvaluator, EvalContext, EvaluatorConfig
from ._metrics import METRICS, UNSUPPORTED

__all__ = ["UNIFORM_THRESHOLD", "BuiltinConfig", "BuiltinEvaluator", "BuiltinMetric"]

UNIFORM_THRESHOLD = 0.5
"""Every builtin metric's threshold when none is configured (agentevals-cli 0.11's default)."""


class BuiltinConfig(EvaluatorConfig):
    """A builtin metric: ``name`` is the metric name (``tool_trajectory_avg_score``, …)."""

    type: Literal["builtin"] = "builtin"
    threshold: Optional[float] = Field(default=None, ge=0.0, le=1.0)
    """Pass threshold; default 0.5 (``builtin_thresholds: adk``: ADK's, 1.0 for trajectories, 0.8 for response match)."""
    judge_model: Optional[str] = None
    """Judge model for LLM-based metrics (default: ``-j/--judge-model``, then ADK's default)."""
    trajectory_match_type: Optional[Literal["exact", "in_order", "any_order"]] = None
    """For tool_trajectory_avg_score: exact (default), in_order or any_order."""
    rubrics: Optional[list[Any]] = None
    """For rubric_based_* metrics: strings or ``{id, text}`` mappings."""
    num_samples: Optional[int] = Field(default=None, ge=1)
    """For LLM-judged metrics: judge samples (majority vote)."""
    credential_ref: Optional[str] = None
    """For LLM-judged metrics: the name of an entry of the run's ``credential_refs`` (``/api/evaluate``'s
    ``credential_refs`` field, ``credentialRefs`` of ``/api/evaluate/json``, ``evaluate(credential_refs=…)``)
    whose secret is the judge's API key. A run without ``credential_refs`` (``agentevals run``) reads the
    judge's key from the environment, with a note."""
    judge_base_url: Optional[str] = None
    """With ``credential_ref``: the judge's endpoint (an OpenAI-compatible proxy for ``openai/…`` judges, a
    Gemini API endpoint for ``gemini-…``). Alone it is not used (as in agentevals-cli 0.11), with a note."""

    @field_validator("trajectory_match_type", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower().replace("-", "_").replace(" ", "_") if isinstance(value, str) else value


class BuiltinMetric(ABC):
    """One builtin metric. ``name`` is its registry key."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    default_threshold: ClassVar[Optional[float]] = 0.5
    """ADK's default for this metric, used with ``builtin_thresholds: adk`` (None: informational)."""
    informational: ClassVar[bool] = False
    """Reports a value and never passes or fails."""
    needs_expected: ClassVar[bool] = True
    """Needs a matched eval case (golden invocations)."""
    default_timeout: ClassVar[float] = 10.0
    """Deadline when the entry sets no ``timeout`` (native metrics are cheap; LLM-judged ones raise it)."""

    def __init__(self, config: BuiltinConfig, evaluator: BuiltinEvaluator, options: Optional[RunOptions] = None) -> None:
        self.config = config
        self.evaluator = evaluator
        self.options = options if options is not None else evaluator.options
        """The run's options (``EvalContext.options``) when evaluating; the load-time ones for ``check``."""

    def check(self) -> None:
        """Load-time checks; raise ConfigError."""

    @property
    def threshold(self) -> float:
        if self.config.threshold is not None:
            return self.config.threshold
        if self.options.threshold is not None:
            return self.options.threshold
        if self.options.builtin_thresholds == "adk" and self.default_threshold is not None:
            return self.default_threshold
        return UNIFORM_THRESHOLD

    @abstractmethod
    async def evaluate(self, ctx: EvalContext) -> MetricResult: ...


class BuiltinEvaluator(BaseEvaluator):
    """Runs one builtin metric."""

    name = "builtin"
    Config = BuiltinConfig
    config: BuiltinConfig

    def check(self) -> None:
        metric = self.config.name
        if metric in UNSUPPORTED:
            raise ConfigError(f"builtin metric '{metric}' is not supported: {UNSUPPORTED[metric]}")
        if self.config.rubrics and not metric.startswith("rubric_based_"):
            raise ConfigError(f"builtin metric '{metric}' does not take rubrics")
        self.metric().check()

    def judge_key_note(self, credential_refs: Optional[dict[str, Any]]) -> Optional[str]:
        """A note when ``credential_ref``/``judge_base_url`` will not reach a judge in a run with these
        ``credential_refs`` (None: the run has none), else None.

        Without ``credential_refs`` (``agentevals run``: 0.11 made such a metric an error row) the run goes on
        and the judge reads its key from the environment; ``judge_base_url`` alone is not used (0.11 used it only
        with ``credential_ref``); a metric without an LLM judge uses neither. A ``credential_ref`` that the
        run's map lacks, or that cannot be resolved, is that metric's ERROR row when it runs (not a note)."""
        used = [key for key in ("credential_ref", "judge_base_url") if getattr(self.config, key)]
        if not used:
            return None
        keys = " and ".join(f"'{k}'" for k in used)
        if credential_refs is None:
            return (f"{keys} not read (agentevals-cli 0.11 used {'them' if len(used) > 1 else 'it'} only with a "
                    "server run's credential_refs); "
                    "the judge reads its credentials and endpoint from the environment (GOOGLE_API_KEY, …)")
        try:
            metric = METRICS.get(self.config.name)
        except ConfigError:
            return None
        if not getattr(metric, "llm_judge", False):
            how = " (scored through Vertex AI with the environment's credentials)" if getattr(
                metric, "needs_judge", False) else ""
            return f"{keys} not used: metric '{self.config.name}' has no LLM judge{how}"
        if not self.config.credential_ref:
            return ("'judge_base_url' not used without 'credential_ref' (as in agentevals-cli 0.11): the judge "
                    "reads its credentials and endpoint from the environment")
        return None

    @property
    def timeout(self) -> float:
        if self.config.timeout:
            return self.config.timeout
        try:
            return METRICS.get(self.config.name).default_timeout
        except ConfigError:
            return self.default_timeout

    def metric(self, options: Optional[RunOptions] = None) -> BuiltinMetric:
        """The metric, for one evaluation under ``options`` (the run's; default: the load-time ones)."""
        return METRICS.get(self.config.name)(self.config, self, options)

    async def evaluate(self, ctx: EvalContext) -> MetricResult:
        metric = self.metric(ctx.options)
        if metric.needs_expected and ctx.expected_invocations is None:
            reason = f"needs an eval case: {ctx.match_reason or 'none matched'}"
            return MetricResult.not_evaluated(self.config.name, reason, threshold=metric.threshold)
        return await metric.evaluate(ctx)
