"""AgentV ``execution_metrics``: tool calls, LLM calls, tokens, cost, duration and exploration ratio bounds."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from pydantic import Field, model_validator

from ..base import EvalContext
from ._base import AgentVConfig, AgentVEvaluator, Outcome, js_fixed, js_num
from ._view import EXPLORATION_TOOLS, CaseView

__all__ = ["ExecutionMetricsEvaluator"]

_LIMITS = ("max_tool_calls", "max_llm_calls", "max_tokens", "max_cost_usd", "max_duration_ms", "target_exploration_ratio")


def _usd(value: float) -> str:
    return f"${js_fixed(value, 4)}"


class ExecutionMetricsEvaluator(AgentVEvaluator):
    """One hit or miss per configured bound; score = hits / (hits + misses); missing data is a miss."""

    name = "execution_metrics"
    aliases = ("execution-metrics",)
    default_timeout: ClassVar[float] = 10.0  # deterministic and cheap

    class Config(AgentVConfig):
        type: str = "execution_metrics"
        max_tool_calls: int | None = Field(default=None, ge=0)
        """Most tool calls over all turns."""
        max_llm_calls: int | None = Field(default=None, ge=0)
        """Most LLM calls (the turns' ``counts.llm_calls``)."""
        max_tokens: int | None = Field(default=None, ge=0)
        """Most input + output tokens (cached reads not added)."""
        max_cost_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
        """Most cost in USD (from cost attributes on the spans)."""
        max_duration_ms: float | None = Field(default=None, ge=0, allow_inf_nan=False)
        """Longest total duration of the turns, in ms."""
        target_exploration_ratio: float | None = Field(default=None, ge=0, le=1)
        """Wanted share of calls to exploration tools (read, grep, glob, search, list, …)."""
        exploration_tolerance: float = Field(default=0.2, ge=0, allow_inf_nan=False)
        """Allowed distance from ``target_exploration_ratio``."""
        exploration_tools: list[str] | None = None
        """Tool names that count as exploration (default: AgentV's list)."""

        @model_validator(mode="after")
        def _one_limit(self) -> ExecutionMetricsEvaluator.Config:
            if all(getattr(self, name) is None for name in _LIMITS):
                raise ValueError(f"set at least one of {', '.join(_LIMITS)}")
            return self

    config: Config

    async def score(self, view: CaseView, ctx: EvalContext) -> Outcome:
        cfg = self.config
        thresholds = {k: getattr(cfg, k) for k in _LIMITS if getattr(cfg, k) is not None}
        if cfg.target_exploration_ratio is not None:
            thresholds["exploration_tolerance"] = cfg.exploration_tolerance
        if not view.has_output:
            return Outcome(0.0, misses=["No trace summary available"],
                           reasoning="Execution metrics not available - no trace summary provided",
                           details={"config": thresholds, "actual": None})
        hits: list[str] = []
        misses: list[str] = []
        actual: dict[str, float] = {}

        def bound(key: str, limit: float | None, value: float | None, label: str, unit: str = "",
                  missing: str = "", fmt: Callable[[float], str] = js_num) -> None:
            if limit is None:
                return
            if value is None:
                misses.append(missing)
                return
            actual[key] = value
            if value <= limit:
                hits.append(f"{label} {fmt(value)}{unit} <= {fmt(limit)}{unit} max")
            else:
                misses.append(f"{label} {fmt(value)}{unit} > {fmt(limit)}{unit} max")

        tokens = None if view.token_usage is None else view.token_usage["input"] + view.token_usage["output"]
        bound("tool_calls", cfg.max_tool_calls, len(view.tool_calls), "Tool calls")
        bound("llm_calls", cfg.max_llm_calls, view.llm_call_count, "LLM calls", missing="LLM call count data not available")
        bound("tokens", cfg.max_tokens, tokens, "Total tokens", missing="Token usage data not available")
        bound("cost_usd", cfg.max_cost_usd, view.cost_usd, "Cost", missing="Cost data not available", fmt=_usd)
        bound("duration_ms", cfg.max_duration_ms, view.duration_ms, "Duration", "ms", missing="Duration data not available")
        if cfg.target_exploration_ratio is not None:
            target, tolerance = cfg.target_exploration_ratio, cfg.exploration_tolerance
            ratio = view.exploration_ratio(tuple(cfg.exploration_tools or EXPLORATION_TOOLS))
            if ratio is None:
                misses.append("Exploration ratio not available (no tool calls)")
            else:
                actual["exploration_ratio"] = ratio
                diff = abs(ratio - target)
                if diff <= tolerance:
                    hits.append(f"Exploration ratio {js_fixed(ratio, 2)} within tolerance of target {js_num(target)}")
                else:
                    misses.append(f"Exploration ratio {js_fixed(ratio, 2)} outside tolerance of target {js_num(target)} "
                                  f"(diff: {js_fixed(diff, 2)}, tolerance: {js_num(tolerance)})")
        total = len(hits) + len(misses)
        shown = {"tool_calls": lambda v: f"tool_calls={js_num(v)}", "llm_calls": lambda v: f"llm_calls={js_num(v)}",
                 "tokens": lambda v: f"tokens={js_num(v)}", "cost_usd": lambda v: f"cost={_usd(v)}",
                 "duration_ms": lambda v: f"duration={js_num(v)}ms",
                 "exploration_ratio": lambda v: f"exploration_ratio={js_fixed(v, 2)}"}
        parts = [shown[k](v) for k, v in actual.items()]
        reasoning = f"execution_metrics {', '.join(parts)}" if parts else "No metrics evaluated"
        return Outcome(len(hits) / total if total else 0.0, hits=hits, misses=misses, reasoning=reasoning,
                       details={"config": thresholds, "actual": actual or None})
