"""Large Jaeger files read on every core: the main process finds where each trace starts, worker
processes parse (orjson) and convert batches of traces, and the results come back in file order.

Finding a trace's start costs no parsing: a Jaeger trace is ``{"traceID": "…", "spans": [``, a span is
``{"traceID": "…", "spanID": …``, so each ``"spans"`` key preceded by a ``traceID`` key opens a trace.
A slice between two starts must parse as exactly one trace; when one does not (a string that happens
to contain that text, another key order, an unusual document), nothing is guessed: ``Fallback`` is
raised and the caller reads the file with the serial reader, skipping the traces already yielded.
"""

from __future__ import annotations

import gc
import os
import pickle
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, Optional

from ._position import ReadPosition

__all__ = ["MIN_BYTES", "SKIPPED", "Fallback", "Slice", "iter_slices", "parallel_items", "trace_slices"]

MIN_BYTES = 32 * 2**20
"""Files smaller than this are read serially (starting worker processes costs more than it saves)."""
_BATCH = 16
"""Traces per task sent to a worker."""
_HEAD = re.compile(rb"(?:\xef\xbb\xbf)?\s*\{\s*\"data\"\s*:\s*\[\s*")
_START = re.compile(rb"\{\s*\"traceID\"\s*:\s*\"([^\"\\]{0,128})\"\s*,\s*\"spans\"\Z")
_WINDOW = 200
_CHUNK = 16 * 2**20


class Fallback(Exception):
    """The file is not laid out as expected; read it with the serial reader."""


class Slice(NamedTuple):
    """One element of the top-level ``data`` array: its byte offsets and its ``traceID``."""

    start: int
    end: int
    trace_id: str


SKIPPED = "agentevals:skipped-trace"
"""What ``parallel_items`` yields for a trace its ``skip`` left out (unparsed)."""


def trace_slices(path: Path) -> list[Slice]:
    """Every element of the top-level ``data`` array; ``Fallback`` when the layout is not the plain one
    (``iter_slices``, whole)."""
    return list(iter_slices(path))


def iter_slices(path: Path) -> Iterator[Slice]:
    """``trace_slices`` as the file is scanned, so that workers parse the first traces while the rest of
    the file is scanned. Reads the file in chunks (no mapping: its pages would count as memory).
    ``Fallback`` may come after some slices: the caller then reads the file serially."""
    with path.open("rb") as f:
        chunk = f.read(_CHUNK)
        head = _HEAD.match(chunk, 0, 4096)
        if head is None:
            raise Fallback
        previous: Optional[int] = None  # the last start found: its end is the next start
        previous_id = ""
        base = 0  # file offset of chunk[0]
        pos = head.end()
        while True:
            while (key := chunk.find(b'"spans"', pos)) >= 0:
                window = max(0, key - _WINDOW)
                match = _START.search(chunk[window:key + len(b'"spans"')])
                if match is not None:
                    start = base + window + match.start()
                    if previous is None and start != head.end():
                        raise Fallback
                    if previous is not None:
                        yield Slice(previous, start, previous_id)
                    previous, previous_id = start, match.group(1).decode("utf-8", "replace")
                pos = key + len(b'"spans"')
            more = f.read(_CHUNK)
            if not more:
                break
            keep = max(pos, len(chunk) - _WINDOW - len(b'"spans"'))  # a key may straddle the chunks
            base += keep
            chunk, pos = chunk[keep:] + more, 0
        tail = chunk[-4096:]
        end = _array_end(tail) + base + len(chunk) - len(tail)
    if previous is None:
        raise Fallback
    yield Slice(previous, end, previous_id)


def _array_end(tail: bytes) -> int:
    """Offset in ``tail`` (the file's last bytes) of the ``]`` closing the ``data`` array: the document
    ends ``] }``, possibly with more top-level scalar keys after the array, as the Jaeger query API writes."""
    import orjson

    pos = len(tail)
    for _ in range(8):
        pos = tail.rfind(b"]", 0, pos)
        if pos < 0:
            break
        rest = tail[pos + 1:].strip()
        if rest == b"}":
            return pos
        if rest.startswith(b","):
            try:
                orjson.loads(b"{" + rest[1:])
                return pos
            except orjson.JSONDecodeError:
                pass
    raise Fallback


