"""``-o markdown``: for a pull request comment or ``$GITHUB_STEP_SUMMARY`` — totals, failures first,
details collapsed."""

from __future__ import annotations

from typing import Optional

from ..results import CaseResult, RunResult, Status, evaluated_cases
from ..results.compare import Comparison
from ..results.gates import format_rate
from ..results.intervals import format_interval, format_mean_interval, format_rate_interval
from ..results.labels import disagreements, human_cell
from ._context import ReportContext, failing_rows, intervals_of
from ._format import fmt_calls, fmt_num
from .formats import ReportFormat
from .summary import scored_phrase

__all__ = ["MarkdownReport", "render_markdown"]

_MAX_ROWS = 300
"""Rows per table: GitHub caps a step summary at 1 MiB."""


def _cell(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip() or " "


def _human_cells(case: CaseResult) -> list[tuple[str, str]]:
    """``(what, HUMAN cell)`` for the whole case and each labelled metric of ``case``."""
    cells = [("case", human_cell(None, case))] + [(m.name, human_cell(m, case)) for m in case.metrics]
    return [(what, cell) for what, cell in cells if cell]


def _paired_table(comp: Comparison) -> list[str]:
    """The paired comparison in one table: per metric (and the case verdict) the verdict, McNemar's p, the
    pass counts before and now, the discordant pairs and the mean score change with its 95% interval."""
    if not comp.paired:
        return []
    icons = {"regression": "🔻 regression", "improvement": "🔺 improvement", "within noise": "〰️ within noise"}
    out = [f"| metric | change (α {comp.alpha:g}) | p | passed before → now | pass→fail | fail→pass | "
           "score Δ (95% CI) |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for p in comp.paired:
        out.append(f"| {_cell(p.metric)} | {icons.get(p.verdict, p.verdict)} | {p.p_text} | {p.counts_text} | "
                   f"{p.pass_to_fail} | {p.fail_to_pass} | {p.delta_text} |")
    flaky = (comp.stability.get("current") or {})
    if flaky:
        out += ["", f"Repeated eval cases now: {len(flaky['stable_pass'])} stable pass, {len(flaky['flaky'])} flaky"
                f"{' (' + _cell(', '.join(flaky['flaky'][:20])) + ')' if flaky['flaky'] else ''}, "
                f"{len(flaky['stable_fail'])} stable fail."]
    return [*out, ""]


def render_markdown(run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None) -> str:
    strict = context.strict if context else False
    totals = run.totals(strict=strict)
    cases = totals["cases"]
    failed = (context.gates.exit_code if context and context.gates else run.exit_code(strict=strict)) != 0
    evaluated = evaluated_cases(cases, strict=strict)
    figures = intervals_of(run, context)
    out = [f"## agentevals: {'❌ failed' if failed else '✅ passed'} — pass rate "
           f"{format_rate_interval(cases['PASSED'], evaluated)}", ""]
    if context and context.incomplete:
        out += [f"> [!WARNING]\n> **Incomplete:** {context.incomplete}", ""]
    if context and context.comparison is not None:
        comp = context.comparison
        out += [f"**{comp.headline()}**", ""]
        out += _paired_table(comp)
        if comp.regressions:
            out += ["| case | metric | before | now | score |", "| --- | --- | --- | --- | --- |"]
            out += [f"| {_cell(r.case_id)} | {_cell(r.metric)} | {r.before.value if r.before else 'absent'} | "
                    f"{r.after.value if r.after else 'absent'} | {fmt_num(r.score_before)} → {fmt_num(r.score_after)} |"
                    for r in comp.regressions[:_MAX_ROWS]]
            out.append("")
    if context and context.gates is not None:
        out += [*(f"- ❌ {f}" for f in context.gates.failures), *(f"- ✅ {p}" for p in context.gates.passed), ""]
    results = totals["results"]
    out += ["| | total | passed | failed | error | not evaluated | informational |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for label, counts in (("cases", cases), ("results", results)):
        out.append(f"| {label} | {counts['total']} | {counts['PASSED']} | {counts['FAILED']} | {counts['ERROR']} | "
                   f"{counts['NOT_EVALUATED']} | {counts['INFORMATIONAL']} |")
    out.append("")
    if scored_phrase(cases):
        out += [f"Sessions: {scored_phrase(cases)} (skipped sessions are not in any pass rate).", ""]
    rows = failing_rows(run)
    labelled = any(case.labels for case in run.cases)  # a HUMAN column beside the verdicts, as in `runs show`
    human_head, human_rule = (" human |", " --- |") if labelled else ("", "")
    if rows:
        out += [f"### Failures ({len(rows)})", "", f"| case | metric | status | score | threshold |{human_head} why |",
                f"| --- | --- | --- | --- | --- |{human_rule} --- |"]
        out += [f"| {_cell(c.case_id)} | {_cell(m.name)} | {m.status.value} | {fmt_num(m.score)} | "
                f"{fmt_num(m.threshold)} |{f' {_cell(human_cell(m, c))} |' if labelled else ''} "
                f"{_cell((m.error or m.reason or '')[:200])} |" for c, m in rows[:_MAX_ROWS]]
        if len(rows) > _MAX_ROWS:
            out.append(f"\n… {len(rows) - _MAX_ROWS} more failing rows")
        out.append("")
        for c, m in rows[:50]:
            diff = [f"turn {x['invocation'] + 1}: expected {fmt_calls(x['expected'])}\n"
                    f"        actual   {fmt_calls(x['actual'])}" for x in m.details.get("mismatches", ())]
            body = "\n".join(filter(None, [m.error, m.reason, *diff, m.reasoning]))
            if body:
                out += [f"<details><summary>{_cell(c.case_id)} · {_cell(m.name)}</summary>", "", "```text",
                        body.replace("```", "'''"), "```", "</details>", ""]
    if totals["metrics"]:
        out += ["### Metrics", "", "| metric | passed | evaluated | pass rate | 95% CI | mean score (95% CI) |",
                "| --- | --- | --- | --- | --- | --- |"]
        out += [f"| {_cell(name)} | {e['passed']} | {e['evaluated']} | {format_rate(e['pass_rate'])} | "
                f"{format_interval(figures['metrics'][name]['pass_rate']).removeprefix('95% CI ') or '-'} | "
                f"{format_mean_interval(figures['metrics'][name]['mean_score'])} |"
                for name, e in totals["metrics"].items()]
        out.append("")
    if labelled:
        differ = disagreements(run.cases)
        out += [f"### Human labels: {len(differ)} disagree with the evaluator", ""]
        out += [f"- ≠ {_cell(d.describe())}" for d in differ[:_MAX_ROWS]]
        out.append("")
    if run.cases:
        out += [f"<details><summary>All cases ({len(run.cases)})</summary>", "",
                f"| case | eval case | results |{human_head}", f"| --- | --- | --- |{human_rule}"]
        for case in run.cases[:_MAX_ROWS]:
            cells = ", ".join(f"{m.name} {'✅' if m.status == Status.PASSED else '❌' if m.status in (Status.FAILED, Status.ERROR) else '➖'} "
                              f"{fmt_num(m.score if m.score is not None else m.value)}" for m in case.metrics)
            human = "; ".join(f"{name}: {cell}" for name, cell in _human_cells(case)) if labelled else ""
            out.append(f"| {_cell(case.case_id)} | {_cell(case.eval_id or '')} | {_cell(cells)} |"
                       + (f" {_cell(human)} |" if labelled else ""))
        if len(run.cases) > _MAX_ROWS:
            out.append(f"\n… {len(run.cases) - _MAX_ROWS} more cases (see the JSON or HTML report)")
        out += ["", "</details>", ""]
    notes = [*(f"input error: {e.error}" for e in run.input_errors), *(f"note: {n}" for n in run.notes)]
    if run.aborted:
        notes.append(f"aborted: {run.aborted}")
    out += [f"- {_cell(n)}" for n in notes]
    tail = f"run `{run.run_id}` · " if run.run_id else ""
    out += ["", f"<sub>{tail}agentevals {run.agentevals_version} · started {run.started_at or '-'}</sub>", ""]
    return "\n".join(out)


class MarkdownReport(ReportFormat):
    """Markdown for PR comments and ``$GITHUB_STEP_SUMMARY`` (``-o markdown``)."""

    name = "markdown"

    def render(self, run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None) -> str:
        return render_markdown(run, color=color, context=context)
