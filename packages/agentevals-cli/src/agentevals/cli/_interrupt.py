"""Run a coroutine so that SIGINT, SIGTERM and SIGHUP stop it cleanly instead of killing everything.

The first signal cancels the run (no new work starts; every evaluator's process tree is killed as its
task is cancelled, then once more for any left), and ``run_interruptible`` returns which signal it was,
so the caller can write partial reports and exit 128 + signal. A second signal while that happens
kills what runs and exits at once.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Coroutine
from typing import Any, Optional, TypeVar

T = TypeVar("T")

__all__ = ["SIGNALS", "run_interruptible"]

SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def _exit_now(signum: int, frame: object) -> None:
    os._exit(128 + signum)


def run_interruptible(coro: Coroutine[Any, Any, T]) -> tuple[Optional[T], Optional[int]]:
    """``(result, None)`` when the coroutine finished, ``(None, signum)`` when a signal stopped it."""
    from ..execution.containment import kill_all_evaluator_processes

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    main = loop.create_task(coro)
    received: list[int] = []

    def on_signal(signum: int) -> None:
        if received:  # a second signal: no more waiting
            kill_all_evaluator_processes()
            sys.stderr.flush()
            os._exit(128 + signum)
        received.append(signum)
        main.cancel()

    installed = []
    if sys.platform != "win32":
        for signum in SIGNALS:
            try:
                loop.add_signal_handler(signum, on_signal, signum)
                installed.append(signum)
            except (ValueError, RuntimeError, NotImplementedError):  # not the main thread
                pass
    try:
        try:
            result = loop.run_until_complete(main)
            return result, None
        except asyncio.CancelledError:
            if not received:
                raise
            return None, received[0]
        except KeyboardInterrupt:  # no handler could be installed
            main.cancel()
            try:
                loop.run_until_complete(main)
            except (asyncio.CancelledError, Exception):
                pass
            return None, signal.SIGINT
    finally:
        kill_all_evaluator_processes()
        for signum in installed:
            loop.remove_signal_handler(signum)
            if received:  # while partial reports are written, one more signal ends the process at once
                signal.signal(signum, _exit_now)
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()
