"""AgentV ``tool_trajectory``: the agent's tool calls against minimums or an expected sequence."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from ...core._docs import ATTRIBUTE_DOCS
from ..base import EvalContext
from ._base import AgentVConfig, AgentVEvaluator, Outcome, js_equal, js_num
from ._view import CaseView, ToolCall

__all__ = ["ToolTrajectoryEvaluator"]

ArgsMatch = Literal["exact", "superset", "subset", "ignore"] | list[str]
"""How arguments compare: both ways, expected ⊆ actual, actual ⊆ expected, not at all, or only these fields."""


class ExpectedTool(BaseModel):
    """One expected call."""

    model_config = ConfigDict(extra="forbid", **ATTRIBUTE_DOCS)

    tool: str
    """Tool name (exact)."""
    args: Literal["any"] | dict[str, Any] | None = None
    """Expected arguments; omitted or ``any`` = any arguments."""
    max_duration_ms: float | None = Field(default=None, ge=0, validation_alias=AliasChoices("max_duration_ms", "maxDurationMs"))
    """Latency bound for this call (in_order/exact); checked when the trace has the tool span's duration."""
    args_match: ArgsMatch | None = Field(default=None, validation_alias=AliasChoices("args_match", "argsMatch"))
    """Overrides the evaluator's ``args_match`` for this item."""


_MISSING = object()


def _nested(data: Any, path: str) -> Any:
    """AgentV ``getNestedValue``: dot path through objects and (by numeric part) arrays."""
    for part in path.split("."):
        if isinstance(data, list) and part.isascii() and part.isdigit() and str(int(part)) == part and int(part) < len(data):
            data = data[int(part)]
        elif isinstance(data, dict) and part in data:
            data = data[part]
        else:
            return _MISSING
    return data


def args_match(expected: str | dict[str, Any] | None, actual: dict[str, Any], mode: ArgsMatch) -> bool:
    """AgentV's argument matching (``exact`` is the default mode)."""
    if expected is None or expected == "any" or mode == "ignore" or not isinstance(expected, dict):
        return True
    if isinstance(mode, list):
        return all(js_equal(_nested(expected, f), _nested(actual, f)) for f in mode if _nested(expected, f) is not _MISSING)
    if mode == "superset":
        return all(k in actual and js_equal(v, actual[k]) for k, v in expected.items())
    if mode == "subset":
        return all(k in expected and js_equal(v, expected[k]) for k, v in actual.items())
    return js_equal(expected, actual)


