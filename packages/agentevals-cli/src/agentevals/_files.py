"""Reading input files (traces, eval sets, EVAL.yaml suites) with one-line errors that name the file."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from .errors import InputFileError

__all__ = ["read_input"]


def read_input(path: Path, source: Optional[str] = None, *, expected: str = "a file") -> bytes:
    """The bytes of ``path``; ``InputFileError`` (``<source>: no such file`` …) when it cannot be read."""
    where = source if source is not None else str(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputFileError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise InputFileError(f"{where}: is a directory, expected {expected}") from None
    except OSError as exc:
        raise InputFileError(f"{where}: cannot read: {exc.strerror or exc}") from None
