"""Run a child process with a hard deadline; on timeout or cancellation kill its whole process tree.

Children run in their own session, out of reach of signals sent to agentevals' process group, tagged
with an evaluation token; when the run ends, however it ends, ``containment.sweep`` kills every process
that carries the token, ``setsid`` grandchildren included (see ``containment``). So that none outlives
agentevals when it is terminated (SIGTERM: a cancelled CI job; SIGHUP: a closed terminal), the first
``run_process`` in the main thread installs handlers for those signals — only where their default
action is in place — that call ``kill_all_evaluator_processes`` and then let the signal take its
default course.

A child's stdout and stderr are each kept up to ``AGENTEVALS_MAX_OUTPUT_BYTES`` (``agentevals.core.limits``):
the *last* bytes are kept, because the result is what a program prints last; ``ProcessResult`` says how
many bytes were dropped.
"""

from __future__ import annotations

import asyncio
import collections
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.limits import current_limits
from . import containment

__all__ = ["LINGER", "Capped", "ProcessResult", "ProcessTimeout", "guard_termination", "kill_group",
           "kill_pipe_holders", "run_process", "tail"]


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
    stdout_dropped: int = 0
    """Bytes cut from the start of stdout to keep it within the output limit (0: nothing was cut)."""
    stderr_dropped: int = 0
    """The same for stderr."""


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
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> ProcessResult:
    """Run ``cmd`` to completion, feeding ``stdin``; raise ``ProcessTimeout`` after ``timeout`` seconds.

    The child runs in its own session so that a timeout, an error or a cancelled task (Ctrl-C) kills
    it and every process it started. A descendant that left the session but still holds the output
    pipes is found through them (Linux) and killed too; the output read until then is kept.
    ``FileNotFoundError`` propagates when the program does not exist.
    """
    start = time.monotonic()
    guard_termination()
    containment.enable_subreaper()
    token = containment.new_token()
    proc = await asyncio.create_subprocess_exec(
        *cmd,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(cwd) if cwd else None,
        env=containment.tag_env(env, token),
        start_new_session=sys.platform != "win32",
    )
    containment.track(proc.pid, token)
    # Output is collected into buffers that outlive a timeout or a cancellation, so that what the
    # program wrote before it was killed (its stderr above all) is still reported.
    cap = current_limits().max_output_bytes
    out, err = Capped(cap), Capped(cap)
    pumps: list[asyncio.Future[None]] = [asyncio.ensure_future(_pump(proc.stdout, out)),
                                         asyncio.ensure_future(_pump(proc.stderr, err))]

    async def finish() -> None:
        await _feed(proc, stdin)
        waiter = asyncio.ensure_future(proc.wait())
        try:
            # Normally the pipes close when the program exits and wait() returns. A child it left
            # behind can hold the pipes (and, before Python 3.12, wait()) open: notice the exit, give
            # the pipes a moment, then kill the group and whatever else holds them.
            while not waiter.done() and proc.returncode is None:
                await asyncio.wait([waiter], timeout=0.1)
            await _drain(proc, pumps, out, err)
        finally:
            waiter.cancel()
        for pump in pumps:
            if pump.done():
                pump.result()

    try:
        await asyncio.wait_for(finish(), timeout)
    except asyncio.TimeoutError:
        _kill_tree(proc)
        await _settle(proc, pumps)
        raise ProcessTimeout(timeout or 0.0, err.data()) from None
    except BaseException:
        _kill_tree(proc)
        await _settle(proc, pumps)
        raise
    finally:
        # Children the evaluator spawned must not outlive it (e.g. a server it started), even those
        # that left its session.
        kill_group(proc)
        containment.untrack(proc.pid)
        containment.sweep(token)
        _release(proc, pumps)
    return ProcessResult(proc.returncode or 0, out.data(), err.data(), (time.monotonic() - start) * 1000,
                         stdout_dropped=out.cut, stderr_dropped=err.cut)


