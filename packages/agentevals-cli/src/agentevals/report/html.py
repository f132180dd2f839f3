"""``-o html``: one self-contained file (jinja2; inline CSS and JS, no network) — totals, filters by
status and metric, per-case drill-down (conversation, tool calls, expected vs actual trajectory),
score histograms, repetition statistics and baseline deltas."""

from __future__ import annotations

from typing import Any, Optional

from ..results import RunResult, Status, case_status, evaluated_cases
from ..results.gates import format_rate
from ..results.intervals import format_interval, format_mean_interval, format_rate_interval
from ..results.labels import human_cell, human_text, label_disagrees
from ._context import ReportContext, failing_rows, intervals_of
from ._format import fmt_calls, fmt_num, fmt_perf, fmt_provenance
from .formats import ReportFormat
from .summary import scored_phrase

__all__ = ["HtmlReport", "render_html"]

_BINS = 10
_MAX_TURNS = 30
"""Turns shown per case (the JSON report has them all)."""


def _histograms(run: RunResult) -> list[dict[str, Any]]:
    """Per metric: counts of scores in ten bins of [0, 1], with bar heights in percent of the tallest."""
    scores: dict[str, list[float]] = {}
    for case in run.cases:
        for m in case.metrics:
            if m.score is not None:
                scores.setdefault(m.name, []).append(m.score)
    out = []
    for name, values in scores.items():
        bins = [0] * _BINS
        for v in values:
            bins[min(_BINS - 1, max(0, int(v * _BINS)))] += 1
        top = max(bins) or 1
        out.append({"name": name, "n": len(values), "mean": fmt_num(sum(values) / len(values)),
                    "bins": [{"count": c, "height": round(100 * c / top), "label": f"{i / _BINS:.1f}–{(i + 1) / _BINS:.1f}"}
                             for i, c in enumerate(bins)]})
    return out


def _cases(run: RunResult, context: Optional[ReportContext]) -> list[dict[str, Any]]:
    changes: dict[tuple[str, str], tuple[str | None, Any]] = {}
    if context and context.comparison is not None:
        comp = context.comparison
        for label, rows in (("regression", comp.regressions), ("fix", comp.fixes), ("delta", comp.deltas)):
            for r in rows:
                changes.setdefault((r.case_id, r.metric), (label, r))
    out = []
    for case in run.cases:
        metrics: list[dict[str, Any]] = []
        for m in case.metrics:
            kind, change = changes.get((case.case_id, m.name), (None, None))
            metrics.append({
                "name": m.name, "status": m.status.value, "score": fmt_num(m.score if m.score is not None else m.value),
                "threshold": fmt_num(m.threshold), "verdict": m.verdict.value if m.verdict else "",
                "why": m.error or m.reason or "", "reasoning": m.reasoning or "",
                "mismatches": [{"turn": x["invocation"] + 1, "expected": fmt_calls(x["expected"]),
                                "actual": fmt_calls(x["actual"])} for x in m.details.get("mismatches", ())],
                "change": kind, "change_text": change.describe() if change else "",
                "delta": (f"{change.delta:+.3f}" if change is not None and change.delta else ""),
                "human": human_cell(m, case) if case.labels else "",
                "human_notes": [human_text(x) for x in case.labels if x.metric == m.name and x.note][:5],
            })
        out.append({
            "id": case.case_id, "eval_id": case.eval_id or "", "match": case.match_reason or "",
            "sources": ", ".join(case.sources), "status": case_status(case).value, "metrics": metrics,
            "statuses": " ".join(sorted({m["status"] for m in metrics})),
            "metric_names": "\t".join(m["name"] for m in metrics), "perf": fmt_perf(case.performance_metrics) or "",
            "turns": [{**t, "tool_calls": fmt_calls(t.get("tool_calls") or []),
                       "expected_tool_calls": (fmt_calls(t["expected_tool_calls"])
                                               if "expected_tool_calls" in t else None)}
                      for t in case._transcript[:_MAX_TURNS]],
            "more_turns": max(0, len(case._transcript) - _MAX_TURNS), "warnings": case.warnings,
            "provenance": fmt_provenance(case.provenance),
            "labelled": bool(case.labels),
            "case_labels": [{"text": human_text(x), "differs": (label_disagrees(x, case) or (None,))[0]}
                            for x in case.labels if x.metric is None],
        })
    return out


def render_html(run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None) -> str:
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("agentevals.report", "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    strict = context.strict if context else False
    totals = run.totals(strict=strict)
    cases = totals["cases"]
    evaluated = evaluated_cases(cases, strict=strict)
    failed = (context.gates.exit_code if context and context.gates else run.exit_code(strict=strict)) != 0
    figures = intervals_of(run, context)
    return env.get_template("report.html.j2").render(
        run=run, totals=totals, failed=failed, statuses=[s.value for s in Status],
        pass_rate=format_rate_interval(cases["PASSED"], evaluated),
        metric_rates=[(name, e, format_rate(e["pass_rate"])) for name, e in totals["metrics"].items()],
        metric_intervals={name: (format_interval(f["pass_rate"]), format_mean_interval(f["mean_score"]))
                          for name, f in figures["metrics"].items()},
        cases=_cases(run, context), failures=len(failing_rows(run)), histograms=_histograms(run),
        repetitions=[r for r in run.repetitions if r.get("n", 0) > 1], fmt=fmt_num, rate_ci=format_rate_interval,
        comparison=context.comparison if context else None, gates=context.gates if context else None,
        incomplete=context.incomplete if context else None, sessions=scored_phrase(cases),
        sources=context.sources if context else None,
    )


class HtmlReport(ReportFormat):
    """One self-contained HTML file (``-o html``)."""

    name = "html"

    def render(self, run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None) -> str:
        return render_html(run, color=color, context=context)
