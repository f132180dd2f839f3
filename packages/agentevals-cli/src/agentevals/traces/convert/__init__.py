"""Converters: a ``Trace`` (spans) → a ``ConvertedTrace`` (agent turns). Tried in order; first that detects wins."""

from __future__ import annotations

from ..model import ConvertedTrace, Trace
from .adk import AdkConverter
from .genai import GenAIConverter

__all__ = ["CONVERTERS", "convert_trace"]

CONVERTERS: list = [AdkConverter(), GenAIConverter()]


def convert_trace(trace: Trace) -> ConvertedTrace:
    """Convert with the first converter that recognises the trace; explain when none does."""
    for converter in CONVERTERS:
        if converter.detect(trace):
            return converter.convert(trace)
    names = sorted({s.name for s in trace.spans})
    reasons = "; ".join(c.explain(trace) for c in CONVERTERS if hasattr(c, "explain"))
    return ConvertedTrace(
        trace_id=trace.trace_id, source=trace.source, invocations=[], trace=trace,
        warnings=[reasons or f"no agent spans recognised among {len(trace.spans)} spans (saw: {', '.join(names[:12])})"],
    )
