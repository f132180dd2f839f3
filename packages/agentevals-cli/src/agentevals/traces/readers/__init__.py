"""Trace readers: files → ``Trace`` iterators. Formats are detected from content, or forced with ``format``.

    for trace in read_traces("helm.json"):          # Jaeger JSON, OTLP JSON, Tempo export, OTLP JSON lines
        ...
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator, Literal, Optional

from ...errors import InputFileError
from ..model import Trace
from ._json import load_json_documents
from .jaeger import read_jaeger
from .otlp import read_otlp

__all__ = ["FORMATS", "TraceFormat", "detect_format", "read_traces"]

TraceFormat = Literal["jaeger-json", "otlp-json"]

FORMATS: dict[str, Callable[[Any, str], Iterator[Trace]]] = {
    "jaeger-json": read_jaeger,
    "otlp-json": read_otlp,
}


def detect_format(document: Any) -> Optional[str]:
    """The format of a parsed JSON document, or None."""
    if isinstance(document, dict):
        if "resourceSpans" in document or "batches" in document or "resource_spans" in document:
            return "otlp-json"
        data = document.get("data")
        if isinstance(data, list) and (not data or isinstance(data[0], dict) and "spans" in data[0]):
            return "jaeger-json"
        if "spans" in document and "traceID" in document:
            return "jaeger-json"
    if isinstance(document, list) and document and isinstance(document[0], dict) and "traceID" in document[0]:
        return "jaeger-json"
    return None


def read_traces(path: str | Path, *, format: Optional[str] = None) -> Iterator[Trace]:
    """Yield the traces in one file. Raises ``InputFileError`` naming the file for anything unreadable."""
    source = str(path)
    for document in load_json_documents(Path(path)):
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
        if fmt not in FORMATS:
            raise InputFileError(f"{source}: unknown trace format '{fmt}'; known: {', '.join(FORMATS)}")
        yield from FORMATS[fmt](document, source)
