"""Assemble received spans and log records into sessions, within a fixed memory budget.

A **trace** is complete when its root span (no parent) has arrived and ``grace`` seconds passed with no
new span of it (children end, and are exported, before their root), or after ``idle`` seconds without
a new span when the root never comes (a remote parent, a crashed agent).

A **session** is what one case of the engine evaluates:

- a trace with no conversation id (``gen_ai.conversation.id``, ``session.id``,
  ``agentevals.session_name`` … on any span or the resource) is its own session, complete with its trace;
- the traces sharing a conversation id form one session, complete ``idle`` seconds after its last span,
  or as soon as a root span carrying ``agentevals.session.complete = true`` ends (what the
  ``AgentEvals`` helper sends when its ``with app.session():`` block exits).

Memory is bounded by ``max_units``: every buffered span and log record is one unit, held until the
evaluation worker has converted its session (``release``). A batch that would go past the budget is
refused whole (the receiver answers with the OTLP retryable status) and nothing of it is kept.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Optional

from ..traces.convert.aliases import first
from ..traces.model import ConvertedTrace, Span, Trace
from ..traces.readers.otlp_logs import LogEvents, attach_log_events

__all__ = ["COMPLETE_ATTRIBUTE", "EVAL_SET_ATTRIBUTE", "ReadySession", "SessionAssembler"]

COMPLETE_ATTRIBUTE = "agentevals.session.complete"
"""On a root span: this trace ends its conversation; evaluate the session without waiting."""
EVAL_SET_ATTRIBUTE = "agentevals.eval_set_id"
"""On any span or the resource: the eval set (by ``eval_set_id``) to evaluate the session against."""


@dataclass
class _TraceBuffer:
    trace_id: str
    spans: list[Span] = field(default_factory=list)
    logs: LogEvents = field(default_factory=dict)
    units: int = 0
    last_seen: float = 0.0
    root_ended: bool = False
    session_key: Optional[str] = None
    eval_set_id: Optional[str] = None
    closes_session: bool = False


@dataclass
class ReadySession:
    """A complete session handed to the evaluation worker. ``units`` are released once it is converted."""

    session_id: str
    traces: list[Trace]
    units: int
    eval_set_id: Optional[str] = None
    conversation: bool = False
    """Keyed by a conversation id (else by its single trace id)."""
    converted: Optional[list[ConvertedTrace]] = None
    """Already converted traces (a ``serve --pull`` source read them), instead of raw ``traces``."""


@dataclass
class _OpenSession:
    session_id: str
    traces: list[Trace] = field(default_factory=list)
    units: int = 0
    last_seen: float = 0.0
    eval_set_id: Optional[str] = None
    complete: bool = False


class SessionAssembler:
    """Thread-safe buffer of what the receivers accepted, turned into ``ReadySession`` items by ``sweep``.

        assembler = SessionAssembler(max_units=50_000, idle=5.0)
        if not assembler.add_spans(spans):
            ...  # over budget: answer 503/RESOURCE_EXHAUSTED, the exporter retries later
        for session in assembler.sweep():
            ...  # evaluate, then assembler.release(session.units)
    """

    def __init__(self, *, max_units: int = 50_000, idle: float = 5.0, grace: float = 0.5,
                 clock: Any = time.monotonic) -> None:
        self.max_units = max_units
        self.idle = idle
        self.grace = grace
        self._clock = clock
        self._lock = threading.Lock()
        self._traces: dict[str, _TraceBuffer] = {}
        self._sessions: dict[str, _OpenSession] = {}
        self._units = 0
        self.accepted_spans = 0
        self.accepted_logs = 0
        self.refused_batches = 0

    # ---- receiving -------------------------------------------------------------------------------------

    def has_room(self, units: int) -> bool:
        """Whether ``units`` more fit now; a False answer counts as a refused batch (the receivers call it
        before reading a body, so a full buffer costs no decoding)."""
        with self._lock:
            if self._units + units <= self.max_units:
                return True
            self.refused_batches += 1
            return False

    def add_spans(self, spans: Iterable[Span]) -> bool:
        """Buffer a batch of spans; False (nothing kept) when it would exceed the budget."""
        spans = list(spans)
        with self._lock:
            if not self._reserve(len(spans)):
                return False
            now = self._clock()
            for span in spans:
                buf = self._buffer(span.trace_id, now)
                buf.spans.append(span)
                buf.units += 1
                if span.parent_span_id is None:
                    buf.root_ended = True
                    buf.closes_session = buf.closes_session or span.attributes.get(COMPLETE_ATTRIBUTE) is True
                buf.session_key = buf.session_key or _session_key(span)
                buf.eval_set_id = buf.eval_set_id or _attr(span, EVAL_SET_ATTRIBUTE)
            self.accepted_spans += len(spans)
        return True

    def add_logs(self, events: LogEvents) -> bool:
        """Buffer log records (already keyed by trace and span id); False when over budget."""
        count = sum(map(len, events.values()))
        with self._lock:
            if not self._reserve(count):
                return False
            now = self._clock()
            for (trace_id, span_id), records in events.items():
                buf = self._buffer(trace_id, now)
                buf.logs.setdefault((trace_id, span_id), []).extend(records)
                buf.units += len(records)
            self.accepted_logs += count
        return True

    def _reserve(self, units: int) -> bool:
        if self._units + units > self.max_units:
            self.refused_batches += 1
            return False
        self._units += units
        return True

    def _buffer(self, trace_id: str, now: float) -> _TraceBuffer:
        buf = self._traces.get(trace_id)
        if buf is None:
            buf = self._traces[trace_id] = _TraceBuffer(trace_id)
        buf.last_seen = now
        return buf

    # ---- completing ------------------------------------------------------------------------------------

    def sweep(self, *, flush: bool = False) -> list[ReadySession]:
        """Sessions that are complete now (all of them with ``flush``, e.g. at shutdown)."""
        ready: list[ReadySession] = []
        with self._lock:
            now = self._clock()
            for trace_id, buf in list(self._traces.items()):
                quiet = now - buf.last_seen
                if not (flush or (buf.root_ended and quiet >= self.grace) or quiet >= self.idle):
                    continue
                del self._traces[trace_id]
                if not buf.spans:  # log records whose spans never came: nothing to evaluate
                    self._units -= buf.units
                    continue
                trace = _to_trace(buf)
                if buf.session_key is None:
                    ready.append(ReadySession(trace_id, [trace], buf.units, buf.eval_set_id))
                    continue
                session = self._sessions.get(buf.session_key)
                if session is None:
                    session = self._sessions[buf.session_key] = _OpenSession(buf.session_key)
                session.traces.append(trace)
                session.units += buf.units
                session.last_seen = max(session.last_seen, buf.last_seen)
                session.eval_set_id = session.eval_set_id or buf.eval_set_id
                session.complete = session.complete or buf.closes_session
            for key, session in list(self._sessions.items()):
                if flush or session.complete or now - session.last_seen >= self.idle:
                    del self._sessions[key]
                    ready.append(ReadySession(key, session.traces, session.units, session.eval_set_id,
                                              conversation=True))
        return ready

    def release(self, units: int) -> None:
        """Give back the budget of a session that has been converted (its spans are no longer held)."""
        with self._lock:
            self._units = max(0, self._units - units)

    # ---- observing -------------------------------------------------------------------------------------

    def open_sessions(self) -> list[dict[str, Any]]:
        """What is still being collected: one summary per open conversation and per open trace."""
        with self._lock:
            out = [{"session_id": s.session_id, "status": "collecting", "trace_count": len(s.traces),
                    "span_count": sum(len(t.spans) for t in s.traces)} for s in self._sessions.values()]
            out += [{"session_id": b.session_key or b.trace_id, "status": "collecting", "trace_count": 1,
                     "span_count": len(b.spans)} for b in list(self._traces.values())[:1000]]
        return out

    def stats(self) -> dict[str, int]:
        """Counters for ``/api/health``: buffered units, the budget, accepted and refused batches."""
        with self._lock:
            return {"buffered": self._units, "max_buffered": self.max_units, "open_traces": len(self._traces),
                    "open_sessions": len(self._sessions), "accepted_spans": self.accepted_spans,
                    "accepted_logs": self.accepted_logs, "refused_batches": self.refused_batches}


def _attr(span: Span, key: str) -> Optional[str]:
    value = span.attributes.get(key, span.resource.get(key))
    return str(value) if value not in (None, "") else None


def _session_key(span: Span) -> Optional[str]:
    value = first(span.attributes, "session_id") or first(span.resource, "session_id")
    return str(value) if value not in (None, "") else None


def _to_trace(buf: _TraceBuffer) -> Trace:
    """The buffered spans as one ``Trace``, with the log records of each span attached as events."""
    trace = Trace(trace_id=buf.trace_id, spans=buf.spans, source=f"otlp:{buf.trace_id}")
    attach_log_events(trace, buf.logs)
    return trace
