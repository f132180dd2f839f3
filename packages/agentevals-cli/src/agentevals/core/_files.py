"""Reading input files (traces, eval sets, configs, EVAL.yaml suites) with one-line errors that name the file,
and the one rule for relative paths written in a config file.

Hostile inputs are bounded here, once for every reader:

- a file larger than ``AGENTEVALS_MAX_INPUT_BYTES`` is refused before it is read;
- an input that is not a regular file (a FIFO, a process substitution ``<(cat t.json)``, ``/dev/stdin``, a
  device such as ``/dev/zero``) is copied once into a private temporary file, within
  ``AGENTEVALS_INPUT_TIMEOUT`` seconds and the same size limit, and every later reader (format sniff,
  stream, whole-file parse) reads that copy: nothing is lost to a sniff, nothing blocks forever;
- a JSON input must start like JSON (``{`` or ``[``), so ``/dev/zero`` or ``/dev/urandom`` stop at the first
  kilobyte.

Example:
    ```python
    data = read_input(Path("traces/run.json"))          # InputFileError: "traces/run.json: no such file"
    path = regular_path(Path("/dev/fd/63"))              # a temporary copy of the pipe's content
    ```
"""

from __future__ import annotations

import atexit
import os
import select
import shutil
import stat
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from ..errors import InputFileError
from .limits import current_limits, variable

__all__ = ["JsonDepthGuard", "check_json_start", "read_input", "regular_path", "resolve_config_path"]

_CHUNK = 1 << 16


