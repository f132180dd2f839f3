"""The command's start-up: before it can handle a Ctrl-C (while Python imports it), one ends it quietly; the
cyclic garbage collector stays out of the imports and of the exit."""

from __future__ import annotations

import atexit
import gc
import os
import signal

__all__ = ["collect_again", "loud_interrupts", "quiet_interrupts", "skip_collection_at_exit", "startup_without_collection"]


def _interrupted(signum: int, frame: object) -> None:
    os.write(2, b"Interrupted.\n")
    os._exit(128 + signum)


def quiet_interrupts() -> None:
    """SIGINT exits 130 with ``Interrupted.`` (no traceback): nothing has started that could be lost."""
    try:
        signal.signal(signal.SIGINT, _interrupted)
    except ValueError:  # not the main thread
        pass


def loud_interrupts() -> None:
    """Python's own SIGINT handling again (``KeyboardInterrupt``), once the command catches it."""
    try:
        if signal.getsignal(signal.SIGINT) is _interrupted:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:
        pass


_paused = False


def startup_without_collection() -> None:
    """Pause the cyclic garbage collector while the command imports and sets up: start-up makes tens of thousands
    of objects that live as long as the process (modules, classes, pydantic's validators), and the collector's
    passes over them as they are made are wasted (~4% of a one-trace run's instructions). ``collect_again``
    resumes it; a collector the caller had disabled stays so."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def collect_again() -> None:
    """Resume the collector ``startup_without_collection`` paused (before the command's work starts)."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()


_exit_frozen = False


def skip_collection_at_exit() -> None:
    """At exit, leave the heap to the operating system: Python's finalization otherwise runs the collector over
    every module, class and function it unloads (~5% of a one-trace run's instructions). Handlers registered
    later still run first (``atexit`` is last in, first out); objects left in reference cycles at exit are then
    not finalized, as Python allows (``__del__`` is not guaranteed at exit)."""
    global _exit_frozen
    if not _exit_frozen:
        _exit_frozen = True
        atexit.register(gc.freeze)
