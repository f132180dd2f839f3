"""Run a coroutine so that SIGINT, SIGTERM and SIGHUP stop it cleanly instead of killing everything.

The first signal cancels the run (no new work starts; every evaluator's process tree is killed as its
task is cancelled, then once more for any left), and ``run_interruptible`` returns which signal it was,
so the caller can write partial reports and exit 128 + signal. Should the cancellation not be over
within ``STOP_GRACE`` seconds (something awaited cannot be cancelled), it is not waited for: the
caller writes the partial reports all the same. A second signal while that happens kills what runs,
calls ``on_abandon`` (the run store marks the run ``interrupted``) and exits at once.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any, Optional, TypeVar

T = TypeVar("T")

__all__ = ["SIGNALS", "STOP_GRACE", "run_interruptible"]

SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
STOP_GRACE = 10.0
"""Seconds the cancelled run may take to wind down before the partial reports are written without it."""


def _abandon(signum: int, on_abandon: Optional[Callable[[int], None]]) -> None:
    """Exit now (128 + signum), after ``on_abandon`` had its go (whatever it raises)."""
    from ..execution.containment import kill_all_evaluator_processes

    kill_all_evaluator_processes()
    if on_abandon is not None:
        try:
            on_abandon(signum)
        except BaseException:  # exiting anyway: the store may be the thing that is stuck
            pass
    try:
        sys.stderr.flush()
    finally:
        os._exit(128 + signum)


def run_interruptible(coro: Coroutine[Any, Any, T], *, on_abandon: Optional[Callable[[int], None]] = None,
                      grace: float = STOP_GRACE) -> tuple[Optional[T], Optional[int]]:
    """``(result, None)`` when the coroutine finished, ``(None, signum)`` when a signal stopped it.

    ``on_abandon(signum)`` runs when a second signal ends the process before the caller is done (also
    while the caller writes the partial reports); it must be quick.
    """
    from ..execution.containment import kill_all_evaluator_processes

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    main = loop.create_task(coro)
    over = loop.create_future()
    main.add_done_callback(lambda _task: None if over.done() else over.set_result(None))
    received: list[int] = []

    def give_up() -> None:
        if not over.done():
            over.set_result(None)

    def on_signal(signum: int) -> None:
        if received:  # a second signal: no more waiting
            _abandon(signum, on_abandon)
        received.append(signum)
        main.cancel()
        loop.call_later(grace, give_up)

    installed = []
    if sys.platform != "win32":
        for signum in SIGNALS:
            try:
                loop.add_signal_handler(signum, on_signal, signum)
                installed.append(signum)
            except (ValueError, RuntimeError, NotImplementedError):  # not the main thread
                pass
    stuck = False
    try:
        try:
            loop.run_until_complete(over)
            if not main.done():  # cancelled, but still winding down after the grace: leave it
                stuck = True
                loop.set_exception_handler(lambda _loop, _context: None)  # no "Task was destroyed" at exit
                return None, received[0]
            result = main.result()
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
                signal.signal(signum, lambda sig, _frame: _abandon(sig, on_abandon))
        asyncio.set_event_loop(None)
        if not stuck:
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()
