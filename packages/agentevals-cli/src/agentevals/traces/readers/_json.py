"""Parse a JSON file (or JSON-lines file) with positions in every error message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from ...errors import InputFileError

try:  # orjson is much faster on large exports; the stdlib gives the same results.
    import orjson

    _loads = orjson.loads
except ImportError:  # pragma: no cover
    _loads = json.loads

__all__ = ["load_json_documents", "load_json_file"]


def _position(text: bytes, pos: int) -> tuple[int, int]:
    line = text.count(b"\n", 0, pos) + 1
    return line, pos - (text.rfind(b"\n", 0, pos) + 1) + 1


def load_json_file(path: Path) -> Any:
    """One JSON document; ``InputFileError`` names the file and the line/column of a syntax error."""
    return next(iter(load_json_documents(path, allow_lines=False)))


def load_json_documents(path: Path, *, allow_lines: bool = True) -> Iterator[Any]:
    """Yield the document in a JSON file, or each line of a JSON-lines file (OTLP file exporter)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputFileError(f"{path}: is a directory, expected a JSON file") from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not data.strip():
        raise InputFileError(f"{path}: empty file, expected JSON")
    try:
        yield _loads(data)
        return
    except ValueError as exc:
        first_error = exc
    if allow_lines and data.lstrip().startswith(b"{") and b"\n" in data.strip():
        lines = [line for line in data.splitlines() if line.strip()]
        try:
            docs = [_loads(line) for line in lines]
        except ValueError:
            docs = None
        if docs and len(docs) > 1:
            yield from docs
            return
    try:
        json.loads(data)
    except json.JSONDecodeError as exc:
        line, col = _position(data, exc.pos)
        truncated = " (file looks truncated)" if exc.pos >= len(data.rstrip()) - 1 else ""
        raise InputFileError(f"{path}:{line}:{col}: invalid JSON: {exc.msg}{truncated}") from None
    except UnicodeDecodeError:
        raise InputFileError(f"{path}: not UTF-8 text, expected JSON") from None
    raise InputFileError(f"{path}: invalid JSON: {first_error}")
