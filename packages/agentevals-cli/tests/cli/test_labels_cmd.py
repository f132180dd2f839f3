"""``agentevals labels add|import|export`` on a real run of the shipped samples, and the labels beside the machine
verdicts in ``runs show`` (table, ``-o json``, ``-o html``, ``--disagreements``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentevals.cli import cli
from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[4]
SAMPLES = [str(REPO / "examples/traces" / name) for name in ("helm.json", "k8s.json")]
EVAL_SET = str(REPO / "examples/evalsets/eval_set_helm.json")
HELM_ID = "3e289017fe03ffd7c4145316d2eb3d0d"  # PASSED
K8S_ID = "d497c9dd55717f2c5ecb79bda3028993"  # FAILED: no tool call
METRIC = "tool_trajectory_avg_score"


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def stored(tmp_path) -> tuple[str, str]:
    """(store, run id) of a real `agentevals run` of two shipped traces: one case passes, one fails."""
    store = str(tmp_path / "runs.sqlite")
    result = run("run", *SAMPLES, "-e", EVAL_SET, "-m", METRIC, "--store", store, "-o", f"json={tmp_path}/run.json")
    assert result.exit_code == 1, result.output
    return store, json.loads((tmp_path / "run.json").read_text())["run_id"]


def test_labels_show_beside_the_machine_verdicts(stored, tmp_path):
    store, run_id = stored
    added = run("labels", "add", run_id[:20], K8S_ID, "--verdict", "pass", "--note", "no helm needed, all fine",
                "--labeler", "ana", "--store", store)
    assert added.exit_code == 0 and added.output == f"labelled case {K8S_ID} of run {run_id}: pass (ana)\n"
    added = run("labels", "add", "latest", HELM_ID, "--metric", METRIC, "--score", "0.3", "--note", "wrong release",
                "--labeler", "bo", "--store", store)
    assert added.output == f"labelled metric {METRIC} of case {HELM_ID} of run {run_id}: score 0.3 (bo)\n"

    shown = run("runs", "show", "--store", store)
    assert shown.exit_code == 0
    assert (f"{HELM_ID} · 1 turn · eval case helm_list_releases (first user message)\n"
            "  EVALUATOR                  STATUS  SCORE  THRESHOLD  PER TURN  VERDICT  HUMAN\n"
            "  tool_trajectory_avg_score  PASSED  1      0.5        [1]       pass     ≠ 0.3 (bo)\n"
            "      human: 0.3 (bo): wrong release\n") in shown.output
    assert ("  tool_trajectory_avg_score  FAILED  0      0.5        [0]       fail\n"
            "      trajectory mismatch (turn 1, exact):\n"
            "        expected: helm_list_releases({})\n"
            "        actual:   (no tool calls)\n"
            "  human label, whole case: pass (ana): no helm needed, all fine (≠ evaluator FAILED)\n") in shown.output
    assert shown.output.endswith(f"human labels: 2 · 2 disagree with the evaluator (agentevals runs show {run_id} "
                                 "--disagreements)\n")

    only = run("runs", "show", run_id, "--disagreements", "--store", store)
    assert only.output == (
        f"run {run_id}: 2 of 2 human labels disagree with the evaluator\n"
        f"  {HELM_ID} · {METRIC}: evaluator PASSED (1) · human 0.3 (bo): wrong release\n"
        f"  {K8S_ID} · whole case: evaluator FAILED (0) · human pass (ana): no helm needed, all fine\n")
    listed = json.loads(run("runs", "show", "--disagreements", "-o", "json", "--store", store).output)
    assert [(d["case"], d["metric"], d["evaluator"], d["label"]["labeler"]) for d in listed] == [
        (HELM_ID, METRIC, "PASSED", "bo"), (K8S_ID, None, "FAILED", "ana")]

    doc = json.loads(run("runs", "show", "-o", "json", "--store", store).output)
    assert [[(x["metric"], x["verdict"], x["score"], x["labeler"]) for x in c["labels"]] for c in doc["cases"]] == [
        [(METRIC, None, 0.3, "bo")], [(None, "pass", None, "ana")]]
    assert doc["disagreements"] == listed
    html = run("runs", "show", "-o", "html", "--store", store).output
    assert '<th>human</th>' in html and '<td class="human">≠ 0.3 (bo)</td>' in html
    assert "human label, whole case: pass (ana): no helm needed, all fine (≠ evaluator FAILED)" in html


def test_an_unlabelled_run_shows_as_before(stored):
    store, _ = stored
    shown = run("runs", "show", "--store", store).output
    assert "HUMAN" not in shown and "human" not in shown
    doc = json.loads(run("runs", "show", "-o", "json", "--store", store).output)
    assert "disagreements" not in doc and all("labels" not in c for c in doc["cases"])
    assert run("runs", "show", "--disagreements", "--store", store).output.endswith(
        ": 0 of 0 human labels disagree with the evaluator\n")


def test_import_export_round_trip_and_one_line_errors(stored, tmp_path):
    store, run_id = stored
    source = tmp_path / "from-sheet.csv"
    source.write_text("run,case,metric,verdict,score,note,labeler\r\n"
                      f'{run_id},{K8S_ID},,pass,,"fine, says ""no releases""\r\nand stops",ana\r\n'
                      f"{run_id},{HELM_ID},{METRIC},fail,0.2,,bo\r\n", "utf-8")
    imported = run("labels", "import", str(source), "--store", store)
    assert imported.exit_code == 0 and imported.output == f"imported 2 labels of 1 run from {source}\n"

    exported = run("labels", "export", run_id, "-o", str(tmp_path / "out.csv"), "--store", store)
    assert exported.exit_code == 0 and exported.stderr == f"wrote 2 labels to {tmp_path / 'out.csv'} (csv)\n"
    lines = (tmp_path / "out.csv").read_bytes().decode("utf-8").split("\r\n")
    assert lines[0] == "run,case,metric,verdict,score,note,labeler,created_at"
    assert lines[1].startswith(f"{run_id},{HELM_ID},{METRIC},fail,0.2,,bo,")
    assert lines[2] == f'{run_id},{K8S_ID},,pass,,"fine, says ""no releases""'  # the note's own CRLF, inside quotes
    assert lines[3].startswith('and stops",ana,') and lines[4] == ""
    first = run("labels", "export", "--store", store).output  # every run, JSONL on stdout
    assert [json.loads(line)["note"] for line in first.splitlines()] == [None, 'fine, says "no releases"\r\nand stops']

    again = run("labels", "import", str(tmp_path / "out.csv"), "--store", store)
    assert again.exit_code == 0 and run("labels", "export", "--store", store).output == first

    (tmp_path / "bad.jsonl").write_text(json.dumps({"run": run_id, "case": HELM_ID, "verdict": "fail"}) + "\n"
                                        + json.dumps({"run": run_id, "case": "nope", "verdict": "pass"}) + "\n")
    bad = run("labels", "import", str(tmp_path / "bad.jsonl"), "--store", store)
    assert bad.exit_code == 2 and bad.stdout == ""
    assert bad.stderr == (f"Error: {tmp_path / 'bad.jsonl'}:2: no case 'nope' in run {run_id} (see 'agentevals runs "
                          f"show {run_id}' for its case ids); nothing imported\n")
    assert run("labels", "export", "--store", store).output == first

    for args, message in (
            (("add", "nope", HELM_ID, "--verdict", "pass"), f"Error: no run 'nope' in the run store {store} "
                                                           "(see 'agentevals runs list')\n"),
            (("add", run_id, "nope", "--verdict", "pass"), f"Error: no case 'nope' in run {run_id} (see "
                                                           f"'agentevals runs show {run_id}' for its case ids)\n"),
            (("add", run_id, HELM_ID), "Error: a label needs a verdict (pass or fail) or a score\n"),
            (("add", run_id, HELM_ID, "--score", "2"), "Error: score 2.0 is not a number in [0, 1]\n"),
            (("export", "-o", str(tmp_path / "x.xlsx")), f"Error: {tmp_path / 'x.xlsx'}: cannot tell the labels format "
                                                          "from the file name: name it .jsonl or .csv, or pass --format "
                                                          "jsonl|csv\n")):
        failed = run("labels", *args, "--store", store)
        assert (failed.exit_code, failed.stderr) == (2, message), args


def test_a_sheet_without_a_run_column_names_its_run_on_the_command_line(stored, tmp_path):
    store, run_id = stored
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(f"case,verdict,note\n{HELM_ID},pass,ok\n{K8S_ID},fail,\n", "utf-8")
    missing = run("labels", "import", str(sheet), "--store", store)
    assert (missing.exit_code, missing.stderr) == (2, f"Error: {sheet}:2: empty or missing column 'run' (columns: run, "
                                                      "case, metric, verdict, score, note, labeler, created_at)\n")
    imported = run("labels", "import", str(sheet), "--run", "latest", "--store", store)
    assert imported.output == f"imported 2 labels of 1 run from {sheet}\n"
    assert run("runs", "show", "--disagreements", "--store", store).output == (
        f"run {run_id}: 0 of 2 human labels disagree with the evaluator\n")


def test_labels_in_the_markdown_and_junit_reports(stored):
    from xml.etree import ElementTree as ET

    store, run_id = stored
    run("labels", "add", run_id, K8S_ID, "--verdict", "pass", "--note", "fine | really", "--labeler", "ana",
        "--store", store)
    run("labels", "add", run_id, HELM_ID, "--metric", METRIC, "--verdict", "pass", "--labeler", "bo", "--store", store)

    md = run("runs", "show", "-o", "markdown", "--store", store).output
    assert ("| case | metric | status | score | threshold | human | why |\n"
            "| --- | --- | --- | --- | --- | --- | --- |\n"
            f"| {K8S_ID} | {METRIC} | FAILED | 0 | 0.5 |   | ") in md  # the row's metric has no label
    assert "### Human labels: 1 disagree with the evaluator\n\n" in md
    assert f"- ≠ {K8S_ID} · whole case: evaluator FAILED (0) · human pass (ana): fine \\| really\n" in md
    assert "| case | eval case | results | human |\n| --- | --- | --- | --- |\n" in md
    assert f"| {HELM_ID} | helm_list_releases | {METRIC} ✅ 1 | {METRIC}: pass (bo) |\n" in md
    assert f"| {K8S_ID} | helm_list_releases | {METRIC} ❌ 0 | case: ≠ pass (ana) |\n" in md

    root = ET.fromstring(run("runs", "show", "-o", "junit", "--store", store).output.split("\n", 1)[1])
    cases = {c.get("name").split(" ")[0]: c for c in root.iter("testcase")}
    props = {cid: {p.get("name"): p.get("value") for p in c.iter("property")} for cid, c in cases.items()}
    assert props == {HELM_ID: {"human": "pass (bo)"}, K8S_ID: {"human_case": "≠ pass (ana)"}}
    failure = cases[K8S_ID].find("failure")
    assert failure is not None and "human: pass (ana): fine | really (≠ evaluator)" in failure.text
    out = root.find("testsuite/system-out").text
    assert f"{HELM_ID} {METRIC} PASSED score=1 human=pass (bo)" in out


def test_an_unlabelled_run_has_no_human_column_in_markdown_or_junit(stored):
    store, _ = stored
    md = run("runs", "show", "-o", "markdown", "--store", store).output
    assert "human" not in md.lower() and "| case | metric | status | score | threshold | why |" in md
    assert "<properties>\n" not in run("runs", "show", "-o", "junit", "--store", store).output.split("</properties>", 1)[1]
