"""The HTML report in a real headless Chromium: it loads with no console error, and its filters work."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from agentevals.cli import cli
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ → `support` is importable
from support.chromium import Browser, find_chromium

pytestmark = pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed (apt-get install chromium)")
REPO = Path(__file__).resolve().parents[4]
SAMPLES = [str(REPO / "examples/traces" / n) for n in ("helm.json", "k8s.json", "helm_3.json")]
EVAL_SET = str(REPO / "examples/evalsets/eval_set_helm.json")

VISIBLE = "Array.from(document.querySelectorAll('details.case')).filter(c => !c.hidden).map(c => c.querySelector('.cid').textContent)"


def choose(select: str, value: str) -> str:
    return (f"(() => {{ const s = document.getElementById('{select}'); s.value = '{value}';"
            " s.dispatchEvent(new Event('change')); return s.value; })()")


def test_report_filters_work_and_console_stays_clean(tmp_path):
    report = tmp_path / "run.html"
    result = CliRunner().invoke(cli, ["run", *SAMPLES, "-e", EVAL_SET, "-m", "tool_trajectory_avg_score", "-m",
                                      "response_match_score", "-o", f"html={report}", "-o", "summary"])
    assert result.exit_code == 1, result.output
    with Browser() as browser:
        browser.open(report.as_uri(), ready="document.body && document.body.dataset.ready === '1'")
        assert browser.js(VISIBLE) == ["3e289017fe03ffd7c4145316d2eb3d0d", "d497c9dd55717f2c5ecb79bda3028993",
                                       "c9a03cc4e80ea7a22332db0fe4dc3adf"]
        assert browser.js(choose("f-status", "FAILING")) == "FAILING"
        assert browser.js(VISIBLE) == ["d497c9dd55717f2c5ecb79bda3028993"]
        assert browser.js("document.getElementById('shown').textContent") == "1"
        browser.js(choose("f-status", "NOT_EVALUATED"))  # helm_3 matches no case of this eval set
        assert browser.js(VISIBLE) == ["c9a03cc4e80ea7a22332db0fe4dc3adf"]
        browser.js(choose("f-status", "FAILING"))
        assert browser.js("location.hash") == "#status=FAILING"
        # one metric's rows only: every evaluated case either passes or fails response_match_score
        browser.js(choose("f-metric", "response_match_score"))
        failing_response = browser.js(VISIBLE)
        browser.js(choose("f-status", "PASSED"))
        passing_response = browser.js(VISIBLE)
        assert sorted(failing_response + passing_response) == [
            "3e289017fe03ffd7c4145316d2eb3d0d", "d497c9dd55717f2c5ecb79bda3028993"]
        browser.js(choose("f-metric", ""))
        browser.js(choose("f-status", ""))
        browser.js("(() => { const t = document.getElementById('f-text'); t.value = 'd497c9dd';"
                   " t.dispatchEvent(new Event('input')); })()")
        assert browser.js(VISIBLE) == ["d497c9dd55717f2c5ecb79bda3028993"]
        # drill-down: the conversation and the expected vs actual trajectory
        browser.js("document.getElementById('expand').click()")
        opened = browser.js("document.querySelector('details.case:not([hidden])').open")
        text = browser.js("document.querySelector('details.case:not([hidden])').innerText")
        assert opened is True
        assert "tool calls\n(no tool calls)\nexpected tool calls\nhelm_list_releases({})" in text
        assert "expected\tactual" in text or "expected actual" in text.replace("\t", " ")
        # a case with a tool call shows what the tool answered
        browser.js("(() => { const t = document.getElementById('f-text'); t.value = '3e289017';"
                   " t.dispatchEvent(new Event('input')); })()")
        browser.js("document.getElementById('expand').click()")
        text = browser.js("document.querySelector('details.case:not([hidden])').innerText")
        assert 'tool calls\nhelm_list_releases({})\ntool responses\nhelm_list_releases: {"content"' in text
        # a link with a filter in its hash opens filtered
        browser.open(report.as_uri() + "#status=PASSED&metric=tool_trajectory_avg_score",
                     ready="document.body && document.body.dataset.ready === '1'")
        assert browser.js(VISIBLE) == ["3e289017fe03ffd7c4145316d2eb3d0d"]
        assert browser.errors == [], browser.messages


def test_report_of_an_interrupted_run_says_incomplete(tmp_path):
    from agentevals.report import ReportContext, render
    from agentevals.results import RunResult

    report = tmp_path / "partial.html"
    report.write_text(render(RunResult(), "html", context=ReportContext(incomplete="interrupted by SIGINT after 0 cases")))
    with Browser() as browser:
        browser.open(report.as_uri(), ready="document.body && document.body.dataset.ready === '1'")
        assert browser.js("document.getElementById('incomplete').innerText") == (
            "INCOMPLETE: interrupted by SIGINT after 0 cases")
        assert browser.errors == []


def test_console_errors_are_seen(tmp_path):
    """The check above can fail: an error logged by the page is collected."""
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><html><body><script>console.error('probe'); undefinedCall();</script></body></html>")
    with Browser() as browser:
        browser.open(page.as_uri())
        assert [m["level"] for m in browser.errors] == ["error", "exception"]
