"""``-o summary``: one line per case and a totals line, for CI logs."""

from __future__ import annotations

from ..results import RunResult, Status
from ._format import STATUS_COLORS, fmt_num, paint

__all__ = ["render_summary", "totals_line"]


def totals_line(run: RunResult, *, color: bool = False) -> str:
    counts = run.counts()
    parts = [f"{counts[s.value]} {s.value.lower().replace('_', ' ')}" for s in Status if counts[s.value] or s in
             (Status.PASSED, Status.FAILED)]
    cases = len(run.cases)
    line = f"{cases} case{'s' if cases != 1 else ''}: " + ", ".join(parts)
    if run.input_errors:
        line += f", {len(run.input_errors)} unreadable input{'s' if len(run.input_errors) != 1 else ''}"
    return paint(line, "red" if run.exit_code() else "green", color, bold=True)


def render_summary(run: RunResult, *, color: bool = False) -> str:
    out = []
    for case in run.cases:
        cells = []
        for m in case.metrics:
            value = fmt_num(m.value if m.status == Status.INFORMATIONAL else m.score)
            cells.append(f"{m.name}={paint(m.status.value, STATUS_COLORS.get(m.status), color)}({value})")
        eval_id = f" [{case.eval_id}]" if case.eval_id else ""
        out.append(f"{case.case_id}{eval_id}: " + " ".join(cells))
    for rep in run.repetitions:
        if rep["n"] > 1:
            ks = " ".join(f"pass@{k} {fmt_num(v)}" for k, v in rep["pass_at_k"].items())
            hats = " ".join(f"pass^{k} {fmt_num(v)}" for k, v in rep["pass_hat_k"].items())
            out.append(f"repetitions {rep['eval_id'] or rep['key']}: n={rep['n']} pass rate {fmt_num(rep['pass_rate'])} "
                       f"{ks} {hats}")
    for err in run.input_errors:
        out.append(f"input error: {err.error}")
    for note in run.notes:
        out.append(f"note: {note}")
    if run.aborted:
        out.append(f"aborted: {run.aborted}")
    out.append(totals_line(run, color=color))
    return "\n".join(out) + "\n"
