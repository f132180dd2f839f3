"""``type: code`` end to end with real interpreters and processes: Python (SDK), JS, TS; the stdout
rule; every failure mode as one ERROR row with a one-line cause; deadlines that kill process trees."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agentevals.errors import ConfigError
from agentevals.evaluators.code import CodeEvaluator
from agentevals.results import Status
from custom_eval_helpers import SEED_JS, evaluate, tree_spawner, wait_until_gone, write

REPO = Path(__file__).resolve().parents[4]


ECHO_PY = """\
import json, sys
data = json.load(sys.stdin)
print(json.dumps({"score": 1.0, "details": {
    "protocol_version": data["protocol_version"], "metric_name": data["metric_name"],
    "threshold": data["threshold"], "config": data["config"],
    "has_trace_id": "trace_id" in data["invocations"][0],
    "n_expected": len(data["expected_invocations"] or []),
}}))
"""


def build(tmp_path: Path, **fields) -> CodeEvaluator:
    fields.setdefault("name", "e")
    return CodeEvaluator(CodeEvaluator.Config.model_validate({"type": "code", **fields}), base_dir=tmp_path)


def run_py(tmp_path: Path, ctx, source: str, **fields):
    write(tmp_path / "e.py", source)
    evaluator = build(tmp_path, path="e.py", **fields)
    evaluator.check()
    return evaluate(evaluator, ctx)


# -- evaluators written for the existing SDK and the seed run unchanged ---------------------------------


def test_sdk_python_evaluator_runs_with_the_clis_interpreter(tmp_path, ctx):
    shutil.copy(REPO / "examples" / "evaluators" / "response_quality.py", tmp_path / "response_quality.py")
    evaluator = build(tmp_path, name="response_quality", path="./response_quality.py", threshold=0.7,
                      config={"min_length": 20})
    evaluator.check()
    result = evaluate(evaluator, ctx)
    assert (result.status, result.score, result.per_invocation_scores) == (Status.PASSED, 1.0, [1.0])
    assert (result.name, result.type, result.threshold, result.error) == ("response_quality", "code", 0.7, None)


def test_seed_javascript_example_runs_unchanged(tmp_path, ctx, node):
    write(tmp_path / "evaluators" / "tool_check.js", SEED_JS)
    evaluator = build(tmp_path, name="tool_check", path="./evaluators/tool_check.js")
    evaluator.check()
    result = evaluate(evaluator, ctx)
    assert (result.status, result.score, result.per_invocation_scores) == (Status.PASSED, 1.0, [])


def test_typescript_runs_with_tsx_on_node_20(tmp_path, ctx, tsx):
    write(tmp_path / "check.ts", """\
