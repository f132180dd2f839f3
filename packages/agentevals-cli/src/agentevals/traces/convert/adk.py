"""Google ADK spans → invocations.

ADK (``gcp.vertex.agent`` scope) emits one ``invocation`` span per user turn, ``invoke_agent <name>``
below it, one ``call_llm`` span per model call (newer releases: ``generate_content <model>``) carrying
the request/response as JSON in ``gcp.vertex.agent.llm_request`` / ``llm_response``, and one
``execute_tool <name>`` span per tool call with its args and response.

Per turn: the user content is the last user text of the first model request; the final response is the
text of the last model response; tool calls come from the model responses' ``function_call`` parts in
order (falling back to ``execute_tool`` spans), tool responses from ``execute_tool`` spans.
"""

from __future__ import annotations

from typing import Any, Optional

from ...protocol import IntermediateStepData, InvocationData, ToolCallData, ToolResponseData
from ..model import ConvertedTrace, Span, Trace
from ._common import (
    Measure,
    as_json,
    as_text,
    descendants,
    outermost,
    performance_metrics,
    public_attributes,
    set_trace_metrics,
)
from .aliases import first

__all__ = ["AdkConverter"]

ADK_SCOPE = "gcp.vertex.agent"


def _is_llm(span: Span) -> bool:
    return span.name == "call_llm" or (span.name.startswith("generate_content") and _is_adk(span))


def _is_adk(span: Span) -> bool:
    return span.scope == ADK_SCOPE or any(k.startswith("gcp.vertex.agent.") for k in span.attributes)


def _id(value: Any) -> Optional[str]:
    """A name or id attribute as text (None when absent or not a scalar)."""
    if isinstance(value, str):
        return value or None
    return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _parts_text(content: Any, *, skip_thoughts: bool = False) -> Optional[str]:
    """The text parts of a genai Content dict, concatenated as they are (None when there are none).

    Nothing is added between parts (agentevals-cli 0.11 concatenated them too): the text is the model's."""
    if not isinstance(content, dict):
        return None
    parts = content.get("parts")
    texts = [
        p["text"]
        for p in (parts if isinstance(parts, list) else ())
        if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"]
        and not (skip_thoughts and p.get("thought"))
    ]
    return "".join(texts) if texts else None