class Capped:
    """A byte sink that keeps the last ``cap`` bytes written to it: whole chunks are dropped from the front
    once the rest still holds ``cap`` bytes (no copying of what is kept)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.chunks: collections.deque[bytes] = collections.deque()
        self.size = 0
        self.dropped = 0

    def write(self, chunk: bytes) -> None:
        self.chunks.append(chunk)
        self.size += len(chunk)
        while self.chunks and self.size - len(self.chunks[0]) >= self.cap:
            first = self.chunks.popleft()
            self.size -= len(first)
            self.dropped += len(first)

    def data(self) -> bytes:
        data = b"".join(self.chunks)
        if len(data) > self.cap:
            return data[len(data) - self.cap:]
        return data

    @property
    def cut(self) -> int:
        """Bytes not in ``data()``."""
        return self.dropped + max(0, self.size - self.cap)

    def __len__(self) -> int:
        return self.size + self.dropped


async def _drain(proc: asyncio.subprocess.Process, pumps: list[asyncio.Future[None]], *buffers: Capped) -> None:
    """After the exit: read the pipes to their end; once nothing more arrives for ``LINGER`` seconds
    while they are still open, kill whatever holds them (then ``_release`` closes them)."""
    killed = False
    while True:
        before = sum(map(len, buffers))
        _, pending = await asyncio.wait(pumps, timeout=LINGER)
        if not pending or (killed and sum(map(len, buffers)) == before):
            return
        if sum(map(len, buffers)) == before:
            kill_group(proc)
            kill_pipe_holders(proc)
            killed = True


_GUARDED = False


def _on_termination(signum: int, frame: object) -> None:
    containment.kill_all_evaluator_processes()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # die by the signal, as without this handler


def guard_termination() -> None:
    """Install ``_on_termination`` for SIGTERM and SIGHUP where their default action is in place."""
    global _GUARDED
    if _GUARDED or sys.platform == "win32" or threading.current_thread() is not threading.main_thread():
        return
    _GUARDED = True
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, _on_termination)


LINGER = 1.0
"""Seconds to wait for the output pipes to close after the program exited."""


async def _pump(stream: asyncio.StreamReader | None, sink: Capped) -> None:
    while stream is not None:
        chunk = await stream.read(1 << 20)
        if not chunk:
            return
        sink.write(chunk)


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    assert proc.stdin is not None
    try:
        if data:
            proc.stdin.write(data)
            await proc.stdin.drain()
        proc.stdin.close()
    except (BrokenPipeError, ConnectionResetError):  # the program does not read its input: fine
        pass


def kill_group(proc: asyncio.subprocess.Process) -> None:
    if sys.platform != "win32":
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


async def _settle(proc: asyncio.subprocess.Process, pumps: list[asyncio.Future[None]]) -> None:
    """After a kill: let the pipes reach end-of-file and the process be reaped, for two seconds at most.

    ``asyncio.wait`` rather than ``gather``: a second cancellation (Ctrl-C cancels the run, then the
    case's cleanup cancels again) must not leave a gathering future with an unretrieved exception.
    """
    kill_pipe_holders(proc)
    waiter = asyncio.ensure_future(proc.wait())
    pending: list[asyncio.Future[Any]] = [waiter, *pumps]
    try:
        await asyncio.wait(pending, timeout=2 * LINGER)
    except ProcessLookupError:  # pragma: no cover - already reaped
        pass
    finally:
        waiter.cancel()


def _pipe_inodes(proc: asyncio.subprocess.Process) -> set[str]:
    """``pipe:[inode]`` of the process's stdout and stderr pipes (empty when unknown)."""
    transport = getattr(proc, "_transport", None)  # asyncio keeps it private; best effort
    found = set()
    for fd in (1, 2):
        try:
            # no transport: the AttributeError below
            pipe = transport.get_pipe_transport(fd).get_extra_info("pipe")  # type: ignore[union-attr]
            found.add(f"pipe:[{os.fstat(pipe.fileno()).st_ino}]")
        except (AttributeError, OSError, ValueError):
            continue
    return found


def kill_pipe_holders(proc: asyncio.subprocess.Process) -> None:
    """Kill every other process that holds the output pipes (Linux: found through ``/proc``).

    Only the evaluator's descendants can hold them (asyncio closes inherited descriptors), so this
    reaches children that left the process group, e.g. with ``setsid``.
    """
    targets = _pipe_inodes(proc)
    if not targets or not os.path.isdir("/proc/self/fd"):
        return
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            holds = any(os.readlink(fd.path) in targets for fd in os.scandir(f"{entry.path}/fd"))
        except OSError:  # gone, or not ours to inspect
            continue
        if holds:
            try:
                os.kill(int(entry.name), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _release(proc: asyncio.subprocess.Process, pumps: list[asyncio.Future[None]]) -> None:
    """Stop reading pipes that are still open and close the transport (no warnings after the loop ends)."""
    if all(pump.done() for pump in pumps):
        return
    for pump in pumps:
        pump.cancel()
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()
