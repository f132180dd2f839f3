"""Programs that leave a process behind in a session of its own, for the tests of ``execution.containment``.

``double_fork`` writes a Python program that forks a child, which calls ``setsid`` and forks the process left
behind (an evaluator's stray grandchild, a host's daemon as ``pg_ctl`` starts one), then exits: the one left
behind is re-parented to the nearest subreaper above the program, else to init. It writes its pid to a file
and sleeps 120 s; the tests kill it by that pid.
"""

from __future__ import annotations

import textwrap

__all__ = ["double_fork"]

_PROGRAM = textwrap.dedent("""
    import json, os, sys, time
    BEFORE
    child = os.fork()
    if child == 0:
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # holds none of the program's pipes (a pipe holder is killed as a straggler)
                os.dup2(null, fd)
            LEAVE
        os._exit(0)
    os.waitpid(child, 0)
    while not os.path.exists(PIDFILE):
        time.sleep(0.01)
    AFTER
""")


def double_fork(pidfile: str, *, before: str = "", after: str = "", clear_env: bool = False) -> str:
    """The program: ``before`` (one line), the double fork, a wait for ``pidfile``, then ``after`` (one line).

    With ``clear_env`` the process left behind execs Python with an empty environment: no evaluation token
    names it, only a subreaper can still find it."""
    left = (f"import os, time; open({pidfile + '.tmp'!r}, 'w').write(str(os.getpid())); "
            f"os.rename({pidfile + '.tmp'!r}, {pidfile!r}); time.sleep(120)")
    leave = f"os.execve(sys.executable, [sys.executable, '-c', {left!r}], {{}})" if clear_env else f"{left}; os._exit(0)"
    return (_PROGRAM.replace("BEFORE", before or "pass").replace("LEAVE", leave).replace("PIDFILE", repr(pidfile))
            .replace("AFTER", after or "pass"))