import { readFileSync } from "node:fs";
interface Inv { final_response: string | null }
const input: { invocations: Inv[]; config: { want: string } } = JSON.parse(readFileSync(0, "utf8"));
const scores: number[] = input.invocations.map((i: Inv) => (i.final_response ?? "").includes(input.config.want) ? 1 : 0);
console.log(JSON.stringify({ score: scores.reduce((a, b) => a + b, 0) / scores.length, per_invocation_scores: scores }));
""")
    evaluator = build(tmp_path, path="check.ts", config={"want": "kagent"})
    evaluator.check()
    result = evaluate(evaluator, ctx)
    assert (result.status, result.score, result.per_invocation_scores) == (Status.PASSED, 1.0, [1.0])


def test_the_evaluator_receives_the_entry_and_the_case(tmp_path, ctx):
    result = run_py(tmp_path, ctx, ECHO_PY, name="echo", threshold=0.25, config={"k": [1, "x"]})
    assert result.details == {"protocol_version": "1.2", "metric_name": "echo", "threshold": 0.25,
                              "config": {"k": [1, "x"]}, "has_trace_id": True, "n_expected": 1}


def test_manifest_protocol_version_is_what_is_sent(tmp_path, ctx):
    write(tmp_path / "evaluator.yaml", "name: e\nprotocol_version: '1.0'\n")
    result = run_py(tmp_path, ctx, ECHO_PY)
    assert result.details["protocol_version"] == "1.0"
    assert result.details["has_trace_id"] is False  # a 1.1 field is not sent to a 1.0 evaluator


def test_manifest_with_another_major_is_refused_at_load(tmp_path):
    write(tmp_path / "evaluator.yaml", "protocol_version: '2.0'\n")
    write(tmp_path / "e.py", "")
    with pytest.raises(ConfigError, match=r"unsupported protocol_version 2.0 from .*evaluator.yaml: agentevals-cli "
                                          r"speaks 1.0 to 1.2; upgrade agentevals-cli"):
        build(tmp_path, path="e.py").check()


def test_path_is_relative_to_the_config_dir_and_the_program_runs_there(tmp_path, ctx, monkeypatch):
    write(tmp_path / "evals" / "data.txt", "0.5")
    write(tmp_path / "evals" / "e.py", 'print(\'{"score": %s}\' % open("data.txt").read())\n')
    monkeypatch.chdir(tmp_path.parent)
    evaluator = build(tmp_path, path="evals/e.py")
    evaluator.check()
    assert evaluate(evaluator, ctx).score == 0.5


def test_missing_file_is_refused_at_load(tmp_path):
    with pytest.raises(ConfigError) as info:
        build(tmp_path, path="nope/e.py").check()
    assert str(info.value) == (
        f"file not found: {tmp_path / 'nope' / 'e.py'} (path 'nope/e.py' is relative to the config file's directory; "
        "not under the working directory either)"
    )


def test_not_evaluated_result(tmp_path, ctx):
    result = run_py(tmp_path, ctx, 'print(\'{"score": null, "status": "NOT_EVALUATED", "details": {"reason": "no golden"}}\')')
    assert (result.status, result.reason, result.score) == (Status.NOT_EVALUATED, "no golden", None)


def test_failed_result(tmp_path, ctx):
    result = run_py(tmp_path, ctx, 'print(\'{"score": 0.2, "per_invocation_scores": [0.2]}\')', threshold=0.5)
    assert (result.status, result.score, result.per_invocation_scores) == (Status.FAILED, 0.2, [0.2])


# -- the stdout rule ----------------------------------------------------------------------------------


def test_log_lines_before_the_result_are_tolerated_with_a_warning(tmp_path, ctx, caplog):
    source = 'print("loading model…")\nprint("{not json either")\nprint(\'{"score": 0.9}\')\n'
    with caplog.at_level(logging.WARNING):
        result = run_py(tmp_path, ctx, source)
    assert (result.status, result.score) == (Status.PASSED, 0.9)
    assert "e wrote 2 line(s) before its result on stdout; they were ignored (write logs to stderr)" in caplog.text


def test_pretty_printed_result_after_logs(tmp_path, ctx):
    source = 'import json\nprint("log")\nprint(json.dumps({"score": 0.6, "details": {"a": [1, 2]}}, indent=2))\n'
    result = run_py(tmp_path, ctx, source)
    assert (result.score, result.details) == (0.6, {"a": [1, 2]})


def test_text_after_the_result_is_an_error(tmp_path, ctx):
    result = run_py(tmp_path, ctx, 'print(\'{"score": 0.9}\')\nprint("done")\n')
    assert result.status == Status.ERROR
    assert result.error == (
        "e wrote invalid JSON on stdout: Extra data at line 2 column 1 (stdout starts '{\"score\": 0.9}\\ndone'); "
        "stdout must end with one EvalResult JSON object, logs go to stderr"
    )


def test_two_results_on_stdout_are_ambiguous(tmp_path, ctx):
    result = run_py(tmp_path, ctx, 'print(\'{"score": 0.9}\')\nprint(\'{"score": 0.1}\')\n')
    assert (result.status, result.error) == (
        Status.ERROR,
        "e wrote more than one result on stdout (lines 1 and 2 both look like an EvalResult); "
        "stdout must end with one EvalResult JSON object, logs go to stderr",
    )


def test_json_log_lines_that_are_not_results_are_tolerated(tmp_path, ctx):
    result = run_py(tmp_path, ctx, 'print(\'{"level": "info", "msg": "start"}\')\nprint(\'{"score": 0.7}\')\n')
    assert (result.status, result.score) == (Status.PASSED, 0.7)


# -- failure modes: each one ERROR row with a one-line cause ----------------------------------------------


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ('import sys\nsys.stderr.write("first\\nboom happened\\n")\nsys.exit(3)\n', "exited with code 3: boom happened"),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "was killed by signal 9"),
        ('import sys\nsys.stdin.read()\nsys.stderr.write("nothing to say\\n")\n',
         "e wrote nothing on stdout (expected one EvalResult JSON object): nothing to say"),
        ('print("hello")', "e wrote invalid JSON on stdout: Expecting value at line 1 column 1 (stdout starts "
                           "'hello'); stdout must end with one EvalResult JSON object, logs go to stderr"),
        ("print('[1, 2]')", "e wrote a JSON list, expected an EvalResult object"),
        ('print(\'{"score": 1.5}\')',
         "e returned an invalid EvalResult: score: Input should be less than or equal to 1 (got 1.5)"),
        ('print(\'{"score": "high"}\')', "e returned an invalid EvalResult: score: Input should be a valid number (got 'high')"),
        ('print(\'{"details": {}}\')', "e returned an invalid EvalResult: score is required unless status is NOT_EVALUATED"),
        ('print(\'{"score": 0.9, "protocol_version": "2.0"}\')',
         "unsupported protocol_version 2.0 from e: agentevals-cli speaks 1.0 to 1.2; upgrade agentevals-cli so both "
         "speak major 2"),
    ],
    ids=["exit-code", "signal", "no-output", "invalid-json", "not-an-object", "score-range", "score-string",
         "no-score", "protocol-major"],
)
def test_failures_are_one_line_errors(tmp_path, ctx, source, error):
    result = run_py(tmp_path, ctx, source)
    assert result.status == Status.ERROR
    assert result.error == error
    assert "\n" not in result.error


@pytest.mark.parametrize(
    ("printed", "status", "score", "warnings"),
    [
        ('{"score": 0.9, "status": "FAILED"}', Status.FAILED, 0.9,
         ["status FAILED set by the evaluator overrides score 0.9 vs threshold 0.5 (which says PASSED)"]),
        ('{"score": 0.1, "status": "PASSED"}', Status.PASSED, 0.1,
         ["status PASSED set by the evaluator overrides score 0.1 vs threshold 0.5 (which says FAILED)"]),
        ('{"score": 0.9, "per_invocation_scores": [1, 0.8]}', Status.PASSED, 0.9,
         ["2 per_invocation_scores for 1 invocations (kept as given; they do not line up with the turns)"]),
        ('{"score": "0.25"}', Status.FAILED, 0.25, []),
        ('{"score": true, "status": "PASSED"}', Status.PASSED, 1.0, []),
    ],
    ids=["status-overrides-pass", "status-overrides-fail", "per-invocation-count", "score-string", "score-bool"],
)
def test_results_0_11_accepted_are_kept_with_a_warning(tmp_path, ctx, printed, status, score, warnings):
    result = run_py(tmp_path, ctx, f"print({printed!r})")
    assert (result.status, result.score, result.warnings, result.error) == (status, score, warnings, None)


def test_sdk_exception_shows_the_sdk_error_line_and_keeps_stderr(tmp_path, ctx):
    source = ("from agentevals_evaluator_sdk import evaluator\n"
              "@evaluator\ndef e(input):\n    raise ValueError('bad input')\n"
              "e.run()\n")
    result = run_py(tmp_path, ctx, source)
    assert result.error == "exited with code 1: error: evaluator 'e' raised ValueError: bad input"
    assert "Traceback (most recent call last)" in result.details["stderr"]


def test_stderr_is_truncated(tmp_path, ctx):
    result = run_py(tmp_path, ctx, 'import sys\nsys.stderr.write("x" * 10000 + "\\nlast\\n")\nsys.exit(1)\n')
    assert result.error == "exited with code 1: last"
    assert result.details["stderr"].startswith("[… 8") and len(result.details["stderr"]) < 2100


def test_timeout_kills_the_whole_process_tree(tmp_path, ctx):
    pidfile = tmp_path / "pids"
    result = run_py(tmp_path, ctx, tree_spawner(pidfile), timeout=1.5)
    assert (result.status, result.error) == (Status.ERROR, "timed out after 1.5s while running e.py")
    assert wait_until_gone(pidfile) == []


def test_stderr_written_before_a_timeout_is_kept(tmp_path, ctx):
    source = 'import sys, time\nsys.stderr.write("warming up\\n")\nsys.stderr.flush()\ntime.sleep(30)\n'
    result = run_py(tmp_path, ctx, source, timeout=1)
    assert (result.error, result.details) == ("timed out after 1s while running e.py", {"stderr": "warming up"})


def test_a_child_left_holding_stdout_neither_delays_the_result_nor_survives(tmp_path, ctx):
    pidfile = tmp_path / "pids"
    source = f"""\
