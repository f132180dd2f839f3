"""Run an AgentV judge script (code_judge, composite code aggregator, executable prompt) like ``type: code``.

A command whose program is a script file (``python x.py``, ``node x.js``, ``bun run x.ts``, ``x.py``) is
run by ``run_file`` → ``run_program``: the same runtimes (the CLI's Python or the evaluator's venv,
Node, ``.ts`` through tsx), the same deadline and process-tree kill. ``agentevals eval assert`` runs its
judges through ``run_file`` too. Any other command runs as written under the same deadline. Failures
are one line: what, which command, and the last line of stderr.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ...core.limits import SCRIPT_TIMEOUT
from ...errors import EvaluatorFailure, ProtocolError
from ...execution.deadline import Deadline
from ...execution.process import ProcessResult
from ...execution.program import ProgramFailure, cause_line, extract_result, run_command, run_program
from ...execution.runtimes import Runtime, supported_extensions
from ...execution.sandbox_env import current_env_setting, evaluator_env

__all__ = [
    "argv_of",
    "encode_payload",
    "run_file",
    "run_script",
    "run_text_script",
    "script_arg",
    "script_file",
]

_LAUNCHERS = (("python",), ("python3",), ("node",), ("bun", "run"), ("bun",), ("npx", "tsx"), ("tsx",),
              ("deno", "run"))


def argv_of(command: str | list[str]) -> list[str]:
    """A command as AgentV takes it: a list is argv, a string runs through the shell."""
    if isinstance(command, str):
        return ["cmd.exe", "/c", command] if sys.platform == "win32" else ["sh", "-lc", command]
    return list(command)


def script_arg(argv: list[str]) -> str | None:
    """The script of a ``[launcher…, file]`` command (``python x.py``, ``bun run x.ts``, ``x.js``), if any."""
    rest = argv
    for launcher in _LAUNCHERS:
        if tuple(argv[: len(launcher)]) == launcher:
            rest = argv[len(launcher):]
            break
    return rest[0] if len(rest) == 1 and Path(rest[0]).suffix in supported_extensions() else None


def script_file(argv: list[str], cwd: Path, also: Path | None = None) -> Path | None:
    """The existing script our runtimes run for ``argv``: relative to ``cwd``, else to ``also``."""
    arg = script_arg(argv)
    if arg is None:
        return None
    for base in (cwd, also):
        path = Path(arg) if Path(arg).is_absolute() else (base / arg if base else None)
        if path is not None and path.is_file():
            return path
    return None


def encode_payload(payload: dict[str, Any]) -> bytes:
    """The stdin document: pretty-printed JSON, as AgentV sends it."""
    return json.dumps(payload, indent=2, ensure_ascii=False).encode("utf-8")


async def run_file(script: Path, payload: dict[str, Any], *, cwd: Path, deadline: Deadline,
                   runtime: Runtime | None = None) -> ProcessResult:
    """Run the judge file ``script`` through ``run_program`` (its runtime by extension, unless ``runtime``
    is given) with ``payload`` on stdin, in ``cwd``, killed with its process tree at ``deadline``.

    Raises:
        ProgramFailure: no runtime or interpreter, a dependency setup that failed, the deadline passed,
            or the program could not start. A non-zero exit is returned, not raised.
    """
    return await run_program(script, encode_payload(payload), deadline=deadline, cwd=cwd, runtime=runtime)


async def _run(argv: list[str], payload: dict[str, Any], *, cwd: Path, timeout: float | None, what: str,
               base_dir: Path | None = None) -> bytes:
    """Run ``argv`` with ``payload`` as pretty JSON on stdin; return stdout of a successful run."""
    deadline = Deadline(SCRIPT_TIMEOUT if timeout is None else timeout)
    script = script_file(argv, cwd, base_dir)
    shown = " ".join(argv)
    try:
        if script is not None:
            result = await run_file(script, payload, cwd=cwd, deadline=deadline)
        else:
            result = await run_command(argv, deadline=deadline, payload=encode_payload(payload), cwd=cwd,
                                       env=evaluator_env(current_env_setting()))
    except ProgramFailure as exc:
        raise EvaluatorFailure(f"{what} `{shown}` failed: {exc}") from None
    if result.returncode != 0:
        how = f"was killed by signal {-result.returncode}" if result.returncode < 0 else f"exited with code {result.returncode}"
        cause = cause_line(result.stderr)
        raise EvaluatorFailure(f"{what} `{shown}` {how}" + (f": {cause}" if cause else ""))
    return result.stdout.replace(b"\r\n", b"\n")


async def run_script(argv: list[str], payload: dict[str, Any], *, cwd: Path, timeout: float | None,
                     what: str, base_dir: Path | None = None) -> dict[str, Any]:
    """Run ``argv`` with ``payload`` on stdin and return the JSON object it prints (logs may precede it).

    Raises:
        EvaluatorFailure: timeout, program missing, non-zero exit, or stdout that is not one JSON object.
    """
    stdout = await _run(argv, payload, cwd=cwd, timeout=timeout, what=what, base_dir=base_dir)
    name = f"{what} `{' '.join(argv)}`"
    try:
        value, _ = extract_result(stdout, name=name)
    except ProtocolError as exc:
        raise EvaluatorFailure(str(exc).split("; stdout must end")[0]) from None
    if not isinstance(value, dict):
        raise EvaluatorFailure(f"{name} printed a JSON {type(value).__name__}, expected an object with 'score'")
    return value


async def run_text_script(argv: list[str], payload: dict[str, Any], *, cwd: Path, timeout: float | None,
                          what: str) -> str:
    """Like ``run_script`` but stdout is plain text (an executable prompt template prints its prompt)."""
    return (await _run(argv, payload, cwd=cwd, timeout=timeout, what=what)).decode("utf-8", "replace")
