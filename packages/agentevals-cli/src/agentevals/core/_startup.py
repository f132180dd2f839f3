"""Before the command can handle a Ctrl-C (while Python imports it), one ends it quietly."""

from __future__ import annotations

import os
import signal

__all__ = ["loud_interrupts", "quiet_interrupts"]


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