def _describe_size(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def _too_large(where: str, limit: int) -> InputFileError:
    return InputFileError(f"{where}: larger than {_describe_size(limit)} (the input size limit); "
                          f"set {variable('max_input_bytes')} to allow more")


def read_input(path: Path, source: Optional[str] = None, *, expected: str = "a file", json: bool = False) -> bytes:
    """The bytes of ``path``; ``InputFileError`` (``<source>: no such file`` …) when it cannot be read.

    Non-regular files are read through ``regular_path``; every file is bounded by the input size limit.
    ``json``: the content must start like JSON (checked on a pipe's first chunk, before copying the rest).
    """
    where = source if source is not None else str(path)
    real = regular_path(path, where, expected=expected, json=json)
    limit = current_limits().max_input_bytes
    try:
        with open(real, "rb") as f:
            if os.fstat(f.fileno()).st_size > limit:
                raise _too_large(where, limit)
            data = f.read()  # not read(limit): that would allocate the limit up front
    except OSError as exc:
        raise InputFileError(f"{where}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:  # the file grew while being read
        raise _too_large(where, limit)
    return data


def resolve_config_path(path: str, base_dir: Path) -> tuple[Path, Optional[str]]:
    """Resolve a relative path written in a config file: the config's folder first, then the working
    directory (agentevals-cli 0.11 resolved against the working directory, so its example configs kept in
    a subfolder name files relative to the repo root).

    Returns the path and, when the working directory was used, a note saying so. When neither exists the
    config-relative path is returned (the caller's "not found" message names it).
    """
    candidate = Path(path).expanduser()
    if candidate.is_absolute():
        return candidate, None
    beside = (base_dir / candidate).resolve()
    if beside.exists():
        return beside, None
    cwd = Path.cwd()
    here = (cwd / candidate).resolve()
    if here.exists() and base_dir.resolve() != cwd.resolve():
        return here, f"'{path}' is not in the config's folder; using it relative to the working directory ({here})"
    return beside, None


# -- non-regular files -----------------------------------------------------------------------------

_POLLABLE = os.name == "posix"
"""``select`` works on pipes and devices (on Windows only on sockets: there reads simply block)."""
_SPOOLED: dict[str, Path | InputFileError] = {}
"""Original path → its copy (or the error reading it): a pipe can be read only once, by the first reader."""
_SPOOL_DIR: Optional[Path] = None


def _spool_dir() -> Path:
    global _SPOOL_DIR
    if _SPOOL_DIR is None:
        _SPOOL_DIR = Path(tempfile.mkdtemp(prefix="agentevals-input-"))
        atexit.register(shutil.rmtree, _SPOOL_DIR, True)
    return _SPOOL_DIR


def regular_path(
    path: Path | str, source: Optional[str] = None, *, expected: str = "a file", json: bool = False
) -> Path:
    """``path`` itself when it is a regular file, else a temporary regular copy of what it delivers.

    Raises ``InputFileError`` for a missing file, a directory, a pipe with no data within the input
    timeout, or content over the size limit (the same error again for every later reader of that path).
    """
    path = Path(path)
    where = source if source is not None else str(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputFileError(f"{where}: no such file") from None
    except OSError as exc:
        raise InputFileError(f"{where}: cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise InputFileError(f"{where}: is a directory, expected {expected}")
    if stat.S_ISREG(mode):
        return path
    key = os.path.abspath(path)
    cached = _SPOOLED.get(key)
    if cached is None:
        try:
            cached = _spool(path, where, json=json)
        except InputFileError as exc:
            cached = exc
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):  # read once; a device can be read again
            _SPOOLED[key] = cached
    if isinstance(cached, InputFileError):
        raise cached
    return cached


def _spool(path: Path, where: str, *, json: bool = False) -> Path:
    """Copy a pipe or device into a temporary file, within the input timeout and size limit."""
    limits = current_limits()
    deadline = time.monotonic() + limits.input_timeout
    try:
        # O_NONBLOCK: opening a FIFO that has no writer yet must not block (reads then return EOF until one
        # connects; we keep polling until the deadline).
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # (Windows has no FIFOs to wait on)
    except OSError as exc:
        raise InputFileError(f"{where}: cannot read: {exc.strerror or exc}") from None
    target = Path(tempfile.mkstemp(dir=_spool_dir(), suffix=Path(where).suffix)[1])
    total = 0
    try:
        with open(target, "wb") as out:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise InputFileError(
                        f"{where}: no end of input after {limits.input_timeout:g}s (a pipe whose writer never "
                        f"finished?); set {variable('input_timeout')} to wait longer")
                if _POLLABLE:
                    ready, _, _ = select.select([fd], [], [], min(left, 0.2))
                    if not ready:
                        continue
                try:
                    chunk = os.read(fd, _CHUNK)
                except BlockingIOError:
                    continue
                if not chunk:
                    if total == 0 and _fifo_without_writer(path):
                        time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
                        continue
                    break
                if json and total < 64:
                    check_json_start(chunk, where)
                if total == 0 and b"\0" in chunk:  # no input we read (JSON, YAML) contains NUL bytes
                    raise InputFileError(f"{where}: binary data (NUL bytes), expected text")
                total += len(chunk)
                if total > limits.max_input_bytes:
                    raise _too_large(where, limits.max_input_bytes)
                out.write(chunk)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)
    return target


def _fifo_without_writer(path: Path) -> bool:
    """A FIFO reads EOF before its writer connects: keep waiting for one (until the input timeout)."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


# -- JSON shape checks -------------------------------------------------------------------------------

_BOM = b"\xef\xbb\xbf"
_WHITESPACE = b" \t\r\n"


def check_json_start(head: bytes, where: str) -> None:
    """Raise ``InputFileError`` unless ``head`` (the first bytes of a file) can start a JSON document."""
    text = head.removeprefix(_BOM).lstrip(_WHITESPACE)
    if not text:
        return  # empty or blank so far: the readers say "empty file"
    if text[:1] not in (b"{", b"["):
        if text.startswith((b"\xff\xfe", b"\xfe\xff")) or head.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise InputFileError(f"{where}: UTF-16 text, expected UTF-8 JSON")
        shown = text[:16]
        raise InputFileError(f"{where}: not JSON: it starts with {shown!r}, expected '{{' or '['")


class JsonDepthGuard:
    """A binary file wrapper that refuses JSON nested deeper than the limit, at C speed per chunk.

    ijson builds a prefix string per nesting level, so a document nested 100k deep costs it memory
    quadratic in the depth: the guard stops it first. Per chunk, brackets are kept
    (``bytes.translate``) and adjacent ``[]``/``{}`` pairs removed until none is left (one pass per
    level of nesting inside the chunk); what remains are the chunk's unmatched closers and openers,
    which carry the depth to the next chunk. Brackets inside strings count too (they balance in any
    real text), so the bound is conservative.
    """

    _DELETE = bytes(b for b in range(256) if b not in b"[]{}")

    def __init__(self, raw: Any, where: str, limit: Optional[int] = None) -> None:
        self._raw = raw
        self._where = where
        self._limit = limit or current_limits().max_json_depth
        self._depth = 0

    def read(self, size: int = -1) -> bytes:
        """Read from the wrapped file (only ``read``: a ``readinto`` would bypass the check)."""
        chunk: bytes = self._raw.read(size)
        if chunk:
            self._check(chunk)
        return chunk

    def _check(self, chunk: bytes) -> None:
        brackets = chunk.translate(None, self._DELETE)
        passes = 0
        while True:
            reduced = brackets.replace(b"[]", b"").replace(b"{}", b"")
            if len(reduced) == len(brackets):
                break
            brackets = reduced
            passes += 1
            if self._depth + passes > self._limit:
                self._fail()
        depth, peak = self._depth, self._depth
        for byte in brackets:
            depth += 1 if byte in (0x5B, 0x7B) else -1
            peak = max(peak, depth)
            if peak + passes > self._limit:
                self._fail()
        self._depth = max(depth, 0)

    def _fail(self) -> None:
        raise InputFileError(f"{self._where}: JSON nested deeper than {self._limit} levels; "
                             f"set {variable('max_json_depth')} to allow more (at most 1000)")
