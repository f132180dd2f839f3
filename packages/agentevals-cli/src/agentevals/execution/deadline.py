"""One hard deadline shared by the steps of an evaluation (download, the run), paused while a one-off
environment setup runs under its own deadline (``set_up`` in ``commands``).

Why the pause: how long installing an evaluator's dependencies takes depends on the machine's load and
the network, not on the evaluator; counted against the evaluation's ``timeout``, the same config gave
PASSED on a quiet machine and ERROR on a busy one (and every case of the run rebuilt the venv again).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Optional, TypeVar

from ..errors import EvaluatorFailure

__all__ = ["Deadline", "current_deadline", "deadline_scope", "set_current"]

T = TypeVar("T")


class Deadline:
    """Seconds left until a fixed point in time, and what was being done when it passed.

    Example:
        ```python
        deadline = Deadline(30)
        deadline.phase = "downloading evaluators/x.py"
        data = await deadline.wait(fetch())      # raises EvaluatorFailure("timed out after 30s while …")
        ```
    """

    # one is made per evaluation (and a guard around it): slots keep them small and quick to build
    __slots__ = ("_end", "_paused_at", "note", "outer", "phase", "seconds")

    def __init__(self, seconds: float, *, note: str = "") -> None:
        self.seconds = float(seconds)
        self._end = time.monotonic() + self.seconds
        self._paused_at: Optional[float] = None
        self.phase = "starting"
        """What the evaluation is doing now; named in the timeout message."""
        self.note = note
        """Appended to the timeout message in parentheses (e.g. which setting raises the limit)."""
        self.outer: Optional[Deadline] = None
        """The deadline that was current where this one was made current (``deadline_scope``): paused with
        it, so an enclosing limit (the engine's per-evaluation guard) does not count a set-up either."""

    @property
    def end(self) -> float:
        """The ``time.monotonic()`` value at which the deadline passes (later after each pause)."""
        return self._end

    def _now(self) -> float:
        return self._paused_at if self._paused_at is not None else time.monotonic()

    def remaining(self) -> float:
        """Seconds left (never negative); it does not go down while the deadline is paused."""
        return max(0.0, self._end - self._now())

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Time spent in the block does not count: the end moves later by that much.

        Example:
            ```python
            with deadline.paused():          # a setup step with a deadline of its own
                await setup.wait(install())
            ```
        """
        if self._paused_at is not None:  # nested: the outer pause covers it
            yield
            return
        self._paused_at = time.monotonic()
        try:
            if self.outer is not None:
                with self.outer.paused():
                    yield
            else:
                yield
        finally:
            self._end += time.monotonic() - self._paused_at
            self._paused_at = None

    def failure(self) -> EvaluatorFailure:
        """The one-line error for a passed deadline."""
        note = f" ({self.note})" if self.note else ""
        return EvaluatorFailure(f"timed out after {self.seconds:g}s while {self.phase}{note}")

    async def wait(self, awaitable: Awaitable[T], phase: str | None = None, *, grace: float = 0.0) -> T:
        """Await ``awaitable`` until the deadline (plus ``grace``) passes, pauses not counted; then cancel
        it, wait for it to clean up (kill its processes), and raise ``failure()``."""
        if phase:
            self.phase = phase
        task = asyncio.ensure_future(awaitable)
        try:
            while not task.done():
                left = max(0.0, self._end + grace - self._now())
                # Paused, the time left is frozen: look again later rather than spin on a frozen zero.
                await asyncio.wait({task}, timeout=max(left, 0.5) if self._paused_at is not None else left)
                if not task.done() and self._paused_at is None and self._end + grace <= time.monotonic():
                    break
        except asyncio.CancelledError:  # cancelled from outside (Ctrl-C): so is the step, as wait_for does
            task.cancel()
            await asyncio.wait({task})
            raise
        if task.done():
            return task.result()
        task.cancel()
        await asyncio.wait({task})
        raise self.failure() from None


_CURRENT: ContextVar[Deadline | None] = ContextVar("agentevals_deadline", default=None)


def current_deadline(default_seconds: float) -> Deadline:
    """The deadline of the evaluation this task belongs to, or a new one of ``default_seconds``.

    Lets code behind a fixed signature (a backend's ``run``, a source's ``fetch_evaluator``) share the
    deadline of the evaluator entry that called it.
    """
    return _CURRENT.get() or Deadline(default_seconds)


def set_current(deadline: Deadline) -> object:
    """Make ``deadline`` current in the running context for good (in a context copy that is discarded after,
    as ``contextvars.Context.run(set_current, d)``); the token to reset it."""
    return _CURRENT.set(deadline)


class deadline_scope:
    """``with deadline_scope(deadline):`` makes ``deadline`` current for this task and its children; the one
    it replaces becomes its ``outer`` (paused whenever it is)."""

    def __init__(self, deadline: Deadline) -> None:
        self._deadline = deadline

    def __enter__(self) -> Deadline:
        enclosing = _CURRENT.get()
        if self._deadline.outer is None and enclosing is not None and enclosing is not self._deadline:
            self._deadline.outer = enclosing
        self._token = _CURRENT.set(self._deadline)
        return self._deadline

    def __exit__(self, *exc: object) -> None:
        _CURRENT.reset(self._token)
