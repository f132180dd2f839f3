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
        # Say both counts and the rule: a 2-turn conversation matched to a 1-turn case is otherwise a bare
        # NOT_EVALUATED (the case matched by its first user message, and turns pair only by position).
        case = f"eval case '{ctx.eval_case.eval_id}'" if ctx.eval_case else "the eval case"
        return [], (f"the session has {_turns(len(actual))}, {case} has {len(expected)}: turns are scored in pairs "
                    "by position, so the counts must be equal")
    return list(zip(actual, expected, strict=True)), None


def _turns(count: int) -> str:
    return f"{count} turn{'s' if count != 1 else ''}"