class AdkConverter:
    """Converter for traces recorded from Google ADK agents."""

    name = "adk"

    def detect(self, trace: Trace) -> bool:
        return any(s.name == "invocation" or _is_llm(s) or (s.name.startswith("execute_tool") and _is_adk(s))
                   for s in trace.spans)

    def convert(self, trace: Trace) -> ConvertedTrace:
        children = trace.children()
        anchors = self._anchors(trace)
        out = ConvertedTrace(trace_id=trace.trace_id, source=trace.source, invocations=[], format=self.name,
                             trace=trace)
        measures = []
        for anchor in anchors:
            below = descendants(anchor, children)
            invocation, measure = self._invocation(anchor, below, out.warnings)
            if invocation is not None:
                out.invocations.append(invocation)
                measures.append(measure)
            for span in [anchor, *below]:
                out.session_id = out.session_id or first(span.attributes, "session_id")
                out.agent_name = out.agent_name or first(span.attributes, "agent_name")
                out.eval_id = out.eval_id or first(span.attributes, "eval_id")
        if anchors:
            out.start_ns = anchors[0].start_ns
            out.resource = dict(anchors[0].resource)
            out.attributes = public_attributes(anchors[0])
            out.eval_id = out.eval_id or first(out.resource, "eval_id")  # set on the resource by some harnesses
        set_trace_metrics(out, measures)
        if not anchors:
            out.warnings.append(self.explain(trace))
        return out

    def explain(self, trace: Trace) -> str:
        names = sorted({s.name for s in trace.spans})
        return (f"no ADK 'invocation' or 'invoke_agent' span found among {len(trace.spans)} spans "
                f"(saw: {', '.join(names[:12])}{'…' if len(names) > 12 else ''})")

    # -- turn anchors --------------------------------------------------------------------------------

    def _anchors(self, trace: Trace) -> list[Span]:
        anchors = [s for s in trace.spans if s.name == "invocation"]
        if not anchors:
            # Releases without an ``invocation`` span: the outermost ADK invoke_agent spans.
            by_id = {s.span_id: s for s in trace.spans}
            anchors = outermost((s for s in trace.spans if s.name.startswith("invoke_agent") and _is_adk(s)), by_id)
        return sorted(anchors, key=lambda s: s.start_ns)

    # -- one turn ------------------------------------------------------------------------------------

    def _invocation(self, anchor: Span, spans: list[Span], warnings: list[str]) -> tuple[Optional[InvocationData], Measure]:
        measure = Measure()
        measure.add_turn(anchor)
        llm_spans = [s for s in spans if s.name == "call_llm"] or [s for s in spans if _is_llm(s)]
        tool_spans = [s for s in spans if s.name.startswith("execute_tool")]
        for span in llm_spans:
            measure.add_llm(span)

        user_content: Optional[str] = None
        final_response: Optional[str] = None
        calls: list[ToolCallData] = []
        for span in llm_spans:
            if user_content is None:  # the request (the whole history, the largest attribute) is read until one has it
                request = as_json(first(span.attributes, "adk_llm_request"))
                if isinstance(request, dict):
                    user_content = self._last_user_text(request.get("contents") or [])
            response = as_json(first(span.attributes, "adk_llm_response"))
            if isinstance(response, dict):
                content = response.get("content") if isinstance(response.get("content"), dict) else None
                parts = (content or {}).get("parts")
                for part in parts if isinstance(parts, list) else ():
                    call = part.get("function_call") if isinstance(part, dict) else None
                    if isinstance(call, dict) and isinstance(call.get("name"), str) and call["name"]:
                        args = call.get("args")
                        calls.append(ToolCallData(name=call["name"], args=args if isinstance(args, dict) else {},
                                                  id=_id(call.get("id"))))
                text = _parts_text(content, skip_thoughts=True)
                if text is not None:
                    final_response = text

        responses = []
        for span in tool_spans:
            name = _id(first(span.attributes, "tool_name")) or span.name.removeprefix("execute_tool").strip()
            measure.add_tool(span, name)
            raw = first(span.attributes, "tool_result")
            parsed = as_json(raw)
            responses.append(ToolResponseData(
                name=name,
                output=as_text(raw),
                id=_id(first(span.attributes, "tool_call_id")),
                status=span.status_code,
                response=parsed if isinstance(parsed, (dict, list)) else None,
            ))
        if not calls:
            for span in tool_spans:
                args = as_json(first(span.attributes, "tool_args"))
                calls.append(ToolCallData(
                    name=_id(first(span.attributes, "tool_name")) or span.name.removeprefix("execute_tool").strip(),
                    args=args if isinstance(args, dict) else {},
                    id=_id(first(span.attributes, "tool_call_id")),
                ))
        measure.tool_calls = len(calls)

        if user_content is None and not llm_spans:
            warnings.append(f"turn {anchor.span_id}: no call_llm/generate_content span under '{anchor.name}', "
                            "so no user input or response could be read")
            return None, measure
        if user_content is None:
            warnings.append(f"turn {anchor.span_id}: the model request has no user text "
                            "(attribute gcp.vertex.agent.llm_request missing or without contents)")
        return InvocationData(
            invocation_id=anchor.span_id,
            user_content=user_content or "",
            final_response=final_response,
            intermediate_steps=IntermediateStepData(tool_calls=calls, tool_responses=responses),
            performance_metrics=performance_metrics(measure),
            trace_id=anchor.trace_id,
            span_id=anchor.span_id,
        ), measure

    @staticmethod
    def _last_user_text(contents: list[Any]) -> Optional[str]:
        for content in reversed(contents):
            if isinstance(content, dict) and content.get("role") == "user":
                text = _parts_text(content)
                if text is not None:
                    return text
        return None
