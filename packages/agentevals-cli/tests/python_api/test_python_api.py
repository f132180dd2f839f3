"""The Python API: MASEval-style Evaluators, agentevals.evaluate, repetitions, and the error policy."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import agentevals
import pytest
from agentevals.cli import cli
from agentevals.results import Status
from agentevals.results.repetitions import pass_at_k, pass_hat_k
from agentevals.traces.convert import convert_trace
from agentevals.traces.readers import read_traces
from click.testing import CliRunner

HERE = Path(__file__).resolve().parent
ADK = HERE.parent / "data" / "adk"
HELM = ADK / "helm.json"
EXAMPLES = HERE / "maseval_examples.py"
sys.path.insert(0, str(HERE))
import maseval_examples as ex  # noqa: E402


@pytest.fixture
def eval_set(tmp_path) -> Path:
    """The helm eval set with MASEval-style ground truth in an extra case key."""
    data = json.loads((ADK / "eval_set_helm.json").read_text())
    trace = convert_trace(next(read_traces(HELM)))
    data["eval_cases"][0]["correct_answer"] = trace.invocations[0].intermediate_steps.tool_responses[0].response
    path = tmp_path / "eval_set.json"
    path.write_text(json.dumps(data))
    return path


def metric(run, name):
    (case,) = run.cases
    return next(m for m in case.metrics if m.name == name)


def test_seed_evaluator_runs_from_the_api(eval_set):
    run = agentevals.evaluate([HELM], eval_set=eval_set,
                              evaluators=[agentevals.PythonEvaluator.from_class(ex.ToolUsageEvaluator),
                                          agentevals.PythonEvaluator.from_class(ex.AlternativeToolEvaluator)])
    used = metric(run, "ToolUsageEvaluator")
    assert (used.status, used.score, used.details["score_metric"]) == (Status.PASSED, 1.0, "accuracy")
    assert used.details["metrics"] == {"tool_used": True, "correct_result": True, "accuracy": 1.0}
    alternative = metric(run, "AlternativeToolEvaluator")
    assert alternative.details["metrics"] == {"tool_used": False, "correct_result": False, "accuracy": 0.0}
    assert alternative.status == Status.FAILED
    assert run.exit_code() == 1


def write_config(tmp_path, body: str) -> Path:
    path = tmp_path / "eval_config.yaml"
    path.write_text(body)
    return path


def test_seed_evaluator_runs_from_config_and_matches_the_api(tmp_path, eval_set):
    config = write_config(tmp_path, f"""
evaluators:
  - name: tool_usage
    type: python
    path: {EXAMPLES}:ToolUsageEvaluator
    threshold: 0.5
  - name: mentions
    type: python
    path: {EXAMPLES}:AnswerMentionsEvaluator
    config: {{word: kagent-crds}}
