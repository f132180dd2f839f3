"""One internal trace model that every reader produces and every converter consumes."""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Optional

__all__ = ["START_ORDER", "ConvertedTrace", "Span", "SpanEvent", "Trace"]

START_ORDER = attrgetter("start_ns", "end_ns")
"""Sort key of spans in start order (ties: the first to end first): ``sorted(spans, key=START_ORDER)``."""


@dataclass(slots=True)
class SpanEvent:
    """A span event (Jaeger: a log entry)."""

    name: str
    time_ns: int = 0
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Span:
    """A finished span, format-neutral. Times are Unix nanoseconds; attribute values are plain JSON values."""

    trace_id: str
    span_id: str
    name: str
    parent_span_id: Optional[str] = None
    start_ns: int = 0
    end_ns: int = 0
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[SpanEvent] = field(default_factory=list)
    resource: dict[str, Any] = field(default_factory=dict)
    scope: Optional[str] = None
    kind: Optional[str] = None
    status_code: Optional[str] = None
    """"OK", "ERROR" or None (unset)."""
    status_message: Optional[str] = None

    @property
    def duration_ms(self) -> float:
        return max(self.end_ns - self.start_ns, 0) / 1e6


@dataclass(slots=True)
class Trace:
    """All spans of one trace id read from one file."""

    trace_id: str
    spans: list[Span]
    source: str = ""
    """File the trace came from (for messages)."""

    def children(self) -> dict[Optional[str], list[Span]]:
        """Parent span id → child spans sorted by start time."""
        out: dict[Optional[str], list[Span]] = {}
        for span in self.spans:
            out.setdefault(span.parent_span_id, []).append(span)
        for kids in out.values():
            if len(kids) > 1:  # most spans have one child or none
                kids.sort(key=START_ORDER)
        return out


@dataclass(slots=True)
class ConvertedTrace:
    """A trace turned into agent turns, plus what the runner needs to group, match and report it."""

    trace_id: str
    source: str
    invocations: list[Any]
    """``agentevals.protocol.InvocationData`` items, in turn order."""
    format: str = ""
    """Converter family that produced it: "adk" or "genai"."""
    session_id: Optional[str] = None
    """Conversation grouping key (agentevals.session_name, gen_ai.conversation.id, session.id)."""
    eval_id: Optional[str] = None
    """Eval case id recorded in the trace, when present."""
    agent_name: Optional[str] = None
    performance_metrics: Optional[dict[str, Any]] = None
    """Whole-trace latency/token/count figures."""
    resource: dict[str, Any] = field(default_factory=dict)
    attributes: dict[str, Any] = field(default_factory=dict)
    """Interesting root/session attributes (for Python evaluators' environment)."""
    warnings: list[str] = field(default_factory=list)
    start_ns: int = 0
    trace: Optional[Trace] = None
    """The raw spans, kept for evaluators that read the trace itself."""
    measure: Any = None
    """Raw measurements (``convert._common.Measure``) behind ``performance_metrics``, for merging traces."""
    response_ids: dict[str, str] = field(default_factory=dict)
    """Invocation span id → ``gen_ai.response.id`` of the turn's last model response, where the trace
    carries one (results sent as OTel events name it)."""
