"""``agentevals calibrate`` in a real subprocess against a programmed loopback judge: every figure is checked
against the plan the judge was built with (its verdicts, flips and biases), references from scikit-learn/scipy."""

from __future__ import annotations

import csv
import html
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest
from agentevals.store import RunStore, metric_trend

from ..support.programmed_judge import FAIL_SCORE, PASS_SCORE, ProgrammedJudge, case_id, write_cases

metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn is a test dependency (hatch.toml)")
scipy_stats = pytest.importorskip("scipy.stats", reason="scipy is a test dependency (hatch.toml)")


def calibrate(judge: ProgrammedJudge, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **judge.env}
    return subprocess.run([sys.executable, "-m", "agentevals", "calibrate", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env=env)


def write_labels(path: Path, human: dict[int, str], *, paraphrase: Optional[dict[int, str]] = None) -> Path:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["case", "verdict", "score", "labeler", "paraphrase"])
        for item, verdict in human.items():
            writer.writerow([case_id(item), verdict, "1.0" if verdict == "pass" else "0.0", "ana",
                             (paraphrase or {}).get(item, "")])
    return path


def test_agreement_kappa_and_self_consistency_match_the_programmed_judge(tmp_path: Path) -> None:
    n = 40
    human = {i: "pass" if i % 5 in (0, 1, 2) else "fail" for i in range(1, n + 1)}
    disagree = {3, 8, 11, 17, 26, 33}  # the plan agrees with the people on 34 of 40 cases (before its flips)
    planned = {i: ("fail" if v == "pass" else "pass") if i in disagree else v for i, v in human.items()}
    with ProgrammedJudge(planned, flip=0.25) as judge:
        write_cases(tmp_path / "traces.json", n)
        judge.config(tmp_path / "eval_config.yaml")
        write_labels(tmp_path / "labels.csv", human)
        store = str(tmp_path / "runs.sqlite")
        result = calibrate(judge, "traces.json", "-c", "eval_config.yaml", "--evaluator", "judge", "--labels",
                           "labels.csv", "--repeat", "3", "--min-kappa", "0.9", "-o", "json", "--store", store,
                           cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # κ is below 0.9
    doc = json.loads(result.stdout)
    items = list(range(1, n + 1))
    h = [human[i] for i in items]
    j = [judge.verdict(i, 0) for i in items]  # the first ask: the plan, with the flips it drew for ask 0
    assert doc["schema_version"] == 1
    assert (doc["evaluator"], doc["type"], doc["n"], doc["cases"]) == ("judge", "llm_judge", n, n)
    agreement = sum(a == b for a, b in zip(h, j, strict=True)) / n
    assert doc["agreement"]["value"] == pytest.approx(agreement)
    assert doc["kappa"]["value"] == pytest.approx(metrics.cohen_kappa_score(h, j))
    lo, hi = doc["kappa"]["interval"]
    assert lo < doc["kappa"]["value"] < hi
    expected = metrics.confusion_matrix(h, j, labels=["pass", "fail"]).tolist()
    assert [[doc["confusion"][t][p] for p in ("pass", "fail")] for t in ("pass", "fail")] == expected
    precision, recall, _, _ = metrics.precision_recall_fscore_support(h, j, labels=["pass", "fail"])
    assert doc["per_class"]["pass"]["precision"] == pytest.approx(precision[0])
    assert doc["per_class"]["fail"]["recall"] == pytest.approx(recall[1])
    assert doc["base_rate"] == pytest.approx(h.count("pass") / n)
    assert doc["evaluator_pass_rate"] == pytest.approx(j.count("pass") / n)
    for key, verdicts in (("base_rate_interval", h), ("evaluator_pass_rate_interval", j)):  # Wilson, as scipy has it
        wilson = scipy_stats.binomtest(verdicts.count("pass"), n).proportion_ci(method="wilson")
        assert doc[key]["passed"] == verdicts.count("pass") and doc[key]["evaluated"] == n
        assert (doc[key]["lower"], doc[key]["upper"]) == pytest.approx((wilson.low, wilson.high))
    human_scores = [1.0 if v == "pass" else 0.0 for v in h]
    judge_scores = [PASS_SCORE if v == "pass" else FAIL_SCORE for v in j]
    assert doc["scores"]["n"] == n
    assert doc["scores"]["pearson"] == pytest.approx(scipy_stats.pearsonr(human_scores, judge_scores).statistic)
    assert doc["scores"]["mae"]["value"] == pytest.approx(metrics.mean_absolute_error(human_scores, judge_scores))
    # Self-consistency: the flips the judge made, replayed from its seeded plan.
    flips = sum(judge.verdict(i, k) != judge.verdict(i, 0) for i in items for k in (1, 2))
    consistency = doc["self_consistency"]
    assert consistency["repeats"] == 3 and consistency["cases_repeated"] == n
    assert consistency["flip_rate"]["value"] == pytest.approx(flips / (2 * n))
    assert 0 < flips < 2 * n  # the plan flipped some asks and not all: the figure can fail either way
    assert consistency["cases_flipped"] == sum(len({judge.verdict(i, k) for k in range(3)}) > 1 for i in items)
    assert doc["gate"] == {"min_kappa": 0.9, "passed": False}
    assert doc["judge_usage"]["calibration"]["calls"] == 3 * n
    assert doc["unmatched"] == {"labelled_without_verdict": [], "verdicts_without_label": []}
    # Stored: κ and the agreement rate over time (runs trend).
    db = RunStore.open(store)
    try:
        [kappa_point] = metric_trend(db, "calibration.kappa:judge")
        [agreement_point] = metric_trend(db, "calibration.agreement:judge")
        assert kappa_point["run_id"] == doc["run_id"]
    finally:
        db.close()
    assert kappa_point["mean_score"] == pytest.approx(doc["kappa"]["value"])
    assert agreement_point["pass_rate"] == pytest.approx(agreement)


def test_probes_catch_the_programmed_verbosity_and_position_biases(tmp_path: Path) -> None:
    n = 30
    planned = {i: "pass" if i % 3 else "fail" for i in range(1, n + 1)}  # 20 pass, 10 fail
    paraphrases = {i: "Two Helm releases are installed: kagent and kagent-crds, both deployed." for i in range(1, 11)}
    with ProgrammedJudge(planned, verbose_bonus=0.8, position_penalty=0.8) as judge:
        write_cases(tmp_path / "traces.json", n)
        judge.config(tmp_path / "eval_config.yaml")
        write_labels(tmp_path / "labels.csv", planned, paraphrase=paraphrases)
        result = calibrate(judge, "traces.json", "-c", "eval_config.yaml", "--evaluator", "judge", "--labels",
                           "labels.csv", "--probes", "verbosity,position,label-order,paraphrase", "-o", "json",
                           "--no-store", cwd=tmp_path)
        prompts = [r.json["messages"][-1]["content"] for r in judge.requests_to("POST", "/chat/completions")]
    assert result.returncode == 1, result.stderr  # probes failed
    doc = json.loads(result.stdout)
    probes = {p["probe"]: p for p in doc["probes"]}
    assert list(probes) == ["verbosity", "position", "label-order", "paraphrase"]
    fail_share, pass_share = 10 / n, 20 / n
    verbosity = probes["verbosity"]  # padding lifts every fail (0.1 → 0.9): those verdicts change
    assert verbosity["n"] == n and verbosity["fails"] is True
    assert verbosity["verdict_change_rate"]["value"] == pytest.approx(fail_share)
    assert verbosity["mean_score_shift"]["value"] == pytest.approx(fail_share * 0.8 + pass_share * 0.1)
    position = probes["position"]  # the answer before the criteria sinks every pass (0.9 → 0.1)
    assert position["fails"] is True
    assert position["verdict_change_rate"]["value"] == pytest.approx(pass_share)
    assert position["mean_score_shift"]["value"] == pytest.approx(-0.8 * pass_share - 0.1 * fail_share)
    for unbiased in ("label-order", "paraphrase"):  # the judge has no such bias: the probes pass
        assert probes[unbiased]["fails"] is False and probes[unbiased]["verdict_change_rate"]["value"] == 0
    assert probes["paraphrase"]["n"] == 10
    assert doc["run_id"] is None
    assert doc["judge_usage"]["probe:verbosity"]["calls"] == n
    assert doc["judge_usage"]["total"]["calls"] == 5 * n
    # What the judge was shown: padding, reversed sections, the restated answer.
    assert sum("Additional context:" in p for p in prompts) == n
    assert sum(p.find("[[ ## answer ## ]]") < p.find("[[ ## criteria ## ]]") for p in prompts) == n
    assert sum(paraphrases[1] in p for p in prompts) == 10


def test_labels_of_a_stored_run_and_the_table(tmp_path: Path) -> None:
    n = 12
    planned = {i: "pass" if i % 2 else "fail" for i in range(1, n + 1)}
    store = str(tmp_path / "runs.sqlite")
    with ProgrammedJudge(planned) as judge:
        write_cases(tmp_path / "traces.json", n)
        judge.config(tmp_path / "eval_config.yaml")
        env = {**os.environ, **judge.env}
        run = subprocess.run([sys.executable, "-m", "agentevals", "run", "traces.json", "-c", "eval_config.yaml",
                              "--store", store, "-q"], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                             env=env)
        assert run.returncode == 1, run.stderr  # half the cases fail
        human = {**planned, 2: "pass"}  # the person disagrees with the judge on case 2
        rows = [{"case": case_id(i), "verdict": v, "labeler": "ana"} for i, v in human.items()]
        (tmp_path / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        imported = subprocess.run([sys.executable, "-m", "agentevals", "labels", "import", "labels.jsonl", "--run",
                                   "latest", "--store", store], capture_output=True, text=True, timeout=60,
                                  cwd=tmp_path)
        assert imported.returncode == 0, imported.stderr
        result = calibrate(judge, "traces.json", "-c", "eval_config.yaml", "--evaluator", "judge", "--run", "latest",
                           "--min-kappa", "0.5", "--store", store, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    kappa = metrics.cohen_kappa_score([human[i] for i in planned], list(planned.values()))
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"calibrate judge (llm_judge): {n} of {n} cases compared with the labels of run ")
    assert f"  agreement          {11 / 12:.3f} (95% CI " in lines[1]
    assert lines[2].startswith(f"  kappa              {kappa:.3f} (95% CI ")
    assert f"{'':21}{'pass':<18} {6:>5}  {1:>5}" in lines  # the human pass row: the judge failed one of 7
    [base] = [line for line in lines if line.startswith("  base rate ")]  # each pass rate with its interval
    assert base.startswith("  base rate          human pass 58.33% (7/12, 95% CI ")
    assert " · evaluator pass 50.00% (6/12, 95% CI " in base
    assert lines[-1] == f"gate: kappa {kappa:.3f} >= 0.5: passed"
    [stored] = [line.split()[3] for line in lines if line.startswith("stored as run ")]
    trend = subprocess.run([sys.executable, "-m", "agentevals", "runs", "trend", "calibration.kappa:judge", "--store",
                            store], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert trend.returncode == 0, trend.stderr
    header, row = trend.stdout.splitlines()
    assert header.split() == ["RUN", "STARTED", "STATUS", "ROWS", "PASS", "RATE", "MEAN", "SCORE"]
    cells = row.split()
    assert (cells[0], cells[3], cells[4], cells[-1]) == (stored, "completed", "1", f"{kappa:.3f}")
    agreement = subprocess.run([sys.executable, "-m", "agentevals", "runs", "trend", "calibration.agreement:judge",
                                "--json", "--store", store], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    [point] = json.loads(agreement.stdout)
    assert (point["run_id"], point["passed"], point["evaluated"]) == (stored, 11, 12)
    judged = subprocess.run([sys.executable, "-m", "agentevals", "runs", "trend", "judge", "--json", "--store", store],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert [p["passed"] for p in json.loads(judged.stdout)] == [6, 6]  # the run, then the calibration's own run


@pytest.mark.parametrize(("args", "labels", "message"), [
    (["--evaluator", "judg", "--labels", "labels.csv"], "case,verdict\n00000000000000000000000000000001,pass\n",
     "--evaluator 'judg': no such evaluator in eval_config.yaml (did you mean 'judge'?)"),
    (["--evaluator", "judge", "--labels", "labels.csv"], "case,verdict\n00000000000000000000000000000001,pass\n"
     "00000000000000000000000000000002,maybe\n", "labels.csv:3: verdict 'maybe': expected pass or fail"),
    (["--evaluator", "judge", "--labels", "labels.csv"], "case,verdict\nnot-a-case,pass\n",
     "labels.csv: no labelled case is a case of these traces"),
    (["--evaluator", "judge", "--labels", "labels.csv", "--probes", "verbose"], "case,verdict\n",
     "--probes: unknown probe 'verbose' (did you mean 'verbosity'?)"),
    (["--evaluator", "judge"], "", "give the human labels with exactly one of --labels FILE or --run RUN"),
    (["--evaluator", "judge", "--labels", "labels.csv", "--probes", "paraphrase"],
     "case,verdict\n00000000000000000000000000000001,pass\n", "has no 'paraphrase' column with text"),
    (["--evaluator", "judge", "--labels", "labels.csv", "--output-file", "missing/calibration.html"],
     "case,verdict\n00000000000000000000000000000001,pass\n",
     "--output-file missing/calibration.html: its folder missing does not exist"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], labels: str, message: str) -> None:
    with ProgrammedJudge({1: "pass", 2: "fail"}) as judge:
        write_cases(tmp_path / "traces.json", 2)
        judge.config(tmp_path / "eval_config.yaml")
        (tmp_path / "labels.csv").write_text(labels)
        result = calibrate(judge, "traces.json", "-c", "eval_config.yaml", *args, "--no-store", cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    [line] = [x for x in result.stderr.splitlines() if x.startswith("Error:")]
    assert message in line


def test_a_judge_without_a_key_compares_nothing_and_exits_1(tmp_path: Path) -> None:
    with ProgrammedJudge({1: "pass", 2: "fail"}) as judge:
        write_cases(tmp_path / "traces.json", 2)
        judge.config(tmp_path / "eval_config.yaml")
        write_labels(tmp_path / "labels.csv", {1: "pass", 2: "fail"})
        env = {k: v for k, v in os.environ.items() if k != "CALIBRATE_TEST_JUDGE_KEY"}
        result = subprocess.run([sys.executable, "-m", "agentevals", "calibrate", "traces.json", "-c",
                                 "eval_config.yaml", "--evaluator", "judge", "--labels", "labels.csv", "--no-store"],
                                capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
        assert judge.requests == []
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "calibrate judge (llm_judge): 0 of 2 cases compared with the labels of labels.csv"
    assert lines[1] == ("  2 case(s) without a verdict (ERROR/NOT_EVALUATED): LLM judge unavailable: no API key: "
                        "set CALIBRATE_TEST_JUDGE_KEY")
    assert "  kappa              n/a" in lines


def test_probes_need_a_probed_judge_type(tmp_path: Path) -> None:
    with ProgrammedJudge({1: "pass"}) as judge:
        write_cases(tmp_path / "traces.json", 1)
        (tmp_path / "eval_config.yaml").write_text("evaluators:\n  - name: says-kagent\n    type: contains\n"
                                                   "    value: kagent\n")
        write_labels(tmp_path / "labels.csv", {1: "pass"})
        result = calibrate(judge, "traces.json", "-c", "eval_config.yaml", "--evaluator", "says-kagent", "--labels",
                           "labels.csv", "--probes", "verbosity", "--no-store", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == ("Error: --probes: evaluator 'says-kagent' is of type contains; the probes change "
                                     "the prompts of llm_judge and rubric judges only")


def test_labels_of_cases_not_in_the_traces_are_named(tmp_path: Path) -> None:
    with ProgrammedJudge({1: "pass", 2: "fail"}) as judge:
        write_cases(tmp_path / "traces.json", 2)
        judge.config(tmp_path / "eval_config.yaml")
        write_labels(tmp_path / "labels.csv", {1: "pass", 2: "pass", 9: "fail"})  # case 9 is not in the traces
        result = calibrate(judge, "traces.json", "-c", "eval_config.yaml", "--evaluator", "judge", "--labels",
                           "labels.csv", "-o", "json", "--no-store", cwd=tmp_path)
        table = calibrate(judge, "traces.json", "-c", "eval_config.yaml", "--evaluator", "judge", "--labels",
                          "labels.csv", "--no-store", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert (doc["n"], doc["agreement"]["value"]) == (2, 0.5)
    assert doc["unmatched"] == {"labelled_without_verdict": [case_id(9)], "verdicts_without_label": []}
    assert doc["kappa"]["value"] == 0.0  # the humans say pass throughout: chance explains all the agreement
    assert table.stdout.splitlines()[1] == (f"  1 labelled case(s) not compared (not in these traces, or no verdict): "
                                            f"{case_id(9)}")


def _page_text(page: str) -> str:
    """The page as a reader sees it: tags dropped, entities decoded, whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def _wilson_text(passed: int, n: int) -> str:
    wilson = scipy_stats.binomtest(passed, n).proportion_ci(method="wilson")  # bounds rounded outwards
    return (f"{math.floor(passed / n * 10000) / 100:.2f}% ({passed}/{n}, 95% CI "
            f"{math.floor(wilson.low * 10000) / 100:.2f}–{math.ceil(wilson.high * 10000) / 100:.2f}%)")


def test_the_html_page_carries_the_figures_of_the_table(tmp_path: Path) -> None:
    n = 20
    human = {i: "fail" if i % 4 == 0 else "pass" for i in range(1, n + 1)}  # 15 pass, 5 fail
    planned = {i: ("fail" if v == "pass" else "pass") if i in (3, 8, 12) else v for i, v in human.items()}
    with ProgrammedJudge(planned, verbose_bonus=0.8) as judge:
        write_cases(tmp_path / "traces.json", n)
        judge.config(tmp_path / "eval_config.yaml")
        write_labels(tmp_path / "labels.csv", human)
        result = calibrate(judge, "traces.json", "-c", "eval_config.yaml", "--evaluator", "judge", "--labels",
                           "labels.csv", "--repeat", "2", "--probes", "verbosity", "--no-store",
                           "--output-file", "calibration.html", cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # the verbosity probe fails
    assert result.stdout.splitlines()[0].startswith("calibrate judge (llm_judge): 20 of 20 cases")  # stdout: the table
    page = (tmp_path / "calibration.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "http" not in page  # self-contained
    text = _page_text(page)
    h, j = [human[i] for i in range(1, n + 1)], [planned[i] for i in range(1, n + 1)]
    assert f"agreement {17 / 20:.3f} (95% CI " in text
    assert f"Cohen's κ {metrics.cohen_kappa_score(h, j):.3f} (95% CI " in text
    assert f"human pass rate (base rate) {_wilson_text(15, n)}" in text
    assert f"evaluator pass rate {_wilson_text(16, n)}" in text
    [[pp, pf], [fp, ff]] = metrics.confusion_matrix(h, j, labels=["pass", "fail"]).tolist()
    assert f"human \\ evaluator pass fail pass {pp} {pf} fail {fp} {ff}" in text
    precision, recall, _, support = metrics.precision_recall_fscore_support(h, j, labels=["pass", "fail"])
    assert f"pass {precision[0]:.2f} {recall[0]:.2f} {support[0]}" in text
    assert f"fail {precision[1]:.2f} {recall[1]:.2f} {support[1]}" in text
    human_scores = [1.0 if v == "pass" else 0.0 for v in h]
    judge_scores = [PASS_SCORE if v == "pass" else FAIL_SCORE for v in j]
    assert f"score MAE {metrics.mean_absolute_error(human_scores, judge_scores):.3f}" in text
    assert "flip rate (2 asks) 0.000" in text and "0 of 20 cases flipped" in text
    # the padding lifts the judge's 4 fails to passes: the probe's row, and its verdict
    assert re.search(rf"verbosity {n} {4 / n:.3f} \(95% CI [^)]*\) \+0\.\d{{3}} \(95% CI [^)]*\) FAILS: ", text), text
