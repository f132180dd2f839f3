"""Inputs → one stream of converted traces: the one reading path of ``run``, ``serve``, the Python API, MCP
and the Ray reader.

Example:
    ```python
    for item, fraction in resolve(["traces/*.json", "logs.json", "https://host/t.json"]):
        ...   # a ConvertedTrace or an InputError, in input order; fraction = how much has been read
    ```
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Optional, Union

from ..core._registry import Registry
from ..errors import AgentevalsError, ConfigError, InputFileError
from ..results import InputError
from ..traces._collect import PackedTrace, convert_into
from ..traces.model import ConvertedTrace, Trace
from ..traces.readers import ReadPosition
from .base import ReadContext, TraceInput, TraceSource

__all__ = ["TRACE_SOURCES", "expand_globs", "iter_traces", "load_traces", "resolve", "source_for", "uri_sources"]

TRACE_SOURCES: Registry[type[TraceSource]] = Registry("trace source", "agentevals.trace_sources", {
    "files": "agentevals.trace_sources.files:FileSource",  # also `file` (its class's aliases)
    "http": "agentevals.trace_sources.http:HttpSource",  # also `https`
    "jaeger": "agentevals.trace_sources.jaeger:JaegerSource",
    "langfuse": "agentevals.trace_sources.langfuse:LangfuseSource",
    "memory": "agentevals.trace_sources.memory:MemorySource",
    "mlflow": "agentevals.trace_sources.mlflow:MlflowSource",
    "phoenix": "agentevals.trace_sources.phoenix:PhoenixSource",
    "tempo": "agentevals.trace_sources.tempo:TempoSource",
}, base=TraceSource)
"""Source name (the scheme of its URIs) → ``TraceSource`` class; entry-point group ``agentevals.trace_sources``."""


def expand_globs(patterns: Iterable[str]) -> list[str]:
    """Expand quoted globs (``'traces/*.json'``); plain names (and globs matching nothing) pass through so
    that a missing file is reported."""
    out: list[str] = []
    for pattern in patterns:
        if "://" not in pattern and any(ch in pattern for ch in "*?[") and not os.path.exists(pattern):
            out.extend(sorted(glob.glob(pattern, recursive=True)) or [pattern])
        else:
            out.append(pattern)
    return out


def source_for(item: TraceInput) -> TraceSource:
    """The source that reads ``item``: a ``TraceSource`` as it is; a ``Trace`` or ``ConvertedTrace`` in
    memory; a URI by its scheme (``name://…`` or ``name+transport://…``: the source registered as ``name``);
    anything else as a file path. An unknown scheme raises ``ConfigError`` naming the known ones."""
    if isinstance(item, TraceSource):
        return item
    if isinstance(item, (Trace, ConvertedTrace)):
        return TRACE_SOURCES.get("memory")(item)
    text = str(item)
    scheme, sep, _ = text.partition("://")
    if isinstance(item, str) and sep and scheme and "/" not in scheme:
        return TRACE_SOURCES.get(scheme.split("+", 1)[0].lower())(item)
    return TRACE_SOURCES.get("files")(item)


def uri_sources(inputs: Iterable[TraceInput]) -> Iterator[tuple[str, Optional[TraceSource]]]:
    """Each URI among ``inputs`` (``scheme://…``, or a ``TraceSource`` given as an object) with the source that
    reads it, ``None`` when none takes it (an unknown scheme, a bad parameter, credentials in the URI: that
    input's error is the run's to report). Paths and in-memory traces are skipped. Nothing is read."""
    for item in inputs:
        if isinstance(item, TraceSource):
            yield item.label, item
        elif isinstance(item, str) and "://" in item:
            try:
                yield item, source_for(item)
            except AgentevalsError:  # ConfigError for a bad URI, or a source's own refusal
                yield item, None


def resolve(inputs: Sequence[TraceInput], *, trace_format: Optional[str] = None, keep_spans: bool = True,
            workers: int = 1, context: Optional[ReadContext] = None
            ) -> Iterator[tuple[Union[ConvertedTrace, InputError], float]]:
    """Read and convert every input, yielding each converted trace (or an input's error) in input order,
    with how far the reading has got through all the inputs (0 to 1; a file weighs its size in bytes).

    Every input is prepared before any is read: OTLP log records, in a logs file anywhere among the inputs
    (or an http(s) URL serving one), reach every trace they belong to. Large files stay streamed. With
    ``workers`` > 1, large Jaeger files are converted by that many processes. ``context``, when given, is
    used instead of one made from those arguments: the caller sets ``since``/``watermarks`` and reads
    ``windows`` (what each pull source read) afterwards.
    """
    ctx = context or ReadContext(trace_format=trace_format, keep_spans=keep_spans, workers=workers)
    sources: list[Union[TraceSource, InputError]] = []
    for item in [x for given in inputs for x in (expand_globs([given]) if isinstance(given, str) else [given])]:
        try:
            sources.append(source_for(item))
        except ConfigError as exc:  # an unknown scheme: this input's error, the others are read
            sources.append(InputError(source=str(item), error=f"{item}: {exc}"))
    try:
        for source in sources:
            if isinstance(source, TraceSource):
                source.prepare(ctx)
        weights = [source.weight() if isinstance(source, TraceSource) else 1 for source in sources]
        total = sum(weights) or 1
        ctx.total_weight = total
        before = 0  # the weight of the inputs before this one
        for source, weight in zip(sources, weights, strict=True):
            if isinstance(source, InputError):
                before += weight
                yield source, before / total
                continue
            position = ReadPosition()
            try:
                for converted in source.read(ctx, position):
                    if ctx.skip_trace is not None and not source.skips_traces \
                            and isinstance(converted, (ConvertedTrace, PackedTrace)) and ctx.skip_trace(converted.trace_id):
                        ctx.skipped += 1
                        continue
                    if ctx.sessions is not None and (session := getattr(converted, "session_id", None)):
                        counts = ctx.sessions.setdefault(source.label, {})
                        counts[session] = counts.get(session, 0) + 1
                    yield converted, (before + position.fraction * weight) / total
            except InputFileError as exc:
                yield InputError(source=source.label, error=str(exc)), (before + weight) / total
            before += weight
    finally:
        for source in sources:
            if isinstance(source, TraceSource):
                source.close()


def iter_traces(inputs: Sequence[TraceInput], *, trace_format: Optional[str] = None, keep_spans: bool = True,
                workers: int = 1) -> Iterator[Union[ConvertedTrace, InputError]]:
    """``resolve`` without the reading positions."""
    for item, _ in resolve(inputs, trace_format=trace_format, keep_spans=keep_spans, workers=workers):
        yield item


def load_traces(
    inputs: Iterable[TraceInput], *, trace_format: Optional[str] = None, keep_spans: bool = True
) -> tuple[list[ConvertedTrace], list[InputError]]:
    """Every input read and converted (``resolve``), as lists: the traces, then the errors (inputs that
    could not be read, in input order, then traces that could not be converted). Never raises for bad
    input; with ``keep_spans=False`` the raw spans are dropped (``ConvertedTrace.trace = None``).

    Unlike the stream, which has already handed them on, a file that fails partway contributes its error
    only, none of the traces read before the failure (a whole answer: serve's ``/api/convert``)."""
    traces: list[ConvertedTrace] = []
    errors: list[InputError] = []
    inputs = list(inputs)
    in_memory = [item for item in inputs if isinstance(item, Trace)]
    if len(in_memory) == len(inputs):
        # Spans already in memory (serve's sessions, a few per call): no input to prepare or read, no log
        # records to join, so each trace is converted as ``MemorySource`` would, without the reading path's
        # set-up per call (a tenth of a live session's CPU). Errors are all conversion errors, in order.
        for trace in in_memory:
            convert_into(trace, {}, keep_spans, traces, errors)
        return traces, errors
    start = 0  # where the current input's traces begin in ``traces`` (an input's traces share its source)
    for item in iter_traces(inputs, trace_format=trace_format, keep_spans=keep_spans):
        if isinstance(item, InputError):
            if not is_conversion_error(item) and traces and traces[-1].source == item.source:
                del traces[start:]  # the failed input's own traces (they follow ``start``)
            errors.append(item)
            continue
        if not traces or traces[-1].source != item.source:
            start = len(traces)
        traces.append(item)
    return traces, sorted(errors, key=is_conversion_error)


def is_conversion_error(error: InputError) -> bool:
    """An error of one trace that could not be converted (not of an input that could not be read)."""
    return error.error.startswith(f"{error.source}: trace ")