import os, subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open({str(pidfile)!r}, "w").write(str(child.pid))
print('{{"score": 1}}')
"""
    # The child sleeps past the 20 s deadline: had the result waited for stdout to close, it would be ERROR.
    result = run_py(tmp_path, ctx, source, timeout=20)
    assert result.status == Status.PASSED, result.error
    assert wait_until_gone(pidfile) == []


def escaping_child(pidfile: Path, *, then: str) -> str:
    """A Python evaluator whose child starts its own session (out of the process group) keeping stdout
    for an hour: only killing it lets a run that waits for stdout to close end."""
    return f"""\
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"], start_new_session=True)
open({str(pidfile)!r}, "w").write(str(child.pid))
{then}
"""


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``agentevals ARGS`` in a real process (one that waited for an hour-long child would time out)."""
    return subprocess.run([sys.executable, "-m", "agentevals", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("then", "status", "error"),
    [
        ("print('{\"score\": 1}', flush=True)", "PASSED", None),
        ("time.sleep(60)", "ERROR", "timed out after 2s while running e.py"),
    ],
)
def test_a_child_in_its_own_session_holding_stdout_is_killed_quietly(tmp_path, then, status, error):
    pidfile = tmp_path / "pids"
    write(tmp_path / "e.py", escaping_child(pidfile, then=then))
    proc = run_cli("evaluator", "run", str(tmp_path / "e.py"), "--timeout", "2",
                            "-i", str(REPO / "examples" / "evalinput_helm_v1.1.json"))
    assert proc.stdout.split()[1] == status, proc.stdout + proc.stderr
    assert proc.stderr == ("" if error is None else f"Error: {error}\n")  # no asyncio noise
    assert wait_until_gone(pidfile) == []


def test_a_second_cancellation_while_killing_is_quiet(tmp_path, ctx, caplog):
    """Ctrl-C cancels a task twice (the run, then the case's cleanup) while its processes are reaped."""
    pidfile = tmp_path / "pids"
    write(tmp_path / "e.py", escaping_child(pidfile, then="time.sleep(60)"))
    evaluator = build(tmp_path, path="e.py", timeout=60)

    async def interrupt_twice() -> None:
        task = asyncio.create_task(evaluator.evaluate(ctx))
        while not pidfile.exists() or not pidfile.read_text():
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        task.cancel()
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        asyncio.run(asyncio.wait_for(interrupt_twice(), 30))
        import gc

        gc.collect()
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []
    assert wait_until_gone(pidfile) == []


def test_interrupt_kills_the_whole_process_tree(tmp_path, ctx):
    pidfile = tmp_path / "pids"
    write(tmp_path / "e.py", tree_spawner(pidfile))
    evaluator = build(tmp_path, path="e.py", timeout=60)

    async def interrupt() -> None:
        task = asyncio.create_task(evaluator.evaluate(ctx))
        while not pidfile.exists() or len(pidfile.read_text().split()) < 2:
            await asyncio.sleep(0.05)
        task.cancel()  # what Ctrl-C does to the run
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(interrupt(), 30))
    assert wait_until_gone(pidfile) == []


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_terminating_the_cli_kills_the_evaluators_it_started(tmp_path, signame):
    """A CI job cancelled (SIGTERM) or a closed terminal (SIGHUP): no evaluator may outlive agentevals."""
    import signal

    signum = getattr(signal, signame)
    pidfile = tmp_path / "pids"
    write(tmp_path / "e.py", tree_spawner(pidfile))
    # The child starts with the signal's default action even when this suite runs with it ignored (under
    # `nohup`, SIGHUP is SIG_IGN and inherited; agentevals then rightly keeps ignoring it).
    proc = subprocess.Popen([sys.executable, "-m", "agentevals", "evaluator", "run", str(tmp_path / "e.py"),
                             "--timeout", "60", "-i", str(REPO / "examples" / "evalinput_helm_v1.1.json")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signum, signal.SIG_DFL))
    deadline = time.monotonic() + 20
    while (not pidfile.exists() or len(pidfile.read_text().split()) < 2) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signum)
    proc.communicate(timeout=20)
    assert proc.returncode == -signum  # it still dies by the signal
    assert wait_until_gone(pidfile) == []


