"""The "done when" checks of the hostile-input work, each against the real CLI in a subprocess.

- An evaluator that prints its environment shows no secret unless its entry lists it; no report
  contains a secret (the JSON report, error rows, the log).
- Memory stays under 1 GiB (the CLI runs under ``RLIMIT_AS`` = 1 GiB, and its peak RSS is measured) on a
  100k-deep JSON, ``/dev/zero``, a 1 GiB evaluator stdout and a YAML alias bomb, each with one line.
- No process of an evaluator outlives the run: a double-forked ``setsid`` grandchild dies on success,
  timeout, crash and SIGTERM, for ``type: code`` and for an AgentV ``code_judge``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HELM = ROOT / "examples" / "traces" / "helm.json"
GiB = 2**30

sys.path.insert(0, str(ROOT / "packages" / "agentevals-cli" / "tests"))
from support.leftovers import double_fork  # noqa: E402

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux (/proc, rlimits)")

# Runs agentevals as its child under RLIMIT_AS and prints the child's exit code and peak RSS (bytes).
LAUNCHER = textwrap.dedent("""
    import json, resource, subprocess, sys
    limit = int(sys.argv[1])
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    proc = subprocess.run([sys.executable, "-m", "agentevals", *sys.argv[2:]], preexec_fn=cap,
                          capture_output=True, text=True)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(json.dumps({"code": proc.returncode, "peak": peak, "stdout": proc.stdout, "stderr": proc.stderr}))
""")


def agentevals(args: list[str], cwd: Path, *, env: dict[str, str] | None = None, limit: int = GiB) -> dict:
    """Run the CLI under a 1 GiB address-space limit; its exit code, peak RSS, stdout and stderr."""
    full_env = {**os.environ, **(env or {})}
    done = subprocess.run([sys.executable, "-c", LAUNCHER, str(limit), *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    shutil.copy(HELM, tmp_path / "helm.json")
    return tmp_path


def lines(result: dict) -> list[str]:
    return (result["stdout"] + result["stderr"]).splitlines()


# -- secrets ------------------------------------------------------------------------------------------

SECRET = "sk-proj-hostile0123456789abcdefXYZ"
DB_PASSWORD = "correct-horse-battery-staple"
ENV_DUMP = textwrap.dedent("""
    import json, os, sys
    json.load(sys.stdin)
    with open("seen.json", "w") as f:
        json.dump(dict(os.environ), f)
    print(json.dumps({"score": 1, "details": {"env": dict(os.environ)}}))
""")


@pytest.mark.parametrize("listed", [None, ["OPENAI_API_KEY"], "inherit"], ids=["default", "listed", "inherit"])
def test_an_evaluator_sees_a_secret_only_when_listed_and_no_report_shows_it(workdir: Path, listed) -> None:
    (workdir / "dump.py").write_text(ENV_DUMP)
    entry = {"name": "dump", "type": "code", "path": "dump.py", **({"env": listed} if listed else {})}
    (workdir / "c.yaml").write_text(json.dumps({"evaluators": [entry]}))
    result = agentevals(["run", "helm.json", "-c", "c.yaml", "-o", "json", "--output-file", "report.json"], workdir,
                        env={"OPENAI_API_KEY": SECRET, "APP_DB_PASSWORD": DB_PASSWORD})
    assert result["code"] == 0, result
    seen = json.loads((workdir / "seen.json").read_text())
    assert ("OPENAI_API_KEY" in seen) is (listed is not None)
    assert ("APP_DB_PASSWORD" in seen) is (listed == "inherit")
    assert "PATH" in seen and "HOME" in seen
    report = (workdir / "report.json").read_text()
    for text in (report, result["stdout"], result["stderr"]):
        assert SECRET not in text and DB_PASSWORD not in text
    details = json.loads(report)["cases"][0]["metrics"][0]["details"]["env"]
    if listed:
        assert details["OPENAI_API_KEY"] == "***"


def test_a_secret_in_an_error_row_and_the_log_is_redacted(workdir: Path) -> None:
    (workdir / "leak.py").write_text(textwrap.dedent("""
        import json, sys
        json.load(sys.stdin)
        sys.stderr.write("auth failed for ghp_0123456789abcdefghijABCDEFGHIJ012345 at https://bot:hunter22@db.example\\n")
        sys.exit(2)
    """))
    (workdir / "c.yaml").write_text(json.dumps({"evaluators": [{"name": "leak", "type": "code", "path": "leak.py"}]}))
    result = agentevals(["run", "helm.json", "-c", "c.yaml", "-o", "json"], workdir)
    text = result["stdout"] + result["stderr"]
    assert result["code"] == 1
    assert "ghp_0123456789" not in text and "hunter22" not in text
    row = json.loads(result["stdout"])["cases"][0]["metrics"][0]
    assert row["error"] == "exited with code 2: auth failed for *** at https://bot:***@db.example"


# -- bounded memory -----------------------------------------------------------------------------------

FLOOD = textwrap.dedent("""
    import json, sys
    json.load(sys.stdin)
    chunk = "x" * (1 << 20) + "\\n"
    for _ in range(1024):
        sys.stdout.write(chunk)
    print(json.dumps({"score": 1}))
