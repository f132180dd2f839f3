"""Pair the agent's turns with the eval case's turns, by position, as ADK does."""

from __future__ import annotations

from typing import Optional

from ...protocol import InvocationData
from ..base import EvalContext

__all__ = ["pair_turns"]


def pair_turns(ctx: EvalContext) -> tuple[list[tuple[InvocationData, InvocationData]], Optional[str]]:
    """``(pairs, None)`` or ``([], reason)`` when the turns cannot be paired."""
    actual, expected = ctx.invocations, ctx.expected_invocations or []
    if not actual:
        return [], "the trace has no agent turns to score"
    if len(actual) != len(expected):
        case = ctx.eval_case.eval_id if ctx.eval_case else "the eval case"
        return [], f"the trace has {len(actual)} turn(s) but '{case}' expects {len(expected)}"
    return list(zip(actual, expected, strict=True)), None