class ToolTrajectoryEvaluator(AgentVEvaluator):
    """Modes ``any_order`` (minimums), ``in_order``, ``exact``, ``superset``, ``subset``."""

    name = "tool_trajectory"
    aliases = ("tool-trajectory",)
    default_timeout: ClassVar[float] = 10.0  # deterministic and cheap

    class Config(AgentVConfig):
        type: str = "tool_trajectory"
        mode: Literal["any_order", "in_order", "exact", "superset", "subset"]
        """any_order: each tool in ``minimums`` called at least n times; in_order: ``expected`` appears in order
        (other calls may sit between); exact: position by position; superset: every expected call occurs;
        subset: every actual call is one of ``expected``."""
        minimums: dict[str, int] | None = None
        """Tool → minimum call count (``any_order``)."""
        expected: list[ExpectedTool] | None = None
        """Expected calls (every mode but ``any_order``)."""
        args_match: ArgsMatch | None = Field(default=None, validation_alias=AliasChoices("args_match", "argsMatch"))
        """Default argument matching for the items (default ``exact``)."""

        @model_validator(mode="after")
        def _needs(self) -> ToolTrajectoryEvaluator.Config:
            if self.mode == "any_order" and self.minimums is None:
                raise ValueError("mode any_order needs 'minimums' (tool: minimum call count)")
            if self.mode != "any_order" and self.expected is None:
                raise ValueError(f"mode {self.mode} needs 'expected' (a list of {{tool, args}})")
            return self

    config: Config

    async def score(self, view: CaseView, ctx: EvalContext) -> Outcome:
        if not view.has_output:
            return Outcome(0.0, misses=["No trace available for evaluation"])
        calls = view.tool_calls
        mode = self.config.mode
        if mode == "any_order":
            outcome = self._any_order(calls)
        elif not self.config.expected:
            outcome = self._empty_expected(calls)
        else:
            outcome = {"in_order": self._in_order, "exact": self._exact, "superset": self._superset,
                       "subset": self._subset}[mode](calls)
        outcome.details = {"mode": mode, "tool_calls": [c.tool for c in calls]}
        return outcome

    def _mode(self, item: ExpectedTool) -> ArgsMatch:
        return item.args_match if item.args_match is not None else (self.config.args_match or "exact")

    def _matches(self, item: ExpectedTool, call: ToolCall) -> bool:
        return call.tool == item.tool and args_match(item.args, call.input, self._mode(item))

    def _any_order(self, calls: list[ToolCall]) -> Outcome:
        minimums = self.config.minimums or {}
        if not minimums:
            return Outcome(1.0, hits=["No tool requirements specified"])
        hits: list[str] = []
        misses: list[str] = []
        for tool, minimum in minimums.items():
            count = sum(1 for c in calls if c.tool == tool)
            (hits if count >= minimum else misses).append(f"{tool}: called {count} times (required >={minimum})")
        return Outcome(len(hits) / len(minimums), hits=hits, misses=misses)

    def _empty_expected(self, calls: list[ToolCall]) -> Outcome:
        if self.config.mode != "subset":
            text = "No expected tools specified" if self.config.mode == "superset" else "No tool sequence specified"
            return Outcome(1.0, hits=[text])
        if not calls:
            return Outcome(1.0, hits=["No tool calls and no expected tools"])
        return Outcome(0.0, misses=[f"{len(calls)} unexpected tool call(s) with empty allowed list"])

    @staticmethod
    def _latency(item: ExpectedTool, call: ToolCall, hits: list[str], misses: list[str]) -> str:
        """The latency check of a matched call, noted right after its sequence hit as AgentV does:
        ``pass``, ``fail``, ``skip`` (no duration in the trace) or ``""`` (no ``max_duration_ms``)."""
        if item.max_duration_ms is None:
            return ""
        if call.duration_ms is None:
            return "skip"
        took, limit = js_num(call.duration_ms), js_num(item.max_duration_ms)
        if call.duration_ms <= item.max_duration_ms:
            hits.append(f"{item.tool} completed in {took}ms (max: {limit}ms)")
            return "pass"
        misses.append(f"{item.tool} took {took}ms (max: {limit}ms)")
        return "fail"

    def _sequence_score(self, matched: list[tuple[ExpectedTool, str]], hits: list[str], misses: list[str]) -> Outcome:
        """(sequence hits + latency hits) / (expected items + latency checks not skipped)."""
        expected = self.config.expected or []
        latency_hits = sum(1 for _, status in matched if status == "pass")
        skipped = [item.tool for item, status in matched if status == "skip"]
        total = len(expected) + sum(1 for item in expected if item.max_duration_ms is not None) - len(skipped)
        outcome = Outcome((len(matched) + latency_hits) / total if total else 1.0, hits=hits, misses=misses)
        if skipped:
            outcome.reasoning = "; ".join(f"No duration data for {tool}; latency assertion skipped" for tool in skipped)
        return outcome

    def _in_order(self, calls: list[ToolCall]) -> Outcome:
        hits: list[str] = []
        misses: list[str] = []
        matched = []
        cursor = 0
        for position, item in enumerate(self.config.expected or []):
            found = mismatch = False
            while cursor < len(calls):
                call = calls[cursor]
                if call.tool == item.tool:
                    if args_match(item.args, call.input, self._mode(item)):
                        hits.append(f"Found {item.tool} at position {cursor}")
                        matched.append((item, self._latency(item, call, hits, misses)))
                        found = True
                    else:
                        misses.append(f"Expected {item.tool} at position {position}: tool found at {cursor} but args mismatch")
                        mismatch = True
                    cursor += 1
                    break
                cursor += 1
            if not found and not mismatch:
                misses.append(f"Expected {item.tool} at position {position}, not found in remaining trace")
        return self._sequence_score(matched, hits, misses)

    def _exact(self, calls: list[ToolCall]) -> Outcome:
        expected = self.config.expected or []
        hits: list[str] = []
        misses: list[str] = []
        matched = []
        if len(calls) != len(expected):
            misses.append(f"Expected {len(expected)} tool calls, got {len(calls)}")
        for position, (item, call) in enumerate(zip(expected, calls, strict=False)):
            if call.tool != item.tool:
                misses.append(f"Position {position}: expected {item.tool}, got {call.tool}")
            elif args_match(item.args, call.input, self._mode(item)):
                hits.append(f"Position {position}: {item.tool}")
                matched.append((item, self._latency(item, call, hits, misses)))
            else:
                misses.append(f"Position {position}: {item.tool} args mismatch")
        for position in range(len(calls), len(expected)):
            misses.append(f"Position {position}: expected {expected[position].tool}, got nothing")
        return self._sequence_score(matched, hits, misses)

    def _superset(self, calls: list[ToolCall]) -> Outcome:
        expected = self.config.expected or []
        hits: list[str] = []
        misses: list[str] = []
        consumed: set[int] = set()
        for item in expected:
            index = next((j for j, c in enumerate(calls) if j not in consumed and self._matches(item, c)), None)
            if index is None:
                misses.append(f"Expected {item.tool} not found in actual trajectory")
            else:
                consumed.add(index)
                hits.append(f"Found {item.tool} at position {index}")
        return Outcome(len(hits) / len(expected), hits=hits, misses=misses)

    def _subset(self, calls: list[ToolCall]) -> Outcome:
        if not calls:
            return Outcome(1.0, hits=["No actual tool calls (trivially a subset)"])
        hits: list[str] = []
        misses: list[str] = []
        for position, call in enumerate(calls):
            allowed = any(self._matches(item, call) for item in self.config.expected or [])
            (hits if allowed else misses).append(
                f"Position {position}: {call.tool} is {'in' if allowed else 'not in'} allowed set")
        return Outcome(len(hits) / len(calls), hits=hits, misses=misses)
