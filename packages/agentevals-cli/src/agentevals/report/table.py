"""``-o table``: one block per case with a row per evaluator, trajectory diffs and compact performance."""

from __future__ import annotations

from typing import Optional

from ..results import CaseResult, MetricResult, RunResult, Status, Verdict
from ..results.intervals import format_rate_interval
from ..results.labels import human_cell, human_text, label_disagrees
from ._context import ReportContext, headline_lines
from ._format import STATUS_COLORS, fmt_num, fmt_perf, fmt_provenance, paint, reason_lines
from .formats import ReportFormat
from .summary import failures_block, gate_lines, metric_interval_lines, totals_line

__all__ = ["TableReport", "render_table"]

_HEAD = ("EVALUATOR", "STATUS", "SCORE", "THRESHOLD", "PER TURN", "VERDICT")


def _row(m: MetricResult) -> tuple[str, ...]:
    if m.status == Status.INFORMATIONAL:
        unit = m.details.get("unit", "")
        score = f"{fmt_num(m.value)} {unit}".strip()
    else:
        score = fmt_num(m.score)
    per_turn = ", ".join(fmt_num(s, 2) for s in m.per_invocation_scores) if m.per_invocation_scores else ""
    return (m.name, m.status.value, score, fmt_num(m.threshold), f"[{per_turn}]" if per_turn else "",
            m.verdict.value if m.verdict else "")


def _notes(m: MetricResult) -> list[str]:
    lines = reason_lines(m)
    lines.extend(f"warning: {warning}" for warning in m.warnings)
    if m.reasoning and m.status in (Status.FAILED,):
        lines.append(f"reasoning: {m.reasoning[:300]}")
    if _contradicts(m) and m.verdict is not None:
        lines.append(f"verdict {m.verdict.value} is the score's grade (pass ≥ 0.8, borderline ≥ 0.6); STATUS compares "
                     f"the score with the threshold {fmt_num(m.threshold)} and decides the exit code")
    return lines


def _contradicts(m: MetricResult) -> bool:
    """STATUS and VERDICT disagree (e.g. a 0.55 score passes a 0.5 threshold but grades 'fail')."""
    return ((m.status == Status.PASSED and m.verdict in (Verdict.FAIL, Verdict.BORDERLINE))
            or (m.status == Status.FAILED and m.verdict == Verdict.PASS))


def _case_header(case: CaseResult) -> str:
    sources = ", ".join(case.sources)
    turns = f"{case.invocation_count} turn{'s' if case.invocation_count != 1 else ''}"
    matched = f"eval case {case.eval_id} ({case.match_reason})" if case.eval_id else (case.match_reason or "no eval case")
    rep = f" · repetition {case.repeat_index + 1}" if case.repeat_index is not None else ""
    failed = f" · {case.evaluation_status}" if case.evaluation_status != "success" else ""
    return f"{sources} · {case.case_id} · {turns} · {matched}{rep}{failed}"


def render_table(run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None) -> str:
    """Case blocks, then repetitions, notes, the failures again (the last screen of a long run shows
    them) and the totals line. With ``context.quiet``: only the failures and the totals."""
    out: list[str] = [paint(line, "red" if i == 0 and context and context.incomplete else None, color, bold=True)
                      for i, line in enumerate(headline_lines(run, context))]
    if out:
        out.append("")
    quiet = bool(context and context.quiet)
    for case in run.cases if not quiet else ():
        out.append(paint(_case_header(case), None, color, bold=True))
        head = (*_HEAD, "HUMAN") if case.labels else _HEAD  # human labels beside the machine's verdicts
        rows = [head, *((*_row(m), human_cell(m, case)) if case.labels else _row(m) for m in case.metrics)]
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        for index, row in enumerate(rows):
            cells = [cell.ljust(widths[i]) for i, cell in enumerate(row)]
            if index == 0:
                line = "  " + "  ".join(cells)
                out.append(paint(line.rstrip(), None, color, bold=True))
                continue
            metric = case.metrics[index - 1]
            cells[1] = paint(cells[1], STATUS_COLORS.get(metric.status), color)
            out.append(("  " + "  ".join(cells)).rstrip())
            out.extend(f"      {note}" for note in _notes(metric))
            noted = [label for label in case.labels if label.metric == metric.name and label.note]
            out.extend(f"      human: {human_text(label)}" for label in noted[:5])
            if len(noted) > 5:
                out.append(f"      … {len(noted) - 5} more human notes ('agentevals labels export' has them all)")
        for label in case.labels:
            if label.metric is None:
                differs = label_disagrees(label, case)
                mark = f" (≠ evaluator {differs[0].value})" if differs else ""
                out.append(paint(f"  human label, whole case: {human_text(label)}{mark}", "yellow" if differs else None,
                                 color))
        if case.provenance:  # the eval case was built from a stored run: which one, from which traces
            out.append(f"  eval case from {fmt_provenance(case.provenance)}")
        if case.score is not None and len([m for m in case.metrics if m.score is not None]) > 1:
            out.append(f"  case score {fmt_num(case.score)} ({case.verdict.value if case.verdict else '-'})")
        perf = fmt_perf(case.performance_metrics)
        if perf:
            out.append(f"  perf: {perf}")
        for warning in case.warnings:
            out.append(paint(f"  warning: {warning}", "yellow", color))
        out.append("")
    for rep in run.repetitions if not quiet else ():
        if rep["n"] > 1:
            ks = ", ".join(f"pass@{k} {fmt_num(v)}" for k, v in rep["pass_at_k"].items())
            hats = ", ".join(f"pass^{k} {fmt_num(v)}" for k, v in rep["pass_hat_k"].items())
            label = rep["eval_id"] or rep["key"]
            out.append(f"repetitions of {label}: n={rep['n']} passed={rep['passed']} "
                       f"pass rate {format_rate_interval(rep['passed'], rep['n'])} · {ks} · {hats}")
            for name, stats in rep["metrics"].items():
                if stats["mean"] is not None:
                    out.append(f"  {name}: mean {fmt_num(stats['mean'])} ± {fmt_num(stats['std'])} (n={stats['n']})")
    if not quiet and any(rep["n"] > 1 for rep in run.repetitions):
        out.append("")
    for err in run.input_errors:
        out.append(paint(f"input error: {err.error}", "red", color))
    for note in run.notes if not quiet else ():
        out.append(paint(f"note: {note}", "yellow", color))
    if run.aborted:
        out.append(paint(f"aborted: {run.aborted}", "red", color))
    if not quiet and len(run.cases) > 1:
        out.extend(metric_interval_lines(run, context))
    failures = failures_block(run, color=color)
    if failures and (quiet or len(run.cases) > 1):
        out.extend(failures)
    out.extend(gate_lines(context))
    out.append(totals_line(run, color=color, context=context))
    return "\n".join(out) + "\n"


class TableReport(ReportFormat):
    """The terminal table (``-o table``)."""

    name = "table"

    def render(self, run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None) -> str:
        return render_table(run, color=color, context=context)