def parallel_items(path: Path, source: str, convert: Callable[[Any], list], *, workers: int,
                   position: Optional[ReadPosition] = None,
                   skip: Optional[Callable[[str], bool]] = None) -> Iterator[Any]:
    """Yield ``convert(trace)`` items for every trace of the Jaeger file ``path``, in file order, using
    ``workers`` processes. ``convert`` must be a module-level function (it is pickled by name).

    The workers are plain ``python -m agentevals.traces.readers._parallel`` processes fed through their
    stdin (not multiprocessing, whose spawn would re-run the caller's script). Raises ``Fallback``
    (possibly after yielding some traces: the caller skips that many) and ``InputFileError`` for a trace
    the serial reader would also refuse. ``position``: the fraction of the file's
    traces converted so far, set before each batch's items. ``skip(trace_id)`` true: that trace is neither
    parsed nor converted, and ``SKIPPED`` comes in its place (``run --unscored``: the store has its result).
    """
    from ...errors import InputFileError

    size = max(1, path.stat().st_size)
    tasks = _tasks(iter_slices(path), (str(path), source, convert), skip)
    pending: list[int] = []  # the end offset of each task sent and not yet received, in order
    procs: list[subprocess.Popen] = []
    try:
        for task in tasks:  # the first task: Fallback before any worker starts when the layout is not plain
            procs = [subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      bufsize=0)
                     for _ in range(max(1, workers))]
            _send(procs[0], task)
            pending.append(task[3][-1][1])
            break
        sent = len(pending)
        received = 0
        while pending:
            for task in tasks:  # keep every worker busy: two tasks each in flight
                _send(procs[sent % len(procs)], task)
                pending.append(task[3][-1][1])
                sent += 1
                if len(pending) >= 2 * len(procs):
                    break
            kind, payload = _receive(procs[received % len(procs)])
            received += 1
            if position is not None:
                position.fraction = pending.pop(0) / size
            else:
                pending.pop(0)
            if kind == "error":
                yield from payload[1]
                raise InputFileError(payload[0])
            yield from payload
            if kind == "fallback":
                raise Fallback
    finally:
        for proc in procs:
            try:
                proc.stdin.close()  # type: ignore[union-attr]  # started with stdin=PIPE
            except OSError:
                pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _tasks(slices: Iterator[Slice], head: tuple[str, str, Callable[[Any], list]],
           skip: Optional[Callable[[str], bool]]) -> Iterator[tuple]:
    """Batches of ``_BATCH`` slices as tasks ``(path, source, index of the first trace, slices, convert)``, a
    slice ``(start, end, skipped)``."""
    path, source, convert = head
    batch: list[tuple[int, int, bool]] = []
    index = 0
    for piece in slices:
        batch.append((piece.start, piece.end, skip is not None and skip(piece.trace_id)))
        if len(batch) == _BATCH:
            yield path, source, index, batch, convert
            index, batch = index + len(batch), []
    if batch:
        yield path, source, index, batch, convert


def _send(proc: subprocess.Popen, task: tuple) -> None:
    data = pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL)
    _write_all(proc.stdin.fileno(),  # type: ignore[union-attr]  # started with stdin=PIPE
               len(data).to_bytes(8, "little") + data)


def _receive(proc: subprocess.Popen) -> tuple[str, Any]:
    fd = proc.stdout.fileno()  # type: ignore[union-attr]  # started with stdout=PIPE
    header = _read_exact(fd, 8)
    if header is None:
        raise Fallback  # the worker died (e.g. it cannot import agentevals): the serial reader takes over
    size = int.from_bytes(header, "little")
    if size > _MAX_MESSAGE:
        raise Fallback  # not a length we sent: the stream is not ours to read further
    data = _read_exact(fd, size)
    if data is None:
        raise Fallback
    return pickle.loads(data)