def test_one_failing_evaluator_never_affects_the_others(tmp_path, ctx):
    write(tmp_path / "slow.py", "import time\ntime.sleep(30)\n")
    write(tmp_path / "crash.py", "raise SystemExit(2)\n")
    write(tmp_path / "good.py", 'print(\'{"score": 1.0}\')\n')
    evaluators = [build(tmp_path, name="slow", path="slow.py", timeout=1),
                  build(tmp_path, name="crash", path="crash.py"),
                  build(tmp_path, name="missing", path="gone.py"),
                  build(tmp_path, name="good", path="good.py")]

    async def all_of_them():
        return await asyncio.gather(*(e.evaluate(ctx) for e in evaluators))

    results = asyncio.run(all_of_them())
    assert [(r.name, r.status, r.error) for r in results] == [
        ("slow", Status.ERROR, "timed out after 1s while running slow.py"),
        ("crash", Status.ERROR, "exited with code 2"),
        ("missing", Status.ERROR, f"evaluator file not found: {tmp_path / 'gone.py'}"),
        ("good", Status.PASSED, None),
    ]


def test_stderr_of_a_failure_is_logged_once(tmp_path, ctx, caplog):
    write(tmp_path / "e.py", 'import sys\nsys.stderr.write("the reason\\n")\nsys.exit(1)\n')
    evaluator = build(tmp_path, path="e.py")
    with caplog.at_level(logging.WARNING, logger="agentevals"):
        evaluate(evaluator, ctx)
        evaluate(evaluator, ctx)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].getMessage() == "evaluator 'e' failed: exited with code 1: the reason; its stderr ends with:\n  | the reason"


