"""One hard deadline shared by every step of an evaluation: download, environment setup, the run."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from contextvars import ContextVar
from typing import TypeVar

from ..errors import EvaluatorFailure

__all__ = ["Deadline", "current_deadline", "deadline_scope"]

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

    def __init__(self, seconds: float) -> None:
        self.seconds = float(seconds)
        self._end = time.monotonic() + self.seconds
        self.phase = "starting"
        """What the evaluation is doing now; named in the timeout message."""

    @property
    def end(self) -> float:
        """The ``time.monotonic()`` value at which the deadline passes."""
        return self._end

    def remaining(self) -> float:
        """Seconds left (never negative)."""
        return max(0.0, self._end - time.monotonic())

    def failure(self) -> EvaluatorFailure:
        """The one-line error for a passed deadline."""
        return EvaluatorFailure(f"timed out after {self.seconds:g}s while {self.phase}")

    async def wait(self, awaitable: Awaitable[T], phase: str | None = None) -> T:
        """Await ``awaitable`` within the time left; cancel it and raise ``failure()`` when it runs out."""
        if phase:
            self.phase = phase
        try:
            return await asyncio.wait_for(awaitable, self.remaining())
        except asyncio.TimeoutError:
            raise self.failure() from None


_CURRENT: ContextVar[Deadline | None] = ContextVar("agentevals_deadline", default=None)


def current_deadline(default_seconds: float) -> Deadline:
    """The deadline of the evaluation this task belongs to, or a new one of ``default_seconds``.

    Lets code behind a fixed signature (a backend's ``run``, a source's ``fetch_evaluator``) share the
    deadline of the evaluator entry that called it.
    """
    return _CURRENT.get() or Deadline(default_seconds)


class deadline_scope:
    """``with deadline_scope(deadline):`` makes ``deadline`` current for this task and its children."""

    def __init__(self, deadline: Deadline) -> None:
        self._deadline = deadline

    def __enter__(self) -> Deadline:
        self._token = _CURRENT.set(self._deadline)
        return self._deadline

    def __exit__(self, *exc: object) -> None:
        _CURRENT.reset(self._token)
