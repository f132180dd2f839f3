"""OpenTelemetry GenAI spans → invocations (official semconv, OpenInference, OpenLLMetry, openai-agents).

**Span roles** come from the ``operation`` alias (``gen_ai.operation.name``, ``openinference.span.kind``,
``traceloop.span.kind``, ``agent.span.type``, ``llm.request.type``): *agent* (``invoke_agent``, ``AGENT``,
``agent``), *workflow* (OpenLLMetry ``workflow``), *LLM call* (``chat``, ``generate_content``,
``text_completion``, ``llm_request``, ``LLM``, ``response``/``generation``, ``completion``) and *tool*
(``execute_tool``, ``TOOL``, ``tool``, ``function``). An LLM (or tool) span nested in another one is the
same call seen by two instrumentations: it is merged into the outer one, never counted twice.

**Turn anchors** (one invocation per user turn):

1. the outermost *agent* spans; consecutive ones whose first model call continues the same user message
   (a handoff: same last user text, same number of user messages) are one turn;
2. else the outermost *workflow* spans; 3. else each root span that is, or contains, an LLM call.
   Anchors from 2 and 3 are split where the last user message of their model calls changes, so a root
   span around a multi-turn chat loop gives one invocation per user message.

**Per turn**: ``user_content`` is the last user message of the first model call that recorded its input
(else the agent span's input messages); ``final_response`` is the turn's agent span output, byte for byte,
when it has one (as 0.11), else the assistant text of the last model output that has text. Tool calls come from the model outputs in order;
when an output was not captured (or yields no call while tool spans exist) they come from the tool spans,
with ids taken from the tool-call history in later model inputs. Tool responses come from tool spans
(result, status, call id), completed from the ``tool``-role messages of later model inputs; without tool
spans, from those messages alone. Messages are read from span attributes, span events and OTel log records
attached as events (``readers.otlp_logs``); log events linked to a non-LLM parent with a single LLM child
(OpenLLMetry LangChain) count for that child.

Anything partial (no input or output captured, Python-repr outputs, mismatched call ids, a tool without a
result) is a warning on the ``ConvertedTrace``; a turn with no content at all is dropped with its reason.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field, replace

from ...protocol import IntermediateStepData, InvocationData, ToolCallData, ToolResponseData
from ..model import START_ORDER, ConvertedTrace, Span, SpanEvent, Trace
from ._common import (
    Measure,
    ancestors,
    as_json,
    descendants,
    outermost,
    performance_metrics,
    public_attributes,
    set_trace_metrics,
)
from ._messages import Message, final_text, read_messages, tool_args, tool_output, user_key, user_text
from .aliases import ALIASES, INPUT_MESSAGE_EVENTS, OUTPUT_MESSAGE_EVENTS, TOOL_SPAN_EVENTS, first

__all__ = ["GenAIConverter"]

_ROLES = {
    "invoke_agent": "agent", "agent": "agent", "workflow": "workflow",
    "chat": "llm", "generate_content": "llm", "text_completion": "llm", "llm_request": "llm", "llm": "llm",
    "response": "llm", "generation": "llm", "completion": "llm",
    "execute_tool": "tool", "tool": "tool", "function": "tool",
}
_CAPTURE_HINT = ("content capture is off (set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true), it went to "
                 "OTel log records (attach the *.otlp-logs.json), or the instrumentation does not record it")


def _role(span: Span) -> str | None:
    return _ROLES.get(str(first(span.attributes, "operation", "")).lower())


def _named(spans: list[Span]) -> str:
    more = f" (and {len(spans) - 1} more)" if len(spans) > 1 else ""
    return f"LLM span '{spans[0].name}'{more}"


@dataclass
class _Turn:
    anchor: Span
    spans: list[Span]
    """The anchor and everything below it, start order."""
    start_ns: int = 0
    end_ns: int = 0

    def __post_init__(self) -> None:
        self.start_ns = self.start_ns or min(s.start_ns for s in self.spans)
        self.end_ns = self.end_ns or max(s.end_ns for s in self.spans)


@dataclass
class _Calls:
    """A turn's model calls (nested duplicates merged) with their messages."""

    spans: list[Span]
    inputs: list[list[Message] | None]
    outputs: list[list[Message] | None]
    history_calls: list[ToolCallData] = field(default_factory=list)
    history_results: list[ToolResponseData] = field(default_factory=list)