""")
BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))


def test_memory_stays_bounded_on_a_deep_json(workdir: Path) -> None:
    (workdir / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (workdir / "deep_big.json").write_text('{"data": [' + "[" * 100_000 + "]" * 100_000 + "]}" + " " * (9 * 2**20))
    result = agentevals(["run", "deep.json", "deep_big.json", "helm.json", "-m", "tool_call_count_v1"], workdir)
    assert "input error: deep.json: JSON nested deeper than 512 levels; set AGENTEVALS_MAX_JSON_DEPTH to allow " \
           "more (at most 1000)" in lines(result)
    assert any(line.startswith("input error: deep_big.json: JSON nested deeper") for line in lines(result))
    assert "tool_call_count_v1  INFORMATIONAL" in result["stdout"]
    assert result["code"] == 1 and result["peak"] < GiB


def test_memory_stays_bounded_on_dev_zero(workdir: Path) -> None:
    result = agentevals(["run", "/dev/zero", "helm.json", "-m", "tool_call_count_v1"], workdir)
    assert any(line.startswith("input error: /dev/zero: not JSON: it starts with b'\\x00") for line in lines(result))
    assert "tool_call_count_v1  INFORMATIONAL" in result["stdout"]
    assert result["code"] == 1 and result["peak"] < GiB


def test_memory_stays_bounded_on_a_1_gib_evaluator_stdout(workdir: Path) -> None:
    (workdir / "flood.py").write_text(FLOOD)
    (workdir / "c.yaml").write_text(json.dumps({"evaluators": [
        {"name": "flood", "type": "code", "path": "flood.py", "timeout": 60},
        {"name": "tool_call_count_v1", "type": "builtin"}]}))
    result = agentevals(["run", "helm.json", "-c", "c.yaml"], workdir)
    assert "  flood               PASSED         1        0.5                  pass" in lines(result)
    assert any("flood: stdout was 1073742861 bytes, only its last 16777216 were kept" in line
               for line in lines(result)), [line[:300] for line in lines(result)]
    assert result["code"] == 0 and result["peak"] < GiB


def test_memory_stays_bounded_on_a_yaml_bomb(workdir: Path) -> None:
    config = "evaluators:\n  - name: x\n    type: tool_trajectory\n    config:\n" + textwrap.indent(BOMB, "      ")
    (workdir / "c.yaml").write_text(config)
    result = agentevals(["config", "validate", "c.yaml"], workdir)
    assert result["code"] == 2
    assert any(line.startswith("Error: c.yaml:") and "the document expands to more than 100000 nodes" in line
               for line in lines(result))
    assert result["peak"] < GiB


# -- no survivors -------------------------------------------------------------------------------------

FORKER = double_fork("grandchild.pid", before="json.load(sys.stdin)", after="MODE")
MODES = {
    "success": 'print(json.dumps({"score": 1}))',
    "timeout": "time.sleep(60)",
    "crash": "sys.exit(1)",
}


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def grandchild(workdir: Path) -> int:
    return int((workdir / "grandchild.pid").read_text())


def wait_dead(pid: int, seconds: float = 30.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)  # do not leave it behind when the test fails
    return False


@pytest.mark.parametrize("mode", sorted(MODES))
def test_no_grandchild_of_a_code_evaluator_survives(workdir: Path, mode: str) -> None:
    (workdir / "forker.py").write_text(FORKER.replace("MODE", MODES[mode]))
    (workdir / "c.yaml").write_text(json.dumps({"evaluators": [
        {"name": "forker", "type": "code", "path": "forker.py", "timeout": 3}]}))
    result = agentevals(["run", "helm.json", "-c", "c.yaml"], workdir)
    assert result["code"] == (0 if mode == "success" else 1), result
    assert wait_dead(grandchild(workdir)), f"the setsid grandchild survived a {mode} run"


# As FORKER, but the grandchild execs a program with an empty environment: no token names its evaluation,
# only the subreaper (the agentevals program owns its process tree) can still find it.
CLEARED = double_fork("grandchild.pid", before="json.load(sys.stdin)", after='print(json.dumps({"score": 1}))',
                      clear_env=True)


def test_no_grandchild_that_cleared_its_environment_survives_the_program(workdir: Path) -> None:
    (workdir / "forker.py").write_text(CLEARED)
    (workdir / "c.yaml").write_text(json.dumps({"evaluators": [
        {"name": "forker", "type": "code", "path": "forker.py", "timeout": 10}]}))
    result = agentevals(["run", "helm.json", "-c", "c.yaml"], workdir)
    assert result["code"] == 0, result
    assert wait_dead(grandchild(workdir)), "the setsid grandchild without a token survived the run"


def test_no_grandchild_of_a_code_judge_survives(workdir: Path) -> None:
    (workdir / "judge.py").write_text(FORKER.replace("MODE", MODES["success"]))
    (workdir / "c.yaml").write_text(json.dumps({"evaluators": [
        {"name": "judge", "type": "code_judge", "command": ["python", "judge.py"], "timeout": 5}]}))
    result = agentevals(["run", "helm.json", "-c", "c.yaml"], workdir)
    assert "judge" in result["stdout"], result
    assert wait_dead(grandchild(workdir)), "the setsid grandchild of a code judge survived"


def test_no_grandchild_survives_a_terminated_run(workdir: Path) -> None:
    (workdir / "forker.py").write_text(FORKER.replace("MODE", MODES["timeout"]))
    (workdir / "c.yaml").write_text(json.dumps({"evaluators": [
        {"name": "forker", "type": "code", "path": "forker.py", "timeout": 60}]}))
    proc = subprocess.Popen([sys.executable, "-m", "agentevals", "run", "helm.json", "-c", "c.yaml"], cwd=workdir,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 30
        while not (workdir / "grandchild.pid").exists() and time.monotonic() < end:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert wait_dead(grandchild(workdir)), "the setsid grandchild survived SIGTERM"


def test_kill_all_evaluator_processes_reaches_setsid_grandchildren(tmp_path: Path) -> None:
    import asyncio

    from agentevals.execution.containment import kill_all_evaluator_processes
    from agentevals.execution.process import run_process

    (tmp_path / "forker.py").write_text(FORKER.replace("MODE", MODES["timeout"]))

    async def scenario() -> int:
        task = asyncio.ensure_future(run_process([sys.executable, "forker.py"], stdin=b"{}", cwd=tmp_path, timeout=60))
        while not (tmp_path / "grandchild.pid").exists():
            await asyncio.sleep(0.02)
        pid = grandchild(tmp_path)
        assert alive(pid)
        assert kill_all_evaluator_processes() >= 2  # the evaluator's group and its setsid grandchild
        await asyncio.wait([task], timeout=5)
        return pid

    pid = asyncio.run(scenario())
    assert wait_dead(pid)


@pytest.mark.parametrize("mode", ["success", "timeout"])
def test_a_grandchild_dies_with_its_evaluation_not_only_at_exit(tmp_path: Path, mode: str) -> None:
    import asyncio

    from agentevals.execution.process import ProcessTimeout, run_process

    (tmp_path / "forker.py").write_text(FORKER.replace("MODE", MODES[mode]))

    async def scenario() -> None:
        try:
            # 10 s: time for a Python to start and fork on a loaded machine before the timeout mode's deadline.
            await run_process([sys.executable, "forker.py"], stdin=b"{}", cwd=tmp_path, timeout=10)
        except ProcessTimeout:
            assert mode == "timeout"

    asyncio.run(scenario())
    # Checked in this process, which goes on (atexit has not run): however long the wait, only the end of
    # the evaluation can have killed the grandchild (it sleeps 120 s).
    assert wait_dead(grandchild(tmp_path), seconds=30), f"the grandchild outlived its {mode} evaluation"
