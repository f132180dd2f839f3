"""Paired comparisons and interval gates on real stored runs of 50 cases (#27 items 3, 4).

Each run is ``agentevals run`` over a generated Jaeger file of 50 traces against ``eval_set_helm.json``:
trace ``i`` is the HELM trace (passes) or the K8S one (fails), so every case's verdict is known. The
p-values are checked against ``scipy.stats.binomtest`` and the intervals against the Wilson closed form,
both computed here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from agentevals.cli import cli
from click.testing import CliRunner

from ..support.generate import replicate
from ..support.reference_stats import ci_text, wilson

scipy_stats = pytest.importorskip("scipy.stats", reason="scipy is a test dependency (hatch.toml)")

ES_HELM = str(Path(__file__).resolve().parents[1] / "data" / "adk" / "eval_set_helm.json")
N = 50
BASELINE = set(range(45))
"""Cases passing in the baseline: 45 of 50."""
NOISE = (BASELINE - {0, 1, 2}) | {45, 46, 47}
"""Three cases flip each way: still 45 of 50, the same underlying pass rate."""
BREAK = set(range(40, 45))
"""A real break: 40 of the 45 passing cases now fail."""


def _run(tmp_path: Path, name: str, passing: set[int], *extra: str):
    traces = replicate(tmp_path / f"{name}.json", N, passes=lambda i: i in passing)
    result = CliRunner().invoke(cli, ["run", str(traces), "-e", ES_HELM, "--store", str(tmp_path / "runs.sqlite"),
                                      "-o", f"json={tmp_path / name}-report.json", *extra])
    doc = json.loads((tmp_path / f"{name}-report.json").read_text())
    return result, doc


def _compare(tmp_path: Path, a: str, b: str, *extra: str):
    result = CliRunner().invoke(cli, ["runs", "compare", a, b, "--json", "--store", str(tmp_path / "runs.sqlite"),
                                      *extra])
    return result, json.loads(result.output)


def _paired(doc: dict, metric: str) -> dict:
    return next(p for p in doc["paired"] if p["metric"] == metric)


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("paired")
    runs = {name: _run(tmp, name, passing) for name, passing in
            (("baseline", BASELINE), ("noise", NOISE), ("break", BREAK))}
    for name, (result, doc) in runs.items():
        assert doc["totals"]["cases"]["total"] == N, (name, result.output)
    return tmp, {name: doc["run_id"] for name, (_, doc) in runs.items()}, runs


def test_same_pass_rate_is_within_noise(three_runs) -> None:
    tmp, ids, _ = three_runs
    result, doc = _compare(tmp, ids["baseline"], ids["noise"])
    assert result.exit_code == 1  # the default (--fail-on any): three rows regressed
    assert len(doc["regressions"]) == 3 and doc["alpha"] == 0.05
    for metric in ("case", "tool_trajectory_avg_score"):
        row = _paired(doc, metric)
        assert (row["pass_to_fail"], row["fail_to_pass"], row["pairs"]) == (3, 3, N)
        assert row["p_value"] == pytest.approx(scipy_stats.binomtest(3, 6, 0.5).pvalue)
        assert row["verdict"] == "within noise"
    significant, _ = _compare(tmp, ids["baseline"], ids["noise"], "--fail-on", "regression")
    assert significant.exit_code == 0, significant.output


def test_a_real_break_is_a_regression_with_its_p_value(three_runs) -> None:
    tmp, ids, _ = three_runs
    result, doc = _compare(tmp, ids["baseline"], ids["break"], "--fail-on", "regression")
    assert result.exit_code == 1
    row = _paired(doc, "tool_trajectory_avg_score")
    assert (row["passed_before"], row["passed_after"], row["pass_to_fail"], row["fail_to_pass"]) == (45, 5, 40, 0)
    assert row["verdict"] == "regression"
    assert row["p_value"] == pytest.approx(scipy_stats.binomtest(0, 40, 0.5).pvalue, rel=1e-9)
    assert row["mean_delta"] == pytest.approx(-0.8)
    lower, upper = row["delta_interval"]
    assert lower <= -0.8 <= upper < 0
    text = CliRunner().invoke(cli, ["runs", "compare", ids["baseline"], ids["break"], "--store",
                                    str(tmp / "runs.sqlite")]).output
    p = scipy_stats.binomtest(0, 40, 0.5).pvalue
    assert f"tool_trajectory_avg_score: regression (p={p:.1e}; 40 pass→fail, 0 fail→pass" in text
    # The verdict follows --alpha: below the p-value the same break is within noise.
    _, loose = _compare(tmp, ids["baseline"], ids["break"], "--alpha", str(p / 10))
    assert _paired(loose, "tool_trajectory_avg_score")["verdict"] == "within noise"


def test_run_baseline_gates_only_on_significant_regressions(three_runs, tmp_path) -> None:
    tmp, ids, _ = three_runs
    noise = replicate(tmp_path / "noise.json", N, passes=lambda i: i in NOISE)
    store = str(tmp / "runs.sqlite")
    md = tmp_path / "summary.md"
    base = ["run", str(noise), "-e", ES_HELM, "--store", store, "--baseline", ids["baseline"]]
    default = CliRunner().invoke(cli, base)
    assert default.exit_code == 1 and "gate failed: 3 regressions against baseline" in default.output
    html = tmp_path / "report.html"
    gated = CliRunner().invoke(cli, [*base, "--fail-on", "regression", "-o", "table", "-o", f"markdown={md}",
                                     "-o", f"html={html}"])
    assert gated.exit_code == 0, gated.output
    assert f"gate met: no significant regression against baseline {ids['baseline']} (α 0.05); 3 regressed rows " \
           "within noise" in gated.output
    summary = md.read_text()
    assert "| metric | change (α 0.05) | p | passed before → now | pass→fail | fail→pass | score Δ (95% CI) |" in summary
    assert "| tool_trajectory_avg_score | 〰️ within noise | 1.000 | 45/50 → 45/50 | 3 | 3 |" in summary
    page = html.read_text()
    assert '<p id="paired">paired (α 0.05): 2 within noise</p>' in page
    assert "<td>tool_trajectory_avg_score</td><td>within noise</td><td>1.000</td><td>45/50 → 45/50</td>" in page
    broken = replicate(tmp_path / "break.json", N, passes=lambda i: i in BREAK)
    failed = CliRunner().invoke(cli, ["run", str(broken), "-e", ES_HELM, "--store", store, "--baseline",
                                      ids["baseline"], "--fail-on", "regression"])
    assert failed.exit_code == 1
    assert "gate failed: significant regression against baseline" in failed.output
    no_baseline = CliRunner().invoke(cli, ["run", str(noise), "-e", ES_HELM, "--no-store", "--fail-on", "regression"])
    assert no_baseline.exit_code == 2 and "--fail-on regression compares against a baseline" in no_baseline.output


def test_gate_on_lower_bound(three_runs, tmp_path) -> None:
    _, _, runs = three_runs
    _, doc = runs["noise"]
    lower, upper = wilson(45, 50)
    assert doc["intervals"]["pass_rate"]["lower"] == pytest.approx(lower)
    assert doc["intervals"]["pass_rate"]["upper"] == pytest.approx(upper)
    traces = replicate(tmp_path / "t.json", N, passes=lambda i: i in NOISE)
    args = ["run", str(traces), "-e", ES_HELM, "--no-store", "--min-pass-rate", "0.85"]
    point = CliRunner().invoke(cli, args)
    assert point.exit_code == 0, point.output  # 90% ≥ 85%
    bound = CliRunner().invoke(cli, [*args, "--gate-on", "lower-bound"])
    assert bound.exit_code == 1, bound.output  # …but its 95% lower bound is below 85%
    assert f"95% lower bound {math.floor(lower * 10000) / 100:.2f}% is below --min-pass-rate 85.00%" in bound.output
    easy = CliRunner().invoke(cli, [*args[:-1], f"{lower - 0.001:.4f}", "--gate-on", "lower-bound"])
    assert easy.exit_code == 0, easy.output


def test_runs_list_and_trend_show_the_interval(three_runs) -> None:
    tmp, ids, _ = three_runs
    lower, upper = wilson(45, 50)
    ci = f"90.00% (45/50, {ci_text(45, 50)})"
    store = str(tmp / "runs.sqlite")
    listed = CliRunner().invoke(cli, ["runs", "list", "--store", store]).output
    assert next(line for line in listed.splitlines() if line.startswith(ids["noise"])).count(ci) == 1, listed
    trend = CliRunner().invoke(cli, ["runs", "trend", "tool_trajectory_avg_score", "--store", store]).output
    assert next(line for line in trend.splitlines() if line.startswith(ids["baseline"])).count(ci) == 1, trend
    # the JSON answers carry the same interval: runs list --json (also /api/runs, MCP list_runs) and the trend points
    records = json.loads(CliRunner().invoke(cli, ["runs", "list", "--json", "--store", store]).output)
    interval = next(r for r in records if r["run_id"] == ids["noise"])["pass_rate_interval"]
    assert (interval["passed"], interval["evaluated"]) == (45, 50)
    assert interval["lower"] == pytest.approx(lower) and interval["upper"] == pytest.approx(upper)
