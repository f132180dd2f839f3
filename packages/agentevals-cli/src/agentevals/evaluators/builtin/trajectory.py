"""``tool_trajectory_avg_score``: did each turn call the expected tools? Same scores as google-adk.

Per turn 1.0 or 0.0; the score is the mean over turns. Tool calls match on name and ``args ==``
(ids ignored). Match types:

- ``exact`` (default): same calls, same order, same count.
- ``in_order``: the expected calls appear in order within the actual calls (extra calls allowed).
- ``any_order``: every expected call appears somewhere (each actual call used once; extras allowed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from ...protocol import InvocationData, ToolCallData
from ...results import MetricResult, Status
from ..base import EvalContext
from ._base import BuiltinMetric
from ._pairs import pair_turns

__all__ = ["ToolTrajectoryMetric", "trajectory_matches"]


def _same(actual: ToolCallData, expected: ToolCallData) -> bool:
    return actual.name == expected.name and actual.args == expected.args


def trajectory_matches(actual: Sequence[ToolCallData], expected: Sequence[ToolCallData], match_type: str) -> bool:
    """ADK's rule for one turn."""
    if match_type == "exact":
        return len(actual) == len(expected) and all(_same(a, e) for a, e in zip(actual, expected, strict=True))
    if not expected:
        return True
    if not actual:
        return False
    if match_type == "in_order":
        remaining = iter(expected)
        current: ToolCallData | None = next(remaining)
        for call in actual:
            if current is not None and _same(call, current):
                current = next(remaining, None)
                if current is None:
                    return True
        return False
    pool = list(actual)
    for want in expected:
        index = next((i for i, call in enumerate(pool) if _same(call, want)), None)
        if index is None:
            return False
        pool.pop(index)
    return True


def _calls(inv: InvocationData) -> list[dict[str, Any]]:
    return [{"name": c.name, "args": c.args} for c in inv.intermediate_steps.tool_calls]


class ToolTrajectoryMetric(BuiltinMetric):
    name = "tool_trajectory_avg_score"
    description = "Fraction of turns whose tool calls match the eval case (exact / in_order / any_order)."
    default_threshold = 1.0

    @property
    def match_type(self) -> str:
        return self.config.trajectory_match_type or self.options.trajectory_match_type or "exact"

    async def evaluate(self, ctx: EvalContext) -> MetricResult:
        pairs, problem = pair_turns(ctx)
        if problem:
            return MetricResult.not_evaluated(self.config.name, problem, threshold=self.threshold)
        match_type = self.match_type
        scores: list[Optional[float]] = []
        total = 0.0
        mismatches = []
        comparisons = []  # every turn, as agentevals-cli 0.11 reported them
        for index, (actual, expected) in enumerate(pairs):
            actual_calls = actual.intermediate_steps.tool_calls
            expected_calls = expected.intermediate_steps.tool_calls
            score = 1.0 if trajectory_matches(actual_calls, expected_calls, match_type) else 0.0
            scores.append(score)
            total += score  # a running sum, as ADK computes it
            comparisons.append({"invocation_id": actual.invocation_id, "expected": _calls(expected),
                                "actual": _calls(actual), "matched": score == 1.0})
            if score < 1.0:
                mismatches.append({"invocation": index, "invocation_id": actual.invocation_id,
                                   "expected": _calls(expected), "actual": _calls(actual)})
        score = total / len(pairs)
        result = MetricResult.scored(self.config.name, score, self.threshold, per_invocation_scores=scores,
                                     details={"match_type": match_type, "comparisons": comparisons})
        if mismatches:
            result.details["mismatches"] = mismatches
        assert result.status in (Status.PASSED, Status.FAILED)
        return result
