"""Helpers shared by converters: JSON-ish attributes, span-tree walks, stats, per-turn performance metrics."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

import orjson

from ..model import START_ORDER, ConvertedTrace, Span
from .aliases import first

__all__ = [
    "Measure",
    "aggregate_metrics",
    "ancestors",
    "as_json",
    "as_text",
    "descendants",
    "outermost",
    "performance_metrics",
    "public_attributes",
    "set_trace_metrics",
    "stats",
    "stats_or_zero",
    "total",
]


def as_json(value: Any) -> Any:
    """Parse a JSON-encoded attribute; return other values unchanged."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return orjson.loads(value)  # several per turn: the stdlib's parser is the slower by far
        except ValueError:  # what orjson refuses and the stdlib reads (NaN, an integer past 64 bits, …)
            try:
                return json.loads(value)
            except ValueError:
                return value
    return value


def as_text(value: Any) -> str:
    """Text form of a tool result: strings as they are, anything else as JSON text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def ancestors(span: Span, by_id: Mapping[str, Span]) -> Iterator[Span]:
    """Parent, grandparent, … of ``span`` (as far as the trace has them)."""
    seen = {span.span_id}
    parent = by_id.get(span.parent_span_id or "")
    while parent is not None and parent.span_id not in seen:  # a malformed trace may have a parent cycle
        seen.add(parent.span_id)
        yield parent
        parent = by_id.get(parent.parent_span_id or "")


def outermost(spans: Iterable[Span], by_id: Mapping[str, Span]) -> list[Span]:
    """The spans of ``spans`` that have no ancestor among them, in start order."""
    spans = list(spans)
    ids = {s.span_id for s in spans}
    kept = [s for s in spans if not any(a.span_id in ids for a in ancestors(s, by_id))]
    return sorted(kept, key=START_ORDER)


def descendants(span: Span, children: Mapping[str | None, list[Span]]) -> list[Span]:
    """Every span below ``span``, in start order."""
    out, stack, seen = [], list(children.get(span.span_id, ())), {span.span_id}
    while stack:
        child = stack.pop()
        if child.span_id in seen:  # a parent cycle
            continue
        seen.add(child.span_id)
        out.append(child)
        stack.extend(children.get(child.span_id, ()))
    return sorted(out, key=START_ORDER)


def public_attributes(span: Span) -> dict[str, Any]:
    """A span's attributes without the fields readers add (Jaeger's ``otel.*``, ``span.kind``)."""
    return {k: v for k, v in span.attributes.items() if not k.startswith("otel.") and k != "span.kind"}


def stats(values: Iterable[float]) -> Optional[dict[str, Any]]:
    """min / median / max / count / p50 / p95 / p99 (p50 = median; p95, p99 the value at index ``int(n * p)`` of
    the sorted values, as agentevals-cli 0.11 computed them); None when there are no values."""
    data = sorted(values)
    if not data:
        return None

    def rank(p: float) -> float:
        return data[min(int(len(data) * p), len(data) - 1)]

    middle = len(data) // 2  # statistics.median's rule, without importing statistics (start-up)
    median = data[middle] if len(data) % 2 else (data[middle - 1] + data[middle]) / 2
    return {"min": data[0], "median": median, "max": data[-1], "count": len(data), "p50": median,
            "p95": rank(0.95), "p99": rank(0.99)}


ZERO_STATS: dict[str, Any] = {"min": 0.0, "median": 0.0, "max": 0.0, "count": 0, "p50": 0.0, "p95": 0.0, "p99": 0.0}
"""The figures of nothing measured (a turn without tool calls), as agentevals-cli 0.11 wrote them: an object
with zeros, never null, so ``["tool_executions"]["count"]`` reads 0."""


def stats_or_zero(values: Iterable[float]) -> dict[str, Any]:
    """:func:`stats`, or a copy of :data:`ZERO_STATS` when there are no values (``performance_metrics``' form)."""
    return stats(values) or dict(ZERO_STATS)


def _count(value: Any) -> int:
    """A token count attribute as an int (0 when absent or not a number)."""
    try:
        return 0 if value is None or isinstance(value, bool) else int(float(value))
    except (TypeError, ValueError, OverflowError):
        return 0


def _ms(ns: int) -> float:
    return round(ns / 1e6, 3)


@dataclass
class Measure:
    """Raw measurements of a turn (or a whole trace) before they become ``performance_metrics``."""

    durations_ms: list[float] = field(default_factory=list)
    llm_ms: list[float] = field(default_factory=list)
    tool_ms: list[float] = field(default_factory=list)
    prompt_tokens: list[int] = field(default_factory=list)
    output_tokens: list[int] = field(default_factory=list)
    cache_read: int = 0
    cache_creation: int = 0
    models: list[str] = field(default_factory=list)
    tool_names: list[str] = field(default_factory=list)
    tool_calls: int = 0
    invocations: int = 0
    llm_models: list[Optional[str]] = field(default_factory=list)
    """Model of each LLM call (parallel to ``llm_ms``)."""
    llm_failed: list[bool] = field(default_factory=list)
    """Whether each LLM call's span ended in error (parallel to ``llm_ms``)."""

    def add_llm(self, span: Span) -> None:
        self.llm_ms.append(_ms(span.end_ns - span.start_ns))
        attrs = span.attributes
        model = first(attrs, "request_model")
        self.llm_models.append(str(model) if model else None)
        self.llm_failed.append(span.status_code == "ERROR")
        self.prompt_tokens.append(_count(first(attrs, "input_tokens")))
        self.output_tokens.append(_count(first(attrs, "output_tokens")))
        self.cache_read += _count(first(attrs, "cache_read_tokens"))
        self.cache_creation += _count(first(attrs, "cache_creation_tokens"))
        if model and model not in self.models:
            self.models.append(str(model))

    def add_tool(self, span: Span, name: str) -> None:
        self.tool_ms.append(_ms(span.end_ns - span.start_ns))
        if name not in self.tool_names:
            self.tool_names.append(name)

    def add_turn(self, span: Span) -> None:
        self.add_turn_time(span.start_ns, span.end_ns)

    def add_turn_time(self, start_ns: int, end_ns: int) -> None:
        """A turn from ``start_ns`` to ``end_ns`` (one whose span is not the anchor's alone)."""
        self.durations_ms.append(_ms(end_ns - start_ns))
        self.invocations += 1

    def merge(self, other: Measure) -> None:
        for name in ("durations_ms", "llm_ms", "tool_ms", "prompt_tokens", "output_tokens", "llm_models", "llm_failed"):
            getattr(self, name).extend(getattr(other, name))
        self.cache_read += other.cache_read
        self.cache_creation += other.cache_creation
        self.models += [m for m in other.models if m not in self.models]
        self.tool_names += [t for t in other.tool_names if t not in self.tool_names]
        self.tool_calls += other.tool_calls
        self.invocations += other.invocations


def performance_metrics(m: Measure) -> dict[str, Any]:
    """The wire's ``performance_metrics`` shape (protocol 1.1)."""
    per_call = [p + o for p, o in zip(m.prompt_tokens, m.output_tokens, strict=True)]
    prompt, output = sum(m.prompt_tokens), sum(m.output_tokens)
    return {
        "latency": {"overall": stats_or_zero(m.durations_ms), "llm_calls": stats_or_zero(m.llm_ms),
                    "tool_executions": stats_or_zero(m.tool_ms)},
        "tokens": {
            "total_prompt": prompt,
            "total_output": output,
            "total": prompt + output,
            "per_llm_call": stats_or_zero(float(x) for x in per_call),
            "cache_creation_tokens": m.cache_creation,
            "cache_read_tokens": m.cache_read,
        },
        "counts": {"llm_calls": len(m.llm_ms), "tool_calls": m.tool_calls, "invocations": m.invocations},
        "models": sorted(m.models),  # sorted, as agentevals-cli 0.11 wrote them
        "tool_names": sorted(m.tool_names),
    }


def total(measures: Iterable[Measure]) -> Measure:
    """All measures merged into one."""
    out = Measure()
    for m in measures:
        out.merge(m)
    return out


def aggregate_metrics(measures: Iterable[Measure]) -> dict[str, Any]:
    return performance_metrics(total(measures))


def set_trace_metrics(converted: ConvertedTrace, measures: list[Measure]) -> None:
    """``converted.measure`` and ``converted.performance_metrics`` from its turns' measures (if any)."""
    if measures:
        converted.measure = total(measures)
        converted.performance_metrics = performance_metrics(converted.measure)
