"""Streaming reads of large Jaeger and OTLP/Tempo files: one trace at a time, never the whole document.

Files above ``STREAM_THRESHOLD`` bytes whose top level is ``{"data": [...]}`` (Jaeger) or
``{"resourceSpans" | "resource_spans" | "batches": [...]}`` (OTLP, Tempo) are read with ijson's C backend,
one array element at a time; smaller files, and anything else (JSON lines, a bare list, a logs file, a
file whose first array key comes after a nested value), keep the whole-file path (orjson), which is faster.

- **Jaeger**: each ``data`` element is one trace; it is converted to a ``Trace`` and dropped.
- **OTLP/Tempo**: a trace's spans may be spread over several batches, and the whole-file reader yields
  traces in first-seen order with their spans in file order. So a first streaming pass keeps only, per
  trace id, the index of the last batch holding one of its spans; the second pass groups spans by trace
  id and yields a trace once its last batch has been read and every trace first seen before it has been
  yielded. Memory is bounded by the traces that are open at the same time (for exports written trace by
  trace, one), at the price of parsing the file twice.

The output is the whole-file path's: same traces, same order, same messages. A span that cannot be read
raises the same one-line ``InputFileError`` (``file: data[3].spans[0] has no 'traceID'``). A syntax error
(a truncated file) re-reads the file with the stdlib parser to name the line and column exactly as the
whole-file path does: that costs the memory the whole-file path would, on the error path only.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ...core._files import JsonDepthGuard
from ...errors import InputFileError, first_line
from ..model import Span, Trace
from ._json import raise_syntax_error
from ._position import ReadPosition
from .jaeger import read_jaeger_trace
from .otlp import batch_spans, batch_trace_ids

__all__ = ["STREAM_THRESHOLD", "Fallback", "StreamPlan", "plan_stream", "stream_traces"]

STREAM_THRESHOLD = 8 * 2**20
"""Files larger than this (bytes) are streamed; tests set it to 0 to stream every file."""

_BOM = b"\xef\xbb\xbf"
_OTLP_KEYS = ("resourceSpans", "resource_spans", "batches")
_CHUNK = 1 << 20


class Fallback(Exception):
    """Raised before any trace is yielded: the file is not what the stream expected; read it whole."""


@dataclass(frozen=True)
class StreamPlan:
    format: str
    """``jaeger-json`` or ``otlp-json``."""
    key: str
    """The top-level key holding the array: ``data``, ``resourceSpans``, ``resource_spans`` or ``batches``."""


def plan_stream(path: Path, format: Optional[str], source: Optional[str] = None) -> Optional[StreamPlan]:
    """How to stream ``path``, or None to read it whole (small, not streamable, or unreadable)."""
    try:
        if path.stat().st_size <= STREAM_THRESHOLD or not path.is_file():
            return None
        import ijson
    except (OSError, ImportError):  # unreadable files get the whole-file path's message
        return None
    try:
        with path.open("rb") as f:
            head = f.read(4)
            if head.startswith((b"\xff\xfe", b"\xfe\xff")) or _looks_like_json_lines(f):
                return None
            f.seek(len(_BOM) if head.startswith(_BOM) else 0)
            key = _array_key(ijson.parse(JsonDepthGuard(f, source or str(path))))
    except (OSError, ijson.JSONError, UnicodeDecodeError):
        return None
    if key is None:
        return None
    fmt = "jaeger-json" if key == "data" else "otlp-json"
    if format is not None and format != fmt:
        return None
    return StreamPlan(format=fmt, key=key)


def stream_traces(path: Path, source: str, plan: StreamPlan, *, detect: bool,
                  position: Optional[ReadPosition] = None) -> Iterator[Trace]:
    """Yield the traces of a planned file. ``detect``: raise ``Fallback`` when the first Jaeger element
    is not a trace (format detection would not call the file Jaeger). ``position``: the byte offset
    reached, as a fraction of the file, before each trace."""
    if plan.format == "jaeger-json":
        for t_index, entry in enumerate(_items(path, "data.item", source, position)):
            if t_index == 0 and detect and not (isinstance(entry, dict) and "spans" in entry):
                raise Fallback
            yield read_jaeger_trace(entry, source, t_index)
        return
    prefix = f"{plan.key}.item"
    last: dict[str, int] = {}
    for b, batch in enumerate(_items(path, prefix, source)):
        for trace_id in batch_trace_ids(batch):
            last[trace_id] = b
    pending: dict[str, list[Span]] = {}  # open traces, in first-seen order
    for b, batch in enumerate(_items(path, prefix, source, position)):
        for span in batch_spans(batch, f"{source}: {plan.key}[{b}]"):
            pending.setdefault(span.trace_id, []).append(span)
        while pending and last.get(next(iter(pending)), -1) <= b:
            trace_id = next(iter(pending))
            yield Trace(trace_id=trace_id, spans=pending.pop(trace_id), source=source)
    for trace_id, spans in pending.items():  # only when the file changed between the passes
        yield Trace(trace_id=trace_id, spans=spans, source=source)


def _items(path: Path, prefix: str, source: str, position: Optional[ReadPosition] = None) -> Iterator[Any]:
    """The elements at ``prefix`` (numbers as int/float, like orjson); a syntax error is one line."""
    import ijson

    size = max(1, path.stat().st_size)
    with path.open("rb") as f:
        if f.read(len(_BOM)) != _BOM:
            f.seek(0)
        items = ijson.items(JsonDepthGuard(f, source), prefix, use_float=True)
        while True:
            try:
                item = next(items)
            except StopIteration:
                return
            except (ijson.JSONError, UnicodeDecodeError) as exc:
                _syntax_error(path, source, exc)
            if position is not None:  # ijson reads ahead by one buffer (64 KiB): close enough in a large file
                position.fraction = min(1.0, f.tell() / size)
            yield item


def _syntax_error(path: Path, source: str, exc: Exception) -> None:
    """Raise the whole-file path's message for the first syntax error in ``path``."""
    data = path.read_bytes().removeprefix(_BOM)
    raise_syntax_error(source, data, data)
    del data
    raise InputFileError(f"{source}: invalid JSON: {first_line(exc)}")


def _array_key(events: Iterator[tuple[str, str, Any]]) -> Optional[str]:
    """The first top-level key whose value is an array, when it is a trace array and only scalars precede it."""
    if next(events, (None, None, None))[1] != "start_map":
        return None
    for prefix, event, value in events:
        if prefix == "" and event == "map_key":
            _, kind, _ = next(events, (None, None, None))
            if kind == "start_array":
                return value if value == "data" or value in _OTLP_KEYS else None
            if kind in ("start_map", None):
                return None  # a nested value first: not worth walking in Python
        else:
            return None
    return None


def _looks_like_json_lines(f: Any) -> bool:
    """True when the first non-blank line ends with ``}`` and more text follows: JSON lines (the OTLP
    file exporter), which the whole-file path reads document by document. Reads up to the first line's end."""
    f.seek(0)
    last = b""  # the last non-blank byte of the current line
    chunk = f.read(_CHUNK)
    while chunk:
        newline = chunk.find(b"\n")
        line = chunk if newline < 0 else chunk[:newline]
        if line.strip():
            last = line.rstrip()[-1:]
        if newline < 0:
            chunk = f.read(_CHUNK)
            continue
        if last == b"}":
            rest = chunk[newline + 1:]
            while not rest.strip():
                rest = f.read(_CHUNK)
                if not rest:
                    return False
            return True
        if last:
            return False
        chunk = chunk[newline + 1:] or f.read(_CHUNK)
    return False
