"""agentevals-cli 0.11 configs and flags that keep working: paths relative to the working directory,
``eval_set:`` / ``trace_format:`` / ``output:``, enum values in any case, 0.5 builtin thresholds, the eval
case id attribute, and the only-case fallback only for a single trace."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from agentevals.cli import cli
from click.testing import CliRunner

ADK = Path(__file__).resolve().parents[1] / "data" / "adk"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A repository root with traces and an eval set, the config in a subfolder; cwd = the root."""
    (tmp_path / "samples").mkdir()
    for name in ("helm.json", "k8s.json", "eval_set_helm.json"):
        shutil.copy(ADK / name, tmp_path / "samples" / name)
    (tmp_path / "configs").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str):
    return CliRunner().invoke(cli, ["run", *args], catch_exceptions=False)


def test_eval_set_and_output_from_a_config_in_a_subfolder(repo):
    (repo / "configs" / "eval_config.yaml").write_text(
        "eval_set: samples/eval_set_helm.json\noutput: JSON\ntrace_format: jaeger-json\n"
        "trajectory_match_type: IN_ORDER\nevaluators:\n  - {name: tool_trajectory_avg_score, type: builtin}\n")
    result = run("samples/helm.json", "-c", "configs/eval_config.yaml")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    ((metric,),) = [c["metrics"] for c in document["cases"]]
    assert (metric["status"], metric["threshold"], metric["details"]["match_type"]) == ("PASSED", 0.5, "in_order")
    assert document["notes"] == [
        "configs/eval_config.yaml: eval_set 'samples/eval_set_helm.json' is not in the config's folder; using it "
        f"relative to the working directory ({repo / 'samples' / 'eval_set_helm.json'})"]


def test_the_config_folder_wins_over_the_working_directory(repo):
    (repo / "configs" / "samples").mkdir()
    (repo / "configs" / "samples" / "eval_set_helm.json").write_text('{"eval_set_id": "empty", "eval_cases": []}')
    (repo / "configs" / "eval_config.yaml").write_text("eval_set: samples/eval_set_helm.json\n")
    document = json.loads(run("samples/helm.json", "-c", "configs/eval_config.yaml", "-o", "json").stdout)
    assert document["cases"][0]["eval_id"] is None and document["notes"][0].startswith("no trace matched")


def test_missing_eval_set_is_a_usage_error(repo):
    (repo / "configs" / "eval_config.yaml").write_text("eval_set: samples/nope.json\n")
    result = run("samples/helm.json", "-c", "configs/eval_config.yaml")
    assert result.exit_code == 2
    assert "nope.json: no such file" in result.output


@pytest.mark.parametrize("flag", ["IN_ORDER", "in_order", "In_Order"])
def test_enum_flags_in_any_case(repo, flag):
    result = run("samples/helm.json", "-e", "samples/eval_set_helm.json", "--trajectory-match-type", flag,
                 "-f", "JAEGER-JSON", "-o", "JSON")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["cases"][0]["metrics"][0]["details"]["match_type"] == "in_order"


def test_adk_thresholds_are_one_setting_away(repo):
    (repo / "configs" / "adk.yaml").write_text("builtin_thresholds: adk\n")
    document = json.loads(run("samples/helm.json", "-e", "samples/eval_set_helm.json", "-c", "configs/adk.yaml",
                              "-m", "tool_trajectory_avg_score", "-m", "response_match_score", "-o", "json").stdout)
    assert [(m["name"], m["threshold"]) for m in document["cases"][0]["metrics"]] == [
        ("tool_trajectory_avg_score", 1.0), ("response_match_score", 0.8)]


def test_only_case_fallback_needs_a_single_trace(repo):
    """k8s.json's first message matches no case by text: alone it takes the only case, beside helm.json not."""
    eval_set = json.loads((repo / "samples" / "eval_set_helm.json").read_text())
    eval_set["eval_cases"][0]["conversation"][0]["user_content"]["parts"][0]["text"] = "something else entirely"
    (repo / "samples" / "one_case.json").write_text(json.dumps(eval_set))
    alone = json.loads(run("samples/k8s.json", "-e", "samples/one_case.json", "-o", "json").stdout)
    assert alone["cases"][0]["match_reason"] == "only case in the eval set, only trace in the run"
    both = json.loads(run("samples/helm.json", "samples/k8s.json", "-e", "samples/one_case.json", "-o", "json").stdout)
    assert [c["eval_id"] for c in both["cases"]] == [None, None]


