"""Trace file formats (``-f/--format``, the config's ``trace_format``), registered by name.

Built in: ``jaeger-json`` and ``otlp-json`` (both also detected from content). A third-party format is a
``TraceFileFormat`` subclass in the ``agentevals.trace_formats`` entry-point group; it reads the files'
parsed JSON documents and is used when asked for by name (``-f acme``).

Example:
    ```python
    class AcmeFormat(TraceFileFormat):
        name = "acme"

        def read(self, document: Any, source: str) -> Iterator[Trace]:
            for raw in document["acme_traces"]:
                yield Trace(trace_id=raw["id"], spans=[...], source=source)
    ```

    ``[project.entry-points."agentevals.trace_formats"] acme = "acme_traces:AcmeFormat"``
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from ..core._registry import Registry

if TYPE_CHECKING:
    from .model import Trace

__all__ = ["TRACE_FORMATS", "TraceFileFormat"]


class TraceFileFormat(abc.ABC):
    """Reads one parsed JSON document of its format into traces."""

    name: ClassVar[str]
    """Registry key, entry-point name and ``-f/--format`` value."""
    aliases: ClassVar[tuple[str, ...]] = ()

    @abc.abstractmethod
    def read(self, document: Any, source: str) -> Iterator[Trace]:
        """Yield the traces of ``document`` (read from ``source``); raise ``InputFileError`` (one line) on bad input."""


TRACE_FORMATS: Registry[TraceFileFormat] = Registry(
    "trace format",
    "agentevals.trace_formats",
    {
        "jaeger-json": "agentevals.traces.readers.jaeger:JaegerJsonFormat",
        "otlp-json": "agentevals.traces.readers.otlp:OtlpJsonFormat",
    },
    base=TraceFileFormat,
    instantiate=True,
)
"""Format name → ``TraceFileFormat`` instance."""
