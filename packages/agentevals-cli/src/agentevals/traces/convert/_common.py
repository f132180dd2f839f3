"""Helpers shared by converters: JSON-ish attributes, stats, per-turn performance metrics."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from ..model import Span
from .aliases import first

__all__ = ["Measure", "aggregate_metrics", "as_json", "as_text", "performance_metrics", "stats"]


def as_json(value: Any) -> Any:
    """Parse a JSON-encoded attribute; return other values unchanged."""
    if isinstance(value, str) and value[:1] in ("{", "["):
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


def stats(values: Iterable[float]) -> Optional[dict[str, Any]]:
    """min / median / max / count / p50 / p95 / p99 (p50 = median; p95, p99 nearest-rank)."""
    data = sorted(values)
    if not data:
        return None

    def rank(p: float) -> float:
        return data[max(math.ceil(p * len(data)) - 1, 0)]

    median = statistics.median(data)
    return {"min": data[0], "median": median, "max": data[-1], "count": len(data), "p50": median,
            "p95": rank(0.95), "p99": rank(0.99)}


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

    def add_llm(self, span: Span) -> None:
        self.llm_ms.append(_ms(span.end_ns - span.start_ns))
        attrs = span.attributes
        self.prompt_tokens.append(int(first(attrs, "input_tokens", 0) or 0))
        self.output_tokens.append(int(first(attrs, "output_tokens", 0) or 0))
        self.cache_read += int(first(attrs, "cache_read_tokens", 0) or 0)
        self.cache_creation += int(first(attrs, "cache_creation_tokens", 0) or 0)
        model = first(attrs, "request_model")
        if model and model not in self.models:
            self.models.append(str(model))

    def add_tool(self, span: Span, name: str) -> None:
        self.tool_ms.append(_ms(span.end_ns - span.start_ns))
        if name not in self.tool_names:
            self.tool_names.append(name)

    def add_turn(self, span: Span) -> None:
        self.durations_ms.append(_ms(span.end_ns - span.start_ns))
        self.invocations += 1

    def merge(self, other: Measure) -> None:
        for name in ("durations_ms", "llm_ms", "tool_ms", "prompt_tokens", "output_tokens"):
            getattr(self, name).extend(getattr(other, name))
        self.cache_read += other.cache_read
        self.cache_creation += other.cache_creation
        self.models += [m for m in other.models if m not in self.models]
        self.tool_names += [t for t in other.tool_names if t not in self.tool_names]
        self.tool_calls += other.tool_calls
        self.invocations += other.invocations


def performance_metrics(m: Measure) -> dict[str, Any]:
    """The wire's ``performance_metrics`` shape (protocol 1.1)."""
    per_call = [p + o for p, o in zip(m.prompt_tokens, m.output_tokens)]
    prompt, output = sum(m.prompt_tokens), sum(m.output_tokens)
    return {
        "latency": {"overall": stats(m.durations_ms), "llm_calls": stats(m.llm_ms), "tool_executions": stats(m.tool_ms)},
        "tokens": {
            "total_prompt": prompt,
            "total_output": output,
            "total": prompt + output,
            "per_llm_call": stats(float(x) for x in per_call),
            "cache_creation_tokens": m.cache_creation,
            "cache_read_tokens": m.cache_read,
        },
        "counts": {"llm_calls": len(m.llm_ms), "tool_calls": m.tool_calls, "invocations": m.invocations},
        "models": list(m.models),
        "tool_names": list(m.tool_names),
    }


def aggregate_metrics(measures: Iterable[Measure]) -> dict[str, Any]:
    total = Measure()
    for m in measures:
        total.merge(m)
    return performance_metrics(total)
