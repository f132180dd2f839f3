"""``agentevals run`` with openai_eval entries, in a real subprocess, against loopback servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.openai_server import Reply

KEY_ENV = "AGENTEVALS_TEST_OPENAI_KEY"
KEY = "sk-e2e-0123456789abcdef"


def agentevals(
    adk_data: Path, config: Path, *extra: str, prelude: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env[KEY_ENV] = KEY
    args = [
        "run",
        str(adk_data / "helm_3.json"),
        "--eval-set",
        str(adk_data / "evalset_helm_3_2026-02-23.json"),
        "--config",
        str(config),
        *extra,
    ]
    code = f"{prelude}\nfrom agentevals.cli import main\nmain({args!r})"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_local_model_and_evals_api_entries(adk_data, tmp_path, chat_server, evals_server):
    chat_server.chat = lambda body: {
        "steps": [{"description": "d", "conclusion": "lists all releases"}],
        "result": "good" if "kagent" in body["messages"][0]["content"] else "bad",
    }
    evals_server.polls_before_done = 0
    evals_server.grade = lambda criterion, item: (0.75, True)
    config = write(
        tmp_path / "eval_config.yaml",
        f"""\
evaluators:
  - name: response_similarity
    type: openai_eval
    threshold: 0.8
    grader:
      type: text_similarity
      evaluation_metric: fuzzy_match
  - name: quality_check
    type: openai_eval
    base_url: {chat_server.base_url}
    api_key_env: {KEY_ENV}
    grader:
      type: label_model
      model: gpt-4o-mini
      input:
        - role: user
          content: "Rate this response: {{{{ item.actual_response }}}}"
      labels: [good, bad]
      passing_labels: [good]
  - name: service_similarity
    type: openai_eval
    mode: evals_api
    base_url: {evals_server.base_url}
    api_key_env: {KEY_ENV}
    grader:
      type: text_similarity
      evaluation_metric: rouge_l
""",
    )
    proc = agentevals(adk_data, config, "-o", "json")
    assert proc.returncode == 0, proc.stderr
    (case,) = json.loads(proc.stdout)["cases"]
    rows = {m["name"]: m for m in case["metrics"]}
    assert [m["name"] for m in case["metrics"]] == [
        "response_similarity",
        "quality_check",
        "service_similarity",
    ]
    assert (rows["response_similarity"]["status"], rows["response_similarity"]["score"]) == ("PASSED", 1.0)
    assert rows["quality_check"]["status"] == "PASSED"
    assert rows["quality_check"]["details"]["turns"][0]["label"] == "good"
    assert (
        rows["service_similarity"]["score"] == 0.75
        and rows["service_similarity"]["details"]["deleted"] is True
    )

    (chat,) = chat_server.requests
    assert chat.json["messages"][0]["content"].startswith("Rate this response: Got it")
    assert evals_server.deleted == ["eval_1"]
    content = evals_server.runs["evalrun_1"]["body"]["data_source"]["source"]["content"]
    assert content[0]["item"]["user_content"] == "I need all the Helm releases right now!!"
    assert content[0]["item"]["actual_response"] == content[0]["item"]["expected_response"]
    assert KEY not in proc.stdout + proc.stderr


def test_api_errors_are_error_rows_without_secrets(adk_data, tmp_path, chat_server):
    chat_server.queue(
        "POST",
        "/chat/completions",
        Reply(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}}),
        repeat_last=True,
    )
    config = write(
        tmp_path / "eval_config.yaml",
        f"""\
evaluators:
  - name: judged
    type: openai_eval
    base_url: {chat_server.base_url}
    api_key_env: {KEY_ENV}
    grader:
      type: score_model
      model: judge
      input: [{{role: user, content: "{{{{ item.actual_response }}}}"}}]
""",
    )
    proc = agentevals(adk_data, config, "-o", "json")
    assert proc.returncode == 1
    (metric,) = json.loads(proc.stdout)["cases"][0]["metrics"]
    assert metric["status"] == "ERROR"
    turn, _, error = metric["error"].partition(": ")
    assert turn and " " not in turn  # the turn's invocation id
    assert error == f"HTTP 401 from {chat_server.base_url}: Incorrect API key provided: ***"
    assert KEY not in proc.stdout + proc.stderr


def test_config_mistakes_exit_2_before_anything_runs(adk_data, tmp_path):
    config = write(
        tmp_path / "eval_config.yaml",
        """\
evaluators:
  - name: sim
    type: openai_eval
    grader:
      type: text_similarity
      evaluation_metrc: fuzzy_match
""",
    )
    proc = agentevals(adk_data, config)
    assert proc.returncode == 2
    assert proc.stderr == (
        f"Error: {config}:4:5: evaluator 'sim': grader: unknown key 'evaluation_metrc' in text_similarity grader"
        " (did you mean 'evaluation_metric'?)\n"
    )


def test_without_the_openai_extra(adk_data, tmp_path):
    block = "sys.modules['openai'] = None  # import openai fails, find_spec('openai') is None"
    config = write(
        tmp_path / "eval_config.yaml",
        """\
evaluators:
  - name: sim
    type: openai_eval
    grader: {type: text_similarity, evaluation_metric: rouge_1}
  - name: cos
    type: openai_eval
    grader: {type: text_similarity, evaluation_metric: cosine}
""",
    )
    # One rule for a missing extra (as llm_judge and ADK's metrics): NOT_EVALUATED with the install
    # command, and the other entries keep their results.
    proc = agentevals(adk_data, config, "-o", "json", prelude=f"import sys\n{block}")
    assert proc.returncode == 0, proc.stderr
    rows = {m["name"]: m for m in json.loads(proc.stdout)["cases"][0]["metrics"]}
    assert rows["sim"]["status"] == "PASSED"
    assert (rows["cos"]["status"], rows["cos"]["reason"]) == (
        "NOT_EVALUATED",
        "evaluation_metric cosine calls an OpenAI-compatible API and needs the 'openai' extra: "
        "pip install \"agentevals-cli[openai]\"",
    )
    proc = agentevals(adk_data, config, "--strict", prelude=f"import sys\n{block}")
    assert proc.returncode == 1
    local_only = write(
        tmp_path / "local.yaml",
        "evaluators:\n  - name: sim\n    type: openai_eval\n"
        "    grader: {type: text_similarity, evaluation_metric: rouge_1}\n",
    )
    proc = agentevals(adk_data, local_only, prelude=f"import sys\n{block}")
    assert proc.returncode == 0, proc.stderr


def test_every_offline_metric_of_one_run_is_scored(adk_data, tmp_path):
    """Entries are graded concurrently in worker threads: nltk (bleu, gleu, meteor and rouge-score's
    stemmer) must be imported once, not raced into a half-initialised module."""
    metrics = ["fuzzy_match", "bleu", "gleu", "meteor", "rouge_1", "rouge_2", "rouge_3", "rouge_4", "rouge_5",
               "rouge_l"]
    entries = "".join(
        f"  - name: {metric}\n    type: openai_eval\n    threshold: 0.1\n"
        f"    grader: {{type: text_similarity, evaluation_metric: {metric}}}\n"
        for metric in metrics
    )
    config = write(tmp_path / "eval_config.yaml", "evaluators:\n" + entries)
    proc = agentevals(adk_data, config, "-o", "json")
    metrics_out = json.loads(proc.stdout)["cases"][0]["metrics"]
    assert [(m["name"], m["status"]) for m in metrics_out if m["status"] == "ERROR"] == [], proc.stdout
    assert [m["name"] for m in metrics_out] == metrics
