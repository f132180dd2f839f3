"""Persistent evaluator workers (protocol 1.2): one long-lived process answers many EvalInputs.

The handshake costs nothing and cannot be misread. A new process gets its first EvalInput on stdin,
which is then closed, exactly as in 1.0; that input carries ``worker: {"input_fd": N}`` (an inherited
pipe) and a ``request_id``. An evaluator that does not know the offer ignores it (unknown fields are
ignored), answers, and exits: its stdout is read by the 1.0 rule and the next evaluation starts a new
process, as before. An evaluator that accepts (the SDK's ``.run()`` does) answers with one JSON line
carrying ``"worker": true`` and keeps running: each further EvalInput is one JSON line on fd N, each
result one JSON line on stdout with the same ``request_id`` (``error`` set when that input failed).

A pool keeps up to ``size`` workers per evaluator. A worker that dies (a crash, ``kill -9``) fails only
the evaluation in flight; one that passes its deadline has its whole process tree killed; either way
the next evaluation starts a fresh process. Closing the pool closes the input pipes (a worker's signal
to exit) and kills what is left.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Optional

from ..core.limits import current_limits
from ..protocol import EvalInput, EvalResult, WorkerOffer, decode_result, encode_line, parse_version
from . import containment
from .commands import set_up
from .deadline import Deadline
from .process import (
    LINGER,
    Capped,
    ProcessResult,
    guard_termination,
    kill_group,
    kill_pipe_holders,
    tail,
)
from .program import ProgramFailure, read_result
from .sandbox_env import current_env_setting, evaluator_env

__all__ = ["WorkerPool", "supports_workers"]

logger = logging.getLogger(__name__)

_LINE_LIMIT = 1 << 28
"""Longest result line read from a worker (bytes)."""
_READ_LIMIT = 1 << 20
"""What the stdout reader buffers before it stops reading the pipe (asyncio pauses at twice this): a fast
writer then waits for us, so a program flooding stdout cannot grow this process's memory."""
_STDERR_KEEP = 1 << 16
"""Bytes of a worker's stderr kept for error messages."""


def supports_workers(version: str) -> bool:
    """Whether an evaluator spoken to in ``version`` can be offered a persistent worker (1.2 and later, POSIX)."""
    return sys.platform != "win32" and parse_version(version) >= (1, 2)


