"""No evaluator process outlives its evaluation: tagging, a subreaper and a sweep.

A child started by ``run_process`` runs in its own session, so killing its process group reaches what it
started, but not a descendant that called ``setsid`` (or double-forked into a new session). Three things
catch those:

1. **A tag.** Each child gets ``AGENTEVALS_EVALUATION=<token>`` in its environment; descendants inherit
   it, so ``/proc/<pid>/environ`` names the evaluation a process belongs to, whatever its session.
2. **A subreaper** (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``), only in a process that owns its whole tree:
   orphaned descendants are re-parented to agentevals instead of init, so even one that cleared its
   environment stays findable (its parent is us).
3. **A sweep** when the evaluation ends (success, timeout, crash, cancellation): every process carrying
   its token is killed and, when it became our child, reaped.

``kill_all_evaluator_processes()`` is the "everything now" call for an interrupt handler or ``atexit``:
every running child's group, every process with any agentevals token of this process, and — in a
process that owns its tree — every orphan re-parented to us since the subreaper was set.

Who owns the tree: only the ``agentevals`` program itself (the console script, ``python -m agentevals``),
which calls ``own_process_tree()`` before anything runs. Used as a library (``agentevals.evaluate``, the
click commands invoked in-process, a test), agentevals runs in a host whose other children are none of its
business: a daemon the host starts (a ``pg_ctl`` postmaster, a Ray node) double-forks, and were the host a
subreaper, that daemon would be re-parented to it, never waited for, and taken for an evaluator's orphan.
So there ``enable_subreaper()`` sets nothing and no orphan is swept; the token sweep still catches the
``setsid`` descendants that kept their environment.

Example:
    ```python
    token = new_token()
    proc = await asyncio.create_subprocess_exec(*cmd, env=tag_env(env, token), start_new_session=True)
    track(proc.pid, token)
    try:
        await proc.wait()
    finally:
        untrack(proc.pid)
        sweep(token)                 # setsid grandchildren die with the evaluation
    ```
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping
from typing import Optional

__all__ = [
    "TOKEN_VARIABLE",
    "enable_subreaper",
    "kill_all_evaluator_processes",
    "new_token",
    "own_process_tree",
    "processes_with_token",
    "sweep",
    "tag_env",
    "track",
    "tracked_pids",
    "untrack",
]

TOKEN_VARIABLE = "AGENTEVALS_EVALUATION"
"""Environment variable that tags every process of one evaluation (inherited by its descendants)."""

_PR_SET_CHILD_SUBREAPER = 36
_TRACKED: dict[int, str] = {}
"""pid (= process group id) of each running child → its token."""
_OWNER = False
"""Whether this process owns its whole process tree (``own_process_tree``): only then a subreaper."""
_SUBREAPER: Optional[bool] = None
_SINCE = 0
"""When the subreaper was set, in clock ticks since boot (``/proc/<pid>/stat`` start times): an orphan
started before then was not started by an evaluator."""
_AT_EXIT = False
_KILLED: set[int] = set()
"""Orphans we killed and may have to reap (they are our children through the subreaper)."""


def new_token() -> str:
    """A fresh evaluation token."""
    return f"{os.getpid()}-{os.urandom(8).hex()}"  # (not ``secrets``: the CLI imports this module at start-up)


def tag_env(env: Optional[Mapping[str, str]], token: str) -> dict[str, str]:
    """``env`` (default: this process's environment) with the evaluation token added."""
    tagged = dict(os.environ if env is None else env)
    tagged[TOKEN_VARIABLE] = token
    return tagged


def own_process_tree() -> None:
    """Declare this process the owner of its whole process tree: the ``agentevals`` program, not a host
    that uses agentevals as a library. Call it before any evaluator starts; from then on
    ``enable_subreaper`` makes this process a subreaper and orphans re-parented to it are swept."""
    global _OWNER, _SUBREAPER
    _OWNER = True
    if _SUBREAPER is False:  # asked before ownership was declared: ask again on the next evaluator
        _SUBREAPER = None


def enable_subreaper() -> bool:
    """Kill every evaluator process at interpreter exit and, in a process that owns its tree (Linux; once),
    become the subreaper of its descendants. Returns whether the subreaper is in place."""
    global _SUBREAPER, _AT_EXIT, _SINCE
    if not _AT_EXIT:
        _AT_EXIT = True
        atexit.register(kill_all_evaluator_processes)
    if _SUBREAPER is not None:
        return _SUBREAPER
    _SUBREAPER = False
    if _OWNER and sys.platform.startswith("linux"):
        try:
            import ctypes  # here: only a run that starts an evaluator process needs it

            _SINCE = _ticks_now()
            libc = ctypes.CDLL(None, use_errno=True)
            _SUBREAPER = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError, ValueError):  # pragma: no cover - no libc prctl, no clock
            _SUBREAPER = False
    return _SUBREAPER


