"""``agentevals run --config`` with custom evaluators: builtin, code (py/js) and remote entries side by side,
failures confined to their rows, config mistakes refused at load, and an offline run that still exits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentevals.cli import cli
from click.testing import CliRunner
from custom_eval_helpers import SEED_JS, write

ADK = Path(__file__).resolve().parents[1] / "data" / "adk"
HELM, ES_HELM = str(ADK / "helm.json"), str(ADK / "eval_set_helm.json")
REPO = Path(__file__).resolve().parents[4]



def project(tmp_path: Path, extra: str = "") -> Path:
    """A project dir with evaluators next to its eval_config.yaml (relative paths)."""
    write(tmp_path / "evaluators" / "response_quality.py",
          (REPO / "examples" / "evaluators" / "response_quality.py").read_text())
    write(tmp_path / "evaluators" / "tool_check.js", SEED_JS)
    write(tmp_path / "evaluators" / "broken.py", "import sys\nsys.stderr.write('kaput\\n')\nsys.exit(5)\n")
    return write(tmp_path / "eval_config.yaml", f"""\
evaluators:
  - name: tool_trajectory_avg_score
    type: builtin
  - name: response_quality
    type: code
    path: ./evaluators/response_quality.py
    threshold: 0.7
    config:
      min_length: 20
  - name: tool_check
    type: code
    path: ./evaluators/tool_check.js
{extra}""")


def rows(stdout: str) -> list[tuple]:
    (case,) = json.loads(stdout)["cases"]
    return [(m["name"], m["type"], m["status"], m["score"], m["error"]) for m in case["metrics"]]


def test_run_with_builtin_code_and_remote_evaluators(tmp_path, raw_server, node):
    raw_server.add("/team/evals/main/evaluators/rq/rq.py", 'print(\'{"score": 0.9}\')\n')
    config = project(tmp_path, """\
  - name: community
    type: remote
    ref: evaluators/rq/rq.py
  - name: gone
    type: remote
    ref: evaluators/gone/gone.py
  - name: broken
    type: code
    path: ./evaluators/broken.py
""")
    out = CliRunner().invoke(cli, ["run", HELM, "-e", ES_HELM, "-c", str(config), "-o", "json"])
    assert out.exit_code == 1, out.output
    assert rows(out.stdout) == [
        ("tool_trajectory_avg_score", "builtin", "PASSED", 1.0, None),
        ("response_quality", "code", "PASSED", 1.0, None),
        ("tool_check", "code", "PASSED", 1.0, None),
        ("community", "remote", "PASSED", 0.9, None),
        ("gone", "remote", "ERROR", None, "evaluators/gone/gone.py not found in team/evals@main (HTTP 404)"),
        ("broken", "code", "ERROR", None, "exited with code 5: kaput"),
    ]


def test_run_in_a_real_process_from_another_directory(tmp_path, node):
    config = project(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run([sys.executable, "-m", "agentevals", "run", HELM, "-e", ES_HELM, "-c", str(config)],
                          cwd=elsewhere, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = proc.stdout.splitlines()
    assert [line.split()[:3] for line in table[2:5]] == [
        ["tool_trajectory_avg_score", "PASSED", "1"], ["response_quality", "PASSED", "1"], ["tool_check", "PASSED", "1"]]


def test_offline_remote_keeps_other_results_and_the_process_exits(tmp_path, silent_server, node):
    config = project(tmp_path, """\
  - name: community
    type: remote
    ref: evaluators/rq/rq.py
    timeout: 1
""")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "AGENTEVALS_GITHUB_RAW_URL": silent_server}
    # The server never answers: only the entry's deadline lets the process exit (within the 120 s given).
    proc = subprocess.run([sys.executable, "-m", "agentevals", "run", HELM, "-e", ES_HELM, "-c", str(config), "-o",
                           "json"], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 1
    assert rows(proc.stdout) == [
        ("tool_trajectory_avg_score", "builtin", "PASSED", 1.0, None),
        ("response_quality", "code", "PASSED", 1.0, None),
        ("tool_check", "code", "PASSED", 1.0, None),
        ("community", "remote", "ERROR", None, "timed out after 1s while fetching evaluators/rq/rq.py from source 'github'"),
    ]


def test_network_down_is_one_error_line_per_remote_entry_and_nothing_else(tmp_path, closed_port, node):
    config = project(tmp_path, "".join(f"""\
  - name: community{i}
    type: remote
    ref: evaluators/rq{i}/rq{i}.py
