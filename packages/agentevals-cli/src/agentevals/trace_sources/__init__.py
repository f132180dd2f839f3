"""Where traces come from: every input (a file, a glob, an http(s) URL, an in-memory trace, a backend's
query URI) becomes a trace stream through one function, ``resolve``, behind ``run``, ``serve``, the Python
API, MCP and the Ray reader alike.

Each kind of input is a ``TraceSource`` (one module, one line in ``TRACE_SOURCES``; third-party sources come
from the entry-point group ``agentevals.trace_sources``, read by URI scheme: ``demo://…`` or
``demo+http://…``).

Example:
    ```python
    from agentevals.trace_sources import load_traces

    traces, errors = load_traces(["traces/helm.json", "logs.json"])
    ```
"""

from __future__ import annotations

from .base import ReadContext, TraceInput, TraceSource
from .resolve import (
           TRACE_SOURCES,
           expand_globs,
           is_conversion_error,
           iter_traces,
           load_traces,
           resolve,
           source_for,
           uri_sources,
)

__all__ = ["TRACE_SOURCES", "ReadContext", "TraceInput", "TraceSource", "expand_globs", "is_conversion_error",
           "iter_traces", "load_traces", "resolve", "source_for", "uri_sources"]
