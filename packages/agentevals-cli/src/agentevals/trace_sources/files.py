"""Trace files (Jaeger JSON, OTLP JSON, Tempo exports, JSON lines; pipes too) and OTLP logs files.

A file is opened one of three ways, chosen here and nowhere else: a large Jaeger file is converted by
``ReadContext.workers`` processes; another streamed file yields trace by trace; a file read whole is
converted once it has been read. A file that holds OTLP log records (``{"resourceLogs": …}``, sniffed from
its first bytes, or a ``"resourceLogs"`` key anywhere in a regular file) is read whole in ``prepare``, before
any trace is converted, so its records reach every trace of the run whatever its place among the inputs.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import ClassVar, Optional, Union

from ..errors import InputFileError
from ..results import InputError
from ..traces._collect import convert_for_worker, convert_into, pack_for_worker
from ..traces.model import ConvertedTrace, Trace
from ..traces.readers import ReadPosition, _parallel, _stream, is_logs_file, read_traces
from .base import ReadContext, TraceSource

__all__ = ["FileSource", "mentions_logs"]

log = logging.getLogger(__name__)

_LOGS_KEYS = (b'"resourceLogs"', b'"resource_logs"')
_SCAN_BLOCK = 1 << 20
_NO_LOGS = re.compile(rb'\A\s*\{\s*"(data|batches)"\s*:')
"""A Jaeger (``{"data": …}``) or Tempo (``{"batches": …}``) export: spans only, never OTLP log records."""


def mentions_logs(path: Union[str, Path]) -> bool:
    """Whether ``path`` holds OTLP log records: its first bytes say so (``is_logs_file``), or, for a regular
    file, a ``"resourceLogs"`` key appears anywhere in it (JSON lines mixing spans and logs). A byte search,
    1 MiB at a time: a small fraction of the cost of parsing the file, and no memory kept."""
    if is_logs_file(path):
        return True
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
            return False  # a pipe or device is read once, by its reader (opening a FIFO again could block)
        overlap = max(map(len, _LOGS_KEYS)) - 1
        with open(path, "rb") as f:
            if _NO_LOGS.match(f.read(256)):  # the common large input: no need to read it twice
                return False
            f.seek(0)
            tail = b""
            while block := f.read(_SCAN_BLOCK):
                window = tail + block
                if any(key in window for key in _LOGS_KEYS):
                    return True
                tail = window[-overlap:]
    except (OSError, ValueError):
        return False
    return False


class FileSource(TraceSource):
    """A path (``str`` or ``Path``); quoted globs are expanded by ``resolve``."""

    name: ClassVar[str] = "files"
    aliases: ClassVar[tuple[str, ...]] = ("file",)
    skips_traces: ClassVar[bool] = True  # a large Jaeger file's before parsing, the others' before converting

    def __init__(self, item: Union[str, Path]) -> None:
        if isinstance(item, str) and item.startswith("file://"):
            item = item[len("file://"):]
        super().__init__(item)
        self._early: Optional[list[Trace]] = None
        """A logs file's own traces, read in ``prepare`` (JSON lines can mix both)."""
        self._error: Optional[InputFileError] = None

    def prepare(self, ctx: ReadContext) -> None:
        if not mentions_logs(self.item):
            return
        try:
            self._early = list(read_traces(self.item, format=ctx.trace_format, log_events=ctx.log_events))
        except InputFileError as exc:
            self._early, self._error = [], exc

    def weight(self) -> int:
        try:
            return max(1, os.stat(self.item).st_size)  # one byte at least: a pipe has none
        except (OSError, ValueError):
            return 1

    def read(self, ctx: ReadContext, position: ReadPosition) -> Iterator[Union[ConvertedTrace, InputError]]:
        if self._error is not None:
            raise self._error
        if self._early is not None:
            yield from _converted(self._early, ctx, position)
            return
        path = self.item
        plan = _stream.plan_stream(Path(path), ctx.trace_format)
        done = 0
        if (plan is not None and plan.format == "jaeger-json" and ctx.workers > 1 and not ctx.log_events
                and Path(path).stat().st_size >= _parallel.MIN_BYTES):
            try:
                convert = partial(pack_for_worker if ctx.packed else convert_for_worker, ctx.keep_spans)
                for item in _parallel.parallel_items(Path(path), str(path), convert, workers=ctx.workers,
                                                     position=position, skip=ctx.skip_trace):
                    done += 1
                    if isinstance(item, str):  # _parallel.SKIPPED: never parsed, skip_trace knows its result
                        ctx.skipped += 1
                        continue
                    yield item
                return
            except _parallel.Fallback:
                log.debug("%s: not a plain Jaeger layout, read serially from trace %d", path, done)
        if plan is not None:
            for index, trace in enumerate(read_traces(path, format=ctx.trace_format, log_events=ctx.log_events,
                                                      position=position)):
                if index < done:
                    continue
                if _skipped(trace, ctx):
                    continue
                out: list[ConvertedTrace] = []
                errors: list[InputError] = []
                convert_into(trace, ctx.log_events, ctx.keep_spans, out, errors)
                yield from out
                yield from errors
            return
        # Read whole, then converted: log records the file holds reach its own traces.
        yield from _converted(list(read_traces(path, format=ctx.trace_format, log_events=ctx.log_events)), ctx,
                              position)


def _skipped(trace: Trace, ctx: ReadContext) -> bool:
    """``ctx.skip_trace`` says to leave ``trace`` out: parsed, never converted (counted in ``ctx.skipped``)."""
    if ctx.skip_trace is None or not ctx.skip_trace(trace.trace_id):
        return False
    ctx.skipped += 1
    return True


def _converted(traces: list[Trace], ctx: ReadContext,
               position: ReadPosition) -> Iterator[Union[ConvertedTrace, InputError]]:
    out: list[ConvertedTrace] = []
    errors: list[InputError] = []
    for trace in traces:
        if not _skipped(trace, ctx):
            convert_into(trace, ctx.log_events, ctx.keep_spans, out, errors)
    items: list[Union[ConvertedTrace, InputError]] = [*out, *errors]
    for i, item in enumerate(items):
        position.fraction = (i + 1) / len(items)
        yield item
