"""Deadlines for in-process work: CPU-bound checks and ``type: python`` evaluators in a watched thread.

Synchronous code run inside the event loop blocks it, so no ``asyncio`` deadline can fire. ``run_in_thread``
runs it in a daemon thread and waits with the deadline; at the deadline it raises ``Abandoned`` *inside*
the thread (``PyThreadState_SetAsyncExc``), so a runaway loop stops burning CPU and releases its locks,
and the row is this evaluator's ERROR at once. A thread that is inside one long C call (``re`` on a
catastrophic pattern, a C extension) only sees the exception when the call returns: the row still ends at
the deadline and the run goes on, the thread is abandoned (daemon: it does not hold the exit). That is
why the AgentV ``regex`` check uses the ``regex`` engine, whose matcher takes a timeout.

An evaluator's ``SystemExit`` or ``KeyboardInterrupt`` raised in the thread is that evaluator's failure
(``EvaluatorFailure``), never the run's.

Example:
    ```python
    score = await run_in_thread(rouge_l, text, reference, timeout=10, what="rouge_l")
    # EvaluatorFailure("rouge_l timed out after 10s") at the deadline
    ```
"""

from __future__ import annotations

import asyncio
import ctypes
import threading
from collections.abc import Callable
from typing import Any, Optional, TypeVar

from ..errors import EvaluatorFailure

__all__ = ["Abandoned", "run_in_thread"]

T = TypeVar("T")


class Abandoned(BaseException):
    """Raised inside a thread whose deadline passed (a ``BaseException``: user code catching
    ``Exception`` does not swallow it)."""


def _interrupt(thread: threading.Thread) -> bool:
    """Raise ``Abandoned`` in ``thread`` at its next bytecode; False when it is already gone."""
    ident = thread.ident
    if ident is None or not thread.is_alive():
        return False
    done = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(Abandoned))
    if done > 1:  # pragma: no cover - cannot happen for one thread id; undo as the C API asks
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), None)
        return False
    return done == 1


def _as_failure(exc: BaseException, what: str) -> Optional[EvaluatorFailure]:
    """An exception that must not leave the thread as itself: the evaluator's exit or interrupt."""
    if isinstance(exc, SystemExit):
        return EvaluatorFailure(f"{what} called sys.exit({exc.code!r}); an evaluator must return a result "
                                "or raise an exception")
    if isinstance(exc, KeyboardInterrupt):
        return EvaluatorFailure(f"{what} raised KeyboardInterrupt")
    if isinstance(exc, Abandoned):
        return EvaluatorFailure(f"{what} was stopped at its deadline")
    return None


async def run_in_thread(func: Callable[..., T], *args: Any, timeout: float, what: str) -> T:
    """Run ``func(*args)`` in a daemon thread; its result, or ``EvaluatorFailure`` after ``timeout`` seconds.

    Raises:
        EvaluatorFailure: the deadline passed (the thread is interrupted), or ``func`` called
            ``sys.exit`` / raised ``KeyboardInterrupt``.
        Exception: whatever else ``func`` raised.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Any, error: Optional[BaseException]) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(outcome)

    def target() -> None:
        outcome, error = None, None
        try:
            outcome = func(*args)
        except BaseException as exc:
            error = _as_failure(exc, what) or exc
        try:
            loop.call_soon_threadsafe(settle, outcome, error)
        except RuntimeError:  # the loop is closed: nobody waits for this result any more
            pass
        except Abandoned:  # pragma: no cover - the deadline passed while handing the result back
            pass

    thread = threading.Thread(target=target, name=f"agentevals-{what}", daemon=True)
    thread.start()
    try:
        return await asyncio.wait_for(future, timeout)
    except asyncio.TimeoutError:
        _interrupt(thread)
        raise EvaluatorFailure(f"{what} timed out after {timeout:g}s") from None
    except asyncio.CancelledError:
        _interrupt(thread)
        raise
