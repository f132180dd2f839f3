"""``execution.containment``: only the ``agentevals`` program owns its process tree.

Used as a library, agentevals must leave its host's other processes alone: the host does not become a
subreaper, and a daemon it starts (double-forked into a session of its own, like ``pg_ctl``'s postmaster)
outlives every run and every sweep. The program itself (``own_process_tree()``) sweeps only orphans
re-parented to it after its subreaper was set, never a process of its own started before.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ → `support` is importable
from support.leftovers import double_fork

HELM = Path(__file__).resolve().parents[4] / "examples" / "traces" / "helm.json"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux (/proc, prctl)")

EVALUATOR = textwrap.dedent("""
    import json, sys
    json.load(sys.stdin)
    print(json.dumps({"score": 1}))
""")


def is_subreaper() -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    flag = ctypes.c_int(0)
    assert libc.prctl(37, ctypes.byref(flag), 0, 0, 0) == 0  # PR_GET_CHILD_SUBREAPER
    return flag.value != 0


def parent_and_state(pid: int) -> tuple[int, str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return None
    return int(fields[1]), fields[0]


def alive(pid: int) -> bool:
    found = parent_and_state(pid)
    return found is not None and found[1] != "Z"


def kill(pid: int) -> None:
    """Kill a process this test started (by its pid) and reap it when it became our child."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    found = parent_and_state(pid)
    if found is not None and found[0] == os.getpid():
        os.waitpid(pid, 0)


def start_daemon(pidfile: Path) -> int:
    subprocess.run([sys.executable, "-c", double_fork(str(pidfile))], check=True, timeout=60)
    return int(pidfile.read_text())


def test_library_use_leaves_the_hosts_daemon_alive_and_the_host_no_subreaper(tmp_path: Path) -> None:
    import agentevals
    from agentevals.cli._main import cli
    from agentevals.execution.containment import kill_all_evaluator_processes
    from click.testing import CliRunner

    (tmp_path / "score.py").write_text(EVALUATOR)
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"evaluators": [{"name": "score", "type": "code", "path": "score.py"}]}))
    first = agentevals.evaluate([str(HELM)], config=str(config))  # an evaluator process has run in this one
    assert [m.score for case in first.cases for m in case.metrics] == [1.0] * len(first.cases)
    assert not is_subreaper()
    pid = start_daemon(tmp_path / "daemon.pid")  # a daemon of the host's own, after agentevals ran in it
    try:
        agentevals.evaluate([str(HELM)], config=str(config))
        result = CliRunner().invoke(cli, ["run", str(HELM), "-c", str(config), "--no-store"])
        assert result.exit_code == 0, result.output
        kill_all_evaluator_processes()
        assert alive(pid), "agentevals killed a daemon of its host"
        assert parent_and_state(pid)[0] != os.getpid()  # type: ignore[index]  # went to init, not to us
        assert not is_subreaper()
    finally:
        kill(pid)


# The agentevals program in miniature: it owns its tree, starts a helper of its own whose child left its
# session (a daemon it wants alive), then runs an evaluator whose setsid grandchild clears its environment
# (no token: only the subreaper finds it); the helper exits, so both are re-parented to it. It prints which
# survived the sweep.
OWNER = textwrap.dedent("""
    import asyncio, json, os, subprocess, sys, time
    from agentevals.execution import containment
    from agentevals.execution.process import run_process

    containment.own_process_tree()
    helper = subprocess.Popen([sys.executable, "-c", HELPER], stdin=subprocess.PIPE)
    while not os.path.exists("early.pid"):
        time.sleep(0.01)
    time.sleep(0.1)  # a few clock ticks (the unit of /proc start times) before the subreaper is set
    asyncio.run(run_process([sys.executable, "-c", FORKER], stdin=b"{}", timeout=60))
    helper.stdin.close()
    helper.wait()
    early, late = int(open("early.pid").read()), int(open("late.pid").read())
    ppid = lambda pid: int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    reparented = [ppid(early) == os.getpid(), ppid(late) == os.getpid()]
    containment.kill_all_evaluator_processes()
    def gone(pid):
        try:
            return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z"
        except FileNotFoundError:
            return True
    print(json.dumps({"reparented": reparented, "early_gone": gone(early), "late_gone": gone(late)}))
""")
HELPER = textwrap.dedent("""
    import os, sys, time
    if os.fork() == 0:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # not the program's output, which the test reads to its end
            os.dup2(null, fd)
        with open("early.pid.tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename("early.pid.tmp", "early.pid")
        time.sleep(300)
        os._exit(0)
    sys.stdin.read()
""")
FORKER = double_fork("late.pid", before="json.load(sys.stdin)", after='print(json.dumps({"score": 1}))',
                     clear_env=True)


def test_the_program_sweeps_an_evaluators_orphan_but_not_its_own_earlier_daemon(tmp_path: Path) -> None:
    script = f"HELPER = {HELPER!r}\nFORKER = {FORKER!r}\n{OWNER}"
    try:
        done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        outcome = json.loads(done.stdout)
        assert outcome["reparented"] == [True, True]  # both were its children through the subreaper
        assert outcome["late_gone"], "the evaluator's orphan survived"
        assert not outcome["early_gone"], "the program's own daemon was swept as an evaluator's orphan"
    finally:
        for name in ("early.pid", "late.pid"):
            if (tmp_path / name).exists():
                kill(int((tmp_path / name).read_text()))

