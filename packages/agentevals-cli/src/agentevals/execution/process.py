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
    # Output is collected into buffers that outlive a timeout or a cancellation, so that what the
    # program wrote before it was killed (its stderr above all) is still reported.
    out, err = bytearray(), bytearray()
    pumps = [asyncio.ensure_future(_pump(proc.stdout, out)), asyncio.ensure_future(_pump(proc.stderr, err))]

    async def finish() -> None:
        await _feed(proc, stdin)
        waiter = asyncio.ensure_future(proc.wait())
        try:
            # Normally the pipes close when the program exits and wait() returns. A child it left
            # behind can hold the pipes (and so wait()) open: notice the exit, then kill the group.
            while not waiter.done():
                await asyncio.wait([waiter], timeout=0.1)
                if not waiter.done() and proc.returncode is not None:
                    await asyncio.wait(pumps, timeout=_LINGER)
                    _kill_group(proc)
                    await waiter
        finally:
            waiter.cancel()
        await asyncio.wait(pumps)
        for pump in pumps:
            pump.result()

    try:
        await asyncio.wait_for(finish(), timeout)
    except asyncio.TimeoutError:
        _kill_tree(proc)
        await _settle(proc, pumps)
        raise ProcessTimeout(timeout or 0.0, bytes(err)) from None
    except BaseException:
        _kill_tree(proc)
        await _settle(proc, pumps)
        raise
    finally:
        # Children the evaluator spawned must not outlive it (e.g. a server it started).
        _kill_group(proc)
    return ProcessResult(proc.returncode or 0, bytes(out), bytes(err), (time.monotonic() - start) * 1000)


_LINGER = 1.0
"""Seconds to wait for the output pipes to close after the program exited."""


async def _pump(stream: asyncio.StreamReader | None, sink: bytearray) -> None:
    while stream is not None:
        chunk = await stream.read(1 << 16)
        if not chunk:
            return
        sink += chunk


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    assert proc.stdin is not None
    try:
        if data:
            proc.stdin.write(data)
            await proc.stdin.drain()
        proc.stdin.close()
    except (BrokenPipeError, ConnectionResetError):  # the program does not read its input: fine
        pass


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if sys.platform != "win32":
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


async def _settle(proc: asyncio.subprocess.Process, pumps: list[asyncio.Future[None]]) -> None:
    """After a kill: let the pipes reach end-of-file and the process be reaped, for two seconds at most."""
    try:
        await asyncio.wait_for(asyncio.gather(proc.wait(), *pumps, return_exceptions=True), 2.0)
    except (asyncio.TimeoutError, ProcessLookupError, RuntimeError):
        for pump in pumps:
            pump.cancel()
