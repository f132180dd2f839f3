"""Spilling to disk: how a run keeps memory flat from 1,000 to 100,000 traces.

A ``SpillFile`` is an anonymous temporary file (deleted by the OS when closed or when the process ends)
holding pickled objects, each known by a small ``Spilled`` handle (offset, length). Reads use
``os.pread``, so several readers (report writers, the store, a consumer thread) may read at once while
the run appends. ``spill_threshold`` says how many objects a holder keeps in memory before it spills.

    variable                    default   what it bounds
    AGENTEVALS_SPILL_CASES      2000      case results a run keeps in memory (``RunResult.cases``)
    AGENTEVALS_SPILL_TRACES     2000      converted traces the grouper keeps waiting in memory

Example:
    ```python
    spill = SpillFile()
    ref = spill.put(obj)          # pickled to the file, a handle back
    same = spill.get(ref)         # a fresh copy of obj
    spill.close()
    ```
"""

from __future__ import annotations

import os
import threading
from typing import Any, NamedTuple, Optional

__all__ = ["SpillFile", "Spilled", "spill_threshold"]

_DEFAULTS = {"AGENTEVALS_SPILL_CASES": 2000, "AGENTEVALS_SPILL_TRACES": 2000}


def spill_threshold(variable: str) -> int:
    """Objects kept in memory before spilling, from ``variable`` (a non-negative integer; 0 spills at
    once) or its default; an unreadable value falls back to the default."""
    raw = os.environ.get(variable, "").strip()
    try:
        return max(0, int(raw)) if raw else _DEFAULTS[variable]
    except ValueError:
        return _DEFAULTS[variable]


class Spilled(NamedTuple):
    """Where one object lies in a ``SpillFile``."""

    offset: int
    length: int


class SpillFile:
    """Append-only file of pickled objects; opened on the first ``put``."""

    def __init__(self) -> None:
        self._fd: Optional[int] = None
        self._size = 0
        self._lock = threading.Lock()  # appends come from the event loop and from consumer threads

    def put(self, obj: Any) -> Spilled:
        import pickle  # here: only a run that spills pays for it

        return self.put_pickled(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))

    def put_pickled(self, data: bytes) -> Spilled:
        """Append an object already pickled (``get`` unpickles it)."""
        import tempfile  # here: only a run that spills pays for it

        with self._lock:
            if self._fd is None:
                handle = tempfile.TemporaryFile(prefix="agentevals-spill-")
                self._fd = os.dup(handle.fileno())  # the file stays while the descriptor does
                handle.close()
            offset = self._size
            written = 0
            while written < len(data):  # pwrite may write less than asked (a full disk raises)
                written += os.pwrite(self._fd, data[written:], offset + written)
            self._size += len(data)
        return Spilled(offset, len(data))

    def get(self, ref: Spilled) -> Any:
        if self._fd is None:
            raise ValueError("nothing was spilled to this file")
        chunks, read = [], 0
        while read < ref.length:
            chunk = os.pread(self._fd, ref.length - read, ref.offset + read)
            if not chunk:
                raise EOFError(f"spill file ends before {ref.offset + ref.length}")
            chunks.append(chunk)
            read += len(chunk)
        import pickle

        return pickle.loads(b"".join(chunks) if len(chunks) > 1 else chunks[0])

    @property
    def size(self) -> int:
        """Bytes written so far."""
        return self._size

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the OS closes it anyway
            pass
