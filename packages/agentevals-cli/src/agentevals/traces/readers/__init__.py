"""Trace readers: files → ``Trace`` iterators. Formats are detected from content, or forced with ``format``.

    for trace in read_traces("helm.json"):          # Jaeger JSON, OTLP JSON, Tempo export, OTLP JSON lines
        ...

Large Jaeger and OTLP/Tempo files are streamed, one trace at a time (see ``_stream``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Optional

from ...core._files import regular_path
from ...errors import ConfigError, InputFileError
from ..formats import TRACE_FORMATS
from ..model import Trace
from . import _stream
from ._json import load_json_documents
from ._position import ReadPosition
from .otlp_logs import (
    LogEvents,
    add_log_events,
    attach_log_events,
    is_logs_document,
    is_logs_file,
    read_log_events,
)

__all__ = ["FORMATS", "LogEvents", "ReadPosition", "TraceFormat", "attach_log_events", "detect_format", "is_logs_file",
           "read_log_events", "read_traces"]

TraceFormat = Literal["jaeger-json", "otlp-json"]

FORMATS = TRACE_FORMATS
"""Deprecated alias of ``agentevals.traces.formats.TRACE_FORMATS`` (the registry of trace formats)."""


def detect_format(document: Any) -> Optional[str]:
    """The format of a parsed JSON document, or None."""
    if isinstance(document, dict):
        if "resourceSpans" in document or "batches" in document or "resource_spans" in document:
            return "otlp-json"
        data = document.get("data")
        if isinstance(data, list) and (not data or (isinstance(data[0], dict) and "spans" in data[0])):
            return "jaeger-json"
        if "spans" in document and "traceID" in document:
            return "jaeger-json"
    if isinstance(document, list) and document and isinstance(document[0], dict) and "traceID" in document[0]:
        return "jaeger-json"
    return None


def read_traces(
    path: str | Path, *, format: Optional[str] = None, log_events: Optional[LogEvents] = None,
    position: Optional[ReadPosition] = None,
) -> Iterator[Trace]:
    """Yield the traces in one file. Raises ``InputFileError`` naming the file for anything unreadable.

    An OTLP logs file (``{"resourceLogs": …}``) yields no trace: when ``log_events`` is given its
    records are added there (to be attached to their spans with ``attach_log_events``), else it is an error.
    Jaeger and OTLP files above ``_stream.STREAM_THRESHOLD`` bytes are streamed one trace at a time.
    ``position``, when given, tells how far through the file each yielded trace is (see ``ReadPosition``).
    """
    source = str(path)
    path = regular_path(path, source, expected="a trace file", json=True)  # a pipe: its temporary copy
    plan = _stream.plan_stream(Path(path), format, source)
    if plan is None:
        yield from _read_whole(path, source, format, log_events, position)
        return
    found = fallback = False
    try:
        for trace in _stream.stream_traces(Path(path), source, plan, detect=format is None, position=position):
            found = True
            yield trace
    except _stream.Fallback:  # raised before any trace: the whole-file path says what the file is
        fallback = True
    except (AttributeError, KeyError, TypeError, ValueError) as exc:  # a shape no reader check foresaw
        raise InputFileError(f"{source}: unexpected {plan.format} structure: {type(exc).__name__}: {exc}") from None
    if fallback:
        yield from _read_whole(path, source, format, log_events, position)
    elif not found:
        raise InputFileError(f"{source}: no spans in the file")


def _read_whole(path: str | Path, source: str, format: Optional[str], log_events: Optional[LogEvents],
                position: Optional[ReadPosition] = None) -> Iterator[Trace]:
    """Parse the whole file (orjson), then read its documents."""
    found = False
    documents = list(load_json_documents(Path(path), source=source))  # parsed at once: the count is free
    for d, document in enumerate(documents):
        if is_logs_document(document) and format is None:
            if log_events is None:
                raise InputFileError(f"{source}: an OTLP logs file, not a trace file: pass it with its traces")
            add_log_events(document, source, log_events)
            found = True
            continue
        fmt = format or detect_format(document)
        if fmt is None and isinstance(document, dict) and ("eval_cases" in document or "evalCases" in document):
            raise InputFileError(f"{source}: this is an ADK eval set, not a trace file: pass it with -e/--eval-set")
        if fmt is None:
            keys = ", ".join(list(document)[:5]) if isinstance(document, dict) else type(document).__name__
            raise InputFileError(
                f"{source}: not a trace file: expected Jaeger JSON ({{\"data\": [...]}}) or OTLP JSON "
                f"({{\"resourceSpans\": [...]}} or a Tempo {{\"batches\": [...]}}), found {keys or 'an empty object'}"
                " (use -f/--format to force one)"
            )
        try:
            reader = TRACE_FORMATS.get(fmt)
        except ConfigError as exc:  # unknown, or a plugin that cannot be loaded
            raise InputFileError(f"{source}: {exc}") from None
        try:
            traces = reader.read(document, source)
            for trace in traces if position is None else _counted(traces, _count(document, fmt), d,
                                                                   len(documents), position):
                found = True
                yield trace
        except (AttributeError, KeyError, TypeError, ValueError) as exc:  # a shape no reader check foresaw
            raise InputFileError(f"{source}: unexpected {fmt} structure: {type(exc).__name__}: {exc}") from None
    if not found:
        raise InputFileError(f"{source}: no spans in the file")


def _count(document: Any, fmt: str) -> int:
    """How many traces a parsed document holds, roughly (enough to tell how far through it a reader is)."""
    if fmt == "jaeger-json":
        entries = document.get("data") if isinstance(document, dict) else document
        return len(entries) if isinstance(entries, list) else 1
    from .otlp import batch_trace_ids, batches_key

    batches = document.get(batches_key(document)) if isinstance(document, dict) else None
    if not isinstance(batches, list):
        return 1
    return len(set().union(*map(batch_trace_ids, batches))) if batches else 1


def _counted(traces: Iterator[Trace], count: int, document: int, documents: int,
             position: ReadPosition) -> Iterator[Trace]:
    """``traces`` (document ``document`` of ``documents``), setting ``position`` before each one."""
    for i, trace in enumerate(traces):
        position.fraction = min(1.0, (document + min(1.0, (i + 1) / max(count, 1))) / documents)
        yield trace
