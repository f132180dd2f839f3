"""Small formatting helpers shared by the text reports."""

from __future__ import annotations

from typing import Any, Optional

import click

from ..results import MetricResult, Status

__all__ = ["STATUS_COLORS", "fmt_calls", "fmt_num", "fmt_perf", "fmt_provenance", "mismatch_lines", "paint",
           "reason_lines"]

STATUS_COLORS = {
    Status.PASSED: "green",
    Status.FAILED: "red",
    Status.ERROR: "red",
    Status.NOT_EVALUATED: "yellow",
    Status.INFORMATIONAL: "cyan",
}


def paint(text: str, color: Optional[str], enabled: bool, *, bold: bool = False) -> str:
    return click.style(text, fg=color, bold=bold) if enabled and (color or bold) else text


def fmt_num(value: Any, digits: int = 3, *, width: int = 60) -> str:
    """A number with at most ``digits`` decimals (``2130``, ``0.812``); other values as compact JSON."""
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        import json

        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        return text if len(text) <= width else text[: width - 1] + "…"
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    text = f"{value:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_calls(calls: list[dict[str, Any]]) -> str:
    if not calls:
        return "(no tool calls)"
    import json

    return ", ".join(f"{c['name']}({json.dumps(c.get('args') or {}, sort_keys=True)})" for c in calls)


def fmt_perf(pm: Optional[dict[str, Any]]) -> Optional[str]:
    """``4168ms · 2 LLM calls (1799–2344ms) · 1 tool call (57ms) · 3906 tokens (3776 in / 130 out) · gpt-4.1-mini``."""
    if not pm:
        return None
    parts = []
    latency = pm.get("latency") or {}
    overall = latency.get("overall") or {}
    if overall.get("count"):
        parts.append(f"{fmt_num(overall['max'], 0)}ms" if overall["count"] == 1
                     else f"{overall['count']} turns, {fmt_num(overall['median'], 0)}ms median")
    counts = pm.get("counts") or {}
    llm = latency.get("llm_calls") or {}
    if counts.get("llm_calls"):
        span = (f" ({fmt_num(llm['min'], 0)}–{fmt_num(llm['max'], 0)}ms)" if llm.get("count", 0) > 1
                else f" ({fmt_num(llm.get('max'), 0)}ms)" if llm.get("count") else "")
        parts.append(f"{counts['llm_calls']} LLM call{'s' if counts['llm_calls'] != 1 else ''}{span}")
    tools = latency.get("tool_executions") or {}
    if counts.get("tool_calls"):
        span = f" ({fmt_num(tools.get('median'), 0)}ms median)" if tools.get("count") else ""
        parts.append(f"{counts['tool_calls']} tool call{'s' if counts['tool_calls'] != 1 else ''}{span}")
    tokens = pm.get("tokens") or {}
    if tokens.get("total"):
        parts.append(f"{tokens['total']} tokens ({tokens.get('total_prompt', 0)} in / {tokens.get('total_output', 0)} out)")
    if pm.get("models"):
        parts.append(", ".join(pm["models"]))
    return " · ".join(parts) if parts else None


def _some(values: Any, most: int = 3) -> str:
    items = [str(v) for v in values] if isinstance(values, list) else [str(values)] if values else []
    more = f" +{len(items) - most} more" if len(items) > most else ""
    return ", ".join(items[:most]) + more


def fmt_provenance(provenance: Optional[dict[str, Any]]) -> str:
    """Where a matched eval case came from, on one line (empty when unknown):
    ``run 20261127-… · case 3e28… · traces 3e28… · sources helm.json`` (at most three of each list)."""
    if not provenance:
        return ""
    parts = [f"{label} {_some(provenance[key])}" for key, label in
             (("run_id", "run"), ("case_id", "case"), ("trace_ids", "traces"), ("sources", "sources"),
              ("source_uris", "source URIs")) if provenance.get(key)]
    return " · ".join(parts) or fmt_num(provenance, width=200)


def mismatch_lines(m: MetricResult) -> list[str]:
    """A trajectory result's mismatched turns, three lines each (the table, the web UI and JUnit print them):

        mismatch_lines(row)  # ['trajectory mismatch (turn 1, exact):', '  expected: f({"a": 1})', '  actual:   f({})']

    Empty for a result without ``details["mismatches"]``.
    """
    lines = []
    for mismatch in m.details.get("mismatches", ()):
        lines.append(f"trajectory mismatch (turn {mismatch['invocation'] + 1}, {m.details.get('match_type', 'exact')}):")
        lines.append(f"  expected: {fmt_calls(mismatch['expected'])}")
        lines.append(f"  actual:   {fmt_calls(mismatch['actual'])}")
    return lines


def reason_lines(m: MetricResult) -> list[str]:
    """Why a result is not PASSED, as the table report prints it under its row (the web UI shows the same lines).

        reason_lines(row)  # ['trajectory mismatch (turn 1, exact):', '  expected: f({"a": 1})', '  actual:   f({})']

    The evaluator's error or reason first, then a trajectory's mismatched turns and the misses; a row that
    failed with none of them (a builtin score below its threshold) says so with both numbers. Empty for a
    PASSED row without an error.
    """
    lines = []
    if m.error:
        lines.append(f"error: {m.error}")
    if m.reason and m.status != Status.PASSED:
        lines.append(f"reason: {m.reason}")
    lines.extend(mismatch_lines(m))
    lines.extend(f"miss: {miss}" for miss in m.misses[:5])
    if not lines and m.status == Status.FAILED and m.score is not None and m.threshold is not None:
        lines.append(f"reason: score {fmt_num(m.score)} is below the threshold {fmt_num(m.threshold)}")
    return lines