@pytest.mark.parametrize("where", ["span", "resource"])
def test_agentevals_eval_case_id_selects_the_case(repo, where):
    trace = json.loads((repo / "samples" / "k8s.json").read_text())
    tags = {"key": "agentevals.eval.case.id", "type": "string", "value": "helm_list_releases"}
    for item in trace["data"]:
        if where == "span":  # ADK's turn span
            next(s for s in item["spans"] if s["operationName"] == "invocation")["tags"].append(tags)
        else:
            for process in item["processes"].values():
                process.setdefault("tags", []).append(tags)
    (repo / "samples" / "tagged.json").write_text(json.dumps(trace))
    eval_set = json.loads((repo / "samples" / "eval_set_helm.json").read_text())
    eval_set["eval_cases"].append({**eval_set["eval_cases"][0], "eval_id": "other"})
    (repo / "samples" / "two_cases.json").write_text(json.dumps(eval_set))
    document = json.loads(run("samples/tagged.json", "samples/helm.json", "-e", "samples/two_cases.json",
                              "-o", "json").stdout)
    assert (document["cases"][0]["eval_id"], document["cases"][0]["match_reason"]) == (
        "helm_list_releases", "eval id 'helm_list_releases' recorded in the trace")


def test_camel_case_builtin_keys_of_0_11(repo):
    (repo / "configs" / "eval_config.yaml").write_text(
        "evaluators:\n  - name: tool_trajectory_avg_score\n    type: builtin\n    trajectoryMatchType: ANY_ORDER\n"
        "    threshold: 0.9\n  - {name: response_match_score, type: builtin, treshold: 0.5}\n")
    result = run("samples/helm.json", "-c", "configs/eval_config.yaml")
    assert result.exit_code == 2  # a typo is still an error, at its line
    assert result.output == ("Error: configs/eval_config.yaml:6:49: unknown key 'treshold' in evaluator "
                             "'response_match_score' (did you mean 'threshold'?)\n")
    (repo / "configs" / "eval_config.yaml").write_text(
        "evaluators:\n  - name: tool_trajectory_avg_score\n    type: builtin\n    trajectoryMatchType: ANY_ORDER\n")
    document = json.loads(run("samples/helm.json", "-e", "samples/eval_set_helm.json", "-c", "configs/eval_config.yaml",
                              "-o", "json").stdout)
    assert document["cases"][0]["metrics"][0]["details"]["match_type"] == "any_order"


@pytest.mark.parametrize("keys", [
    "credential_ref: openai, judge_base_url: 'http://127.0.0.1:9/v1'",
    "credentialRef: openai, judgeBaseUrl: 'http://127.0.0.1:9/v1'",  # 0.11 read camelCase too
    "credential_ref: openai",
])
def test_0_11s_judge_credential_keys_are_read_and_the_run_goes_on(repo, keys):
    """0.11 used ``credential_ref`` (+ ``judge_base_url``) only with a server run's ``credential_refs``; with
    ``run`` it made the metric an error. Here the keys are read, a note says they have no effect, and the
    metric runs (exit 0, PASSED) instead of the whole run exiting 2."""
    (repo / "configs" / "eval_config.yaml").write_text(
        f"evaluators:\n  - {{name: tool_trajectory_avg_score, type: builtin, {keys}}}\n")
    result = run("samples/helm.json", "-e", "samples/eval_set_helm.json", "-c", "configs/eval_config.yaml",
                 "-o", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["cases"][0]["metrics"][0]["status"] == "PASSED"
    used, pronoun = (("'credential_ref' and 'judge_base_url'", "them") if "ase" in keys else ("'credential_ref'", "it"))
    (note,) = document["notes"]
    assert note.startswith(f"configs/eval_config.yaml:2:5: evaluator 'tool_trajectory_avg_score': {used} not read "
                           f"(agentevals-cli 0.11 used {pronoun} only with a server run's credential_refs)")
    assert f"agentevals: {note}" in result.stderr
