"""Run an evaluator program: pick its runtime, prepare its dependencies, run it, read its result.

``run_program`` is the building block for every evaluator type that runs a file (``code``, ``remote``,
``code_judge``): it resolves the runtime by extension, sets up a venv / ``npm install`` when the
program's directory asks for one, and runs it with the whole process tree killed at the deadline.

The stdout rule (``extract_result``): stdout must end with one JSON object. When the whole of stdout
is not one JSON object, the result is taken from the last line that starts with ``{`` (no
indentation) from which the rest of stdout parses as exactly one JSON object; the lines before it
are log output (a warning says so). Anything after the object, no such line, or a log line that is
itself a one-line JSON object with ``score`` or ``status`` (two results: which one?) is an error.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.limits import variable
from ..errors import AgentevalsError, ProtocolError
from ..protocol import EvalResult, decode_result
from .commands import ProgramFailure, SetupFailure, cause_line, run_command, set_up, with_cause
from .deadline import Deadline
from .process import ProcessResult
from .runtimes import Runtime, runtime_for
from .sandbox_env import current_env_setting, evaluator_env

__all__ = ["ProgramFailure", "SetupFailure", "cause_line", "extract_result", "read_result", "run_command", "run_program"]

logger = logging.getLogger(__name__)

_MAX_CANDIDATES = 64
"""How many ``{`` lines from the bottom ``extract_result`` tries before giving up."""


async def run_program(
    path: Path,
    payload: bytes,
    *,
    timeout: float | None = None,
    deadline: Deadline | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    runtime: Runtime | None = None,
) -> ProcessResult:
    """Run the program ``path`` with ``payload`` on stdin and return its exit code, stdout and stderr.

    Args:
        path: The program file; its extension selects the runtime (unless ``runtime`` is given).
        payload: Bytes written to the program's stdin.
        timeout: Seconds for the run (a dependency setup has its own deadline, ``AGENTEVALS_SETUP_TIMEOUT``,
            and does not count); ignored when ``deadline`` is given.
        deadline: A deadline shared with earlier steps (e.g. a download); paused while dependencies install.
        cwd: Working directory (default: the program's directory).
        env: Environment (default: the minimal one of ``sandbox_env``, plus the entry's ``env:``).
        runtime: Use this runtime instead of the one registered for the extension.

    Raises:
        ProgramFailure: no runtime, a dependency setup that failed, the deadline passed (the whole
            process tree is killed), or the program could not start. A non-zero exit is *not* raised:
            inspect ``returncode`` (``read_result`` does).
    """
    deadline = deadline or Deadline(30.0 if timeout is None else timeout)
    path = Path(path)
    if path.is_dir():
        raise ProgramFailure(f"{path} is a directory, expected an evaluator file")
    if not path.is_file():
        raise ProgramFailure(f"evaluator file not found: {path}")
    try:
        chosen = runtime or runtime_for(path)
        command = await set_up(deadline, lambda setup: chosen.prepare(path, deadline=setup), f"preparing {path.name}")
    except RuntimeError as exc:
        raise ProgramFailure(str(exc)) from None
    except ProgramFailure:
        raise
    except AgentevalsError as exc:
        raise ProgramFailure(str(exc)) from None
    deadline.phase = f"running {path.name}"
    logger.debug("running %s", " ".join(command))
    if env is None:
        env = evaluator_env(current_env_setting())
    return await run_command(command, deadline=deadline, payload=payload, cwd=cwd or path.parent, env=env)


def extract_result(stdout: bytes | str, *, name: str = "evaluator") -> tuple[Any, int]:
    """Apply the stdout rule: return (the parsed trailing JSON value, number of log lines before it)."""
    text = (stdout.decode("utf-8", "replace") if isinstance(stdout, bytes) else stdout).strip()
    if not text:
        raise ProtocolError(f"{name} wrote nothing on stdout (expected one EvalResult JSON object)")
    try:
        return json.loads(text), 0
    except json.JSONDecodeError as exc:
        error = exc
    except RecursionError:
        raise ProtocolError(f"{name} wrote JSON nested too deeply to read on stdout") from None
    lines = text.splitlines()
    tried = 0
    for index in range(len(lines) - 1, 0, -1):
        if not lines[index].startswith("{"):
            continue
        tried += 1
        if tried > _MAX_CANDIDATES:
            break
        try:
            value = json.loads("\n".join(lines[index:]))
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict):
            earlier = _earlier_result(lines[:index])
            if earlier is not None:
                raise ProtocolError(
                    f"{name} wrote more than one result on stdout (lines {earlier + 1} and {index + 1} both "
                    "look like an EvalResult); stdout must end with one EvalResult JSON object, logs go to stderr"
                )
            return value, index
        break
    snippet = text[:60] + ("…" if len(text) > 60 else "")
    raise ProtocolError(
        f"{name} wrote invalid JSON on stdout: {error.msg} at line {error.lineno} column {error.colno} "
        f"(stdout starts {snippet!r}); stdout must end with one EvalResult JSON object, logs go to stderr"
    )


def _earlier_result(lines: list[str]) -> int | None:
    """Index of a log line that is itself a one-line JSON object with ``score`` or ``status``, if any."""
    for index, line in enumerate(lines):
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict) and ("score" in value or "status" in value):
            return index
    return None


def _cut(result: ProcessResult) -> str:
    kept = len(result.stdout)
    return (f"stdout was {kept + result.stdout_dropped} bytes, only its last {kept} were kept; "
            f"write logs to stderr, or set {variable('max_output_bytes')}")


def read_result(
    result: ProcessResult,
    *,
    name: str,
    threshold: float,
    n_invocations: int,
    sent_version: str,
) -> EvalResult:
    """Turn a finished evaluator process into a validated ``EvalResult`` or raise ``ProgramFailure``."""
    if result.returncode != 0:
        how = (
            f"was killed by signal {-result.returncode}"
            if result.returncode < 0
            else f"exited with code {result.returncode}"
        )
        raise ProgramFailure(with_cause(how, result.stderr), stderr=result.stderr)
    try:
        data, log_lines = extract_result(result.stdout, name=name)
        if not isinstance(data, dict):
            raise ProtocolError(f"{name} wrote a JSON {type(data).__name__}, expected an EvalResult object")
        decoded = decode_result(
            data, threshold=threshold, n_invocations=n_invocations, sent_version=sent_version, name=name
        )
    except ProtocolError as exc:
        message = str(exc)
        if not result.stdout.strip():
            message = with_cause(message, result.stderr)
        if result.stdout_dropped:
            message += f" ({_cut(result)})"
        raise ProgramFailure(message, stderr=result.stderr) from None
    if result.stdout_dropped:
        logger.warning("%s: %s; the result was found in what was kept", name, _cut(result))
    if log_lines:
        logger.warning(
            "%s wrote %d line(s) before its result on stdout; they were ignored (write logs to stderr)",
            name,
            log_lines,
        )
    return decoded
