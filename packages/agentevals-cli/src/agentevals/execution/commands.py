"""Run a command within an evaluation's deadline; ``ProgramFailure``, the one-line error of a program.

The lowest layer of running programs, shared by dependency setup (``environments``), evaluator runs
(``program``) and persistent workers (``workers``); it imports none of them.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TypeVar

from ..core.limits import current_limits, variable
from ..errors import AgentevalsError, EvaluatorFailure
from .deadline import Deadline, deadline_scope
from .process import ProcessResult, ProcessTimeout, run_process, tail

__all__ = ["ProgramFailure", "SetupFailure", "cause_line", "run_command", "set_up", "with_cause"]

T = TypeVar("T")


class ProgramFailure(EvaluatorFailure):
    """An evaluator program failed; ``str()`` is the one-line cause, ``stderr`` the tail of its stderr."""

    def __init__(self, message: str, *, stderr: bytes | str = b"") -> None:
        super().__init__(message)
        self.stderr = tail(stderr)


class SetupFailure(ProgramFailure):
    """Building an evaluator's environment (venv, ``npm install``, tsx) failed or passed its own deadline."""


async def set_up(deadline: Deadline, step: Callable[[Deadline], Awaitable[T]], phase: str) -> T:
    """Run a one-off environment setup ``step`` under a deadline of its own, ``AGENTEVALS_SETUP_TIMEOUT``
    seconds, with the evaluation's ``deadline`` paused meanwhile: how fast this machine installs packages
    must not decide whether the evaluation has time left to run.

    Example:
        ```python
        command = await set_up(deadline, lambda d: runtime.prepare(path, deadline=d), f"preparing {path.name}")
        ```

    Raises:
        SetupFailure: the step failed (its one-line cause) or passed the setup deadline.
        RuntimeError: what ``step`` raises for a missing runtime, unchanged.
    """
    setup = Deadline(current_limits().setup_timeout, note=f"the setup limit, {variable('setup_timeout')}")
    setup.phase = phase
    with deadline.paused(), deadline_scope(setup):
        try:
            return await setup.wait(step(setup))
        except SetupFailure:
            raise
        except AgentevalsError as exc:
            raise SetupFailure(str(exc), stderr=getattr(exc, "stderr", b"")) from None


_NODE_BANNER = re.compile(r"^Node\.js v\d+")
"""The last line Node prints after an uncaught exception: its version, not the cause."""
_JS_ERROR = re.compile(r"^(?:Uncaught )?(?:[A-Za-z_$][\w$.]*)?(?:Error|Exception)(?: \[[\w-]+\])?: ")
"""``TypeError: …``, ``Error [ERR_MODULE_NOT_FOUND]: …``: the line that says what was thrown."""
_NOT_A_CAUSE = re.compile(r"^(?:at |\^+$|\(Use `node --trace|[{}]$|Node\.js v\d+)")


def cause_line(stderr: bytes | str, limit: int = 300) -> str:
    """The line of an evaluator's stderr that says why it failed (one line, at most ``limit`` characters).

    Usually the last line (a Python traceback ends with the exception; the SDK's ``error: …`` line
    comes last). Node ends an uncaught exception with a ``Node.js v20…`` banner after the stack, so
    there the thrown error's own line is taken (``TypeError: Cannot read properties of undefined``).
    """
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[-1]
    if _NODE_BANNER.match(line):
        thrown = [candidate for candidate in lines if _JS_ERROR.match(candidate)]
        rest = [candidate for candidate in lines if not _NOT_A_CAUSE.match(candidate)]
        line = thrown[-1] if thrown else rest[-1] if rest else line
    return line if len(line) <= limit else line[: limit - 1] + "…"


def with_cause(message: str, stderr: bytes | str) -> str:
    last = cause_line(stderr)
    return f"{message}: {last}" if last else message


async def run_command(
    cmd: list[str],
    *,
    deadline: Deadline,
    payload: bytes = b"",
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> ProcessResult:
    """``run_process`` within ``deadline``: a timeout or a missing program becomes ``ProgramFailure``."""
    try:
        return await run_process(cmd, stdin=payload, cwd=cwd, env=env, timeout=deadline.remaining())
    except ProcessTimeout as exc:
        raise ProgramFailure(str(deadline.failure()), stderr=exc.stderr) from None
    except FileNotFoundError:
        raise ProgramFailure(f"cannot start '{cmd[0]}': no such program") from None
    except PermissionError:
        raise ProgramFailure(f"cannot start '{cmd[0]}': permission denied") from None