def _read_exact(fd: int, size: int) -> Optional[bytes]:
    """Exactly ``size`` bytes from the pipe ``fd``, or None at its end.

    Plain ``os.read`` calls on the descriptor, gathered until the message is whole: a pipe read returns what
    is there, which is less than asked whenever the writer was stopped halfway (Ctrl-Z, ``kill -STOP``
    of the process group) or a signal came; EINTR is retried by Python itself (PEP 475).
    """
    buf = bytearray(size)
    view = memoryview(buf)
    got = 0
    while got < size:
        n = os.readv(fd, [view[got:]])
        if n == 0:
            return None
        got += n
    return bytes(buf)


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the pipe ``fd`` (a write returns after part of it when a signal comes)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


_MAX_MESSAGE = 2**40
"""No message is this long: a header saying so means the stream lost its framing."""


def _serve() -> None:
    """A worker process: tasks in on stdin, results out on stdout, length-prefixed pickles. Ctrl-C is the
    parent's to handle: a worker stops at the end of its input (the parent closing it, or exiting)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The parent may be gone when a result is ready (it was interrupted): the write fails, and the worker
    # ends quietly (no BrokenPipeError traceback on the terminal).
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    source, sink = sys.stdin.fileno(), sys.stdout.fileno()
    while (header := _read_exact(source, 8)) is not None:
        message = _read_exact(source, int.from_bytes(header, "little"))
        if message is None:
            return
        task = pickle.loads(message)
        # A batch allocates many objects and frees them together (parsed JSON, spans): the cyclic
        # collector would walk them again and again (a tenth of the work); it runs once after.
        gc.disable()
        try:
            data = pickle.dumps(_convert_batch(task), protocol=pickle.HIGHEST_PROTOCOL)
        finally:
            gc.enable()
        _write_all(sink, len(data).to_bytes(8, "little") + data)


_FILES: dict[str, Any] = {}


def _convert_batch(task: tuple) -> tuple[str, Any]:
    """In a worker: parse and convert one batch. ("ok", items) / ("fallback", items before) /
    ("error", (message, items before))."""
    import orjson

    from ...errors import InputFileError
    from .jaeger import read_jaeger_trace

    path, source, first, slices, convert = task
    fd = _FILES.get(path)
    if fd is None:
        fd = _FILES[path] = os.open(path, os.O_RDONLY)
    items: list = []
    for offset, (start, end, skipped) in enumerate(slices):
        if skipped:
            items.append(SKIPPED)
            continue
        entry: Optional[Any]
        try:
            entry = orjson.loads(_read_slice(fd, start, end))
        except orjson.JSONDecodeError:
            entry = None
        if not isinstance(entry, dict) or not isinstance(entry.get("spans"), list):
            return "fallback", items
        try:
            trace = read_jaeger_trace(entry, source, first + offset)
        except InputFileError as exc:
            return "error", (str(exc), items)
        items.extend(convert(trace))
    return "ok", items


_BUFFER = bytearray()
_SPACE = frozenset(b" \t\n\r\x0b\x0c")


def _read_slice(fd: int, start: int, end: int) -> memoryview:
    """The bytes ``start:end`` of ``fd`` without the separator after the trace (``raw.rstrip().rstrip(b",")``).

    Read into one buffer kept by the worker: a new ``bytes`` per trace (~130 KiB, past the allocator's
    mapping threshold) would be mapped, faulted in and unmapped again for every trace. The view is valid
    until the next call (which may replace the buffer, never resize it while a view is out)."""
    global _BUFFER
    size = end - start
    if len(_BUFFER) < size:
        _BUFFER = bytearray(max(size, 2 * len(_BUFFER)))
    view = memoryview(_BUFFER)[:size]
    size = os.preadv(fd, [view], start)
    while size and view[size - 1] in _SPACE:
        size -= 1
    while size and view[size - 1] == 0x2C:  # ","
        size -= 1
    return view[:size]


if __name__ == "__main__":
    _serve()