class GenAIConverter:
    """Converter for traces of the OpenTelemetry GenAI conventions and the instrumentations around them."""

    name = "genai"

    def detect(self, trace: Trace) -> bool:
        return any(_role(s) for s in trace.spans)

    def explain(self, trace: Trace) -> str:
        names = sorted({s.name for s in trace.spans})
        return (f"no GenAI agent, LLM or tool span found among {len(trace.spans)} spans "
                f"(saw: {', '.join(names[:12])}{'…' if len(names) > 12 else ''}); "
                f"spans are recognised by {' / '.join(ALIASES['operation'])}")

    def convert(self, trace: Trace) -> ConvertedTrace:
        view = _TraceView(trace)
        out = ConvertedTrace(trace_id=trace.trace_id, source=trace.source, invocations=[], format=self.name,
                             trace=trace)
        turns = view.turns()
        measures = []
        for turn in turns:
            invocation, measure = view.invocation(turn, out.warnings)
            if invocation is not None:
                out.invocations.append(invocation)
                measures.append(measure)
        ordered = sorted(trace.spans, key=START_ORDER)
        agents = [s for s in ordered if view.roles[s.span_id] == "agent"]
        out.session_id = next((v for s in ordered if (v := first(s.attributes, "session_id"))), None)
        out.eval_id = next((v for s in ordered if (v := first(s.attributes, "eval_id"))), None)
        out.agent_name = next((v for s in agents + ordered if (v := first(s.attributes, "agent_name"))), None)
        if out.agent_name is None and agents:
            out.agent_name = agents[0].name.removeprefix(str(first(agents[0].attributes, "operation")) + " ")
        if turns:
            out.start_ns = turns[0].start_ns
            out.resource = dict(turns[0].anchor.resource)
            out.attributes = public_attributes(turns[0].anchor)
            out.eval_id = out.eval_id or first(out.resource, "eval_id")  # set on the resource by some harnesses
        else:
            out.warnings.append(self.explain(trace) if not self.detect(trace) else
                                f"no turn found: none of the {len(trace.spans)} spans is an agent or workflow span "
                                "or a root that contains an LLM call")
        set_trace_metrics(out, measures)
        return out


