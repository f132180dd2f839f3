"""``agentevals run`` end to end on real traces: exit codes, table, JSON schema, bad input, options."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from agentevals.cli import cli
from agentevals.report.json import load_result_schema, result_json_schema
from click.testing import CliRunner

ADK = Path(__file__).resolve().parents[1] / "data" / "adk"
HELM, K8S, HELM3, HELM2 = (str(ADK / f) for f in ("helm.json", "k8s.json", "helm_3.json", "helm_2.json"))
TEMPO = str(ADK / "tempo_export_with_batches.json")
ES_HELM, ES_HELM3 = str(ADK / "eval_set_helm.json"), str(ADK / "evalset_helm_3_2026-02-23.json")


def run(*args: str):
    return CliRunner().invoke(cli, ["run", *args], catch_exceptions=False)


def test_helm_passes_trajectory():
    result = run(HELM, "--eval-set", ES_HELM)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == (f"{HELM} · 3e289017fe03ffd7c4145316d2eb3d0d · 1 turn · eval case helm_list_releases "
                        "(first user message)")
    assert lines[1].split() == ["EVALUATOR", "STATUS", "SCORE", "THRESHOLD", "PER", "TURN", "VERDICT"]
    assert lines[2].split() == ["tool_trajectory_avg_score", "PASSED", "1", "0.5", "[1]", "pass"]
    assert lines[3] == ("  perf: 4168ms · 2 LLM calls (1799–2344ms) · 1 tool call (57ms median) · "
                        "3906 tokens (3776 in / 130 out) · gpt-4.1-mini")
    assert lines[-1] == "1 case: 1 passed, 0 failed · 1 result: 1 passed, 0 failed · pass rate 100.00% (1/1, 95% CI 20.65–100.00%)"


def test_k8s_fails_with_trajectory_diff():
    result = run(K8S, "-e", ES_HELM)
    assert result.exit_code == 1
    assert "tool_trajectory_avg_score  FAILED  0" in result.output
    assert "      trajectory mismatch (turn 1, exact):\n" in result.output
    assert "        expected: helm_list_releases({})\n        actual:   (no tool calls)\n" in result.output
    assert result.output.splitlines()[-1] == "1 case: 0 passed, 1 failed · 1 result: 0 passed, 1 failed · pass rate 0.00% (0/1, 95% CI 0.00–79.35%)"


def test_helm3_passes_both_metrics():
    result = run(HELM3, "-e", ES_HELM3, "-m", "tool_trajectory_avg_score", "-m", "response_match_score", "-o", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    (case,) = doc["cases"]
    assert [(m["name"], m["status"], m["score"]) for m in case["metrics"]] == [
        ("tool_trajectory_avg_score", "PASSED", 1.0), ("response_match_score", "PASSED", 1.0)]
    assert case["eval_id"] == "c9a03cc4_case_1"
    assert case["score"] == 1.0 and case["verdict"] == "pass"


def _same_up_to_defaults(schema: object) -> object:
    """``schema`` without ``"additionalProperties": true`` (JSON Schema's default), which newer pydantic writes for
    ``dict[str, Any]`` and older did not: the same schema from any pydantic the package allows."""
    if isinstance(schema, dict):
        return {k: _same_up_to_defaults(v) for k, v in schema.items() if (k, v) != ("additionalProperties", True)}
    if isinstance(schema, list):
        return [_same_up_to_defaults(v) for v in schema]
    return schema


def test_json_output_validates_against_published_schema():
    result = run(HELM, K8S, HELM3, "-e", ES_HELM, "-m", "tool_trajectory_avg_score", "-m", "response_match_score",
                 "-m", "token_usage_v1", "-o", "json")
    doc = json.loads(result.stdout)
    schema = load_result_schema()
    assert _same_up_to_defaults(schema) == _same_up_to_defaults(result_json_schema()), "run tools/sync_schema.py"
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["schema_version"] == "1"
    assert [c["sources"] for c in doc["cases"]] == [[HELM], [K8S], [HELM3]]


def test_output_order_is_config_then_metric_flags(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("evaluators:\n  - name: response_match_score\n    type: builtin\n")
    result = run(HELM, "-e", ES_HELM, "-c", str(config), "-m", "token_usage_v1", "-m", "tool_trajectory_avg_score",
                 "-o", "json")
    names = [m["name"] for m in json.loads(result.stdout)["cases"][0]["metrics"]]
    assert names == ["response_match_score", "token_usage_v1", "tool_trajectory_avg_score"]


def test_tempo_export_converts_and_scores():
    result = run(TEMPO, "-e", ES_HELM, "-o", "summary")
    assert result.exit_code == 0
    assert result.output.splitlines()[0] == ("dd547580319ab0312cee07f1def50dad [helm_list_releases]: "
                                             "tool_trajectory_avg_score=PASSED(1)")


def test_bad_file_is_one_line_and_other_files_still_evaluated(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"data": [{"traceID": ')
    result = run(str(bad), HELM, "-e", ES_HELM)
    assert result.exit_code == 1
    assert "tool_trajectory_avg_score  PASSED" in result.output
    assert f"input error: {bad}:1:23: invalid JSON: Expecting value (file looks truncated)" in result.output
    assert "Traceback" not in result.output
    assert result.output.splitlines()[-1] == ("1 case: 1 passed, 0 failed · 1 result: 1 passed, 0 failed · "
                                              "pass rate 100.00% (1/1, 95% CI 20.65–100.00%), 1 unreadable input")


def test_no_eval_set_exits_1_saying_so():
    result = run(HELM)
    assert result.exit_code == 1
    assert "reason: needs an eval case: no eval set given (-e/--eval-set)" in result.output
    assert "note: no eval set given (-e/--eval-set): metrics that compare against golden cases were not evaluated" \
        in result.output
    assert "note: nothing was evaluated" in result.output


def test_no_matching_case_exits_1(tmp_path):
    es = tmp_path / "es.json"
    data = json.loads(Path(ES_HELM).read_text())
    data["eval_cases"].append({**data["eval_cases"][0], "eval_id": "other",
                               "conversation": [{**data["eval_cases"][0]["conversation"][0], "invocation_id": "x",
                                                 "user_content": {"parts": [{"text": "something else"}]}}]})
    data["eval_cases"][0]["conversation"][0]["user_content"] = {"parts": [{"text": "totally different"}]}
    es.write_text(json.dumps(data))
    result = run(HELM2, "-e", str(es))
    assert result.exit_code == 1
    assert "no eval case matches (first user message: 'get me all the Helm releases'" in result.output


def test_strict_fails_on_not_evaluated():
    assert run(HELM, "-e", ES_HELM, "-m", "tool_trajectory_avg_score", "-m", "final_response_match_v2").exit_code == 0
    assert run(HELM, "-e", ES_HELM, "-m", "tool_trajectory_avg_score", "-m", "final_response_match_v2",
               "--strict").exit_code == 1


def test_threshold_is_validated_by_click():
    result = CliRunner().invoke(cli, ["run", HELM, "-t", "1.5"])
    assert result.exit_code == 2
    assert "Invalid value for '-t' / '--threshold': 1.5 is not in the range 0.0<=x<=1.0." in result.output


def test_threshold_and_match_type_flags_apply():
    result = run(HELM, "-e", ES_HELM, "-m", "response_match_score", "-t", "0.9")
    assert result.exit_code == 1 and "response_match_score  FAILED" in result.output
    result = run(K8S, "-e", ES_HELM, "--trajectory-match-type", "any_order", "-o", "json")
    metric = json.loads(result.stdout)["cases"][0]["metrics"][0]
    assert metric["details"]["match_type"] == "any_order"


def test_unknown_metric_is_usage_error_before_running():
    proc = subprocess.run([sys.executable, "-m", "agentevals", "run", HELM, "-m", "respose_match_score"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("Error: -m respose_match_score: unknown builtin metric 'respose_match_score' "
                                   "(did you mean 'response_match_score'?); known: " + proc.stderr.split("known: ")[1].strip())
    assert proc.stdout == ""


def test_config_typo_is_refused_with_line(tmp_path):
    config = tmp_path / "eval_config.yaml"
    config.write_text("evaluators:\n  - name: tool_trajectory_avg_score\n    type: builtin\n    treshold: 0.7\n")
    proc = subprocess.run([sys.executable, "-m", "agentevals", "run", HELM, "-c", str(config)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == (f"Error: {config}:4:5: unknown key 'treshold' in evaluator 'tool_trajectory_avg_score' "
                           "(did you mean 'threshold'?)\n")


def test_eval_set_that_is_not_one_is_usage_error():
    result = CliRunner().invoke(cli, ["run", HELM, "-e", HELM])
    assert result.exit_code == 2
    assert "this is a trace file, not an eval set" in result.output


def test_globs_are_expanded(tmp_path):
    for name in ("helm.json", "helm_3.json"):
        shutil.copy(ADK / name, tmp_path / name)
    result = run(str(tmp_path / "helm*.json"), "-e", ES_HELM3, "-o", "json")
    assert [c["sources"][0].rsplit("/", 1)[-1] for c in json.loads(result.stdout)["cases"]] == ["helm.json", "helm_3.json"]


def test_group_by_conversation_merges_traces_of_a_session(tmp_path):
    data = json.loads(Path(HELM).read_text())
    second = json.loads(Path(HELM2).read_text())
    conv = "ctx-7ed9780f-3688-4fc0-b10b-2e4df2f83cf0"
    for span in second["data"][0]["spans"]:
        for tag in span["tags"]:
            if tag["key"] in ("gen_ai.conversation.id", "gcp.vertex.agent.session_id"):
                tag["value"] = conv
    (tmp_path / "a.json").write_text(json.dumps(data))
    (tmp_path / "b.json").write_text(json.dumps(second))
    result = run(str(tmp_path / "a.json"), str(tmp_path / "b.json"), "-m", "token_usage_v1", "-o", "json")
    cases = json.loads(result.stdout)["cases"]
    assert [(c["case_id"], c["invocation_count"], len(c["trace_ids"])) for c in cases] == [(conv, 2, 2)]
    by_trace = run(str(tmp_path / "a.json"), str(tmp_path / "b.json"), "-m", "token_usage_v1", "-o", "json",
                   "--group-by", "trace")
    assert len(json.loads(by_trace.stdout)["cases"]) == 2


def test_real_subprocess_run_is_clean():
    proc = subprocess.run([sys.executable, "-m", "agentevals", "run", HELM, "-e", ES_HELM, "-o", "summary"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout == ("3e289017fe03ffd7c4145316d2eb3d0d [helm_list_releases]: tool_trajectory_avg_score=PASSED(1)\n"
                           "1 case: 1 passed, 0 failed · 1 result: 1 passed, 0 failed · pass rate 100.00% (1/1, 95% CI 20.65–100.00%)\n")
    assert proc.stderr == ""


@pytest.mark.parametrize("fmt", ["table", "summary", "json"])
def test_output_file_is_written(tmp_path, fmt):
    out = tmp_path / f"report.{fmt}"
    result = run(HELM, "-e", ES_HELM, "-o", fmt, "--output-file", str(out))
    assert out.read_text() == result.output


def test_otlp_log_export_beside_its_traces_supplies_message_content():
    genai = Path(__file__).resolve().parents[1] / "data" / "traces" / "genai"
    spans, logs = genai / "openai_otel_genai_v2_legacy.otlp.json", genai / "openai_otel_genai_v2_legacy.otlp-logs.json"
    alone = json.loads(run(str(spans), "-m", "tool_call_count_v1", "-o", "json").stdout)
    assert alone["cases"][0]["invocation_count"] == 0
    assert alone["cases"][0]["warnings"]
    both = json.loads(run(str(spans), str(logs), "-m", "tool_call_count_v1", "-o", "json").stdout)
    (case,) = both["cases"]
    assert case["user_contents"] == ["What's the weather in Paris?"]
    assert (case["metrics"][0]["status"], case["metrics"][0]["value"]) == ("INFORMATIONAL", 1.0)


def test_output_file_in_a_new_directory_is_written(tmp_path):
    report = tmp_path / "reports" / "ci" / "run.json"
    result = run(HELM, "-e", ES_HELM, "-o", "json", "--output-file", str(report))
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text()) == json.loads(result.stdout)


def test_output_file_that_cannot_be_written_is_a_usage_error_before_running(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run(HELM, "-e", ES_HELM, "--output-file", str(blocker / "run.json"))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"Error: --output-file {blocker / 'run.json'}: cannot create its directory: ")
    assert len(result.stderr.splitlines()) == 1


def test_informational_only_run_exits_0():
    result = run(HELM, "-m", "token_usage_v1")
    assert result.exit_code == 0
    assert "token_usage_v1  INFORMATIONAL  3906 tokens" in result.output


def test_trace_naming_a_missing_eval_case_is_not_matched_to_another(tmp_path):
    data = json.loads(Path(HELM).read_text())
    for span in data["data"][0]["spans"]:
        if span["operationName"] == "invocation":
            span["tags"].append({"key": "agentevals.eval_id", "type": "string", "value": "no_such_case"})
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    result = run(str(path), "-e", ES_HELM)
    assert result.exit_code == 1
    assert "the trace names eval case 'no_such_case', which is not in" in result.output
