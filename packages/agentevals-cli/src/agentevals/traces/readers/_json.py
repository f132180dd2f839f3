"""Parse a JSON file (or JSON-lines file) with positions in every error message."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Optional

from ...core._files import JsonDepthGuard, read_input
from ...errors import InputFileError

_loads: Callable[[bytes | str], Any]
try:  # orjson is much faster on large exports; the stdlib gives the same results.
    import orjson

    _loads = orjson.loads
except ImportError:  # pragma: no cover
    _loads = json.loads

__all__ = ["load_json_documents", "load_json_file", "raise_syntax_error"]


def _position(text: bytes, pos: int) -> tuple[int, int]:
    line = text.count(b"\n", 0, pos) + 1
    return line, pos - (text.rfind(b"\n", 0, pos) + 1) + 1


def load_json_file(path: Path, *, source: Optional[str] = None) -> Any:
    """One JSON document; ``InputFileError`` names the file and the line/column of a syntax error."""
    return next(iter(load_json_documents(path, allow_lines=False, source=source)))


def load_json_documents(path: Path, *, allow_lines: bool = True, source: Optional[str] = None) -> Iterator[Any]:
    """Yield the document in a JSON file, or each line of a JSON-lines file (OTLP file exporter).

    ``source`` is the name messages use (default: ``path``). The input size and nesting limits apply
    (``agentevals.core.limits``).
    """
    where = source if source is not None else str(path)
    data = read_input(path, where, expected="a JSON file", json=True)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputFileError(f"{where}: UTF-16 text, expected UTF-8 JSON")
    data = data.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte order mark (Windows editors) is not content
    if not data.strip():
        raise InputFileError(f"{where}: empty file, expected JSON")
    JsonDepthGuard(None, where)._check(data)
    try:
        yield _loads(data)
        return
    except ValueError as exc:
        first_error = exc
    if allow_lines and data.lstrip().startswith(b"{") and b"\n" in data.strip():
        docs = _json_lines(where, data)
        if docs is not None:
            yield from docs
            return
    raise_syntax_error(where, data, data)
    raise InputFileError(f"{where}: invalid JSON: {first_error}")


def _json_lines(where: str, data: bytes) -> list[Any] | None:
    """The documents of a JSON-lines file, or None when ``data`` is not one (its first line is not a document).

    Once the first line is a whole document, a line that does not parse is reported with its own number.
    """
    offset, docs = 0, []
    for raw in data.splitlines(keepends=True):
        line = raw.strip()
        if line:
            try:
                docs.append(_loads(line))
            except ValueError:
                if not docs:
                    return None
                raise_syntax_error(where, data, raw, offset=offset)
                raise
        offset += len(raw)
    return docs if len(docs) > 1 else None


def raise_syntax_error(where: str | Path, data: bytes, chunk: bytes, *, offset: int = 0) -> None:
    """Raise ``InputFileError`` with the file's line and column of the first syntax error in ``chunk``."""
    try:
        json.loads(chunk)
    except json.JSONDecodeError as exc:
        pos = offset + len(exc.doc[: exc.pos].encode("utf-8"))  # the error position counts characters, not bytes
        line, col = _position(data, pos)
        truncated = " (file looks truncated)" if pos >= len(data.rstrip()) - 1 else ""
        raise InputFileError(f"{where}:{line}:{col}: invalid JSON: {exc.msg}{truncated}") from None
    except UnicodeDecodeError:
        raise InputFileError(f"{where}: not UTF-8 text, expected JSON") from None
    except RecursionError:
        raise InputFileError(f"{where}: JSON nested too deeply to read") from None