def test_python_is_the_clis_own_interpreter(tmp_path, ctx):
    result = run_py(tmp_path, ctx, 'import json, sys\nprint(json.dumps({"score": 1, "details": {"exe": sys.executable}}))')
    assert Path(result.details["exe"]).resolve() == Path(sys.executable).resolve()


def test_evaluator_run_command_output(tmp_path):
    from agentevals.cli import cli
    from click.testing import CliRunner

    shutil.copy(REPO / "examples" / "evaluators" / "response_quality.py", tmp_path / "rq.py")
    out = CliRunner().invoke(cli, ["evaluator", "run", str(tmp_path / "rq.py"), "--input",
                                   str(REPO / "examples" / "evalinput_helm_v1.1.json")])
    assert out.exit_code == 0, out.output
    assert out.output == "echo_evaluator: PASSED  score 1.000  threshold 0.7\nper invocation: 1\n"

    write(tmp_path / "bad.py", "import sys\nsys.stderr.write('oops\\n')\nsys.exit(4)\n")
    out = CliRunner().invoke(cli, ["evaluator", "run", str(tmp_path / "bad.py"), "-i",
                                   str(REPO / "examples" / "evalinput_helm_v1.1.json")])
    assert out.exit_code == 1
    assert out.stdout == "echo_evaluator: ERROR  score -  threshold 0.7\n"
    assert out.stderr == "Error: exited with code 4: oops\nstderr (end):\noops\n"