class _Worker:
    """One evaluator process that accepted the offer."""

    def __init__(self, proc: asyncio.subprocess.Process, writer: asyncio.StreamWriter, name: str,
                 token: str) -> None:
        self.proc = proc
        self.token = token
        """The containment token its process tree carries (swept when the worker goes)."""
        self.writer = writer
        self.name = name
        self.stderr = bytearray()
        self.stderr_total = 0
        self.pending = b""  # stdout bytes read past the last result line
        self._pump = asyncio.ensure_future(self._read_stderr())

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None and not self.writer.is_closing()

    async def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        while True:
            chunk = await self.proc.stderr.read(1 << 16)
            if not chunk:
                return
            self.stderr += chunk
            self.stderr_total += len(chunk)
            if len(self.stderr) > 2 * _STDERR_KEEP:
                del self.stderr[:-_STDERR_KEEP]

    def stderr_since(self, mark: int) -> bytes:
        return bytes(self.stderr[-min(len(self.stderr), self.stderr_total - mark):]) if self.stderr_total > mark else b""

    async def request(self, line: bytes, request_id: str) -> dict[str, Any]:
        """Send one EvalInput line and return the result line with the same ``request_id``."""
        self.writer.write(line)
        await self.writer.drain()
        return await self.answer(request_id)

    async def answer(self, request_id: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while True:
            raw = await self._line()
            data = _json_object(raw)
            if data is not None and data.get("request_id") == request_id:
                return data
            if raw.strip():
                logger.debug("%s wrote a line that is not the awaited result: %.200r", self.name, raw)

    async def _line(self) -> bytes:
        """The next line of stdout (without its newline), read in pieces of at most ``_READ_LIMIT``; a line
        over ``_LINE_LIMIT`` ends the worker (it is no result)."""
        assert self.proc.stdout is not None
        while b"\n" not in self.pending:
            try:
                self.pending += await self.proc.stdout.readuntil(b"\n")
            except asyncio.LimitOverrunError as exc:  # no newline within the reader's buffer: take it
                self.pending += await self.proc.stdout.readexactly(exc.consumed)
            except asyncio.IncompleteReadError as exc:
                raise _Died(self.pending + exc.partial) from None
            if len(self.pending) > _LINE_LIMIT:
                self.kill()
                raise ProgramFailure(f"{self.name} wrote a line of more than {_LINE_LIMIT} bytes on stdout "
                                     "without its result")
        raw, self.pending = self.pending.split(b"\n", 1)
        return raw

    def kill(self) -> None:
        """Kill the whole process tree now."""
        kill_group(self.proc)
        kill_pipe_holders(self.proc)
        self.close()

    def abandon(self) -> None:
        """Kill and let go of the pipes at once, without awaiting anything (a cancelled task may not get
        to await, and a transport left open is closed by the collector after the loop has ended)."""
        self.kill()
        self._pump.cancel()
        self._close_transport()
        self._release()

    def _release(self) -> None:
        containment.untrack(self.proc.pid)
        containment.sweep(self.token)  # descendants that left its session die with it

    def _close_transport(self) -> None:
        transport = getattr(self.proc, "_transport", None)  # closed now, not by a collector after the loop ends
        if transport is not None:
            transport.close()

    def close(self) -> None:
        """Close the input pipe: a worker's signal to exit."""
        if not self.writer.is_closing():
            self.writer.close()

    async def wait(self, timeout: float) -> Optional[int]:
        """The exit code, or None when the process is still running after ``timeout`` seconds."""
        end = asyncio.get_running_loop().time() + timeout
        while self.proc.returncode is None and asyncio.get_running_loop().time() < end:
            await asyncio.sleep(0.01)  # polled: before Python 3.12 wait() also waits for the pipes
        return self.proc.returncode

    async def reap(self) -> None:
        """Let a closed or killed worker go: wait briefly for it, then kill what remains of its tree."""
        self.close()
        if await self.wait(LINGER) is None:
            self.kill()
            await self.wait(2 * LINGER)
        kill_group(self.proc)
        self._release()
        self._pump.cancel()
        self._close_transport()


class _Died(Exception):
    """The worker's stdout ended before the awaited result."""

    def __init__(self, partial: bytes) -> None:
        self.partial = partial


def _json_object(raw: bytes) -> Optional[dict[str, Any]]:
    raw = raw.strip()
    if not raw.startswith(b"{"):
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


_OFFERED_FD_MIN = 64
"""Lowest fd number a worker's input pipe is offered on. Node marks the fds it inherits CLOEXEC from 0 up to
the first closed one above 15 (``uv_disable_stdio_inheritance``), so a low number is lost in a program
Node starts in turn (``tsx file.ts`` runs a second node); one past a gap is kept."""


def _offered_pipe() -> tuple[int, int]:
    """A pipe whose read end (the one offered to the worker) has a number of at least ``_OFFERED_FD_MIN``."""
    read_fd, write_fd = os.pipe()
    try:
        import fcntl

        # Close-on-exec like os.pipe()'s own fds (no other child inherits it); pass_fds hands it to the worker.
        high = fcntl.fcntl(read_fd, getattr(fcntl, "F_DUPFD_CLOEXEC", fcntl.F_DUPFD), _OFFERED_FD_MIN)
    except (ImportError, OSError):  # no fcntl, or out of fds: the low number still serves a direct child
        return read_fd, write_fd
    os.close(read_fd)
    return high, write_fd


class WorkerPool:
    """Up to ``size`` persistent processes of one evaluator program.

    Example:
        ```python
        pool = WorkerPool(lambda deadline: runtime.prepare(path, deadline=deadline), cwd=path.parent, size=4,
                          name="quality")
        result = await pool.run(eval_input, deadline=Deadline(30))   # EvalResult, validated
        await pool.aclose()
        ```
    """

    def __init__(self, prepare: Callable[[Deadline], Awaitable[list[str]]], *, cwd: Path, size: int, name: str,
                 env: Optional[dict[str, str]] = None) -> None:
        self._prepare = prepare
        self._command: Optional[list[str]] = None
        self.cwd = cwd
        self.size = max(1, size)
        self.name = name
        self.env = env
        self.metric_name = name
        """Who failed, in messages (the evaluator's configured name)."""
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._ids = itertools.count(1)
        self.started = 0
        """Processes started so far (for tests and benchmarks)."""

    async def run(self, eval_input: EvalInput, *, deadline: Deadline, metric_name: Optional[str] = None) -> EvalResult:
        """Evaluate one input on an idle worker, or on a new process that is offered to become one."""
        self.metric_name = metric_name or self.name
        version = eval_input.protocol_version
        request_id = str(next(self._ids))
        while self._idle:
            worker = self._idle.pop()
            if worker.alive:
                break
            await worker.reap()
        else:
            worker = None
        if worker is None:
            return await self._fresh(eval_input, request_id, deadline)
        line = encode_line(eval_input, version, request_id=request_id)
        return await self._exchange(worker, eval_input, deadline,
                                    lambda: worker.request(line, request_id))

    async def _exchange(self, worker: _Worker, eval_input: EvalInput, deadline: Deadline,
                        call: Callable[[], Awaitable[dict[str, Any]]]) -> EvalResult:
        """One request on an accepted worker, under the deadline; the worker returns to the pool after."""
        self._busy.add(worker)
        mark = worker.stderr_total
        deadline.phase = f"running {self.name}"
        try:
            data = await asyncio.wait_for(call(), deadline.remaining())
        except asyncio.TimeoutError:
            worker.kill()
            await worker.reap()
            raise ProgramFailure(str(deadline.failure()), stderr=worker.stderr_since(mark)) from None
        except (_Died, BrokenPipeError, ConnectionResetError):
            code = await worker.wait(2 * LINGER)
            await worker.reap()
            stderr = worker.stderr_since(mark)
            how = ("closed its output" if code is None else f"was killed by signal {-code}" if code < 0
                   else f"exited with code {code}")
            raise ProgramFailure(f"the worker process {how} before answering{_cause(stderr)}", stderr=stderr) from None
        except BaseException:
            worker.abandon()  # cancelled mid-request: the worker's state is unknown
            raise
        finally:
            self._busy.discard(worker)
        if worker.alive:
            self._idle.append(worker)
        await asyncio.sleep(0)  # let the stderr pump take what was written before the result
        return self._decode(data, eval_input, worker.stderr_since(mark))

    def _decode(self, data: dict[str, Any], eval_input: EvalInput, stderr: bytes) -> EvalResult:
        if data.get("error"):
            raise ProgramFailure(str(data["error"]).strip().splitlines()[0][:500], stderr=stderr)
        from ..errors import ProtocolError

        try:
            result = decode_result(data, threshold=eval_input.threshold, n_invocations=len(eval_input.invocations),
                                   sent_version=eval_input.protocol_version, name=self.metric_name)
        except ProtocolError as exc:
            raise ProgramFailure(str(exc), stderr=stderr) from None
        _log_stderr(self.metric_name, stderr)
        return result

    async def _fresh(self, eval_input: EvalInput, request_id: str, deadline: Deadline) -> EvalResult:
        """Start a process with the offer; it answers as a worker, or as a 1.0 program and exits."""
        if self._command is None:
            try:
                self._command = await set_up(deadline, self._prepare, f"preparing {self.name}")
            except RuntimeError as exc:
                raise ProgramFailure(str(exc)) from None
        read_fd, write_fd = _offered_pipe()
        # stdin gets the document without the line's newline: the bytes a 1.0 program has always read
        payload = encode_line(eval_input, eval_input.protocol_version, request_id=request_id,
                              worker=WorkerOffer(input_fd=read_fd).model_dump(mode="json"))[:-1]
        guard_termination()
        containment.enable_subreaper()
        token = containment.new_token()
        # The evaluation's minimal environment (its entry's ``env:``), tagged like every evaluator process.
        env = containment.tag_env(self.env if self.env is not None else evaluator_env(current_env_setting()), token)
        try:
            proc = await asyncio.create_subprocess_exec(
                *self._command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=str(self.cwd), env=env, pass_fds=(read_fd,),
                start_new_session=True, limit=_READ_LIMIT)
        except FileNotFoundError:
            os.close(write_fd)
            raise ProgramFailure(f"cannot start '{self._command[0]}': no such program") from None
        except PermissionError:
            os.close(write_fd)
            raise ProgramFailure(f"cannot start '{self._command[0]}': permission denied") from None
        finally:
            os.close(read_fd)
        self.started += 1
        containment.track(proc.pid, token)
        loop = asyncio.get_running_loop()
        pipe = os.fdopen(write_fd, "wb", buffering=0)
        transport, protocol = await loop.connect_write_pipe(lambda: asyncio.streams.FlowControlMixin(loop=loop), pipe)
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        worker = _Worker(proc, writer, self.name, token)
        deadline.phase = f"running {self.name}"
        self._busy.add(worker)
        try:
            first = await asyncio.wait_for(self._first(worker, payload), deadline.remaining())
        except asyncio.TimeoutError:
            worker.kill()
            await worker.reap()
            raise ProgramFailure(str(deadline.failure()), stderr=bytes(worker.stderr)) from None
        except BaseException:
            worker.abandon()
            raise
        finally:
            self._busy.discard(worker)
        if isinstance(first, dict):  # accepted: a worker from now on
            self._idle.append(worker)
            return self._decode(first, eval_input, bytes(worker.stderr))
        await worker.wait(LINGER)  # a 1.0 program: it has exited (or is about to)
        await asyncio.wait({worker._pump}, timeout=LINGER)  # the rest of its stderr
        await worker.reap()
        result = ProcessResult(proc.returncode or 0, first.data(), bytes(worker.stderr), 0.0, stdout_dropped=first.cut)
        checked = read_result(result, name=self.metric_name, threshold=eval_input.threshold,
                              n_invocations=len(eval_input.invocations), sent_version=eval_input.protocol_version)
        _log_stderr(self.metric_name, result.stderr)
        return checked

    async def _first(self, worker: _Worker, payload: bytes) -> dict[str, Any] | Capped:
        """Feed the first input on stdin and close it; return the acceptance line as a dict, or (the
        program did not accept) its stdout (the last ``max_output_bytes`` of it) once it has exited."""
        proc = worker.proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(payload)
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass
        proc.stdin.close()
        cap = current_limits().max_output_bytes
        out = bytearray()
        scanned = 0
        capped: Optional[Capped] = None  # set once stdout is too long to hold an acceptance: a 1.0 program
        read: Optional[asyncio.Future[bytes]] = None
        try:
            while True:
                read = asyncio.ensure_future(proc.stdout.read(1 << 16))
                # Before Python 3.12 wait() also waits for the pipes: poll the exit instead.
                while not read.done() and proc.returncode is None:
                    await asyncio.wait({read}, timeout=0.05)
                if not read.done():  # it exited: give the pipe a moment, then kill whatever it left holding it
                    done, _ = await asyncio.wait({read}, timeout=LINGER)
                    if not done:
                        kill_group(proc)
                        kill_pipe_holders(proc)
                chunk = await read
                if not chunk:
                    if capped is None:
                        capped = Capped(cap)
                        capped.write(bytes(out))
                    return capped
                if capped is not None:
                    capped.write(chunk)
                    continue
                out += chunk
                if len(out) > cap:  # kept within the output limit, as run_process keeps a program's stdout
                    capped = Capped(cap)
                    capped.write(bytes(out))
                    out = bytearray()
                    continue
                while (newline := out.find(b"\n", scanned)) >= 0:
                    data = _json_object(bytes(out[scanned:newline]))
                    if data is not None and data.get("worker") is True:
                        if scanned:
                            logger.warning("%s wrote %d byte(s) before its first result on stdout; they were "
                                           "ignored (write logs to stderr)", self.name, scanned)
                        worker.pending = bytes(out[newline + 1:])
                        return data
                    scanned = newline + 1
        finally:
            if read is not None and not read.done():
                read.cancel()

    async def aclose(self) -> None:
        """Stop every worker: close their input (they exit), then kill what is left."""
        workers = [*self._idle, *self._busy]
        self._idle, self._busy = [], set()
        await asyncio.gather(*(w.reap() for w in workers), return_exceptions=True)


def _log_stderr(name: str, stderr: bytes) -> None:
    """A passing evaluation's stderr: the evaluator's debug output, shown with ``-v``."""
    if stderr.strip():
        logging.getLogger("agentevals.execution.backends").info(
            "evaluator '%s' wrote on stderr:\n%s", name, textwrap.indent(tail(stderr), "  | "))


def _cause(stderr: bytes) -> str:
    lines = [line.strip() for line in tail(stderr).splitlines() if line.strip()]
    return f": {lines[-1][:300]}" if lines else ""
