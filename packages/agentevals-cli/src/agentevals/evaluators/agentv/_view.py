"""The one mapping from our case (turns, golden turns, spans) to what AgentV evaluators read.

See ``docs/agentv-evaluators.md`` ("What each type reads"). In short:

- ``answer`` (AgentV's candidate) = the final response of the last turn that has one.
- ``question`` = the user messages of every turn, joined by a blank line; ``input`` = them as messages.
- ``output`` = one assistant message per turn (``content`` = final response, ``tool_calls`` with
  ``tool``/``input``/``output``/``id`` and, from the ``execute_tool`` spans, times and ``duration_ms``).
- ``expected_output`` = one assistant message per golden turn; ``reference_answer`` = the last one's
  content (or its tool calls as JSON when it has no text).
- ``criteria`` = the eval case's ``criteria`` (or ``expected_outcome``) key, else its rubric texts.
- ``trace`` summary, ``token_usage`` (input = prompt tokens, output, cached = cache reads),
  ``cost_usd`` (span cost attributes), ``duration_ms`` (sum of the turns' latency) come from the turns'
  ``performance_metrics`` and the raw spans; missing figures stay ``None``.

``payload`` is the code-judge stdin document built from a view; ``CaseView.of_text`` is the view of one
text answer with no trace, which ``agentevals eval assert`` sends (``assert_payload``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...protocol import InvocationData
    from ...traces.model import Span
    from ..base import EvalContext

__all__ = ["EXPLORATION_TOOLS", "CaseView", "ToolCall"]

EXPLORATION_TOOLS = ("read", "grep", "glob", "search", "list", "Read", "Grep", "Glob", "WebSearch", "WebFetch")
"""AgentV's default exploration tools (``target_exploration_ratio``)."""

_COST_KEYS = ("gen_ai.usage.cost", "gen_ai.usage.cost_usd", "llm.cost.total", "llm.usage.cost")
_CALL_ID_KEYS = ("gen_ai.tool.call.id", "tool_call.id", "tool.call.id")
_TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name")


