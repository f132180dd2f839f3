"""A case's conversation in brief, kept with its result for reports that show it (HTML, the run store)."""

from __future__ import annotations

from typing import Any, Optional

__all__ = ["transcript"]

_MAX_TEXT = 2000


def _cut(text: Optional[str]) -> Optional[str]:
    return text if text is None or len(text) <= _MAX_TEXT else text[:_MAX_TEXT] + "…"


def _calls(inv: Any) -> list[dict[str, Any]]:
    return [{"name": c.name, "args": c.args} for c in inv.intermediate_steps.tool_calls]


def _responses(inv: Any) -> list[dict[str, Any]]:
    out = []
    for r in inv.intermediate_steps.tool_responses:
        item = {"name": r.name, "output": _cut(r.output), "status": r.status}
        if len(r.output) > _MAX_TEXT:  # the whole output, for an eval set built from the stored case
            item["output_full"] = r.output
        out.append(item)
    return out


def transcript(invocations: list[Any], expected: Optional[list[Any]]) -> list[dict[str, Any]]:
    """Per turn: user text, tool calls, tool responses (when any), response (texts cut to 2,000
    characters), and the golden turn's tool calls and response when there is one.

    Also what an eval set built from the stored case needs (``agentevals evalset from-run``): the turn's
    ``invocation_id`` (its span id, which matches the trace again) and, only for a text that was cut, the
    whole text as ``user_full`` / ``response_full`` (a tool response's as ``output_full``).
    """
    turns = []
    for i, inv in enumerate(invocations):
        turn: dict[str, Any] = {"user": _cut(inv.user_content), "response": _cut(inv.final_response),
                                "tool_calls": _calls(inv)}
        if inv.invocation_id:
            turn["invocation_id"] = inv.invocation_id
        for key, text in (("user", inv.user_content), ("response", inv.final_response)):
            if text is not None and len(text) > _MAX_TEXT:
                turn[f"{key}_full"] = text
        if inv.intermediate_steps.tool_responses:
            turn["tool_responses"] = _responses(inv)
        if expected is not None and i < len(expected):
            turn["expected_tool_calls"] = _calls(expected[i])
            turn["expected_response"] = _cut(expected[i].final_response)
        turns.append(turn)
    return turns