""")
    cli_run = CliRunner().invoke(cli, ["run", str(HELM), "-e", str(eval_set), "-c", str(config), "-o", "json"])
    assert cli_run.exit_code == 0, cli_run.output
    api_run = agentevals.evaluate([HELM], eval_set=eval_set, config=config)
    from_cli = json.loads(cli_run.stdout)
    for key in ("traces", "errors", "performance_metrics"):  # agentevals-cli 0.11's keys, only in the document
        from_cli.pop(key, None)
    from_api = api_run.model_dump(mode="json")
    for key in ("totals", "intervals", "complete"):  # what the CLI's report adds to the model
        del from_cli[key]
    for doc in (from_cli, from_api):
        doc["run_id"] = doc["started_at"] = doc["finished_at"] = None
        for case in doc["cases"]:
            for m in case["metrics"]:
                m["duration_ms"] = None
    assert from_cli == from_api
    mentions = from_api["cases"][0]["metrics"][1]
    assert mentions["details"]["metrics"] == {"score": 1.0, "roles": ["user", "assistant", "tool", "assistant"],
                                              "message_count": 4}


def test_environment_task_and_user_are_provided(eval_set):
    run = agentevals.evaluate([HELM], eval_set=eval_set,
                              evaluators=[agentevals.PythonEvaluator.from_class(ex.EnvironmentEvaluator)])
    m = metric(run, "EnvironmentEvaluator")
    assert m.status == Status.INFORMATIONAL
    assert m.value == {"service": "helm_agent", "session": "ctx-7ed9780f-3688-4fc0-b10b-2e4df2f83cf0",
                       "query": "list all Helm releases", "has_user": False}


def test_python_entry_errors_at_load_time(tmp_path):
    for path, message in [(f"{tmp_path}/missing.py:X", "evaluator file not found"),
                          (f"{EXAMPLES}:Nope", "'Nope' is not a class"),
                          ("no_such_module_xyz:Thing", "cannot import module 'no_such_module_xyz'"),
                          ("justaname", "must be 'file.py:ClassName' or 'module:ClassName'")]:
        config = write_config(tmp_path, f"evaluators:\n  - name: p\n    type: python\n    path: {path}\n")
        result = CliRunner().invoke(cli, ["run", str(HELM), "-c", str(config)])
        assert result.exit_code == 2, path
        assert message in result.output, result.output


# -- repetitions ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("n", "c", "k", "at", "hat"), [
    (5, 3, 1, 0.6, 0.6), (5, 3, 2, 0.9, 0.3), (5, 3, 5, 1.0, 0.0), (5, 5, 5, 1.0, 1.0), (4, 0, 2, 0.0, 0.0),
    (3, 1, 3, 1.0, 0.0), (10, 4, 3, 1 - 20 / 120, 4 / 120),
])
def test_pass_at_k_and_pass_hat_k_by_hand(n, c, k, at, hat):
    assert pass_at_k(n, c, k) == pytest.approx(at)
    assert pass_hat_k(n, c, k) == pytest.approx(hat)


def five_repetitions(tmp_path) -> list[Path]:
    """Five runs of the helm case: three call the tool (pass), two do not (fail)."""
    data = json.loads(HELM.read_text())
    paths = []
    for i in range(5):
        doc = copy.deepcopy(data)
        trace = doc["data"][0]
        trace["traceID"] = f"{i:032x}"
        for span in trace["spans"]:
            span["traceID"] = trace["traceID"]
            for tag in span["tags"]:  # each run is its own session
                if tag["key"] in ("gen_ai.conversation.id", "gcp.vertex.agent.session_id"):
                    tag["value"] = f"session-{i}"
        if i >= 3:  # drop the tool call from the model's response and the tool span
            trace["spans"] = [s for s in trace["spans"] if not s["operationName"].startswith("execute_tool")]
            for span in trace["spans"]:
                for tag in span["tags"]:
                    if tag["key"] == "gcp.vertex.agent.llm_response" and "function_call" in tag["value"]:
                        tag["value"] = json.dumps({"content": {"role": "model", "parts": [{"text": "no tools"}]}})
        path = tmp_path / f"rep{i}.json"
        path.write_text(json.dumps(doc))
        paths.append(path)
    return paths


def test_five_repetitions_three_passing(tmp_path):
    paths = five_repetitions(tmp_path)
    run = agentevals.evaluate(paths, eval_set=ADK / "eval_set_helm.json", pass_at_k=[1, 2])
    (rep,) = run.repetitions
    assert (rep["eval_id"], rep["n"], rep["passed"], rep["pass_rate"]) == ("helm_list_releases", 5, 3, 0.6)
    assert rep["pass_at_k"] == {"1": pytest.approx(0.6), "2": pytest.approx(0.9)}
    assert rep["pass_hat_k"] == {"1": pytest.approx(0.6), "2": pytest.approx(0.3)}
    stats = rep["metrics"]["tool_trajectory_avg_score"]
    assert (stats["n"], stats["mean"], stats["std"]) == (5, 0.6, pytest.approx(0.5477225575))
    assert [r["passed"] for r in rep["repetitions"]] == [True, True, True, False, False]
    assert [c.repeat_index for c in run.cases] == [0, 1, 2, 3, 4]


def test_repetitions_in_every_output_format(tmp_path):
    paths = [str(p) for p in five_repetitions(tmp_path)]
    base = ["run", *paths, "-e", str(ADK / "eval_set_helm.json"), "--pass-at-k", "2"]
    table = CliRunner().invoke(cli, base)
    assert ("repetitions of helm_list_releases: n=5 passed=3 pass rate 60.00% (3/5, 95% CI 23.07–88.24%) · pass@2 0.9 · pass^2 0.3"
            in table.output)
    assert "tool_trajectory_avg_score: mean 0.6 ± 0.548 (n=5)" in table.output
    assert "· repetition 4" in table.output
    doc = json.loads(CliRunner().invoke(cli, [*base, "-o", "json"]).stdout)
    assert doc["repetitions"][0]["pass_hat_k"] == {"2": pytest.approx(0.3)}
    summary = CliRunner().invoke(cli, [*base, "-o", "summary"]).output
    assert "repetitions helm_list_releases: n=5 pass rate 60.00% (3/5, 95% CI 23.07–88.24%) pass@2 0.9 pass^2 0.3" in summary


def test_repeat_key_groups_unmatched_traces(tmp_path):
    paths = five_repetitions(tmp_path)
    run = agentevals.evaluate(paths, metrics=["tool_call_count_v1"], repeat_key="user_content")
    (rep,) = run.repetitions
    assert rep["n"] == 5 and rep["key"] == "input:list all helm releases"
    assert rep["metrics"]["tool_call_count_v1"]["mean"] == pytest.approx(0.6)


def test_traces_matching_one_case_are_no_repetitions_unless_asked(tmp_path):
    """Five different traces match the helm case: with no flag they are five cases, no repetitions, in
    every report; the JSON keeps an empty ``repetitions``."""
    paths = [str(p) for p in five_repetitions(tmp_path)]
    base = ["run", *paths, "-e", str(ADK / "eval_set_helm.json")]
    run = agentevals.evaluate(paths, eval_set=ADK / "eval_set_helm.json")
    assert run.repetitions == [] and [c.repeat_index for c in run.cases] == [None] * 5
    assert {c.repeat_group for c in run.cases} == {None}
    table = CliRunner().invoke(cli, base)
    assert "repetition" not in table.output and "pass@" not in table.output, table.output
    doc = json.loads(CliRunner().invoke(cli, [*base, "-o", "json"]).stdout)
    assert doc["repetitions"] == [] and {c["repeat_index"] for c in doc["cases"]} == {None}
    summary = CliRunner().invoke(cli, [*base, "-o", "summary"]).output
    assert "repetitions" not in summary and "pass@" not in summary
    html = CliRunner().invoke(cli, [*base, "-o", "html"]).output
    assert "<html" in html and 'id="repetitions"' not in html


@pytest.mark.parametrize("flags", [["--pass-at-k", "2"], ["--repeat-key", "eval_id"]])
def test_either_flag_asks_for_repetitions(tmp_path, flags):
    paths = [str(p) for p in five_repetitions(tmp_path)]
    result = CliRunner().invoke(cli, ["run", *paths, "-e", str(ADK / "eval_set_helm.json"), *flags, "-o", "json"])
    doc = json.loads(result.stdout)
    (rep,) = doc["repetitions"]
    assert (rep["eval_id"], rep["n"], rep["passed"]) == ("helm_list_releases", 5, 3)
    assert rep["pass_at_k"] == {"2" if "--pass-at-k" in flags else "5": pytest.approx(0.9 if "--pass-at-k" in flags else 1.0)}
    assert [c["repeat_index"] for c in doc["cases"]] == [0, 1, 2, 3, 4]


def test_repetitions_from_the_config(tmp_path):
    paths = five_repetitions(tmp_path)
    config = write_config(tmp_path, "pass_at_k: [2]\nevaluators:\n  - {name: tool_trajectory_avg_score, type: builtin}\n")
    run = agentevals.evaluate(paths, eval_set=ADK / "eval_set_helm.json", config=config)
    (rep,) = run.repetitions
    assert rep["n"] == 5 and rep["pass_at_k"] == {"2": pytest.approx(0.9)}


def test_traces_marked_as_repetitions_are_grouped_without_flags(tmp_path):
    """Traces carrying ``agentevals.repeat_index`` (here on the resource of three of the five) say they are
    runs of one task: those are grouped, by the eval case they match; the others stay single cases."""
    paths = five_repetitions(tmp_path)
    for i, path in enumerate(paths[:3]):
        doc = json.loads(path.read_text())
        for process in doc["data"][0]["processes"].values():
            process.setdefault("tags", []).append({"key": "agentevals.repeat_index", "type": "int64", "value": i})
        path.write_text(json.dumps(doc))
    run = agentevals.evaluate(paths, eval_set=ADK / "eval_set_helm.json")
    (rep,) = run.repetitions
    assert (rep["eval_id"], rep["n"], rep["passed"], rep["pass_at_k"]) == ("helm_list_releases", 3, 3, {"3": 1.0})
    assert [c.repeat_index for c in run.cases] == [0, 1, 2, None, None]
    table = CliRunner().invoke(cli, ["run", *map(str, paths), "-e", str(ADK / "eval_set_helm.json")])
    assert "repetitions of helm_list_releases: n=3 passed=3 pass rate 100.00% (3/3, 95% CI 43.85–100.00%) · pass@3 1" in table.output, table.output


# -- evaluation-error policy ---------------------------------------------------------------------------

def test_raising_evaluator_marks_evaluation_failed_and_run_continues(tmp_path):
    paths = five_repetitions(tmp_path)[:2]
    run = agentevals.evaluate(paths, eval_set=ADK / "eval_set_helm.json", metrics=["tool_trajectory_avg_score"],
                              evaluators=[agentevals.PythonEvaluator.from_class(ex.CrashingEvaluator)])
    assert len(run.cases) == 2 and run.aborted is None
    for case in run.cases:
        assert case.evaluation_status == "evaluation_failed"
        crash = next(m for m in case.metrics if m.name == "CrashingEvaluator")
        assert (crash.status, crash.error) == (Status.ERROR, "RuntimeError: judge exploded")
        assert next(m for m in case.metrics if m.name == "tool_trajectory_avg_score").status == Status.PASSED
    assert run.exit_code() == 1


def test_fail_on_evaluation_error_stops_with_partial_report_on_disk(tmp_path):
    paths = [str(p) for p in five_repetitions(tmp_path)[:3]]
    config = write_config(tmp_path, f"evaluators:\n  - name: crash\n    type: python\n    path: {EXAMPLES}:CrashingEvaluator\n")
    report = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-m", "agentevals", "run", *paths, "-c", str(config), "-m",
                           "tool_trajectory_avg_score", "-e", str(ADK / "eval_set_helm.json"),
                           "--fail-on-evaluation-error", "-o", "json", "--output-file", str(report)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    doc = json.loads(report.read_text())
    assert len(doc["cases"]) == 1
    assert doc["cases"][0]["evaluation_status"] == "evaluation_failed"
    assert doc["aborted"] == ("fail_on_evaluation_error: evaluator 'crash' failed on 00000000000000000000000000000000: "
                              "RuntimeError: judge exploded; 2 case(s) not evaluated")
    assert "Traceback" not in proc.stderr


def test_fail_on_evaluation_error_from_config(tmp_path):
    config = write_config(tmp_path, f"fail_on_evaluation_error: true\nevaluators:\n  - name: crash\n    type: python\n"
                                    f"    path: {EXAMPLES}:CrashingEvaluator\n")
    run = agentevals.evaluate([HELM, HELM], config=config)
    assert run.aborted and len(run.cases) == 1


def test_traces_dict_has_maseval_shape():
    from agentevals.evaluators.base import EvalContext
    from agentevals.evaluators.python import build_traces

    trace = convert_trace(next(read_traces(HELM)))
    traces = build_traces(EvalContext(case_id="c", invocations=trace.invocations, traces=[trace]))
    assert set(traces) == {"metadata", "agents", "models", "tools", "simulators", "callbacks", "environment", "user", "other"}
    model = traces["models"]["gpt-4.1-mini"]
    assert (model["total_calls"], model["successful_calls"], model["failed_calls"]) == (2, 2, 0)
    assert model["total_duration_seconds"] == pytest.approx(1.799329 + 2.343756)
    assert [log["prompt_tokens"] for log in model["logs"]] == [1820, 1956]
    tool = traces["tools"]["helm_list_releases"]
    assert tool["total_invocations"] == 1
    assert tool["invocations"][0]["id"] == "call_P09kjRKHTTJA02oB9HIe4u5t"
    assert tool["invocations"][0]["inputs"] == {} and tool["invocations"][0]["status"] == "success"
    messages = traces["agents"]["helm_agent"]["messages"]
    assert messages[1]["tool_calls"][0]["function"] == {"name": "helm_list_releases", "arguments": "{}"}
    assert messages[2] == {"role": "tool", "tool_call_id": "call_P09kjRKHTTJA02oB9HIe4u5t", "name": "helm_list_releases",
                           "content": trace.invocations[0].intermediate_steps.tool_responses[0].output}


def test_python_evaluator_past_its_timeout_does_not_hold_the_run(tmp_path):
    config = write_config(tmp_path, f"evaluators:\n  - name: slow\n    type: python\n    path: {EXAMPLES}:SlowEvaluator\n"
                                    "    timeout: 0.5\n  - name: tool_trajectory_avg_score\n    type: builtin\n")
    proc = subprocess.run([sys.executable, "-m", "agentevals", "run", str(HELM), "-c", str(config),
                           "-e", str(ADK / "eval_set_helm.json"), "-o", "summary"],
                          capture_output=True, text=True, timeout=50)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0] == ("3e289017fe03ffd7c4145316d2eb3d0d [helm_list_releases]: slow=ERROR(-) "
                                           "tool_trajectory_avg_score=PASSED(1)")


def test_each_numeric_metric_of_a_python_evaluator_is_aggregated_over_repetitions(tmp_path):
    paths = five_repetitions(tmp_path)
    run = agentevals.evaluate(paths, eval_set=ADK / "eval_set_helm.json", repeat_key="eval_id",
                              evaluators=[agentevals.PythonEvaluator.from_class(ex.BreakdownEvaluator, name="bd")])
    (rep,) = run.repetitions
    stats = {name: (s["n"], s["mean"], s["std"]) for name, s in rep["metrics"].items()}
    assert stats == {
        "bd": (0, None, None),
        "bd.precision": (5, 0.6, pytest.approx(0.5477225575)),
        "bd.recall": (5, 0.3, pytest.approx(0.2738612788)),
        "bd.tool_used": (5, 0.6, pytest.approx(0.5477225575)),
    }


def test_constructor_without_user_is_called_without_it():
    run = agentevals.evaluate([HELM], eval_set=ADK / "eval_set_helm.json",
                              evaluators=[agentevals.PythonEvaluator.from_class(ex.TwoArgumentEvaluator)])
    assert (metric(run, "TwoArgumentEvaluator").status, metric(run, "TwoArgumentEvaluator").score) == (Status.PASSED, 1.0)


def test_constructor_that_config_cannot_satisfy_is_a_load_time_error(tmp_path):
    config = write_config(tmp_path, f"evaluators:\n  - name: kw\n    type: python\n    path: {EXAMPLES}:KeywordEvaluator\n"
                                    "    config: {wrod: kagent}\n")
    result = CliRunner().invoke(cli, ["run", str(HELM), "-c", str(config)])
    assert result.exit_code == 2
    assert result.output == (f"Error: {config}:2:5: evaluator 'kw': KeywordEvaluator(task, environment, user, "
                             "**config) cannot be called with config keys ['wrod']: missing a required argument: "
                             "'word'\n")