class _TraceView:
    """One trace's span tree with per-span roles and cached messages."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.by_id = {s.span_id: s for s in trace.spans}
        self.children = trace.children()
        self.roles = {s.span_id: _role(s) for s in trace.spans}
        self._messages: dict[tuple[str, bool], list[Message] | None] = {}
        self._merged: dict[int, tuple[list[Span], list[Span]]] = {}

    # -- anchors and turns ---------------------------------------------------------------------------

    def turns(self) -> list[_Turn]:
        turns: list[_Turn] = []
        for anchor in self._anchors():
            spans = [anchor, *descendants(anchor, self.children)]
            for piece in [_Turn(anchor, spans)] if self.roles[anchor.span_id] == "agent" else self._split(anchor, spans):
                key = self._key(piece)
                if turns and key is not None and key == self._key(turns[-1]):
                    last = turns[-1]
                    turns[-1] = _Turn(last.anchor, last.spans + piece.spans, last.start_ns, max(last.end_ns, piece.end_ns))
                else:
                    turns.append(piece)
        return turns

    def _anchors(self) -> list[Span]:
        for wanted in ("agent", "workflow"):
            found = [s for s in self.trace.spans if self.roles[s.span_id] == wanted]
            if found:
                return outermost(found, self.by_id)
        roots = [s for s in self.trace.spans if s.parent_span_id not in self.by_id]
        return sorted((r for r in roots if self._has_llm([r, *descendants(r, self.children)])), key=START_ORDER)

    def _has_llm(self, spans: list[Span]) -> bool:
        """Whether ``_llm_spans(spans)`` would find any (without merging them)."""
        return any(self.roles[s.span_id] == "llm" for s in spans)

    def _split(self, anchor: Span, spans: list[Span]) -> list[_Turn]:
        """Cut a non-agent anchor where the user message of its model calls changes."""
        starts, current = [], None
        for call in self._llm_spans(spans):
            key = user_key(self._read(call, output=False))
            if key is not None and current is not None and key != current:
                starts.append(call.start_ns)
            current = key if key is not None else current
        if not starts:
            return [_Turn(anchor, spans)]
        pieces: list[list[Span]] = [[] for _ in range(len(starts) + 1)]
        for span in spans[1:]:
            pieces[bisect.bisect_right(starts, span.start_ns)].append(span)
        return [_Turn((self._llm_spans(p) or p)[0], p) for p in pieces if p]

    def _key(self, turn: _Turn) -> tuple[int, str] | None:
        for call in self._llm_spans(turn.spans):
            key = user_key(self._read(call, output=False))
            if key is not None:
                return key
        return None

    # -- model calls ---------------------------------------------------------------------------------

    def _llm_spans(self, spans: list[Span]) -> list[Span]:
        """Outermost LLM spans, each merged with the LLM spans nested in it (attributes: outer wins).

        Asked up to three times of one turn's span list (``_split``, ``_key``, ``_calls``): the answer is kept
        by the list's identity, the list itself kept beside it so that its id cannot be reused meanwhile
        (span lists are never changed once built)."""
        cached = self._merged.get(id(spans))
        if cached is not None and cached[0] is spans:
            return cached[1]
        merged = self._merge_llm(spans)
        self._merged[id(spans)] = (spans, merged)
        return merged

    def _merge_llm(self, spans: list[Span]) -> list[Span]:
        llm = [s for s in spans if self.roles[s.span_id] == "llm"]
        ids = {s.span_id for s in llm}
        groups: dict[str, list[Span]] = {}
        for span in llm:
            top = span
            for ancestor in ancestors(span, self.by_id):
                top = ancestor if ancestor.span_id in ids else top
            groups.setdefault(top.span_id, []).append(span)
        merged = []
        for top_id, group in groups.items():
            outer = self.by_id[top_id]
            inner = [s for s in group if s is not outer]
            if inner:
                attributes = {k: v for s in reversed(inner) for k, v in s.attributes.items()} | outer.attributes
                outer = replace(outer, attributes=attributes, events=outer.events + [e for s in inner for e in s.events])
            merged.append(outer)
        return sorted(merged, key=START_ORDER)

    def _events(self, span: Span) -> list[SpanEvent]:
        """The span's events, plus its parent's when the parent is not an LLM span and has only this LLM child
        (log events linked to a wrapper span), unless the span has message events of its own (Strands repeats
        a model call's messages on its event-loop-cycle parent)."""
        parent = self.by_id.get(span.parent_span_id or "")
        if parent is None or self.roles[span.span_id] != "llm" or self.roles[parent.span_id] == "llm":
            return span.events
        if any(e.name in INPUT_MESSAGE_EVENTS or e.name in OUTPUT_MESSAGE_EVENTS for e in span.events):
            return span.events
        return span.events + parent.events if self._llm_children(parent.span_id) == 1 else span.events

    def _llm_children(self, span_id: str) -> int:
        """How many LLM spans are direct children of ``span_id`` (counted once per parent: a turn with
        200k LLM calls must stay linear)."""
        counts = self.__dict__.setdefault("_llm_child_counts", {})
        if span_id not in counts:
            counts[span_id] = sum(1 for s in self.children.get(span_id, ()) if self.roles[s.span_id] == "llm")
        return counts[span_id]

    def _read(self, span: Span, *, output: bool) -> list[Message] | None:
        key = (span.span_id, output)
        if key not in self._messages:
            self._messages[key] = read_messages(span.attributes, self._events(span), output=output)
        return self._messages[key]

    def _calls(self, spans: list[Span]) -> _Calls:
        llm = self._llm_spans(spans)
        calls = _Calls(llm, [self._read(s, output=False) for s in llm], [self._read(s, output=True) for s in llm])
        for found in calls.inputs:
            found = found or []
            users = [i for i, m in enumerate(found) if m.role == "user"]
            for message in found[users[-1] + 1 if users else 0:]:
                calls.history_calls += [c for c in message.tool_calls if c not in calls.history_calls]
                calls.history_results += [r for r in message.tool_results if r not in calls.history_results]
        return calls

    # -- one turn ------------------------------------------------------------------------------------

    def invocation(self, turn: _Turn, warnings: list[str]) -> tuple[InvocationData | None, Measure]:
        where = f"turn {turn.anchor.span_id} ('{turn.anchor.name}')"
        problems: list[str] = []
        measure = Measure()
        measure.add_turn_time(turn.start_ns, turn.end_ns)
        calls = self._calls(turn.spans)
        for span in calls.spans:
            measure.add_llm(span)
        agents = [s for s in turn.spans if self.roles[s.span_id] == "agent"]
        tools = outermost([s for s in turn.spans if self.roles[s.span_id] == "tool"], self.by_id)

        user_content = next((t for found in calls.inputs if (t := user_text(found))), None)
        user_content = user_content or next((t for s in agents if (t := user_text(self._read(s, output=False)))), None)
        # the agent's answer as its span recorded it (agentevals-cli 0.11: the turn's agent span output wins over
        # its last model call's; Strands' answer ends with a newline the model's text does not have)
        final_response = final_text(self._read(turn.anchor, output=True)) if turn.anchor in agents else None
        final_response = final_response or next((t for found in reversed(calls.outputs) if (t := final_text(found))), None)
        final_response = final_response or next(
            (t for s in reversed(agents) if (t := final_text(self._read(s, output=True)))), None)
        no_input = [s for s, found in zip(calls.spans, calls.inputs, strict=True) if found is None]
        no_output = [s for s, found in zip(calls.spans, calls.outputs, strict=True) if found is None]
        if user_content is None and no_input:
            problems.append(f"{_named(no_input)} has no input messages: {_CAPTURE_HINT}; user_content is empty")
        elif user_content is None and calls.spans:
            problems.append(f"{_named(calls.spans)} input has no user message; user_content is empty")

        tool_calls = [c for found in calls.outputs for m in found or () for c in m.tool_calls]
        if tools and (no_output or not tool_calls):
            tool_calls = self._span_calls(tools, calls.history_calls, problems)
        elif not calls.spans or no_output:
            tool_calls = tool_calls or list(calls.history_calls)
        if no_output:
            problems.append(f"{_named(no_output)} has no output messages (not captured by this instrumentation)"
                            + ("; final_response is empty" if final_response is None else "")
                            + ("; tool calls read from tool spans" if tools else ""))
        responses = self._responses(tools, calls.history_results, tool_calls, problems)
        for span, found in [*zip(calls.spans, calls.inputs, strict=True), *zip(calls.spans, calls.outputs, strict=True)]:
            for note in dict.fromkeys(n for m in found or () for n in m.notes):
                problems.append(f"LLM span '{span.name}': {note}")
        problems += _id_problems(calls.history_calls, calls.history_results, tool_calls, responses)

        for span in tools:
            measure.add_tool(span, self._tool_name(span))
        measure.tool_names += [c.name for c in tool_calls if c.name not in measure.tool_names]
        measure.tool_calls = len(tool_calls)

        if user_content is None and final_response is None and not tool_calls and not responses:
            reason = "; ".join(problems) if problems else "no LLM call or tool span under it"
            warnings.append(f"{where}: no invocation: {reason}")
            return None, measure
        warnings.extend(f"{where}: {p}" for p in dict.fromkeys(problems))
        return InvocationData(
            invocation_id=turn.anchor.span_id,
            user_content=user_content or "",
            final_response=final_response,
            intermediate_steps=IntermediateStepData(tool_calls=tool_calls, tool_responses=responses),
            performance_metrics=performance_metrics(measure),
            trace_id=turn.anchor.trace_id,
            span_id=turn.anchor.span_id,
        ), measure

    # -- tools ---------------------------------------------------------------------------------------

    def _tool_name(self, span: Span) -> str:
        name = first(span.attributes, "tool_name")
        return str(name) if name else span.name.removeprefix("execute_tool ").removesuffix(".tool")

    @staticmethod
    def _lookup(span: Span, field_name: str) -> object:
        """An attribute of the span, else of its events (``gen_ai.tool.input`` / ``gen_ai.tool.output``), else
        the pre-1.37 per-message event that carries it (``TOOL_SPAN_EVENTS``)."""
        for attrs in (span.attributes, *(e.attributes for e in span.events)):
            value = first(attrs, field_name)
            if value is not None:
                return value
        event_name, key = TOOL_SPAN_EVENTS.get(field_name, ("", ""))
        return next((e.attributes[key] for e in span.events if e.name == event_name and key in e.attributes), None)

    def _call_id(self, span: Span) -> str | None:
        value = self._lookup(span, "tool_call_id")
        return str(value) if value not in (None, "") else None

    def _span_calls(self, tools: list[Span], history: list[ToolCallData], problems: list[str]) -> list[ToolCallData]:
        calls, unused = [], list(history)
        for span in tools:
            name, raw = self._tool_name(span), self._lookup(span, "tool_args")
            args, ok = tool_args(raw)
            if not ok:
                problems.append(f"tool span '{span.name}' arguments are not a JSON object: {str(raw)[:60]}")
            call = ToolCallData(name=name, args=args, id=self._call_id(span))
            match = (next((h for h in unused if h.name == name and h.args == args), None)
                     or next((h for h in unused if h.name == name), None))
            if match is not None:
                unused.remove(match)
                call.id = call.id or match.id
                call.args = call.args or match.args
            calls.append(call)
        return calls

    def _responses(self, tools: list[Span], history: list[ToolResponseData], calls: list[ToolCallData],
                   problems: list[str]) -> list[ToolResponseData]:
        names = {c.id: c.name for c in calls if c.id}
        if not tools:
            return _pair(calls, [r.model_copy(update={"name": r.name or names.get(r.id or "", "")}) for r in history])
        responses, unused = [], list(history)
        for span in tools:
            raw = self._lookup(span, "tool_result")
            output, call_id = tool_output(raw) if raw is not None else ("", None)
            call_id = self._call_id(span) or call_id
            match = (next((h for h in unused if call_id and h.id == call_id), None)
                     or next((h for h in unused if output and h.output == output), None)
                     or next((h for h in unused if not output and not call_id), None))
            if match is not None:
                unused.remove(match)
                output, call_id = output or match.output, call_id or match.id
            if raw is None and match is None:
                problems.append(f"tool span '{span.name}' has no result: {_CAPTURE_HINT}")
            parsed = as_json(output)
            responses.append(ToolResponseData(
                name=self._tool_name(span), output=output, id=call_id, status=span.status_code,
                response=parsed if isinstance(parsed, (dict, list)) else None,
            ))
        return _pair(calls, responses)


def _pair(calls: list[ToolCallData], responses: list[ToolResponseData]) -> list[ToolResponseData]:
    """Give each response without an id the id of the next unanswered call of the same tool."""
    unanswered = [c for c in calls if c.id and c.id not in {r.id for r in responses}]
    for response in responses:
        match = None if response.id else next((c for c in unanswered if c.name == response.name), None)
        if match is not None:
            response.id = match.id
            unanswered.remove(match)
    return responses


def _id_problems(history_calls: list[ToolCallData], history_results: list[ToolResponseData],
                 calls: list[ToolCallData], responses: list[ToolResponseData]) -> list[str]:
    """Tool call ids that pair with nothing, in the model's input history and in the invocation itself."""
    problems = []
    call_ids, result_ids = {c.id for c in history_calls if c.id}, {r.id for r in history_results if r.id}
    if call_ids - result_ids and result_ids - call_ids:
        problems.append(f"the model input history pairs tool call id(s) {_ids(call_ids - result_ids)} with tool "
                        f"response id(s) {_ids(result_ids - call_ids)} (an OpenAI Responses item id 'fc_…' "
                        "recorded where the call id 'call_…' belongs)")
    call_ids, result_ids = {c.id for c in calls if c.id}, {r.id for r in responses if r.id}
    if call_ids and result_ids - call_ids:
        problems.append(f"tool response id(s) {_ids(result_ids - call_ids)} match no tool call id "
                        f"(calls: {_ids(call_ids)})")
    return problems


def _ids(ids: set[str]) -> str:
    return ", ".join(repr(i) for i in sorted(ids))
