"""Run a child process with a hard deadline; on timeout or cancellation kill its whole process tree."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence

__all__ = ["ProcessResult", "ProcessTimeout", "run_process", "tail"]


class ProcessTimeout(Exception):
    """The process did not finish before its deadline (it has been killed)."""

    def __init__(self, seconds: float, stderr: bytes = b"") -> None:
        self.seconds = seconds
        self.stderr = stderr
        super().__init__(f"timed out after {seconds:g}s")


@dataclass
class ProcessResult:
    returncode: int
    stdout: bytes
    stderr: bytes
    duration_ms: float


def tail(data: bytes | str, limit: int = 2000) -> str:
    """The last ``limit`` characters of a process stream, decoded, with a marker when cut."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = text.strip()
    if len(text) <= limit:
        return text
    return f"[… {len(text) - limit} chars cut …]\n" + text[-limit:]


def _kill_tree(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    try:
        if sys.platform != "win32":
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass


async def run_process(
    cmd: Sequence[str],
    *,
    stdin: bytes = b"",
    cwd: Optional[Path] = None,
    env: Optional[Mapping[str, str]] = None,
    timeout: Optional[float] = None,
) -> ProcessResult:
    """Run ``cmd`` to completion, feeding ``stdin``; raise ``ProcessTimeout`` after ``timeout`` seconds.

    The child runs in its own session so that a timeout, an error or a cancelled task (Ctrl-C) kills
    it and every process it started. ``FileNotFoundError`` propagates when the program does not exist.
    """
    start = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *cmd,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(cwd) if cwd else None,
        env=dict(env) if env is not None else None,
        start_new_session=sys.platform != "win32",
    )
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(stdin), timeout)
    except asyncio.TimeoutError:
        _kill_tree(proc)
        _, stderr = await _drain(proc)
        raise ProcessTimeout(timeout or 0.0, stderr) from None
    except BaseException:
        _kill_tree(proc)
        await _drain(proc)
        raise
    finally:
        # Children the evaluator spawned must not outlive it (e.g. a server it started).
        if sys.platform != "win32":
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    return ProcessResult(proc.returncode or 0, stdout, stderr, (time.monotonic() - start) * 1000)


async def _drain(proc: asyncio.subprocess.Process) -> tuple[bytes, bytes]:
    try:
        return await asyncio.wait_for(proc.communicate(), 2.0)
    except (asyncio.TimeoutError, ProcessLookupError, ValueError, RuntimeError):
        return b"", b""
