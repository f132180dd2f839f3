"""Session assembly: completion rules and the memory budget (a fake clock, real spans)."""

from __future__ import annotations

from agentevals.serve.sessions import COMPLETE_ATTRIBUTE, SessionAssembler
from agentevals.traces.model import Span, SpanEvent


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def span(trace: str, span_id: str, parent: str | None = None, **attributes) -> Span:
    return Span(trace_id=trace, span_id=span_id, name="s", parent_span_id=parent, attributes=attributes)


def test_trace_without_conversation_completes_when_its_root_ends():
    clock = Clock()
    assembler = SessionAssembler(idle=5, grace=0.5, clock=clock)
    assert assembler.add_spans([span("t1", "b", parent="a")])
    assert assembler.sweep() == []
    assembler.add_spans([span("t1", "a")])
    clock.now = 0.4
    assert assembler.sweep() == []  # children may still be in flight
    clock.now = 0.6
    (ready,) = assembler.sweep()
    assert ready.session_id == "t1" and [s.span_id for s in ready.traces[0].spans] == ["b", "a"]
    assert assembler.stats()["buffered"] == 2
    assembler.release(ready.units)
    assert assembler.stats()["buffered"] == 0


def test_conversation_waits_for_the_idle_window_or_its_end_marker():
    clock = Clock()
    assembler = SessionAssembler(idle=5, grace=0.5, clock=clock)
    assembler.add_spans([span("t1", "a", **{"gen_ai.conversation.id": "c"})])
    clock.now = 1
    assembler.add_spans([span("t2", "b", **{"gen_ai.conversation.id": "c"})])
    clock.now = 2
    assert assembler.sweep() == []
    assert assembler.open_sessions()[0]["session_id"] == "c"
    clock.now = 6.1
    (ready,) = assembler.sweep()
    assert ready.session_id == "c" and [t.trace_id for t in ready.traces] == ["t1", "t2"] and ready.conversation
    assembler.add_spans([span("t3", "c", **{"gen_ai.conversation.id": "d", COMPLETE_ATTRIBUTE: True})])
    clock.now = 6.7
    (ended,) = assembler.sweep()
    assert ended.session_id == "d"


def test_unfinished_trace_completes_after_idle_and_logs_attach_to_their_span():
    clock = Clock()
    assembler = SessionAssembler(idle=5, clock=clock)
    assembler.add_spans([span("t1", "b", parent="remote")])
    assembler.add_logs({("t1", "b"): [SpanEvent("gen_ai.user.message", 1, {"content": "hi"})],
                        ("t9", "x"): [SpanEvent("orphan", 1)]})
    clock.now = 5
    (ready,) = assembler.sweep()
    assert [e.name for e in ready.traces[0].spans[0].events] == ["gen_ai.user.message"]
    assert assembler.stats()["buffered"] == 2  # the orphan record's unit is released, the session holds 2


def test_a_batch_over_the_budget_is_refused_whole():
    assembler = SessionAssembler(max_units=3)
    assert assembler.add_spans([span("t", str(i)) for i in range(3)])
    assert not assembler.add_spans([span("u", "x")])
    assert not assembler.has_room(1)
    stats = assembler.stats()
    assert stats["buffered"] == 3 and stats["refused_batches"] == 2 and stats["open_traces"] == 1
    assembler.release(3)
    assert assembler.add_spans([span("u", "x")])
