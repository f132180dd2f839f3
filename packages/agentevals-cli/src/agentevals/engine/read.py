"""The run's reading side: ``agentevals.trace_sources.resolve`` in a background thread, so that evaluation
runs while the input is read."""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import threading
import time
from collections.abc import AsyncIterator
from typing import Optional, Union

from ..results import InputError
from ..trace_sources import ReadContext, TraceInput, resolve
from ..traces._collect import PackedTrace
from ..traces.model import ConvertedTrace

__all__ = ["read_in_background"]


async def read_in_background(inputs: list[TraceInput], trace_format: Optional[str], *, keep_spans: bool,
                             workers: int, context: Optional[ReadContext] = None, packed: bool = False
                             ) -> AsyncIterator[tuple[Union[ConvertedTrace, PackedTrace, InputError], float]]:
    """``trace_sources.resolve`` in a background thread, so that evaluation runs while the input is read;
    each item comes with how far the reading had got when it was read (0 to 1, for the estimate of the
    run's size).

    Items come in batches through a bounded queue: the reader waits when the engine is behind. ``context``
    (``RunOptions.read_context``): how pull sources read; it gets the other arguments and, as the sources
    read, their windows. ``packed``: traces converted by reader processes come as ``PackedTrace`` (for the
    engine's grouper, which unpacks them).
    """
    context = context or ReadContext()
    context.trace_format, context.keep_spans, context.workers = trace_format, keep_spans, workers
    context.packed = packed
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Union[list, BaseException, None]] = asyncio.Queue(maxsize=8)
    stop = threading.Event()

    def put(item: Union[list, BaseException, None]) -> None:
        future = asyncio.run_coroutine_threadsafe(queue.put(item), loop)
        while not stop.is_set():
            try:
                future.result(timeout=0.2)
                return
            except concurrent.futures.TimeoutError:
                continue

    batch: list = []
    last = time.monotonic()
    held = threading.Lock()  # the batch, and the order of the puts (producer and flusher)
    done = threading.Event()

    def flush(*, stale: bool = False) -> None:
        nonlocal batch, last
        if batch and (not stale or time.monotonic() - last > _STALE):
            put(batch)
            batch, last = [], time.monotonic()

    def produce() -> None:
        try:
            for item in resolve(inputs, trace_format=trace_format, keep_spans=keep_spans, workers=workers,
                                context=context):
                if stop.is_set():
                    return
                with held:
                    batch.append(item)
                    if len(batch) >= _BATCH:
                        flush()
                    else:
                        flush(stale=True)
            with held:
                flush()
                put(None)
        except BaseException as exc:  # handed to the event loop, raised there
            with held:
                put(exc)
        finally:
            done.set()

    def flusher() -> None:
        # What was read goes on even while the next item is slow to come (a backend that answers slowly):
        # its cases are evaluated meanwhile, and a stopped run has them.
        while not done.wait(_STALE) and not stop.is_set():
            with held:
                if not done.is_set() and not stop.is_set():
                    flush(stale=True)

    threading.Thread(target=flusher, name="agentevals-reader-flush", daemon=True).start()
    thread = threading.Thread(target=produce, name="agentevals-reader", daemon=True)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(min(switch, _SWITCH))  # the event loop gets the GIL back quickly after each I/O call
    thread.start()
    try:
        while True:
            got = await queue.get()
            if got is None:
                return
            if isinstance(got, BaseException):
                raise got
            for item in got:
                yield item
    finally:
        stop.set()
        sys.setswitchinterval(switch)
        while not queue.empty():
            queue.get_nowait()


_BATCH = 64
"""Converted traces handed from the reader thread to the engine at a time."""
_STALE = 0.05
"""Seconds a partial batch waits for more traces before it is handed on anyway."""
_SWITCH = 0.0005
"""GIL switch interval while the reader thread runs (Python's default, 5 ms, would delay the event loop
by up to that much after every pipe write to an evaluator)."""