def _ticks_now() -> int:
    """Now, in the unit and clock of the start time in ``/proc/<pid>/stat`` (clock ticks since boot)."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


def track(pid: int, token: str) -> None:
    """Remember a running child (its group is killed by ``kill_all_evaluator_processes``)."""
    _TRACKED[pid] = token


def untrack(pid: int) -> None:
    _TRACKED.pop(pid, None)


def tracked_pids() -> list[int]:
    """Children started by ``run_process`` that are running now."""
    return list(_TRACKED)


def _proc_entries() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _stat(pid: int) -> Optional[list[bytes]]:
    """The fields of ``/proc/<pid>/stat`` after the command name (``[0]`` is the state, ``[1]`` the parent,
    ``[3]`` the session, ``[19]`` the start time), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rindex(b")") + 2:].split()
    except (OSError, ValueError):
        return None


def _parent(pid: int) -> Optional[int]:
    fields = _stat(pid)
    try:
        return int(fields[1]) if fields else None
    except (ValueError, IndexError):
        return None


def processes_with_token(token: Optional[str] = None) -> list[int]:
    """Pids of live processes tagged with ``token`` (any agentevals token of this run when None)."""
    me = os.getpid()
    wanted = ("\0" + (f"{TOKEN_VARIABLE}={token}\0" if token else f"{TOKEN_VARIABLE}={me}-")).encode()
    found = []
    for pid in _proc_entries():
        if pid == me:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = b"\0" + f.read() + b"\0"
        except OSError:  # gone, a zombie, or not ours to read
            continue
        if wanted in environ:
            found.append(pid)
    return found


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return
    if _parent(pid) == os.getpid():
        _KILLED.add(pid)


def _reap() -> None:
    """Collect the exit status of orphans we killed (they are our children through the subreaper)."""
    deadline = time.monotonic() + 0.5
    while _KILLED and time.monotonic() < deadline:
        for pid in list(_KILLED):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                _KILLED.discard(pid)
        if _KILLED:
            time.sleep(0.01)


def sweep(token: str) -> int:
    """Kill every process tagged with ``token`` (repeated until none is left: a fork bomb respawns).
    Returns how many were killed."""
    if not os.path.isdir("/proc"):
        return 0
    return _kill_until_gone(lambda: processes_with_token(token))


def _kill_until_gone(find: Callable[[], list[int]]) -> int:
    """Kill what ``find`` finds until it finds nothing (a fork bomb respawns), then reap; how many."""
    killed = 0
    for _ in range(20):
        pids = find()
        if not pids:
            break
        for pid in pids:
            _kill(pid)
        killed += len(pids)
    _reap()
    return killed


def _orphans() -> list[int]:
    """Evaluator descendants re-parented to us (the subreaper): our children that ``run_process`` did not
    start, in a session other than ours (a child we started by other means, e.g. ``subprocess.run`` of a
    version check or a Ray node, shares our session), started after the subreaper was set."""
    if not _SUBREAPER:
        return []
    me = str(os.getpid()).encode()
    try:
        session = str(os.getsid(0)).encode()
    except OSError:  # pragma: no cover
        return []
    found = []
    for pid in _proc_entries():
        if pid in _TRACKED:
            continue
        fields = _stat(pid)
        try:
            if fields and fields[1] == me and fields[3] != session and int(fields[19]) >= _SINCE:
                if fields[0] == b"Z":  # dead already: only to be reaped (killing it again finds it again)
                    _KILLED.add(pid)
                else:
                    found.append(pid)
        except (ValueError, IndexError):
            continue
    return found


def kill_all_evaluator_processes() -> int:
    """Kill every evaluator process now: running children with their groups, every process tagged by this
    run, and (in a process that owns its tree) orphans re-parented to us. For interrupt handlers and exit;
    safe to call more than once.
    Returns how many processes were signalled."""
    count = 0
    if sys.platform == "win32":  # pragma: no cover
        return count
    for pid in list(_TRACKED):
        try:
            os.killpg(pid, signal.SIGKILL)
            count += 1
        except (ProcessLookupError, PermissionError):
            pass
    if os.path.isdir("/proc"):
        count += _kill_until_gone(lambda: processes_with_token(None) + _orphans())
    return count
