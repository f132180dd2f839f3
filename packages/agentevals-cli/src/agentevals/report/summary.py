"""``-o summary``: one line per case and a totals line, for CI logs."""

from __future__ import annotations

from typing import Optional

from ..results import SKIP_KINDS, RunResult, Status, evaluated_cases
from ..results.intervals import format_mean_interval, format_rate_interval
from ._context import ReportContext, failing_rows, headline_lines, intervals_of
from ._format import STATUS_COLORS, fmt_num, paint
from .formats import ReportFormat

__all__ = ["SummaryReport", "failures_block", "gate_lines", "metric_interval_lines", "render_summary", "scored_phrase", "totals_line"]


def _counted(counts: dict, noun: str, total: int) -> str:
    parts = [f"{counts[s.value]} {s.value.lower().replace('_', ' ')}" for s in Status if counts[s.value] or s in
             (Status.PASSED, Status.FAILED)]
    skipped = scored_phrase(counts)
    return f"{total} {noun}{'s' if total != 1 else ''}{f' ({skipped})' if skipped else ''}: " + ", ".join(parts)


def scored_phrase(counts: dict) -> str:
    """``4 scored, 2 sampled out, 1 filtered out`` from a ``totals`` part (cases or results); "" when nothing
    was skipped (sampling, filters and judge budgets skip evaluations before they run)."""
    skipped = [(kind, counts.get(kind, 0)) for kind in SKIP_KINDS]
    if not any(n for _, n in skipped):
        return ""
    scored = counts["total"] - sum(n for _, n in skipped)
    return ", ".join([f"{scored} scored", *(f"{n} {kind.replace('_', ' ')}" for kind, n in skipped if n)])


def totals_line(run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None) -> str:
    """``2 cases: 1 passed, 1 failed · 3 results: 2 passed, 1 failed · pass rate 50.00% (1/2)``.

    Cases and metric rows are counted apart; the pass rate is over cases (see ``agentevals.results.gates``) and
    rounded down, so a failing run never reads 100%.
    """
    strict = context.strict if context else False
    totals = run.totals(strict=strict)
    cases = totals["cases"]
    line = _counted(cases, "case", cases["total"])
    line += " · " + _counted(totals["results"], "result", totals["results"]["total"])
    evaluated = evaluated_cases(cases, strict=strict)
    if evaluated:
        line += f" · pass rate {format_rate_interval(cases['PASSED'], evaluated)}"
    if run.input_errors:
        line += f", {len(run.input_errors)} unreadable input{'s' if len(run.input_errors) != 1 else ''}"
    if context and context.incomplete:
        line += " · INCOMPLETE"
    failed = context.gates.exit_code if context and context.gates else run.exit_code(strict=strict)
    return paint(line, "red" if failed else "green", color, bold=True)


def metric_interval_lines(run: RunResult, context: Optional[ReportContext] = None) -> list[str]:
    """``metric trajectory: pass rate 90.00% (45/50, 95% CI 78.64–95.66%) · mean score 0.900 (95% CI …)``, one
    line per metric (``results.intervals``: Wilson for rates, a case-clustered bootstrap for mean scores)."""
    out = []
    for name, f in intervals_of(run, context)["metrics"].items():
        rate = f["pass_rate"]
        if not rate["evaluated"]:
            continue
        line = f"metric {name}: pass rate {format_rate_interval(rate['passed'], rate['evaluated'])}"
        if f["mean_score"]:
            line += f" · mean score {format_mean_interval(f['mean_score'])}"
        out.append(line)
    return out


def gate_lines(context: Optional[ReportContext]) -> list[str]:
    """``gate failed: pass rate 85.00% (17/20) is below --min-pass-rate 90.00%`` (and the gates met)."""
    if context is None or context.gates is None:
        return []
    return [*(f"gate met: {p}" for p in context.gates.passed), *(f"gate failed: {f}" for f in context.gates.failures)]


def failures_block(run: RunResult, *, color: bool = False, limit: int = 50) -> list[str]:
    """The failing rows, one line each, so the end of a long report shows what failed."""
    rows = failing_rows(run)
    if not rows:
        return []
    out = [paint(f"failures ({len(rows)}):", "red", color, bold=True)]
    for case, m in rows[:limit]:
        score = f" score {fmt_num(m.score)} < threshold {fmt_num(m.threshold)}" if m.score is not None else ""
        why = m.error or m.reason or ""
        out.append(f"  {case.case_id} · {m.name}: {paint(m.status.value, STATUS_COLORS.get(m.status), color)}"
                   f"{score}{' · ' + why if why else ''}")
    if len(rows) > limit:
        out.append(f"  … {len(rows) - limit} more (see the JSON, JUnit or HTML report)")
    return out


def render_summary(run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None) -> str:
    out = headline_lines(run, context)
    for case in run.cases if not (context and context.quiet) else ():
        cells = []
        for m in case.metrics:
            value = fmt_num(m.value if m.status == Status.INFORMATIONAL else m.score)
            cells.append(f"{m.name}={paint(m.status.value, STATUS_COLORS.get(m.status), color)}({value})")
        eval_id = f" [{case.eval_id}]" if case.eval_id else ""
        out.append(f"{case.case_id}{eval_id}: " + " ".join(cells))
    for rep in run.repetitions if not (context and context.quiet) else ():
        if rep["n"] > 1:
            ks = " ".join(f"pass@{k} {fmt_num(v)}" for k, v in rep["pass_at_k"].items())
            hats = " ".join(f"pass^{k} {fmt_num(v)}" for k, v in rep["pass_hat_k"].items())
            out.append(f"repetitions {rep['eval_id'] or rep['key']}: n={rep['n']} pass rate "
                       f"{format_rate_interval(rep['passed'], rep['n'])} "
                       f"{ks} {hats}")
    for err in run.input_errors:
        out.append(f"input error: {err.error}")
    for note in run.notes if not (context and context.quiet) else ():
        out.append(f"note: {note}")
    if run.aborted:
        out.append(f"aborted: {run.aborted}")
    if context and context.quiet:
        out.extend(failures_block(run, color=color))
    elif len(run.cases) > 1:
        out.extend(metric_interval_lines(run, context))
    out.extend(gate_lines(context))
    out.append(totals_line(run, color=color, context=context))
    return "\n".join(out) + "\n"


class SummaryReport(ReportFormat):
    """A few lines for CI logs (``-o summary``)."""

    name = "summary"

    def render(self, run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None) -> str:
        return render_summary(run, color=color, context=context)
