"""``agentevals run`` with the run store, gates and several reports; ``runs list|show|compare``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import junitparser
from agentevals.cli import cli
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ → `support` is importable
from support.traces import clone_traces

ADK = Path(__file__).resolve().parents[1] / "data" / "adk"
HELM, K8S = ADK / "helm.json", ADK / "k8s.json"
ES_HELM = str(ADK / "eval_set_helm.json")
REPO = Path(__file__).resolve().parents[4]
SAMPLES = [str(REPO / "examples/traces" / name) for name in ("helm.json", "k8s.json", "helm_3.json")]


def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)


def mixed(tmp_path: Path, passing: int, failing: int) -> list[str]:
    """``passing`` copies of a trace that passes tool_trajectory_avg_score and ``failing`` that fail."""
    good = tmp_path / f"good{passing}.json"
    bad = tmp_path / f"bad{failing}.json"
    clone_traces(HELM, passing, good)
    clone_traces(K8S, failing, bad, start=10_000)
    return [str(good), str(bad), "-e", ES_HELM, "--group-by", "trace"]


def test_one_run_writes_every_format_and_is_listed(tmp_path):
    out = tmp_path / "out"
    result = run("run", *SAMPLES, "-e", str(REPO / "examples/evalsets/eval_set_helm.json"), "-o", "table",
                 "-o", f"json={out}/run.json", "-o", f"junit={out}/junit.xml", "-o", f"markdown={out}/run.md",
                 "-o", f"html={out}/run.html", "-o", f"summary={out}/summary.txt")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        "3 cases: 1 passed, 1 failed, 1 not evaluated · 3 results: 1 passed, 1 failed, 1 not evaluated · "
        "pass rate 50.00% (1/2, 95% CI 9.45–90.55%)")
    assert "failures (1):\n  d497c9dd55717f2c5ecb79bda3028993 · tool_trajectory_avg_score: FAILED score 0 < threshold 0.5" \
        in result.output
    doc = json.loads((out / "run.json").read_text())
    assert doc["complete"] is True and doc["run_id"] and doc["started_at"] <= doc["finished_at"]
    assert doc["totals"]["cases"]["total"] == 3 and doc["totals"]["pass_rate"] == 0.5
    suites = junitparser.JUnitXml.fromfile(str(out / "junit.xml"))
    assert (suites.tests, suites.failures, suites.errors, suites.skipped) == (3, 1, 0, 1)
    (suite,) = list(suites)
    cases = list(suite)
    assert next(c.name for c in cases) == "3e289017fe03ffd7c4145316d2eb3d0d [helm_list_releases]"
    assert cases[0].is_passed
    (failure,) = cases[1].result
    assert failure.message == "score 0 < threshold 0.5"
    assert "expected: helm_list_releases({})\n  actual:   (no tool calls)" in failure.text
    md = (out / "run.md").read_text()
    assert md.startswith("## agentevals: ❌ failed — pass rate 50.00% (1/2, 95% CI 9.45–90.55%)\n")
    assert md.index("### Failures (1)") < md.index("<details><summary>All cases (3)</summary>")
    html = (out / "run.html").read_text()
    assert "<script src" not in html and "http://" not in html and "https://" not in html  # self-contained
    assert (out / "summary.txt").read_text().endswith("pass rate 50.00% (1/2, 95% CI 9.45–90.55%)\n")
    listed = run("runs", "list")
    assert listed.exit_code == 0
    assert doc["run_id"] in listed.output and "completed" in listed.output and "50.00%" in listed.output
    shown = run("runs", "show", doc["run_id"][:17], "-o", "json")
    assert json.loads(shown.output)["cases"] == doc["cases"]


def test_min_pass_rate_passes_95_and_fails_85_percent(tmp_path):
    ninety_five = run("run", *mixed(tmp_path, 19, 1), "--min-pass-rate", "0.9", "-o", "summary")
    assert ninety_five.exit_code == 0, ninety_five.output
    assert "gate met: pass rate 95.00% (19/20) meets --min-pass-rate 90.00%" in ninety_five.output
    eighty_five = run("run", *mixed(tmp_path, 17, 3), "--min-pass-rate", "0.9", "-o", "summary")
    assert eighty_five.exit_code == 1
    assert "gate failed: pass rate 85.00% (17/20) is below --min-pass-rate 90.00%" in eighty_five.output
    per_metric = run("run", *mixed(tmp_path, 19, 1), "--min-pass-rate", "tool_trajectory_avg_score=0.99")
    assert per_metric.exit_code == 1
    assert "gate failed: tool_trajectory_avg_score pass rate 95.00% (19/20) is below 99.00%" in per_metric.output


def test_one_failure_in_2001_never_reads_100_percent(tmp_path):
    result = run("run", *mixed(tmp_path, 2000, 1), "-o", "summary", "-q")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1].endswith("pass rate 99.95% (2000/2001, 95% CI 99.71–100.00%)")
    assert len(result.output.splitlines()) == 3  # -q: the failure and the totals
    assert "pass rate 1 " not in result.output


def test_bad_min_pass_rate_is_a_usage_error(tmp_path):
    result = run("run", *mixed(tmp_path, 1, 0), "--min-pass-rate", "high")
    assert result.exit_code == 2
    assert "--min-pass-rate high: expected a rate between 0 and 1 (e.g. 0.9 or METRIC=0.9)" in result.output


def test_baseline_fails_only_on_regressions(tmp_path):
    first = run("run", *mixed(tmp_path, 3, 1), "-o", f"json={tmp_path}/base.json")
    assert first.exit_code == 1
    same = run("run", *mixed(tmp_path, 3, 1), "--baseline", "latest", "-o", "summary")
    assert same.exit_code == 0, same.output
    assert same.output.splitlines()[0].startswith("baseline 2026") or "0 regressions" in same.output.splitlines()[0]
    # one more failing trace than the baseline had: a new failure is a regression
    worse = run("run", *mixed(tmp_path, 3, 2), "--baseline", str(tmp_path / "base.json"), "-o", "summary")
    assert worse.exit_code == 1
    lines = worse.output.splitlines()
    assert lines[0] == "baseline base.json: 1 regression, 0 fixes, 0 score changes"
    assert lines[1] == ("  regression: 00000000000000000000000000002711 tool_trajectory_avg_score: absent → FAILED "
                        "(score - → 0)")
    assert "gate failed: 1 regression against baseline base.json" in worse.output


def test_runs_compare_shows_the_regression_of_a_changed_evaluator(tmp_path):
    config = tmp_path / "eval_config.yaml"
    config.write_text("evaluators:\n  - name: tool_trajectory_avg_score\n    type: builtin\n"
                      "  - name: response_match_score\n    type: builtin\n    threshold: 0.1\n")
    args = ["run", *SAMPLES, "-e", str(REPO / "examples/evalsets/eval_set_helm.json"), "-c", str(config), "-o",
            "json"]
    first = json.loads(run(*args).stdout)
    config.write_text(config.read_text().replace("threshold: 0.1", "threshold: 0.99"))
    second = json.loads(run(*args).stdout)
    compared = run("runs", "compare", first["run_id"], second["run_id"])
    assert compared.exit_code == 1
    assert f"{first['run_id']} → {second['run_id']}" in compared.output
    assert "regression: 3e289017fe03ffd7c4145316d2eb3d0d response_match_score: PASSED → FAILED" in compared.output
    doc = json.loads(run("runs", "compare", first["run_id"], second["run_id"], "--json").output)
    assert {r["metric"] for r in doc["regressions"]} == {"response_match_score"}


def test_second_identical_run_reuses_results_unless_no_cache(tmp_path):
    args = ["run", str(HELM), "-e", ES_HELM, "-o", "json"]
    run(*args)
    again = run(*args)
    assert "agentevals: 1 result reused from the run store, not run again (--no-cache runs everything)" in again.stderr
    fresh = run(*args, "--no-cache")
    assert "reused" not in fresh.stderr


def test_no_store_records_nothing(tmp_path):
    run("run", str(HELM), "-e", ES_HELM, "--no-store")
    assert run("runs", "list").output == "no runs recorded yet\n"
    refused = run("run", str(HELM), "-e", ES_HELM, "--no-store", "--resume")
    assert refused.exit_code == 2
    assert "--resume and --rerun-failed need the run store (drop --no-store)" in refused.output


def test_rerun_failed_runs_only_the_failures(tmp_path):
    args = mixed(tmp_path, 2, 1)
    run("run", *args, "--no-cache")
    again = run("run", *args, "--no-cache", "--rerun-failed", "-o", "json")
    assert "agentevals: 2 results reused" in again.stderr


def test_two_reports_on_stdout_is_a_usage_error():
    result = run("run", str(HELM), "-o", "table", "-o", "json")
    assert result.exit_code == 2
    assert "-o: 2 reports would go to stdout (table, json); give the others a file: -o FORMAT=PATH" in result.output


def test_output_file_extension_picks_the_format(tmp_path):
    run("run", str(HELM), "-e", ES_HELM, "--output-file", str(tmp_path / "r.xml"))
    assert junitparser.JUnitXml.fromfile(str(tmp_path / "r.xml")).tests == 1


def test_markdown_goes_to_the_github_step_summary_and_failures_are_annotated(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    result = run("run", str(K8S), "-e", ES_HELM, "-o", "markdown", "-o", "table",
                 env={"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ACTIONS": "true"})
    assert result.exit_code == 1
    assert summary.read_text().startswith("earlier step\n## agentevals: ❌ failed")
    assert ("::error file=" in result.stderr
            and "title=agentevals tool_trajectory_avg_score::d497c9dd55717f2c5ecb79bda3028993: FAILED score 0 < "
                "threshold 0.5" in result.stderr)


def test_dump_inputs_runs_every_pair_even_when_cached(tmp_path):
    args = ["run", str(HELM), "-e", ES_HELM, "-c", str(REPO / "examples/eval_config.yaml")]
    run(*args)
    dumped = run(*args, "--dump-inputs", str(tmp_path / "inputs"), "-o", "summary")
    assert "reused" not in dumped.output
    assert (tmp_path / "inputs" / "response_quality" / "3e289017fe03ffd7c4145316d2eb3d0d.json").is_file()
