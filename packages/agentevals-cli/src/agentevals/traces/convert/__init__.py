"""Converters: a ``Trace`` (spans) → a ``ConvertedTrace`` (agent turns). Tried in order; first that detects wins.

Before conversion, ``sanitize`` makes a hostile span tree safe and says what it changed: a trace with more
spans than ``AGENTEVALS_MAX_SPANS`` keeps the first ones; a span that is its own parent, or a parent cycle,
is cut so that every span reaches a root (otherwise its turn, and its tool calls, would vanish).
"""

from __future__ import annotations

import gc
import logging
from dataclasses import replace

from ...core.limits import current_limit, variable
from ..model import ConvertedTrace, Span, Trace
from .adk import AdkConverter
from .genai import GenAIConverter

__all__ = ["CONVERTERS", "convert_trace", "sanitize"]

CONVERTERS: list = [AdkConverter(), GenAIConverter()]

log = logging.getLogger(__name__)


def convert_trace(trace: Trace) -> ConvertedTrace:
    """Convert with the first converter that recognises the trace; explain when none does."""
    trace, warnings = sanitize(trace)
    # Conversion allocates many objects and frees none: the cyclic collector would walk the growing heap
    # again and again (half the time on a 200k-span trace). Paused for the call, it runs once after.
    paused = gc.isenabled()
    gc.disable()
    try:
        converted = _convert(trace)
    finally:
        if paused:
            gc.enable()
    converted.warnings[:0] = warnings
    return converted


def _convert(trace: Trace) -> ConvertedTrace:
    for converter in CONVERTERS:
        if converter.detect(trace):
            return converter.convert(trace)
    names = sorted({s.name for s in trace.spans})
    reasons = "; ".join(c.explain(trace) for c in CONVERTERS if hasattr(c, "explain"))
    return ConvertedTrace(
        trace_id=trace.trace_id, source=trace.source, invocations=[], trace=trace,
        warnings=[reasons or f"no agent spans recognised among {len(trace.spans)} spans (saw: {', '.join(names[:12])})"],
    )


def sanitize(trace: Trace) -> tuple[Trace, list[str]]:
    """The trace with at most ``max_spans`` spans and no parent cycles, and one warning per change."""
    warnings: list[str] = []
    spans = trace.spans
    limit = int(current_limit("max_spans"))  # once per trace: only this one variable
    if len(spans) > limit:
        warnings.append(f"trace {trace.trace_id} has {len(spans)} spans; only the first {limit} were read "
                        f"(set {variable('max_spans')} to read more)")
        spans = spans[:limit]
    cut = _cycle_members(spans)
    if cut:
        for span in spans:
            if span.span_id in cut:
                how = "is its own parent" if span.parent_span_id == span.span_id else "is in a parent cycle"
                warnings.append(f"trace {trace.trace_id}: span {span.span_id} ('{span.name}') {how}; "
                                "it is read as a root span")
        # One line on stderr per trace (the case's warnings list each span): no span is dropped.
        log.warning("%s: trace %s: %d span(s) in a parent cycle, read as root spans (all spans kept)",
                    trace.source, trace.trace_id, len(cut))
        spans = [replace(s, parent_span_id=None) if s.span_id in cut else s for s in spans]
    if spans is trace.spans:
        return trace, warnings
    return replace(trace, spans=spans), warnings


def _cycle_members(spans: list[Span]) -> set[str]:
    """Span ids to make roots so that no parent chain loops: one span per cycle (linear time)."""
    parent = {s.span_id: s.parent_span_id for s in spans}
    state: dict[str, int] = {}  # 1: on the current chain, 2: reaches a root
    cut: set[str] = set()
    for start in parent:
        if start in state:  # met on an earlier chain: most spans, in a tree read from its leaves
            continue
        chain = []
        node: str | None = start
        while node in parent and node not in state:
            state[node] = 1
            chain.append(node)
            node = parent[node]
        if node in parent and state.get(node) == 1:  # the chain came back to itself
            cut.add(node)
        for member in chain:
            state[member] = 2
    return cut