""" for i in range(3)))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "AGENTEVALS_GITHUB_RAW_URL": closed_port}
    proc = subprocess.run([sys.executable, "-m", "agentevals", "run", HELM, "-e", ES_HELM, "-c", str(config), "-o",
                           "json"], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 1
    host = closed_port.removeprefix("http://")
    assert [row[2:] for row in rows(proc.stdout)][3:] == [
        ("ERROR", None, f"cannot reach {host}: [Errno 111] Connection refused")] * 3
    assert proc.stderr == ""  # no "Task exception was never retrieved" for the sibling-file downloads


def test_config_mistakes_are_refused_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no node, no tsx
    config = write(tmp_path / "eval_config.yaml", """\
evaluators:
  - name: a
    type: code
    path: ./missing.py
  - name: b
    type: code
    path: ./evaluators/x.py
    executor: dokcer
  - name: c
    type: remote
    ref: ../x.py
  - name: d
    type: code
    path: ./evaluators/x.py
    timeot: 3
""")
    write(tmp_path / "evaluators" / "x.py", "")
    out = CliRunner().invoke(cli, ["run", HELM, "-c", str(config)])
    assert out.exit_code == 2
    assert out.output.splitlines() == [
        f"Error: {config}:2:5: evaluator 'a': file not found: {tmp_path / 'missing.py'} (path './missing.py' is "
        "relative to the config file's directory; not under the working directory either)",
        f"{config}:5:5: evaluator 'b': unknown executor 'dokcer' (did you mean 'docker'?); known: docker, local, ray",
        f"{config}:9:5: evaluator 'c': ref must be a relative path of letters, digits, '_', '-' and single dots "
        "(got '../x.py')",
        f"{config}:15:5: unknown key 'timeot' in evaluator 'd' (did you mean 'timeout'?)",
    ]


RECORDER = """\
import json, sys
from pathlib import Path
raw = sys.stdin.buffer.read()
data = json.loads(raw)
out = Path(__file__).parent / "received"
out.mkdir(exist_ok=True)
(out / (data["invocations"][0]["trace_id"] or "x")).write_bytes(raw)
length = len(data["invocations"][-1]["final_response"] or "")
print(json.dumps({"score": round(min(1.0, length / 1000), 3), "details": {"min": data["config"]["min"]}}))
"""


def test_dumped_inputs_are_what_evaluators_received_and_replay_to_the_same_result(tmp_path):
    write(tmp_path / "evaluators" / "recorder.py", RECORDER)
    write(tmp_path / "evaluators" / "response_quality.py",
          (REPO / "examples" / "evaluators" / "response_quality.py").read_text())
    config = write(tmp_path / "eval_config.yaml", """\
evaluators:
  - {name: recorder, type: code, path: ./evaluators/recorder.py, threshold: 0.3, config: {min: 3}}
  - {name: quality, type: code, path: ./evaluators/response_quality.py, threshold: 0.7, config: {min_length: 200}}
""")
    dump = tmp_path / "dump"
    out = CliRunner().invoke(cli, ["run", HELM, str(ADK / "k8s.json"), "-e", ES_HELM, "-c", str(config), "-o", "json",
                                   "--dump-inputs", str(dump)])
    cases = json.loads(out.stdout)["cases"]
    files = sorted(dump.rglob("*.json"))
    assert len(files) == 4 and {f.parent.name for f in files} == {"recorder", "quality"}
    # Byte for byte what the evaluator read on stdin.
    received = sorted(p.read_bytes() for p in (tmp_path / "evaluators" / "received").iterdir())
    assert received == sorted(f.read_bytes() for f in files if f.parent.name == "recorder")
    # Replayed with `evaluator run`: the same status, score and threshold as in the run.
    rows = {(case["case_id"], m["name"]): m for case in cases for m in case["metrics"]}
    programs = {"recorder": "recorder.py", "quality": "response_quality.py"}
    for dumped in files:
        name = dumped.parent.name
        row = rows[(dumped.stem, name)]
        replay = CliRunner().invoke(cli, ["evaluator", "run", str(tmp_path / "evaluators" / programs[name]),
                                          "--input", str(dumped)])
        assert replay.stdout.splitlines()[0] == f"{name}: {row['status']}  score {row['score']:.3f}  threshold {row['threshold']:g}"
        assert replay.exit_code == (0 if row["status"] == "PASSED" else 1)


def test_dump_inputs_into_a_file_is_a_usage_error(tmp_path):
    (tmp_path / "taken").write_text("")
    out = CliRunner().invoke(cli, ["run", HELM, "--dump-inputs", str(tmp_path / "taken")])
    assert out.exit_code == 2
    assert "--dump-inputs" in out.output and "taken" in out.output
