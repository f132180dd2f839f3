"""Report details: STATUS vs VERDICT explained, JUnit text that XML cannot hold, rates never rounded up,
Markdown escaping, quiet and coloured output."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import junitparser
from agentevals.cli import cli
from agentevals.report import ReportContext, render
from agentevals.report._context import intervals_of
from agentevals.results import CaseResult, MetricResult, RunResult, Status, Verdict
from agentevals.results.compare import compare_runs
from agentevals.results.gates import Gates, check_gates, format_rate
from agentevals.results.intervals import run_intervals
from click.testing import CliRunner


def run_of(*metrics: MetricResult, case_id: str = "c1") -> RunResult:
    return RunResult(cases=[CaseResult(case_id=case_id, trace_ids=[case_id], sources=["t.json"], metrics=list(metrics))])


def test_status_and_verdict_disagreeing_is_explained_under_the_row():
    passed_but_graded_fail = MetricResult.scored("judge", 0.55, 0.5)
    assert passed_but_graded_fail.status == Status.PASSED and passed_but_graded_fail.verdict == Verdict.FAIL
    text = render(run_of(passed_but_graded_fail), "table")
    assert ("      verdict fail is the score's grade (pass ≥ 0.8, borderline ≥ 0.6); STATUS compares the score with "
            "the threshold 0.5 and decides the exit code") in text
    assert "STATUS compares" not in render(run_of(MetricResult.scored("judge", 0.9, 0.5)), "table")


def test_rates_are_rounded_down():
    assert format_rate(2000 / 2001, 2000, 2001) == "99.95% (2000/2001)"
    assert format_rate(0.99999) == "99.99%"
    assert format_rate(1.0) == "100.00%"
    assert format_rate(None) == "n/a"


def test_junit_holds_control_characters_and_markup_safely():
    bad = MetricResult(name="m<1>", status=Status.FAILED, score=0.1, threshold=0.5,
                       reason="bell \x07 and <b>tags</b> & \x1b[31mansi")
    xml = render(run_of(bad, MetricResult(name="m<1>", status=Status.ERROR, error="boom"),
                        MetricResult(name="other", status=Status.NOT_EVALUATED, reason="no eval case")), "junit")
    ET.fromstring(xml.encode())  # well-formed
    suites = junitparser.JUnitXml.fromstring(xml)
    assert (suites.tests, suites.failures, suites.errors, suites.skipped) == (3, 1, 1, 1)
    first = next(iter(next(iter(suites))))
    assert first.result[0].message == "score 0.1 < threshold 0.5: bell \ufffd and <b>tags</b> & \ufffd[31mansi"


def test_a_trajectory_mismatch_reads_the_same_in_the_table_and_junit():
    mismatch = {"invocation": 0, "expected": [{"name": "helm_list_releases", "args": {"all": True}}], "actual": []}
    row = MetricResult(name="traj", status=Status.FAILED, score=0.0, threshold=0.5,
                       details={"mismatches": [mismatch], "match_type": "in_order"})
    lines = ["trajectory mismatch (turn 1, in_order):", '  expected: helm_list_releases({"all": true})',
             "  actual:   (no tool calls)"]
    assert "\n".join(f"      {line}" for line in lines) in render(run_of(row), "table")
    suites = junitparser.JUnitXml.fromstring(render(run_of(row), "junit"))
    failure = next(iter(next(iter(suites)))).result[0]
    assert failure.text.splitlines()[2:] == ["score 0, threshold 0.5", *lines]


def test_incomplete_run_is_marked_in_every_format():
    run = run_of(MetricResult.scored("m", 1.0, 0.5))
    context = ReportContext(incomplete="interrupted by SIGTERM after 1 of 9 cases")
    assert render(run, "table", context=context).startswith("INCOMPLETE: interrupted by SIGTERM after 1 of 9 cases\n")
    assert render(run, "summary", context=context).rstrip().endswith("· INCOMPLETE")
    assert json.loads(render(run, "json", context=context))["complete"] is False
    junit = junitparser.JUnitXml.fromstring(render(run, "junit", context=context))
    assert [p.value for p in next(iter(junit)).properties() if p.name == "incomplete"] == [
        "interrupted by SIGTERM after 1 of 9 cases"]
    assert "**Incomplete:** interrupted by SIGTERM" in render(run, "markdown", context=context)


def test_baseline_comparison_is_shown_first():
    before = run_of(MetricResult.scored("m", 1.0, 0.5))
    after = run_of(MetricResult.scored("m", 0.2, 0.5))
    comparison = compare_runs(before, after, baseline_label="run-a")
    gates = check_gates(after, Gates(comparison=comparison))
    assert gates.exit_code == 1 and gates.failures == ["1 regression against baseline run-a"]
    context = ReportContext(comparison=comparison, gates=gates)
    assert render(after, "summary", context=context).splitlines()[:2] == [
        "baseline run-a: 1 regression, 0 fixes, 1 score change",
        "  regression: c1 m: PASSED → FAILED (score 1 → 0.2)"]
    assert render(after, "markdown", context=context).splitlines()[2] == (
        "**baseline run-a: 1 regression, 0 fixes, 1 score change**")
    assert json.loads(render(after, "json", context=context))["baseline"]["regressions"][0]["delta"] == -0.8


def test_a_paired_row_reads_the_same_in_describe_markdown_and_html():
    """6 of 20 cases pass → fail: McNemar p = 2/64, mean score change −0.3 with its bootstrap interval."""
    before = RunResult(cases=[CaseResult(case_id=f"c{i}", trace_ids=[f"c{i}"], sources=["t.json"],
                                         metrics=[MetricResult.scored("m", 1.0, 0.5)]) for i in range(20)])
    after = RunResult(cases=[CaseResult(case_id=f"c{i}", trace_ids=[f"c{i}"], sources=["t.json"],
                                        metrics=[MetricResult.scored("m", 1.0 if i >= 6 else 0.0, 0.5)])
                             for i in range(20)])
    comparison = compare_runs(before, after)
    row = next(p for p in comparison.paired if p.metric == "m")
    low, high = row.delta_interval
    assert low <= -0.3 <= high and row.interval_text == f"{low:+.3f}…{high:+.3f}"
    assert (row.p_text, row.counts_text, row.delta_text) == ("0.031", "20/20 → 14/20", f"-0.300 ({row.interval_text})")
    assert row.describe() == (f"m: regression (p=0.031; 6 pass→fail, 0 fail→pass; 20/20 → 14/20 passed; "
                              f"score -0.300, 95% CI {row.interval_text})")
    context = ReportContext(comparison=comparison)
    assert f"| m | 🔻 regression | 0.031 | 20/20 → 14/20 | 6 | 0 | -0.300 ({row.interval_text}) |" in render(
        after, "markdown", context=context)
    assert (f"<td>m</td><td>regression</td><td>0.031</td><td>20/20 → 14/20</td><td>6</td><td>0</td>"
            f"<td>-0.300 ({row.interval_text})</td>") in render(after, "html", context=context)
    scores_only = RunResult(cases=[CaseResult(case_id="c0", trace_ids=["c0"], sources=["t.json"], metrics=[
        MetricResult(name="tokens", status=Status.INFORMATIONAL, score=0.5)])])
    tokens = next(p for p in compare_runs(scores_only, scores_only).paired if p.metric == "tokens")
    assert (tokens.p_text, tokens.counts_text, tokens.delta_text) == ("-", "-", "+0.000 (+0.000…+0.000)")
    assert tokens.describe() == "tokens: within noise (score +0.000, 95% CI +0.000…+0.000)"


def test_markdown_cells_escape_pipes():
    text = render(run_of(MetricResult(name="a|b", status=Status.FAILED, score=0.0, threshold=1, reason="x | y")),
                  "markdown")
    assert "| c1 | a\\|b | FAILED | 0 | 1 | x \\| y |" in text


def test_quiet_and_forced_colour(tmp_path):
    from pathlib import Path

    adk = Path(__file__).resolve().parents[1] / "data" / "adk"
    args = ["run", str(adk / "k8s.json"), str(adk / "helm.json"), "-e", str(adk / "eval_set_helm.json")]
    quiet = CliRunner().invoke(cli, ["-q", *args])
    assert quiet.stdout.splitlines() == [
        "failures (1):",
        "  d497c9dd55717f2c5ecb79bda3028993 · tool_trajectory_avg_score: FAILED score 0 < threshold 0.5",
        "2 cases: 1 passed, 1 failed · 2 results: 1 passed, 1 failed · pass rate 50.00% (1/2, 95% CI 9.45–90.55%)"]
    coloured = CliRunner().invoke(cli, [*args, "--color", "-o", "summary"])
    assert "\x1b[31m" in coloured.stdout
    plain = CliRunner().invoke(cli, [*args, "-o", "summary"])
    assert "\x1b[" not in plain.stdout


def test_the_formats_written_from_one_context_share_one_computation_of_the_intervals():
    run = RunResult(cases=[CaseResult(case_id=f"c{i}", trace_ids=[f"c{i}"], sources=["t.json"],
                                      metrics=[MetricResult.scored("m", (i % 7) / 7, 0.5)])
                           for i in range(30)])
    context = ReportContext()
    figures = intervals_of(run, context)
    assert figures == run_intervals(run) and intervals_of(run, context) is figures  # computed once, then kept
    # Every format reads the kept figures (a bootstrap per metric, not one per format): a bound moved in them
    # shows in each.
    figures["metrics"]["m"]["mean_score"]["upper"] = 0.987654
    for fmt in ("table", "summary", "markdown", "html"):
        assert "–0.988)" in render(run, fmt, context=context), fmt
    assert json.loads(render(run, "json", context=context))["intervals"]["metrics"]["m"]["mean_score"]["upper"] == (
        0.987654)
    other = run_of(MetricResult.scored("m", 0.2, 0.5))  # the context reused for another run: its own figures
    assert intervals_of(other, context) == run_intervals(other)
    context.strict = True
    assert intervals_of(other, context) == run_intervals(other, strict=True)
