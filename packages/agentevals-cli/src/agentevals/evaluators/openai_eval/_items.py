"""Grading items: one per agent turn, the agent's response paired with the eval case's by position.

Rule when the counts differ: turn ``i`` of the trace is paired with turn ``i`` of the eval case. A grader
that reads ``item.expected_response`` grades only the turns that have a partner with a final
response; the others get no score (``None``) and are named in the note. A grader that does not read
it grades every turn of the trace.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base import EvalContext

__all__ = ["Turn", "build_turns"]


@dataclass
class Turn:
    """One thing to grade."""

    position: int
    """Index in ``ctx.invocations``."""
    invocation_id: str
    item: dict[str, str]
    """The ``item`` namespace: user_content, actual_response and (when paired) expected_response."""


def build_turns(ctx: EvalContext, *, needs_expected: bool) -> tuple[list[Turn], str | None]:
    """The turns to grade and a note on the ones left out (or why none can be graded)."""
    actual = ctx.invocations
    expected = ctx.expected_invocations or []
    if not actual:
        return [], "the trace has no agent turns to grade"
    if needs_expected and not expected:
        return [], (
            "no expected responses: the grader compares against {{ item.expected_response }}, "
            "which needs a matching eval-set case"
        )
    turns: list[Turn] = []
    skipped: list[str] = []
    for position, invocation in enumerate(actual):
        item = {"user_content": invocation.user_content, "actual_response": invocation.final_response or ""}
        partner = expected[position] if position < len(expected) else None
        if partner is not None and partner.final_response is not None:
            item["expected_response"] = partner.final_response
        elif needs_expected:
            skipped.append(str(position + 1))
            continue
        turns.append(Turn(position, invocation.invocation_id or f"turn {position + 1}", item))
    notes = []
    if skipped:
        notes.append(f"turn(s) {', '.join(skipped)} have no expected response and were not graded")
    if needs_expected and len(expected) > len(actual):
        notes.append(f"the eval case expects {len(expected)} turns; the trace has {len(actual)}")
    if not turns:
        return [], "no turn has an expected response to compare with: " + "; ".join(notes)
    return turns, "; ".join(notes) or None