def test_input_is_sent_as_json_that_node_reads(tmp_path, ctx, node):
    write(tmp_path / "e.mjs", """\
import { readFileSync } from "node:fs";
const input = JSON.parse(readFileSync(0, "utf8"));
console.error("a log line on stderr");
console.log(JSON.stringify({ score: 0.5, details: { tools: input.invocations[0].intermediate_steps.tool_calls.map(t => t.name) } }));
""")
    evaluator = build(tmp_path, path="e.mjs")
    result = evaluate(evaluator, ctx)
    assert (result.status, result.details) == (Status.PASSED, {"tools": ["helm_list_releases"]})
    assert json.dumps(result.details)


@pytest.mark.parametrize(("source", "name", "cause"), [
    ('console.error("loading");\nconst x = undefined;\nx.foo();\n', "e.js",
     "TypeError: Cannot read properties of undefined (reading 'foo')"),
    ('import missing from "no-such-package";\n', "e.mjs",
     "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'no-such-package' imported from"),
    ('throw "a string";\n', "e.js", "a string"),
])
def test_a_javascript_crash_names_the_thrown_error_not_the_node_banner(tmp_path, ctx, node, source, name, cause):
    write(tmp_path / name, source)
    result = evaluate(build(tmp_path, path=name), ctx)
    assert result.status is Status.ERROR
    assert result.error.startswith(f"exited with code 1: {cause}"), result.error
    assert "Node.js v" in result.details["stderr"]  # the whole tail is still kept


def test_a_python_crash_names_the_exception_line(tmp_path, ctx):
    result = run_py(tmp_path, ctx, 'import sys\nprint("debug", file=sys.stderr)\nraise KeyError("answer")\n')
    assert result.error == "exited with code 1: KeyError: 'answer'"


def test_cause_line_of_plain_stderr_is_its_last_line():
    from agentevals.execution.program import cause_line

    assert cause_line(b"first\n\nlast  \n\n") == "last"
    assert cause_line("") == ""
    assert cause_line("x" * 400) == "x" * 299 + "…"
    assert cause_line("Node.js v20.1.0\n") == "Node.js v20.1.0"  # nothing better to show


RAISING_SDK_EVALUATOR = """\
import sys
from agentevals_evaluator_sdk import EvalInput, EvalResult, evaluator

@evaluator
def e(input: EvalInput) -> EvalResult:
    print("debug: about to fail", file=sys.stderr)
    raise ValueError("boom")

if __name__ == "__main__":
    e.run()
"""


def test_evaluator_run_shows_a_python_traceback_once_with_the_authors_frames(tmp_path):
    write(tmp_path / "e.py", RAISING_SDK_EVALUATOR)
    proc = subprocess.run([sys.executable, "-m", "agentevals", "evaluator", "run", str(tmp_path / "e.py"), "-i",
                           str(REPO / "examples" / "evalinput_helm_v1.1.json")], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.count("Traceback (most recent call last)") == 1, proc.stderr
    assert proc.stderr.startswith("Error: exited with code 1: error: evaluator 'e' raised ValueError: boom\n")
    assert f'File "{tmp_path / "e.py"}", line 7, in e' in proc.stderr
    assert "agentevals_evaluator_sdk" not in proc.stderr  # the SDK's own frames are not the author's problem


def test_verbose_shows_a_passing_evaluators_stderr(tmp_path):
    write(tmp_path / "e.py", 'import sys\nprint("debug: scored it", file=sys.stderr)\nprint(\'{"score": 1}\')\n')
    (tmp_path / "cfg.yaml").write_text("evaluators:\n  - {name: e, type: code, path: ./e.py}\n")
    command = [sys.executable, "-m", "agentevals", "run", str(REPO / "examples" / "traces" / "helm_3.json"),
               "-c", str(tmp_path / "cfg.yaml")]
    quiet = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert quiet.returncode == 0 and "debug: scored it" not in quiet.stderr
    verbose = subprocess.run([*command[:3], "-v", *command[3:], "--no-cache"],  # the first run's result is cached
                             capture_output=True, text=True, timeout=60)
    assert verbose.returncode == 0
    assert "evaluator 'e' wrote on stderr:\n  | debug: scored it\n" in verbose.stderr