@dataclass
class ToolCall:
    """One tool call as AgentV's ``ToolCall`` (``tool``, ``input``, ``output``, timing)."""

    tool: str
    input: dict[str, Any]
    output: Any = None
    id: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    duration_ms: float | None = None

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"tool": self.tool, "input": self.input}
        for key in ("output", "id", "start_time", "end_time", "duration_ms"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data


@dataclass
class CaseView:
    """Everything an AgentV evaluator may read about one case, computed once per case."""

    question: str = ""
    criteria: str = ""
    answer: str = ""
    reference_answer: str = ""
    input: list[dict[str, Any]] = field(default_factory=list)
    output: list[dict[str, Any]] = field(default_factory=list)
    expected_output: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    llm_call_count: int | None = None
    token_usage: dict[str, int] | None = None
    cost_usd: float | None = None
    duration_ms: float | None = None
    start_time: str | None = None
    end_time: str | None = None
    error_count: int = 0
    has_golden: bool = False
    """An eval case (golden turns) was matched."""
    has_trace: bool = True
    """False for a view of one text answer (``of_text``): no trace summary, ``trace`` is null."""

    @property
    def has_output(self) -> bool:
        return bool(self.output)

    @classmethod
    def of(cls, ctx: EvalContext) -> CaseView:
        """The view of ``ctx`` (built once and kept on the context; composite members share it)."""
        view = getattr(ctx, "_agentv_view", None)
        if view is None:
            view = _build(ctx)
            try:
                ctx._agentv_view = view  # type: ignore[attr-defined]  # a cache EvalContext does not declare
            except AttributeError:  # a context that cannot carry it is rebuilt per evaluator
                pass
        return view

    @classmethod
    def of_text(cls, answer: str, question: str = "", *, expected_output: str = "", criteria: str = "") -> CaseView:
        """The view of one text answer without a trace (``agentevals eval assert``): figures stay ``None``."""
        return cls(
            question=question,
            criteria=criteria,
            answer=answer,
            reference_answer=expected_output,
            input=[{"role": "user", "content": question}],
            output=[{"role": "assistant", "content": answer}],
            expected_output=[{"role": "assistant", "content": expected_output}] if expected_output else [],
            has_golden=bool(expected_output),
            has_trace=False,
        )

    def trace_summary(self) -> dict[str, Any] | None:
        """AgentV's ``TraceSummary`` in snake_case (``None`` when there are no turns or no trace).

        A count the trace does not record is omitted, never ``null``: AgentV's ``defineCodeJudge`` validates
        ``trace.llmCallCount`` as an optional number and rejects a null.
        """
        if not self.has_output or not self.has_trace:
            return None
        by_name: dict[str, int] = {}
        durations: dict[str, list[float]] = {}
        for call in self.tool_calls:
            by_name[call.tool] = by_name.get(call.tool, 0) + 1
            if call.duration_ms is not None:
                durations.setdefault(call.tool, []).append(call.duration_ms)
        summary: dict[str, Any] = {
            "event_count": len(self.tool_calls),
            "tool_names": sorted(by_name),
            "tool_calls_by_name": by_name,
            "error_count": self.error_count,
        }
        if self.llm_call_count is not None:  # unknown counts are left out: defineCodeJudge refuses null
            summary["llm_call_count"] = self.llm_call_count
        if durations:
            summary["tool_durations"] = durations
        return summary

    def exploration_ratio(self, tools: tuple[str, ...] = EXPLORATION_TOOLS) -> float | None:
        """Share of tool calls that went to exploration tools (``None`` without tool calls)."""
        if not self.tool_calls:
            return None
        return sum(1 for c in self.tool_calls if c.tool in tools) / len(self.tool_calls)

    def variables(self) -> dict[str, str]:
        """Prompt-template variables (``{{answer}}`` …), current names and the older aliases."""
        dump = lambda value: json.dumps(value, indent=2, ensure_ascii=False)  # noqa: E731
        values = {
            "answer": self.answer.strip(),
            "question": self.question.strip(),
            "criteria": self.criteria.strip(),
            "reference_answer": self.reference_answer.strip(),
            "expected_output": dump(self.expected_output),
            "input": dump(self.input),
            "output": dump(self.output),
            "file_changes": "",
        }
        aliases = {"candidate_answer": "answer", "expected_outcome": "criteria", "input_messages": "input",
                   "output_messages": "output", "expected_messages": "expected_output"}
        values.update({alias: values[name] for alias, name in aliases.items()})
        return values

    def payload(self, *, criteria: str | None = None, config: dict[str, Any] | None = None) -> dict[str, Any]:
        """The code-judge stdin document (AgentV's snake_case payload)."""
        return {
            "question": self.question,
            "criteria": self.criteria if criteria is None else criteria,
            "expected_output": self.expected_output,
            "reference_answer": self.reference_answer,
            "answer": self.answer,
            "output": self.output,
            "guideline_files": [],
            "input_files": [],
            "input": self.input,
            "trace": self.trace_summary(),
            "token_usage": self.token_usage,
            "cost_usd": self.cost_usd,
            "duration_ms": self.duration_ms,
            "start_time": self.start_time,
            "end_time": self.end_time,
            "file_changes": None,
            "workspace_path": None,
            "config": config or None,
        }

    def assert_payload(self, *, config: dict[str, Any] | None = None) -> dict[str, Any]:
        """``payload`` as ``agentv eval assert`` sends it: plus ``metadata: {}`` and the plain-text accessors
        newer AgentV graders read (``input_text``, ``output_text``, ``expected_output_text``)."""
        return {**self.payload(config=config), "metadata": {}, "input_text": self.question,
                "output_text": self.answer, "expected_output_text": self.reference_answer}


def _iso(ns: int) -> str:
    moment = datetime.fromtimestamp(ns / 1e9, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


class _Spans:
    """Lookups over the raw spans: by span id, tool spans by call id and by tool name, costs."""

    def __init__(self, ctx: EvalContext) -> None:
        self.by_id: dict[str, Span] = {}
        self.tool_by_call: dict[str, Span] = {}
        self.tool_by_name: dict[str, list[Span]] = defaultdict(list)
        for trace in ctx.traces:
            for span in trace.trace.spans if trace.trace is not None else []:
                self.by_id[span.span_id] = span
                if _is_tool_span(span):
                    call_id = _first(span.attributes, _CALL_ID_KEYS)
                    if call_id:
                        self.tool_by_call[str(call_id)] = span
                    name = _first(span.attributes, _TOOL_NAME_KEYS) or span.name.removeprefix("execute_tool").strip()
                    self.tool_by_name[str(name)].append(span)
        for spans in self.tool_by_name.values():
            spans.sort(key=lambda s: s.start_ns)
        self._used: set[str] = set()

    def tool_span(self, name: str, call_id: str | None) -> Span | None:
        span = self.tool_by_call.get(call_id) if call_id else None
        if span is None:
            span = next((s for s in self.tool_by_name.get(name, []) if s.span_id not in self._used), None)
        if span is not None:
            self._used.add(span.span_id)
        return span

    def cost(self) -> float | None:
        """Sum of the innermost spans carrying a cost attribute (parents repeating it are skipped)."""
        costly = {sid: s for sid, s in self.by_id.items() if _first(s.attributes, _COST_KEYS) is not None}
        if not costly:
            return None
        shadowed: set[str] = set()
        for span in costly.values():
            parent = span.parent_span_id
            while parent and parent not in shadowed:
                shadowed.add(parent)
                parent = self.by_id[parent].parent_span_id if parent in self.by_id else None
        total = 0.0
        for sid, span in costly.items():
            if sid not in shadowed:
                try:
                    total += float(_first(span.attributes, _COST_KEYS))
                except (TypeError, ValueError):
                    continue
        return total


def _first(attrs: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((attrs[k] for k in keys if attrs.get(k) not in (None, "")), None)


def _is_tool_span(span: Span) -> bool:
    attrs = span.attributes
    return (attrs.get("gen_ai.operation.name") == "execute_tool" or span.name.startswith("execute_tool")
            or str(attrs.get("openinference.span.kind", "")).upper() == "TOOL"
            or attrs.get("traceloop.span.kind") == "tool")


def _tool_calls(inv: InvocationData, spans: _Spans) -> list[ToolCall]:
    responses = list(inv.intermediate_steps.tool_responses)
    calls = []
    for call in inv.intermediate_steps.tool_calls:
        response = next((r for r in responses if call.id and r.id == call.id), None)
        if response is None:
            response = next((r for r in responses if r.name == call.name), None)
        if response is not None:
            responses.remove(response)
        span = spans.tool_span(call.name, call.id)
        calls.append(ToolCall(
            tool=call.name,
            input=dict(call.args or {}),
            output=None if response is None else (response.response if response.response is not None else response.output),
            id=call.id,
            start_time=_iso(span.start_ns) if span else None,
            end_time=_iso(span.end_ns) if span else None,
            duration_ms=round(span.duration_ms, 3) if span else None,
        ))
    return calls


def _turn_duration(inv: InvocationData, spans: _Spans) -> float | None:
    overall = _get(inv.performance_metrics, "latency", "overall")
    if isinstance(overall, dict) and overall.get("max") is not None:
        return float(overall["max"])
    span = spans.by_id.get(inv.span_id) if inv.span_id else None
    return round(span.duration_ms, 3) if span is not None else None


def _sum_known(values: list[float | None]) -> float | None:
    return None if not values or any(v is None for v in values) else float(sum(v for v in values if v is not None))


def _tokens(perf: dict[str, Any] | None) -> dict[str, int] | None:
    tokens = _get(perf, "tokens")
    if not isinstance(tokens, dict) or tokens.get("total_prompt") is None:
        return None
    return {"input": int(tokens.get("total_prompt") or 0), "output": int(tokens.get("total_output") or 0),
            "cached": int(tokens.get("cache_read_tokens") or 0)}


def _case_figures(ctx: EvalContext, invocations: list[InvocationData], spans: _Spans) -> dict[str, Any]:
    """Token usage, LLM calls, cost and duration: the whole case's figures, else the turns' summed."""
    turn_perfs = [inv.performance_metrics for inv in invocations]
    tokens = _tokens(ctx.performance_metrics)
    if tokens is None and turn_perfs and all(_tokens(p) for p in turn_perfs):
        parts = [_tokens(p) or {} for p in turn_perfs]
        tokens = {k: sum(p[k] for p in parts) for k in ("input", "output", "cached")}
    llm_calls = _get(ctx.performance_metrics, "counts", "llm_calls")
    if llm_calls is None and turn_perfs and all(_get(p, "counts", "llm_calls") is not None for p in turn_perfs):
        llm_calls = sum(int(_get(p, "counts", "llm_calls")) for p in turn_perfs)
    cost = _get(ctx.performance_metrics, "cost_usd")
    if cost is None:
        costs = [_get(p, "cost_usd") for p in turn_perfs]
        cost = _sum_known(costs) if any(c is not None for c in costs) else spans.cost()
    duration = _sum_known([_turn_duration(inv, spans) for inv in invocations])
    if duration is None:
        overall = _get(ctx.performance_metrics, "latency", "overall")
        if isinstance(overall, dict) and overall.get("count") == 1:
            duration = overall.get("max")
    turn_spans = [spans.by_id[inv.span_id] for inv in invocations if inv.span_id and inv.span_id in spans.by_id]
    return {
        "token_usage": tokens,
        "llm_call_count": None if llm_calls is None else int(llm_calls),
        "cost_usd": None if cost is None else float(cost),
        "duration_ms": None if duration is None else float(duration),
        "start_time": _iso(min(s.start_ns for s in turn_spans)) if turn_spans else None,
        "end_time": _iso(max(s.end_ns for s in turn_spans)) if turn_spans else None,
    }


def _criteria(ctx: EvalContext) -> str:
    case = ctx.eval_case
    if case is None:
        return ""
    for key in ("criteria", "expected_outcome"):
        value = case.metadata.get(key) or case.raw.get(key)
        if isinstance(value, str) and value.strip():
            return value
    texts = [_get(r, "rubric_content", "text_property") or r.get("text") for r in case.rubrics if isinstance(r, dict)]
    return "\n".join(t for t in texts if isinstance(t, str) and t)


def _reference_answer(message: dict[str, Any] | None) -> str:
    if not message:
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if content is not None:
        return json.dumps(content, indent=2, ensure_ascii=False)
    return json.dumps(message.get("tool_calls", []), ensure_ascii=False) if message.get("tool_calls") else ""


def _build(ctx: EvalContext) -> CaseView:
    spans = _Spans(ctx)
    invocations = list(ctx.invocations)
    golden = list(ctx.expected_invocations or (ctx.eval_case.conversation if ctx.eval_case else []))
    output, all_calls = [], []
    errors = 0
    for inv in invocations:
        calls = _tool_calls(inv, spans)
        all_calls += calls
        errors += sum(1 for r in inv.intermediate_steps.tool_responses if (r.status or "").upper() == "ERROR")
        message: dict[str, Any] = {"role": "assistant"}
        if inv.final_response is not None:
            message["content"] = inv.final_response
        if calls:
            message["tool_calls"] = [c.as_json() for c in calls]
        turn_tokens = _tokens(inv.performance_metrics)
        if turn_tokens:
            message["token_usage"] = turn_tokens
        duration = _turn_duration(inv, spans)
        if duration is not None:
            message["duration_ms"] = duration
        output.append(message)
    expected = []
    for inv in golden:
        message = {"role": "assistant"}
        if inv.final_response is not None:
            message["content"] = inv.final_response
        if inv.intermediate_steps.tool_calls:
            message["tool_calls"] = [{"tool": c.name, "input": dict(c.args or {})} for c in inv.intermediate_steps.tool_calls]
        if len(message) > 1:
            expected.append(message)
    users = [inv.user_content for inv in invocations if inv.user_content] or [
        inv.user_content for inv in golden if inv.user_content]
    answer = next((inv.final_response for inv in reversed(invocations) if inv.final_response is not None), "")
    return CaseView(
        question="\n\n".join(users),
        criteria=_criteria(ctx),
        answer=answer,
        reference_answer=_reference_answer(expected[-1] if expected else None),
        input=[{"role": "user", "content": text} for text in users],
        output=output,
        expected_output=expected,
        tool_calls=all_calls,
        error_count=errors,
        has_golden=bool(golden),
        **_case_figures(ctx, invocations, spans),
    )
